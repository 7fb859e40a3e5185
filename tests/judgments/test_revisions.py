"""Grades that changed upstream (evalset.judgments.revisions): followed by each judgment's own source."""

import pandas as pd

from evalset.judgments.revisions import grade_revisions, revision_lines


def _labels(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "kind", "grade", "source", "labeled_at",
                                       "comment"])


EARLIER = _labels([
    ("q1", "d1", "a@x", "human", 2, "label-studio:7/10/5", "2026-01-01T10:00:00.000000Z", ""),
    ("q1", "d2", "a@x", "human", 1, "label-studio:7/11/6", "2026-01-01T10:01:00.000000Z", ""),
    ("q2", "d1", "b@x", "human", 3, "label-studio:7/12/7", "2026-01-01T10:02:00.000000Z", ""),
    ("q2", "d2", "nist", "human", 0, "qrels.txt", "", ""),  # a file's name: a batch, not a judgment
    ("q2", "d3", "nist", "human", 1, "qrels.txt", "", ""),
])


def test_a_changed_grade_is_revised_a_missing_judgment_withdrawn_and_a_new_one_no_change():
    later = _labels([
        ("q1", "d1", "a@x", "human", 0, "label-studio:7/10/5", "2026-01-02T09:00:00.000000Z", ""),
        ("q1", "d2", "a@x", "human", 1, "label-studio:7/11/6", "2026-01-01T10:01:00.000000Z", ""),
        ("q3", "d9", "a@x", "human", 2, "label-studio:7/13/8", "2026-01-02T09:30:00.000000Z", ""),
        ("q2", "d2", "nist", "human", 3, "qrels.txt", "", ""),
    ])
    revisions = grade_revisions(EARLIER, later)
    assert revisions[["query_id", "doc_id", "annotator", "change"]].values.tolist() == [
        ["q1", "d1", "a@x", "revised"], ["q2", "d1", "b@x", "withdrawn"]]
    assert revisions["earlier_grade"].tolist() == [2, 3]
    assert revisions["later_grade"].tolist()[0] == 0 and pd.isna(revisions["later_grade"].tolist()[1])
    assert revisions["later_at"].tolist() == ["2026-01-02T09:00:00.000000Z", ""]


def test_the_text_counts_and_lists_each_change_with_both_grades_and_times():
    later = EARLIER.assign(grade=[0, 1, 3, 0, 1])
    text = "\n".join(revision_lines(grade_revisions(EARLIER, later), "v1"))
    assert text.splitlines()[0] == "grades changed since v1: 1 revised, 0 withdrawn"
    assert "2 -> 0" in text and "2026-01-01T10:00:00.000000Z -> 2026-01-01T10:00:00.000000Z" in text
    assert revision_lines(grade_revisions(EARLIER, EARLIER), "v1") == []
