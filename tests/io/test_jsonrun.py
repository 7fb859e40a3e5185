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
