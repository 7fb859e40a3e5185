"""Runs with named columns (TSV/CSV with a header, Parquet): read by content wherever a run is read, never
streamed, scored exactly as the TREC run they hold; a bad file is one error naming the file, the line and the
cause."""

import json
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io import runstream
from evalset.io.files import content_kind
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate, evaluate_file, prepare_qrels

MEASURES = ["ndcg@10", "ap", "rr", "p@10", "recall@100"]


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    run = root / "runs" / "official_full" / "ICT-BERT2.run.gz"
    return root / "qrels.txt", run, pd.DataFrame(ir_measures.read_trec_run(str(run)))


@pytest.mark.parametrize("name", ["run.csv", "run.tsv", "run.parquet", "run.dat"])
def test_a_table_run_scores_exactly_as_the_trec_run_it_holds(dl19, tmp_path, name):
    qrels_path, run_path, frame = dl19
    path = tmp_path / name
    if name == "run.tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif name == "run.csv":
        frame.to_csv(path, index=False)
    else:  # Parquet, told by its magic bytes whatever the name
        frame.to_parquet(path)
    assert content_kind(str(path)) == ("parquet" if name.endswith((".parquet", ".dat")) else "run-table")
    run = read_run(path)
    assert list(run.columns) == ["query_id", "doc_id", "rank", "score"] and len(run) == len(frame)
    prepared = prepare_qrels(read_qrels(qrels_path))
    whole = evaluate(read_run(run_path), prepared, MEASURES)
    pd.testing.assert_frame_equal(evaluate(run, prepared, MEASURES), whole, check_exact=True)
    # never streamed, even when asked: one block, as read_run reads it
    pd.testing.assert_frame_equal(evaluate_file(path, prepared, MEASURES, stream=True), whole, check_exact=True)
    assert runstream.first_query_ids(path, 2) == list(pd.unique(frame["query_id"]))[:2]


def test_a_table_run_is_never_streamed(tmp_path, monkeypatch):
    monkeypatch.setattr(runstream, "STREAM_ABOVE_BYTES", 0)
    csv = tmp_path / "r.csv"
    csv.write_text("query_id,doc_id,score\nq1,d1,1.0\n")
    trec = tmp_path / "r.run"
    trec.write_text("q1 Q0 d1 1 1.0 t\n")
    assert not runstream.streams(csv) and runstream.streams(trec)


def test_the_score_command_reads_a_csv_run_by_its_content(dl19, tmp_path):
    qrels_path, run_path, frame = dl19
    frame.to_csv(tmp_path / "ICT-BERT2.csv", index=False)

    def scored(path: Path) -> dict:
        result = CliRunner().invoke(main, ["score", "--qrels", str(qrels_path), str(path), "-m", "ap",
                                           "--format", "json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["runs"]

    assert scored(tmp_path / "ICT-BERT2.csv") == scored(run_path)  # the same run name too


def test_columns_are_named_in_any_case_with_extra_columns_and_a_rank(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("Rank\tQID\ttext\tDocNo\tSCORE\n2\tq1\t\"a, b\"\td1\t1.0\n1\tq1\tx\td2\t1.0\n\n1\tq2\ty\td1\t0.5\n")
    run = read_run(path)
    assert run.to_dict("list") == {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"], "rank": [2, 1, 1],
                                   "score": [1.0, 1.0, 0.5]}


def test_numeric_ids_of_a_parquet_run_are_strings(tmp_path):
    path = tmp_path / "r.parquet"
    pd.DataFrame({"qid": [19335, 19335], "docid": [8412, 7], "score": [2.0, 1.0]}).to_parquet(path)
    run = read_run(path)
    assert run.to_dict("list") == {"query_id": ["19335", "19335"], "doc_id": ["8412", "7"], "rank": [1, 2],
                                   "score": [2.0, 1.0]}


@pytest.mark.parametrize(("content", "line", "message"), [
    ("query_id,score\nq1,1.0\n", 1, "no doc_id column among the columns found: query_id, score"),
    ("qid\tdocno\trank\nq1\td1\t1\n", 1, "no score column among the columns found: qid, docno, rank"),
    ("query_id\tquery\nq1\thello\n", 1, "no doc_id or score column among the columns found: query_id, query"),
    ("qid,query_id,doc_id,score\nq1,q1,d1,1\n", 1, "two query_id columns in the run's header: qid, query_id"),
    ("query_id,doc_id,score\nq1,d1,1.0\n\nq1,d2,high\n", 4, "score must be a finite number, found 'high'"),
    ("query_id,doc_id,score\nq1,d1,1.0\nq1,d2,inf\n", 3, "score must be a finite number, found inf"),
    ("query_id,doc_id,score,rank\nq1,d1,1.0,1\nq1,d2,0.5,1.5\n", 3, "rank must be an integer, found '1.5'"),
    ("query_id,doc_id,score\nq1,d1,1.0\nq1,d2\n", 3, "expected 3 comma-separated fields as in the header, found 2"),
    ("query_id,doc_id,score\nq1,d1,1.0\n,d2,0.5\n", 3, "empty query_id"),
    ("query_id,doc_id,score\n", None, "no run lines: the file holds a header and no row"),
])
def test_a_bad_table_run_is_one_error_naming_the_file_line_and_cause(tmp_path, content, line, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        read_run(path)
    assert caught.value.path == str(path) and caught.value.line == line
    assert message in caught.value.message and "\n" not in str(caught.value)


def test_a_bad_parquet_run_is_one_error_naming_the_file(tmp_path):
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="cannot read the Parquet file"):
        read_run(broken)
    nan = tmp_path / "nan.parquet"
    pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]}).to_parquet(nan)
    with pytest.raises(InputError, match=r"score must be a finite number, found nan \(row 1\)"):
        read_run(nan)
    no_score = tmp_path / "no_score.parquet"
    pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"]}).to_parquet(no_score)
    with pytest.raises(InputError, match="no score column among the columns found: query_id, doc_id"):
        read_run(no_score)


def test_content_kind_tells_a_run_table_from_a_queries_file(tmp_path):
    kinds = {"query_id\tquery\n": "queries-tsv", "query_id\tdoc_id\tscore\n": "run-table",
             "qid,docno,score,rank\n": "run-table", "qid\tdocno\n": "table", "q1 Q0 d1 1 1.0 t\n": "lines",
             "query-id\tcorpus-id\tscore\n": "beir-qrels"}
    for number, (text, kind) in enumerate(kinds.items()):
        path = tmp_path / f"f{number}"
        path.write_text(text)
        assert content_kind(str(path)) == kind, text
