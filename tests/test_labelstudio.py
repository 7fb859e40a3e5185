"""Push/pull without a server: the labeling config from the guideline, export rows to labels, pool readers."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.annotations import read_labels, write_labels
from evalset.io.guideline import read_guideline
from evalset.io.poolfiles import read_pool_pairs, read_tasks
from evalset.labelstudio import (
    grade_of_choice,
    instructions_html,
    labeling_config,
    labels_from_export,
    pool_tasks,
    project_description,
)
from evalset.labelstudio.blind import Annotator, check_blind, push_blind
from evalset.labelstudio.project import (
    DESCRIPTION_PATTERN,
    VIEW_STYLE,
    LabelStudioError,
    description_matches,
    description_record,
    progress_text,
)
from evalset.labelstudio.pull import Draft, finish_pull
from evalset.labelstudio.push import PushResult, push
from evalset.pooling.examples import refuse_worked_examples
from tests.support.options import refusal

GUIDELINE = read_guideline(Path(__file__).resolve().parents[1] / "guidelines" / "relevance-v2.md")


def test_labeling_config_has_one_choice_per_grade_with_hotkeys_and_shows_texts_as_text():
    root = ET.fromstring(labeling_config(GUIDELINE))
    texts = {tag.get("name"): tag.get("value") for tag in root.iter("Text")}
    assert texts == {"query": "$query", "text": "$text"}
    assert not list(root.iter("HyperText")) and not list(root.iter("HTML"))
    choices = root.find("Choices")
    assert choices.get("name") == "grade" and choices.get("choice") == "single-radio"
    assert choices.get("required") == "true"
    assert choices.get("requiredMessage") == "Choose a grade (keys 3, 2, 1, 0) before you submit."
    options = [(c.get("alias"), c.get("hotkey"), c.get("value"), c.get("html"), c.get("hint"))
               for c in choices.iter("Choice")]
    # the definition is shown on the button itself (not a hover hint), from the guideline's scale
    assert options == [(str(g.value), str(g.value), f"{g.value} {g.name}",
                        f"<strong>{g.value} {g.name}</strong>: {g.definition}", None)
                       for g in reversed(GUIDELINE.scale)]
    assert options[0][3] == ("<strong>3 Perfectly relevant</strong>: The passage is dedicated to the query and "
                             "contains the exact answer.")
    assert root.find("TextArea").get("name") == "comment"


def test_the_view_shows_the_task_s_place_and_carries_its_css_free_of_what_label_studio_escapes():
    root = ET.fromstring(labeling_config(GUIDELINE))
    assert [child.tag for child in root][:3] == ["Style", "View", "Header"]  # the CSS, the place, then the query
    assert root.find("Style").text.strip() == VIEW_STYLE.strip()
    place = root.find("View")
    assert place.get("className") == "evalset-progress" and place.find("Header").get("value") == "$progress"
    # Label Studio sanitises a Style as HTML text: these would reach the browser as &lt; &gt; &amp;
    assert not set("<>&") & set(VIEW_STYLE)
    assert VIEW_STYLE.count("{") == VIEW_STYLE.count("}")
    for hidden in (".lsf-sidepanels__wrapper", ".lsf-tabs-panel", ".lsf-current-task__task-count"):
        assert hidden in VIEW_STYLE
    assert [progress_text(n, 8) for n in (1, 8)] == ["Pair 1 of 8", "Pair 8 of 8"]


def test_scale_text_with_markup_is_escaped_in_the_config_and_no_hotkeys_past_nine(tmp_path):
    path = tmp_path / "g.md"
    path.write_text('+++\nversion = 2\n[scale.0]\nname = "No <b>"\ndefinition = "a \\"quote\\" & more"\n'
                    '[scale.10]\nname = "Ten"\n+++\n# body <script>x</script>\n')
    guideline = read_guideline(path)
    root = ET.fromstring(labeling_config(guideline))
    options = [(c.get("value"), c.get("html"), c.get("hotkey")) for c in root.iter("Choice")]
    assert options == [("10 Ten", "<strong>10 Ten</strong>", None),
                       ("0 No <b>", '<strong>0 No &lt;b&gt;</strong>: a "quote" &amp; more', None)]
    assert root.find("Choices").get("requiredMessage") == "Choose a grade before you submit."
    assert "<script>" not in instructions_html(guideline)
    assert "&lt;script&gt;x&lt;/script&gt;" in instructions_html(guideline)


@pytest.mark.parametrize(("choice", "grade"), [("2", 2), ("2 Highly relevant", 2), ("0", 0), ("7", None),
                                               ("Highly relevant", None), ("-1", None)])
def test_grade_of_choice_reads_alias_or_value(choice, grade):
    assert grade_of_choice(choice, GUIDELINE) == grade


def _annotation(annotation_id, user, grade=None, comment=None, cancelled=False):
    result = []
    if grade is not None:
        result.append({"from_name": "grade", "to_name": "text", "type": "choices", "value": {"choices": [grade]}})
    if comment is not None:
        result.append({"from_name": "comment", "to_name": "text", "type": "textarea", "value": {"text": [comment]}})
    return {"id": annotation_id, "completed_by": user, "result": result, "was_cancelled": cancelled,
            "created_at": "2026-01-02T03:04:05.000006Z", "updated_at": "2026-01-02T04:04:05.5+01:00"}


def test_export_to_labels_counts_everything_it_does_not_turn_into_a_grade():
    pairs = pd.DataFrame({"pair_id": ["pa", "pb"], "query_id": ["q1", "q2"], "doc_id": ["d1", "d2"]})
    tasks = [
        {"id": 10, "data": {"pair_id": "pb"}, "annotations": [
            _annotation(5, 2, "3", comment="exact answer"), _annotation(4, 3, "1"),
            _annotation(6, 2, cancelled=True), _annotation(7, 3, comment="no idea")]},
        {"id": 11, "data": {"pair_id": "pa"}, "annotations": [_annotation(8, {"id": 3}, "0 Irrelevant"),
                                                              _annotation(9, 3, "5"), _annotation(12, 99, "1")]},
        {"id": 12, "data": {"pair_id": "zz"}, "annotations": [_annotation(13, 2, "2")]},
        {"id": 13, "data": {"pair_id": "pa"}, "annotations": []},
    ]
    labels, report = labels_from_export(tasks, pairs, {2: "a@x.org", 3: "b@x.org"}, GUIDELINE, project_id=7)
    assert labels.to_dict(orient="records") == [
        {"query_id": "q1", "doc_id": "d1", "annotator": "b@x.org", "kind": "human", "grade": 0,
         "source": "label-studio:7/11/8", "labeled_at": "2026-01-02T03:04:05.500000Z", "comment": ""},
        {"query_id": "q2", "doc_id": "d2", "annotator": "a@x.org", "kind": "human", "grade": 3,
         "source": "label-studio:7/10/5", "labeled_at": "2026-01-02T03:04:05.500000Z", "comment": "exact answer"},
        {"query_id": "q2", "doc_id": "d2", "annotator": "b@x.org", "kind": "human", "grade": 1,
         "source": "label-studio:7/10/4", "labeled_at": "2026-01-02T03:04:05.500000Z", "comment": ""},
    ]
    assert (report.tasks, report.annotations, report.labels) == (4, 8, 3)
    assert (report.skipped, report.no_grade, report.off_scale, report.unknown_pair,
            report.unknown_annotator) == (1, 1, 1, 1, 1)
    assert report.annotations == report.labels + report.skipped + report.no_grade + report.off_scale \
        + report.unknown_pair + report.unknown_annotator


def test_labels_with_tabs_newlines_and_quotes_in_comments_round_trip(tmp_path):
    labels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d 2"], "annotator": ["a@x", "b@x"],
                           "kind": ["human", "human"], "grade": [3, 0], "source": ["s", "s"],
                           "labeled_at": ["t", "t"], "comment": ['tab\there\nnew "line"', ""]})
    write_labels(labels, tmp_path / "labels.tsv")
    back = read_labels(tmp_path / "labels.tsv")
    assert back["comment"].tolist() == ['tab\there\nnew "line"', ""]
    assert back["grade"].tolist() == [3, 0] and back["doc_id"].tolist() == ["d1", "d 2"]


def _pool(folder: Path, pool_rows: str, tasks: list[dict]) -> Path:
    folder.mkdir()
    (folder / "pool.tsv").write_text("pair_id\tquery_id\tdoc_id\torder\n" + pool_rows)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return folder


def _task(pair, query_id="q", doc_id="d"):
    return {"pair_id": pair, "query_id": query_id, "doc_id": doc_id, "query": "a query", "text": f"text of {pair}"}


def test_pool_tasks_follow_the_pool_order_and_count_pairs_without_text(tmp_path):
    folder = _pool(tmp_path / "p", "a\tq\td1\t2\nb\tq\td2\t0\nc\tq\td3\t1\n", [_task("a"), _task("b")])
    tasks = pool_tasks(folder)
    assert tasks["pair_id"].tolist() == ["b", "a"]
    assert list(tasks.columns) == ["pair_id", "query", "text"]
    assert tasks.attrs["without_text"] == 1


def test_pool_readers_refuse_bad_files_with_their_line(tmp_path):
    folder = _pool(tmp_path / "p", "a\tq\td1\t0\na\tq\td2\t1\n", [])
    with pytest.raises(InputError, match="pair_id a appears twice") as error:
        read_pool_pairs(folder / "pool.tsv")
    assert error.value.line == 3
    folder = _pool(tmp_path / "r", "a\tq\td1\tfirst\n", [{"pair_id": "a"}])
    with pytest.raises(InputError, match="order must be an integer"):
        read_pool_pairs(folder / "pool.tsv")
    with pytest.raises(InputError, match="missing field"):
        read_tasks(folder / "tasks.jsonl")
    folder = _pool(tmp_path / "s", "a\tq\td1\t0\n", [_task("a"), _task("x")])
    with pytest.raises(InputError, match=r"pair_id x of tasks\.jsonl is not in pool\.tsv"):
        pool_tasks(folder)


def test_a_grade_skipped_after_submission_is_kept_and_named_and_an_update_after_it_is_counted():
    pairs = pd.DataFrame({"pair_id": ["pa", "pb", "pc"], "query_id": ["q1", "q2", "q3"], "doc_id": ["d1", "d2", "d3"]})

    def annotation(annotation_id, grade, cancelled, updated):
        return {**_annotation(annotation_id, 2, grade, cancelled=cancelled), "created_at": "2026-01-02T03:04:05Z",
                "updated_at": updated}

    tasks = [
        {"id": 10, "data": {"pair_id": "pa"}, "annotations": [annotation(5, "2", True, "2026-01-02T03:09:00Z")]},
        {"id": 11, "data": {"pair_id": "pb"}, "annotations": [annotation(6, "1", True, "2026-01-02T03:04:05.2Z")]},
        {"id": 12, "data": {"pair_id": "pc"}, "annotations": [annotation(7, "3", False, "2026-01-02T03:10:00Z")]},
    ]
    labels, report = labels_from_export(tasks, pairs, {2: "a@x.org"}, GUIDELINE, project_id=7)
    assert labels[["query_id", "grade"]].values.tolist() == [["q1", 2], ["q3", 3]]  # q2: skipped before submitting
    assert report.skipped == 1 and report.skipped_after_grading == (("q1", "d1", "a@x.org", 2),)
    assert report.revised_after_submission == 1
    text = report.to_text()
    assert "kept: a@x.org graded q1/d1 2, then skipped it" in text
    assert "revised: 1 grade was updated after its first submission" in text and "--previous" in text


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--overlap", 0, "must be a positive integer, got 0"),
    ("--overlap", "2.5", "must be a positive integer, got '2.5'"),
    ("--batch-size", -1, "must be a positive integer, got -1"),
    ("--batch-size", "nan", "must be a positive integer, got 'nan'"),
])
def test_push_refuses_an_option_off_its_rule_naming_it(option, value, said):
    assert refusal(["push"], option, value) == said


@pytest.mark.parametrize(("make", "message"), [
    (lambda: push(None, "no-pool", GUIDELINE, "title", overlap=0), "overlap must be a positive integer, got 0"),
    (lambda: push(None, "no-pool", GUIDELINE, "title", batch_size=-1), "batch_size must be a positive integer, got -1"),
    (lambda: push_blind(None, [], "no-pool", GUIDELINE, "title", overlap=0),
     "overlap must be a positive integer, got 0"),
    (lambda: push_blind(None, [], "no-pool", GUIDELINE, "title", batch_size=0),
     "batch_size must be a positive integer, got 0"),
    (lambda: push("no-client", "no-pool", GUIDELINE, "ab"), "title must be a text of 3 to 50 characters, got 'ab'"),
    (lambda: push_blind(None, [Annotator("a-long-name@example.org", 2, "http://127.0.0.1:8081", "t")], "no-pool",
                        GUIDELINE, "DL19 judging, second round"),
     "--project with its ' [e-mail]' must be a text of 3 to 50 characters, got "
     "'DL19 judging, second round [a-long-name@example.org]'"),
    (lambda: push_blind(None, [Annotator("a@x.org", 2, "http://127.0.0.1:8081/", "t"),
                               Annotator("b@x.org", 3, "http://127.0.0.1:8081", "t")], "no-pool", GUIDELINE, "title",
                        overlap=2),
     "a@x.org, b@x.org are on one Label Studio server (http://127.0.0.1:8081), where Label Studio Community lets "
     "each read the others' grades, drafts and counts by URL (docs/labelstudio.md); give each annotator a server "
     "of their own: scripts/label-studio.sh start-team; or accept it with --shared-server"),
])
def test_a_push_refuses_what_the_command_refuses_before_connecting(make, message):
    with pytest.raises(InputError) as raised:
        make()
    assert str(raised.value) == message


def test_annotators_on_servers_of_their_own_pass_and_on_one_server_only_when_accepted_with_a_warning():
    own = [Annotator("a@x.org", 2, "http://127.0.0.1:8081", "t"), Annotator("b@x.org", 2, "http://127.0.0.1:8082", "t")]
    assert check_blind(None, own) == ()
    shared = [own[0], Annotator("b@x.org", 3, "", "t")]  # no URL recorded: the --url given
    [warning] = check_blind("http://127.0.0.1:8081/", shared, shared_server=True)
    assert warning.startswith("not blind: a@x.org, b@x.org are on one Label Studio server (http://127.0.0.1:8081)")
    with pytest.raises(InputError, match="are on one Label Studio server"):
        check_blind("http://127.0.0.1:8081", shared)


# Recorded from Label Studio 1.23.2 (export snapshot with the drafts expanded, task data cut to the pair id): task
# 533 after Submit (grade 2), Skip, Cancel skip in the labeling view (tests/test_labelstudio_browser.py); task 534
# after choosing 1 and moving on without submitting; task 1 of another project after the admin changed user 2's
# submitted 2 to 0 without pressing Update.
def _choice(grade: str, region: str) -> list[dict]:
    return [{"value": {"choices": [grade]}, "id": region, "from_name": "grade", "to_name": "text", "type": "choices",
             "origin": "manual"}]


RECORDED_PAIRS = pd.DataFrame({"pair_id": ["3c5c33e1975abfe9", "6ceec1a954fe2db2"], "query_id": ["1110199"] * 2,
                               "doc_id": ["2657989", "5857923"]})
RECORDED_EXPORT = [
    {"id": 533, "annotations": [], "drafts": [
        {"id": 8, "user": "ann-ae8fe2@example.org", "created_username": "ann-ae8fe2@example.org, 11",
         "created_ago": "0\u00a0minutes", "result": _choice("2", "Ak6jXLMz52"), "lead_time": 5.234,
         "was_postponed": False, "import_id": None, "created_at": "2026-12-04T09:05:00.508598Z",
         "updated_at": "2026-12-04T09:05:00.508629Z", "task": 533, "annotation": None}],
     "predictions": [], "data": {"pair_id": "3c5c33e1975abfe9"}, "meta": {},
     "created_at": "2026-12-04T09:04:44.340536Z", "updated_at": "2026-12-04T09:05:00.620852Z", "allow_skip": True,
     "inner_id": 1, "total_annotations": 0, "cancelled_annotations": 0, "total_predictions": 0, "comment_count": 0,
     "unresolved_comment_count": 0, "last_comment_updated_at": None, "project": 5, "updated_by": 11,
     "comment_authors": []},
    {"id": 534, "annotations": [], "drafts": [
        {"id": 9, "user": "ann-ae8fe2@example.org", "created_username": "ann-ae8fe2@example.org, 11",
         "created_ago": "0\u00a0minutes", "result": _choice("1", "J8236-RElf"), "lead_time": 5.138,
         "was_postponed": False, "import_id": None, "created_at": "2026-12-04T09:05:06.851065Z",
         "updated_at": "2026-12-04T09:05:06.851096Z", "task": 534, "annotation": None}],
     "predictions": [], "data": {"pair_id": "6ceec1a954fe2db2"}, "meta": {},
     "created_at": "2026-12-04T09:04:44.340623Z", "updated_at": "2026-12-04T09:04:44.340633Z", "allow_skip": True,
     "inner_id": 2, "total_annotations": 0, "cancelled_annotations": 0, "total_predictions": 0, "comment_count": 0,
     "unresolved_comment_count": 0, "last_comment_updated_at": None, "project": 5, "updated_by": None,
     "comment_authors": []},
]
RECORDED_NOT_UPDATED = {
    "id": 1, "data": {"pair_id": "3c5c33e1975abfe9"}, "updated_at": "2026-12-04T08:51:41.700988Z", "updated_by": 2,
    "annotations": [{"id": 1, "completed_by": 2, "result": _choice("2", "-J9uJDAbQ0"), "was_cancelled": False,
                     "created_at": "2026-12-04T08:51:41.621411Z", "updated_at": "2026-12-04T08:51:41.621463Z",
                     "lead_time": 1.622, "updated_by": 2}],
    "drafts": [{"id": 3, "user": "admin@evalset.local", "created_username": "admin@evalset.local, 1",
                "result": _choice("0", "x1"), "lead_time": 1.0, "created_at": "2026-12-04T08:59:57.108229Z",
                "updated_at": "2026-12-04T08:59:57.108259Z", "task": 1, "annotation": 1}]}


def test_pull_names_a_grade_withdrawn_by_cancel_skip_and_one_never_submitted_from_a_recorded_export():
    labels, report = labels_from_export(RECORDED_EXPORT, RECORDED_PAIRS, {11: "ann@x.org"}, GUIDELINE, project_id=5)
    assert labels.empty and (report.tasks, report.annotations, report.labels) == (2, 0, 0)  # drafts are no labels
    assert report.drafts == (
        Draft("1110199", "2657989", "ann@x.org", 2, "withdrawn", "3c5c33e1975abfe9", 5, 533),
        Draft("1110199", "5857923", "ann@x.org", 1, "not submitted", "6ceec1a954fe2db2", 5, 534))
    assert report.to_text().splitlines()[2:] == [
        "warning: 2 grade(s) held as drafts in Label Studio are not submitted, so not in the labels:",
        "  withdrawn: ann@x.org submitted 1110199/2657989, then withdrew it (Skip, then Cancel skip): Label Studio "
        "deleted the grade and holds 2 as their draft; to restore it, they open task 533 of project 5 and press Submit",
        "  not submitted: ann@x.org chose 1 for 1110199/5857923 and never submitted it; to make it a grade, they open "
        "task 534 of project 5 and press Submit"]


def test_a_change_not_updated_is_named_with_the_grade_the_labels_keep_and_an_unchanged_draft_is_not():
    labels, report = labels_from_export([RECORDED_NOT_UPDATED], RECORDED_PAIRS, {1: "admin@x.org", 2: "b@x.org"},
                                        GUIDELINE, project_id=1)
    assert labels[["annotator", "grade"]].values.tolist() == [["b@x.org", 2]]
    assert report.to_text().splitlines()[-1] == (
        "  not updated: admin@x.org changed 1110199/2657989 to 0 without pressing Update, so the labels keep 2; to "
        "change it, they open task 1 of project 1 and press Update")
    same = {**RECORDED_NOT_UPDATED, "drafts": [{**RECORDED_NOT_UPDATED["drafts"][0], "result": _choice("2", "x1")}]}
    empty = {**RECORDED_EXPORT[1], "drafts": [{**RECORDED_EXPORT[1]["drafts"][0], "result": []}]}
    _, report = labels_from_export([same, empty], RECORDED_PAIRS, {1: "admin@x.org", 2: "b@x.org"}, GUIDELINE, 1)
    assert report.drafts == () and report.drafts_without_grade == 1
    assert report.to_text().splitlines()[-1] == "drafts without a grade (nothing to submit): 1"


def test_a_withdrawn_grade_whose_trace_another_annotator_overwrote_is_told_by_the_earlier_pull(tmp_path):
    # another user saved an annotation of task 533 after the Cancel skip: the task no longer says who deleted one
    task = {**RECORDED_EXPORT[0], "updated_by": 12, "updated_at": "2026-12-04T09:06:00Z", "annotations": [
        {**RECORDED_NOT_UPDATED["annotations"][0], "id": 20, "completed_by": 12}]}
    emails = {11: "ann@x.org", 12: "other@x.org"}
    labels, report = labels_from_export([task], RECORDED_PAIRS, emails, GUIDELINE, project_id=5)
    assert [draft.kind for draft in report.drafts] == ["not submitted"]
    earlier = pd.DataFrame([{"query_id": "1110199", "doc_id": "2657989", "annotator": "ann@x.org", "kind": "human",
                             "grade": 2, "source": "label-studio:5/533/19", "labeled_at": "2026-12-04T09:04:50Z",
                             "comment": ""}])
    write_labels(earlier, tmp_path / "first.tsv")
    _, told = finish_pull(labels, report, RECORDED_PAIRS, GUIDELINE, previous=tmp_path / "first.tsv")
    assert [(draft.annotator, draft.grade, draft.kind) for draft in told.drafts] == [("ann@x.org", 2, "withdrawn")]
    assert "  withdrawn: ann@x.org submitted 1110199/2657989, then withdrew it" in told.to_text()


def test_an_export_listing_drafts_by_id_only_is_refused_not_read_as_no_drafts():
    with pytest.raises(LabelStudioError, match="lists the drafts of task 533 by id only"):
        labels_from_export([{**RECORDED_EXPORT[0], "drafts": [8]}], RECORDED_PAIRS, {}, GUIDELINE, project_id=5)
@pytest.fixture(scope="module")
def pool_3(shared_data, tmp_path_factory) -> Path:
    """The depth-10 pool of the official DL19 runs for the first 3 topics (212 pairs)."""
    from click.testing import CliRunner

    from evalset.cli import main

    root = tmp_path_factory.mktemp("pool-3")
    dl19 = shared_data / "dl19"
    (root / "topics.tsv").write_text("\n".join((dl19 / "topics.tsv").read_text().splitlines()[:3]) + "\n")
    result = CliRunner().invoke(main, [str(a) for a in ("pool", dl19 / "runs" / "official_top100", "--depth", 10,
                                                        "--queries", root / "topics.tsv", "--corpus",
                                                        dl19 / "passages.jsonl.gz", "-o", root / "pool")])
    assert result.exit_code == 0, result.output
    return root / "pool"


@pytest.mark.slow
def test_a_push_whose_guideline_grades_a_pair_of_the_pool_is_refused_before_connecting_naming_it(pool_3):
    version_1 = read_guideline(Path(__file__).resolve().parents[1] / "guidelines" / "relevance-v1.md")
    for make in (lambda: push(None, pool_3, version_1, "title"), lambda: push_blind(
            None, [Annotator("a@x.org", 2, "http://127.0.0.1:8081", "t")], pool_3, version_1, "title")):
        with pytest.raises(InputError) as refused:
            make()
        assert str(refused.value) == (
            f"{version_1.path}:101: the worked example of query 156493, document 6139386 (grade 3) is a pair of the "
            f"pool {pool_3} being pushed, and 3 other examples too: annotators would read its grade in the "
            "instructions; use a guideline whose examples are outside the pool")
    refuse_worked_examples(GUIDELINE, pool_tasks(pool_3)["pair_id"], pool_3)  # the shipped guideline: nothing refused


def test_the_description_tells_annotators_what_to_do_and_keeps_the_guideline_record_last():
    one, many = project_description(GUIDELINE, 1), project_description(GUIDELINE, 212)
    # what a project's card shows first (three lines of about 45 characters): the count and the guideline
    assert many.startswith("212 pairs to grade, by the relevance guideline v2 (see Instructions): read the query and "
                           "the passage, choose a grade from 0 to 3, press Submit.\n\n")
    assert one.startswith("1 pair to grade, ")
    assert many.splitlines()[-1] == f"evalset guideline relevance v2 sha256 {GUIDELINE.sha256}"
    assert DESCRIPTION_PATTERN.search(many)["sha256"] == GUIDELINE.sha256
    assert all(description_matches(text, GUIDELINE) for text in (one, many, description_record(GUIDELINE)))
    assert not description_matches(many.replace("212", "212 easy"), GUIDELINE)


def test_push_says_its_counts_in_good_english_and_warns_of_a_shared_overlap():
    single = PushResult(title="t", project_id=1, project_created=True, pool_tasks=1, already_present=0, added=1,
                        duplicates=1, overlap=1)
    assert single.to_text() == "project 't' (id 1, created): 1 pool task, 0 already there, 1 added; overlap 1"
    assert single.notes == ["warning: the project holds 1 duplicate task of the same pair_id (not made by this push)"]
    shared = PushResult(title="t", project_id=1, project_created=True, pool_tasks=2, already_present=0, added=2,
                        duplicates=0, overlap=2)
    assert "2 pool tasks" in shared.to_text()
    assert shared.notes == ["warning: --overlap 2 in one shared project: on Label Studio Community every annotator "
                            "of a project sees the others' grades, so this double judging is not blind; push with "
                            "--annotators a@x,b@y for a project per annotator, each on a server of their own "
                            "(scripts/label-studio.sh start-team; docs/labelstudio.md)"]
