"""Annotations: telling a labels table from qrels, and the one rule for an annotator's repeated judgments of a
pair (collapse exact repeats, refuse different grades unless a rule says which stands, count both)."""

import gzip

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.annotations import (
    ANNOTATIONS_COLUMNS,
    LABELS_COLUMNS,
    is_labels_table,
    labels_from_file,
    qrels_annotator,
    read_annotations,
    settle_repeats,
)


def write_table(path, rows):
    """A labels table of (query, doc, annotator, grade, labeled_at), kind human; line 2 is the first row."""
    header = "\t".join(LABELS_COLUMNS) + "\n"
    path.write_text(header + "".join(f"{q}\t{d}\t{a}\thuman\t{g}\ttest\t{t}\t\n" for q, d, a, g, t in rows))
    return path


def judgments(rows):
    """Judgments as a frame (no file): (query, doc, annotator, grade, labeled_at)."""
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "grade", "labeled_at"]).assign(kind="human")


# ------------------------------------------------------------------------------------------ labels table or qrels
def test_a_labels_table_is_told_from_qrels_by_its_first_header_field(tmp_path):
    table = write_table(tmp_path / "labels.tsv", [("q1", "d1", "ann", 1, "")])
    qrels = tmp_path / "nist.qrels"
    qrels.write_text("q1 0 d1 1\n")
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    packed = tmp_path / "labels.tsv.gz"
    packed.write_bytes(gzip.compress(("\n" + table.read_text()).encode()))  # a leading blank line is skipped
    assert is_labels_table(table) and is_labels_table(packed)
    assert not is_labels_table(qrels)
    assert not is_labels_table(empty)


def test_a_qrels_file_is_one_annotator_named_by_the_file(tmp_path):
    qrels = tmp_path / "llama-3-70b.fourprompts.qrels"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 -1\n")
    assert qrels_annotator(qrels) == "llama-3-70b.fourprompts"
    read = read_annotations([(qrels, "llm")])
    assert list(read.columns) == list(ANNOTATIONS_COLUMNS)
    assert read[["annotator", "kind", "grade", "judged", "source", "file"]].values.tolist() == [
        ["llama-3-70b.fourprompts", "llm", 2, True, qrels.name, str(qrels)],
        ["llama-3-70b.fourprompts", "llm", -1, False, qrels.name, str(qrels)]]


def test_an_empty_annotator_in_a_labels_table_is_refused_with_its_line(tmp_path):
    table = write_table(tmp_path / "labels.tsv", [("q1", "d1", "ann", 1, ""), ("q1", "d2", " ", 0, "")])
    with pytest.raises(InputError, match="empty annotator") as error:
        read_annotations([(table, "human")])
    assert (error.value.path, error.value.line) == (str(table), 3)


# ------------------------------------------------------------------------------------------------ the one rule
def test_an_exact_repeat_is_collapsed_and_counted_per_annotator():
    settled, counts = settle_repeats(judgments([("q", "a", "ann", 1, ""), ("q", "a", "bob", 2, ""),
                                                ("q", "a", "ann", 1, ""), ("q", "b", "ann", 0, "")]))
    assert settled[["doc_id", "annotator", "grade"]].values.tolist() == [["a", "ann", 1], ["a", "bob", 2],
                                                                         ["b", "ann", 0]]
    assert counts == {"ann": {"unjudged": 0, "collapsed_duplicates": 1, "conflicting_grades_settled": 0},
                      "bob": {"unjudged": 0, "collapsed_duplicates": 0, "conflicting_grades_settled": 0}}


def test_different_grades_are_refused_naming_every_place_and_counting_the_others():
    frame = judgments([("q", "a", "ann", 1, ""), ("q", "a", "ann", 2, ""), ("q", "a", "ann", 3, ""),
                       ("q", "b", "bob", 0, ""), ("q", "b", "bob", 1, "")])
    with pytest.raises(InputError) as error:
        settle_repeats(frame)
    assert str(error.value) == ("annotator ann gives query q document a 3 different grades (row 1 grade 1, "
                                "row 2 grade 2, row 3 grade 3); 1 more pairs are graded differently by one "
                                "annotator; --conflicting-grades latest|first says which judgment stands")


