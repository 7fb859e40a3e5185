"""The one reader of grades: one message for a file holding no judgment, whichever stage reads it (agreement,
estimate, freeze, quality), and one rule for an annotator's repeated judgments."""

from pathlib import Path

import pytest

from evalset.agreement import load_grades
from evalset.errors import InputError
from evalset.estimate import read_grades as estimate_grades
from evalset.io.guideline import read_guideline
from evalset.judgments import read_grades, read_judgments
from evalset.quality import read_gold
from evalset.sets.inputs import read_judgments as freeze_judgments

HEADER = "query_id\tdoc_id\tannotator\tkind\tgrade\tsource\tlabeled_at\tcomment\n"
GUIDELINE = read_guideline(Path(__file__).resolve().parents[2] / "guidelines" / "relevance-v2.md")
NO_JUDGMENT = ("no judgments in this file: it is empty or a header alone, or holds only negative (unjudged) qrels "
               "grades")
NO_HUMAN_JUDGMENT = ("no human judgments in this file: it is empty or a header alone, or holds only negative "
                     "(unjudged) qrels grades or labels of another kind")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "nist.qrels").write_text("q1 0 d1 1\nq1 0 d2 -1\nq1 0 d3 0\n")
    (tmp_path / "header.tsv").write_text(HEADER)
    (tmp_path / "llm.tsv").write_text(HEADER + "q1\td1\tjudge\tllm\t2\tx\t\t\n")
    return {name: str(tmp_path / name) for name in ("nist.qrels", "header.tsv", "llm.tsv")}


def refused(read, path):
    with pytest.raises(InputError) as caught:
        read()
    assert caught.value.path == path
    return caught.value.message


def test_every_stage_refuses_a_file_with_no_judgment_with_the_one_message(files):
    nist, header = files["nist.qrels"], files["header.tsv"]
    messages = {
        "reader": refused(lambda: read_judgments([(nist, "human"), (header, "human")]), header),
        "agreement": refused(lambda: load_grades([nist, header], [nist]), header),
        "freeze": refused(lambda: freeze_judgments([nist, header]), header),
        "quality": refused(lambda: read_gold(header, GUIDELINE), header),
    }
    assert messages == dict.fromkeys(messages, NO_JUDGMENT)
    assert refused(lambda: estimate_grades([nist, header], "human"), header) == NO_HUMAN_JUDGMENT


def test_a_file_of_labels_of_another_kind_holds_no_judgment_of_the_kind_asked_for(files):
    assert refused(lambda: estimate_grades([files["llm.tsv"]], "human"), files["llm.tsv"]) == NO_HUMAN_JUDGMENT
    assert len(read_judgments([(files["llm.tsv"], "human")])) == 1


def test_every_empty_file_is_named(files, tmp_path):
    other = tmp_path / "other.tsv"
    other.write_text(HEADER)
    message = refused(lambda: freeze_judgments([files["header.tsv"], files["nist.qrels"], other]), files["header.tsv"])
    assert message == NO_JUDGMENT.replace("this file:", f"this file (so are {other}):")


def test_repeats_are_settled_by_the_rule_and_other_kinds_and_unjudged_grades_left_out(files, tmp_path):
    twice = tmp_path / "twice.tsv"
    twice.write_text(HEADER + "q1\td1\tann\thuman\t1\tx\t2026-01-01T10:00:00Z\t\n"
                     "q1\td1\tann\thuman\t3\tx\t2026-01-02T10:00:00Z\t\n" + "q1\td2\tgpt\tllm\t0\tx\t\t\n")
    sources = [(files["nist.qrels"], "human"), (str(twice), "human")]
    with pytest.raises(InputError, match="annotator ann gives query q1 document d1 two different grades"):
        read_grades(sources)
    reading = read_grades(sources, "latest", kind="human")
    assert reading.judgments[["annotator", "doc_id", "grade"]].values.tolist() == [
        ["nist", "d1", 1], ["nist", "d3", 0], ["ann", "d1", 3]]
    assert reading.other_kind == 1
    assert reading.counts == {"nist": {"unjudged": 1, "collapsed_duplicates": 0, "conflicting_grades_settled": 0},
                              "ann": {"unjudged": 0, "collapsed_duplicates": 0, "conflicting_grades_settled": 1}}
