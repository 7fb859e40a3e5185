"""JSON runs ({query_id: {doc_id: score}}, ranx's and pytrec_eval's shape): read by content, scored as the TREC
run they hold."""

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.trec import read_run

DL19 = Path(__file__).resolve().parents[2] / "data" / "dl19"
RUN = DL19 / "runs" / "bm25base_p.run.gz"


def _as_json(run_path: Path, target: Path) -> Path:
    run = read_run(run_path)
    document = {}
    for row in run.itertuples():
        document.setdefault(row.query_id, {})[row.doc_id] = row.score
    target.write_text(json.dumps(document))
    return target


def test_a_json_run_scores_exactly_as_the_trec_run_it_holds(tmp_path):
    json_run = _as_json(RUN, tmp_path / "bm25base_p.json")
    frame = read_run(json_run)
    assert list(frame.columns) == ["query_id", "doc_id", "rank", "score"]
    assert frame[["query_id", "doc_id", "score"]].equals(read_run(RUN)[["query_id", "doc_id", "score"]])

    def scored(path):
        result = CliRunner().invoke(main, ["score", "--qrels", str(DL19 / "nist.qrels"), str(path), "-m", "ndcg@10",
                                           "-m", "ap", "--per-query", "--format", "json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert scored(json_run) == scored(RUN)  # the same run name too: bm25base_p


def test_a_gzipped_json_run_is_read_too(tmp_path):
    gz = tmp_path / "r.json.gz"
    gz.write_bytes(gzip.compress(json.dumps({"q1": {"a": 2.0, "b": 1}}).encode()))
    assert read_run(gz).values.tolist() == [["q1", "a", 1, 2.0], ["q1", "b", 2, 1.0]]


@pytest.mark.parametrize("content, message", [
    ('{"q1": {"a": "high"}}', "query q1, document a: score must be a finite number, found 'high'"),
    ('{"q1": {"a": true}}', "score must be a finite number, found True"),
    ('{"q1": [1, 2]}', "query q1: a JSON run maps each query to {doc_id: score}, found list"),
    ('{"q1": {}}', "no run lines: the JSON run holds no document"),
    ('{"q1": {"a": 1}', "not a JSON run"),
    ('{"q1": {"a": 1}, "q1": {"b": 2}}', "'q1' is given twice in one JSON object, which keeps only the last"),
    ('{"q1": {"a": 1, "a": 2}}', "'a' is given twice in one JSON object"),
    ('[{"qid": "q1", "docno": "a"}]', "record 1: no score field"),
    ('[{"qid": "q1", "docno": "a", "score": 1, "rank": "one"}]', "record 1: rank must be an integer, found 'one'"),
    ('[3]', "record 1: a record is an object with a query id, a document id and a score, found int"),
    ('{"qid": "q1", "docno": "a", "score": 1}\n{"qid": "q1", "docid": true, "score": 2}',
     "bad.json:2: record: doc_id must be a string or an integer, found True"),
])
def test_a_bad_json_run_is_one_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")) as caught:
        read_run(path)
    assert caught.value.path == str(path)


def test_a_json_run_sharing_no_query_is_named_with_its_queries(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"q9": {"d": 1}}')
    result = CliRunner().invoke(main, ["score", "--qrels", str(DL19 / "nist.qrels"), str(path)])
    assert result.exit_code == 2
    assert "run other shares no query with the judgments: its queries (q9, ...)" in result.output


@pytest.mark.parametrize("lines", [False, True])
def test_records_as_pandas_writes_them_are_a_json_run(tmp_path, lines):
    """``to_json(orient="records")``, with and without ``lines=True``: ids as written (numbers as their digits),
    ranks in written order within each query."""
    import pandas as pd

    frame = pd.DataFrame({"qid": [1037798, 1037798, 2], "docno": ["a", "b", "c"], "score": [2.0, 1.0, 3.0]})
    path = tmp_path / "run.json"
    frame.to_json(path, orient="records", lines=lines)
    assert read_run(path).values.tolist() == [["1037798", "a", 1, 2.0], ["1037798", "b", 2, 1.0], ["2", "c", 1, 3.0]]
