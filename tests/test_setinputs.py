"""What a frozen set may be made of: ids TREC qrels can hold, and a built version that reads back as written."""

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.annotations import write_labels
from evalset.io.queries import write_queries
from evalset.io.trec import write_qrels
from evalset.sets import as_queries_table
from evalset.sets.inputs import bad_ids, check_reads_back


def test_ids_that_trec_qrels_cannot_hold_are_empty_or_hold_white_space():
    ids = pd.Series(["q1", "", "19 x", "a\tb", "d\n", "ok-id_2"])
    assert bad_ids(ids).tolist() == [False, True, True, True, True, False]


def build(folder, qrels):
    queries = as_queries_table(pd.DataFrame({"query_id": ["q1", "19 x"], "query": ["one", "two"]}))
    labels = qrels.assign(annotator="ann", kind="human", source="t", labeled_at="", comment="")
    write_qrels(qrels, folder / "qrels.txt")
    write_queries(queries, folder / "queries.tsv")
    write_labels(labels, folder / "labels.tsv")
    return queries, labels


def test_a_built_version_that_reads_back_passes(tmp_path):
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "grade": [2]})
    queries, labels = build(tmp_path, qrels)
    check_reads_back(tmp_path, qrels, queries, labels)


def test_a_built_version_whose_qrels_do_not_read_back_is_refused(tmp_path):
    qrels = pd.DataFrame({"query_id": ["19 x"], "doc_id": ["d1"], "grade": [2]})
    queries, labels = build(tmp_path, qrels)
    with pytest.raises(InputError, match=r"^the version built from these inputs does not read back \(expected 4 "
                                         r".*\); nothing was frozen$"):
        check_reads_back(tmp_path, qrels, queries, labels)
    written = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "grade": [2]})
    write_qrels(written, tmp_path / "qrels.txt")
    with pytest.raises(InputError, match=r"does not read back as written \(qrels.txt\); nothing was frozen"):
        check_reads_back(tmp_path, written.assign(grade=3), queries, labels)