def test_latest_and_first_order_by_labeled_at_then_input_order_and_untimed_judgments_are_oldest():
    frame = judgments([("q", "a", "ann", 3, "2026-01-02T00:00:00Z"),
                       ("q", "a", "ann", 1, "2026-01-01T23:00:00-02:00"),   # 01:00 UTC on the 2nd: the latest
                       ("q", "a", "ann", 0, ""),                            # no time: the oldest
                       ("q", "b", "ann", 2, ""), ("q", "b", "ann", 1, "")])  # no times: input order
    latest, counts = settle_repeats(frame, "latest")
    assert latest[["doc_id", "grade"]].values.tolist() == [["a", 1], ["b", 1]]
    assert counts["ann"] == {"unjudged": 0, "collapsed_duplicates": 0, "conflicting_grades_settled": 2}
    first, _ = settle_repeats(frame, "first")
    assert first[["doc_id", "grade"]].values.tolist() == [["a", 0], ["b", 2]]


def test_a_time_that_cannot_be_read_is_refused_when_the_rule_needs_it(tmp_path):
    table = write_table(tmp_path / "labels.tsv", [("q", "a", "ann", 1, "2026-01-02T00:00:00Z"),
                                                  ("q", "a", "ann", 2, "yesterday")])
    with pytest.raises(InputError, match="labeled_at 'yesterday' is not an ISO 8601 time") as error:
        settle_repeats(read_annotations([(table, "human")]), "latest")
    assert (error.value.path, error.value.line) == (str(table), 3)
    with pytest.raises(InputError, match="two different grades"):  # refuse needs no time
        settle_repeats(read_annotations([(table, "human")]))


def test_a_negative_qrels_grade_is_unjudged_after_the_rule_and_conflicts_with_a_grade(tmp_path):
    qrels = tmp_path / "judge.qrels"
    qrels.write_text("q 0 a -1\nq 0 a -1\nq 0 b 2\nq 0 c -1\nq 0 c 1\n")
    with pytest.raises(InputError) as error:
        settle_repeats(read_annotations([(qrels, "human")]))
    assert f"({qrels}:4 grade -1, {qrels}:5 grade 1)" in str(error.value)
    settled, counts = settle_repeats(read_annotations([(qrels, "human")]), "first")
    assert settled[["doc_id", "grade"]].values.tolist() == [["b", 2]]
    assert counts == {"judge": {"unjudged": 2, "collapsed_duplicates": 1, "conflicting_grades_settled": 1}}
    assert "judged" not in settled


def test_labels_from_file_applies_the_rule(tmp_path):
    table = write_table(tmp_path / "labels.tsv", [("q", "a", "ann", 1, ""), ("q", "a", "ann", 1, ""),
                                                  ("q", "a", "ann", 2, "")])
    with pytest.raises(InputError, match=r"labels.tsv:2 grade 1, .*labels.tsv:4 grade 2"):
        labels_from_file(table)
    qrels = tmp_path / "nist.qrels"
    qrels.write_text("q 0 a 1\nq 0 b -1\n")
    labels = labels_from_file(qrels, "human")
    assert list(labels.columns) == list(LABELS_COLUMNS) and labels.attrs["unjudged_rows"] == 1
    assert labels[["annotator", "grade"]].values.tolist() == [["nist", 1]]


def test_an_unknown_rule_is_refused():
    with pytest.raises(InputError) as raised:
        settle_repeats(judgments([("q", "a", "ann", 1, "")]), "last")
    assert str(raised.value) == "conflicting_grades must be one of refuse, latest, first, got 'last'"


@pytest.mark.parametrize("separator", [",", ";"])
def test_a_labels_table_saved_as_csv_is_refused_as_such_not_as_bad_qrels(tmp_path, separator):
    """Issue 29: a labels CSV was refused with a message about qrels fields."""
    path = tmp_path / "labels.csv"
    path.write_text(separator.join(["query_id", "doc_id", "annotator", "kind", "grade"]) + "\n"
                    + separator.join(["1", "d", "a", "human", "1"]) + "\n")
    with pytest.raises(InputError, match=f"this looks like a labels table separated by '{separator}': labels "
                                         "tables are tab-separated") as refused:
        is_labels_table(path)
    assert (refused.value.path, refused.value.line) == (str(path), 1)
