"""Reading annotations for agreement: a file with no judgment is refused, not silently left out (issue 15,
item 10)."""

import pytest

from evalset.agreement.inputs import load_grades
from evalset.errors import InputError

HEADER = "query_id\tdoc_id\tannotator\tkind\tgrade\tsource\tlabeled_at\tcomment\n"


def test_a_labels_table_with_a_header_and_no_row_is_refused(tmp_path):
    (tmp_path / "nist.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "ann.tsv").write_text(HEADER)
    with pytest.raises(InputError, match="no judgments in this file") as caught:
        load_grades([str(tmp_path / "nist.qrels"), str(tmp_path / "ann.tsv")])
    assert caught.value.path == str(tmp_path / "ann.tsv")


@pytest.mark.parametrize(("text", "cause"), [("", "the qrels are empty"), ("q1 0 d1 -1\n", "negative grade")])
def test_qrels_with_nothing_judged_are_refused(tmp_path, text, cause):
    (tmp_path / "nist.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "judge.qrels").write_text(text)
    with pytest.raises(InputError, match=cause) as caught:
        load_grades([str(tmp_path / "nist.qrels"), str(tmp_path / "judge.qrels")])
    assert caught.value.path == str(tmp_path / "judge.qrels")


def test_two_files_with_judgments_are_both_read(tmp_path):
    (tmp_path / "nist.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "ann.tsv").write_text(HEADER + "q1\td1\tann\thuman\t1\tls\t\t\n")
    grades, _ = load_grades([str(tmp_path / "nist.qrels"), str(tmp_path / "ann.tsv")])
    assert sorted(grades["annotator"].unique()) == ["ann", "nist"]
