"""Blind judging without a server: the assignment of pairs to annotators, the annotators file, edited projects."""

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalset.errors import InputError
from evalset.io.guideline import read_guideline
from evalset.labelstudio import (
    LabelStudioError,
    PullReport,
    annotator_team,
    annotator_title,
    assign_pairs,
    check_unchanged,
    description_record,
    instructions_html,
    labeling_config,
    project_description,
    read_annotators,
)
from evalset.labelstudio.blind import sum_reports

GUIDELINE = read_guideline(Path(__file__).resolve().parents[1] / "guidelines" / "relevance-v2.md")
HEADER = "email\tpassword\ttoken\torganization\turl\n"
URL = "http://127.0.0.1:8080"


def test_every_pair_goes_to_overlap_annotators_balanced_in_judging_order():
    pairs = [f"p{number}" for number in range(10)]
    given = assign_pairs(pairs, ["a@x.org", "b@x.org", "c@x.org"], 2)
    assert Counter(pair for mine in given.values() for pair in mine) == Counter({pair: 2 for pair in pairs})
    assert sorted(len(mine) for mine in given.values()) == [6, 7, 7]  # 20 shares over 3, within one
    assert given["a@x.org"][:3] == ("p0", "p1", "p3")  # ties by place: p0 to a, b; p1 to c, a; p2 to b, c
    assert all(list(mine) == sorted(mine, key=pairs.index) for mine in given.values())
    assert assign_pairs(pairs, ["a@x.org", "b@x.org", "c@x.org"], 2) == given  # deterministic
    assert assign_pairs(pairs, ["a@x.org", "b@x.org"], 2) == {"a@x.org": tuple(pairs), "b@x.org": tuple(pairs)}


def test_pairs_already_in_a_project_stay_and_new_pairs_fill_the_lightest():
    present = {"a@x.org": {"p0", "p1", "p2"}, "b@x.org": {"p0"}}
    given = assign_pairs(["p0", "p1", "p2", "p3", "p4"], ["a@x.org", "b@x.org", "c@x.org"], 2, present)
    assert set(given["a@x.org"]) >= {"p0", "p1", "p2"} and "p0" in given["b@x.org"]
    assert Counter(pair for mine in given.values() for pair in mine) == Counter({f"p{n}": 2 for n in range(5)})
    # loads 3, 1, 0: p1 to c; p2 to b (tied with c, first); p3 to c and b; p4 to c and a
    assert given == {"a@x.org": ("p0", "p1", "p2", "p4"), "b@x.org": ("p0", "p2", "p3"),
                     "c@x.org": ("p1", "p3", "p4")}
    # a pair held by more annotators than the overlap keeps them all; nothing is added to it
    over = assign_pairs(["p0"], ["a@x.org", "b@x.org"], 1, {"a@x.org": {"p0"}, "b@x.org": {"p0"}})
    assert over == {"a@x.org": ("p0",), "b@x.org": ("p0",)}


def test_an_overlap_beyond_the_annotators_is_refused():
    with pytest.raises(InputError, match=r"--overlap 3 needs at least 3 annotators; --annotators names 2"):
        assign_pairs(["p0"], ["a@x.org", "b@x.org"], 3)


def _file(tmp_path, text, mode=0o600):
    path = tmp_path / "annotators.tsv"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_annotators_file_is_read_in_the_order_asked_and_the_token_never_shown(tmp_path, monkeypatch):
    path = _file(tmp_path, HEADER + f"a@x.org\tpw-a\ttok-a\t3\t{URL}\nb@x.org\tpw-b\ttok-b\t4\t{URL}\n")
    monkeypatch.setenv("LABEL_STUDIO_ANNOTATORS", str(path))
    team = annotator_team("b@x.org, a@x.org")
    assert [(member.email, member.organization, member.token, member.url) for member in team] == [
        ("b@x.org", 4, "tok-b", URL), ("a@x.org", 3, "tok-a", URL)]
    assert "tok-b" not in repr(team) and "pw-b" not in repr(team)
    assert annotator_title("DL19", "a@x.org") == "DL19 [a@x.org]"


@pytest.mark.parametrize(("text", "mode", "message"), [
    (HEADER + f"a@x.org\tpw\ttok\t3\t{URL}\n", 0o644, r"annotators.tsv: .*others may read it \(mode 644\): chmod 600"),
    ("email\ttoken\n", 0o600, r"annotators.tsv:1: the header is not email password token organization url"),
    (HEADER + "a@x.org\tpw\ttok\tthree\t" + URL + "\n", 0o600, r"annotators.tsv:2: not an annotator line"),
    (HEADER + 2 * ("a@x.org\tpw\ttok\t3\t" + URL + "\n"), 0o600, r"annotators.tsv:3: a@x.org is listed twice"),
])
def test_a_bad_annotators_file_is_refused_with_its_line(tmp_path, text, mode, message):
    with pytest.raises(InputError, match=message):
        read_annotators(_file(tmp_path, text, mode))


def test_annotators_not_in_the_file_or_no_file_are_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_ANNOTATORS", raising=False)
    with pytest.raises(InputError, match=r"no annotators file: set LABEL_STUDIO_ANNOTATORS"):
        annotator_team("a@x.org")
    monkeypatch.setenv("LABEL_STUDIO_ANNOTATORS", str(_file(tmp_path, HEADER + f"a@x.org\tpw\ttok\t3\t{URL}\n")))
    with pytest.raises(InputError, match=r"c@x.org is not an annotator of LABEL_STUDIO_ANNOTATORS's files: "
                                         r"scripts/label-studio.sh add-annotator c@x.org"):
        annotator_team("a@x.org,c@x.org")
    with pytest.raises(InputError, match=r"names a@x.org twice"):
        annotator_team("a@x.org,a@x.org")


def test_several_files_one_per_server_are_read_together_and_an_email_in_two_is_refused(tmp_path, monkeypatch):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    first = _file(one, HEADER + "a@x.org\tpw\ttok-a\t1\thttp://127.0.0.1:8081\n")
    second = _file(two, HEADER + "b@x.org\tpw\ttok-b\t1\thttp://127.0.0.1:8082\n")
    monkeypatch.setenv("LABEL_STUDIO_ANNOTATORS", f"{first}:{second}")
    assert [member.url for member in annotator_team("a@x.org,b@x.org")] == ["http://127.0.0.1:8081",
                                                                            "http://127.0.0.1:8082"]
    monkeypatch.setenv("LABEL_STUDIO_ANNOTATORS", f"{first}:{first}")
    with pytest.raises(InputError, match=r"a@x.org is in two annotators files"):
        annotator_team("a@x.org")


def test_an_edited_config_or_instructions_is_refused_naming_the_project():
    written = dict(title="T [a@x.org]", id=7, description=project_description(GUIDELINE, 142),
                   label_config=labeling_config(GUIDELINE), expert_instruction=instructions_html(GUIDELINE))
    check_unchanged(SimpleNamespace(**written), GUIDELINE, "a@x.org")
    # what Label Studio stores: the instructions cleaned of their attributes (bleach), the words as they were
    cleaned = written["expert_instruction"].replace(' style="white-space: pre-wrap; font-family: inherit"', "")
    check_unchanged(SimpleNamespace(**{**written, "expert_instruction": cleaned}), GUIDELINE, "a@x.org")
    reworded = cleaned.replace("Irrelevant", "Relevant", 1)
    with pytest.raises(LabelStudioError, match=r"its instructions not"):
        check_unchanged(SimpleNamespace(**{**written, "expert_instruction": reworded}), GUIDELINE, "a@x.org")
    edited = SimpleNamespace(**{**written, "label_config": written["label_config"].replace("Irrelevant", "Bad")})
    with pytest.raises(LabelStudioError, match=r"project 'T \[a@x.org\]' \(id 7\) of a@x.org was edited in Label "
                                               r"Studio: its labeling config not what push writes"):
        check_unchanged(edited, GUIDELINE, "a@x.org")
    # the description: another count of pairs (a push that died), or the record alone (an earlier evalset), is
    # push's; a sentence reworded is not
    for description in (project_description(GUIDELINE, 5), description_record(GUIDELINE)):
        check_unchanged(SimpleNamespace(**{**written, "description": description}), GUIDELINE, "a@x.org")
    reworded = written["description"].replace("Submit", "Skip")
    with pytest.raises(LabelStudioError, match=r"its description \(the guideline it was made from\) not"):
        check_unchanged(SimpleNamespace(**{**written, "description": reworded}), GUIDELINE, "a@x.org")
    both = SimpleNamespace(**{**written, "label_config": "<View/>", "expert_instruction": "grade 3 always"})
    with pytest.raises(LabelStudioError, match=r"its labeling config, instructions not"):
        check_unchanged(both, GUIDELINE, "a@x.org")


def test_the_reports_of_several_projects_sum():
    total = sum_reports([PullReport(tasks=3, annotations=4, labels=2, skipped=1, no_grade=1),
                         PullReport(tasks=5, annotations=5, labels=5, unknown_annotator=0)])
    assert (total.tasks, total.annotations, total.labels, total.skipped, total.no_grade) == (8, 9, 7, 1, 1)
