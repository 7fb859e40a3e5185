"""The evaluation room as a specification: one door to per-query values, whatever shape the runs come in."""

import pandas as pd
import pytest
import pytrec_eval

from evalset.comparing import compare_runs
from evalset.contract import ContractOptions, EvaluationContract
from evalset.errors import InputError
from evalset.evaluation import Evaluation, per_query_values
from evalset.io import runstream
from evalset.io.trec import read_run
from evalset.metrics import evaluate

DL19 = "data/dl19"
RUNS = [f"{DL19}/runs/bm25base_p.run.gz", f"{DL19}/runs/idst_bert_p1.run.gz"]


@pytest.fixture(scope="module")
def nist():
    return Evaluation.on_qrels(f"{DL19}/nist.qrels")


def test_files_and_frames_give_the_same_values_as_the_engine(nist):
    from_files = per_query_values(nist, RUNS, ["ndcg@10", "ap"])
    frames = {name: read_run(path) for name, path in zip(from_files.runs, RUNS, strict=True)}
    from_frames = per_query_values(nist, frames, ["ndcg@10", "ap"])
    for name, run in frames.items():
        engine = evaluate(run, nist.qrels, ["ndcg@10", "ap"])
        pd.testing.assert_frame_equal(from_files.tables[name], engine)
        pd.testing.assert_frame_equal(from_frames.tables[name], engine)
    assert from_files.runs == ["bm25base_p", "idst_bert_p1"]
    assert from_files.mean("idst_bert_p1", "ndcg@10") == pytest.approx(0.7645, abs=5e-5)  # as NIST publishes it
    assert list(from_files.values("ndcg@10").columns) == from_files.runs and len(from_files.values("ap")) == 43


def test_judged_at_k_is_placed_beside_ndcg_at_k_when_asked(nist):
    assert list(per_query_values(nist, RUNS[:1], ["ndcg@10"], judged=True).measures) == ["ndcg@10", "judged@10"]
    assert list(per_query_values(nist, RUNS[:1], ["ndcg@10"]).measures) == ["ndcg@10"]


def test_the_contract_options_change_the_default_on_qrels():
    evaluation = Evaluation.on_qrels(f"{DL19}/nist.qrels", ContractOptions(rel_level=2))
    assert evaluation.contract == EvaluationContract(rel_level=2) and evaluation.overridden == ()
    p10 = per_query_values(evaluation, RUNS[:1], ["p@10"]).column("bm25base_p", "p@10")
    qrels, run = evaluation.qrels, read_run(RUNS[0])
    reference = pytrec_eval.RelevanceEvaluator(
        {q: dict(zip(g["doc_id"], g["grade"].astype(int), strict=True)) for q, g in qrels.groupby("query_id")},
        {"P"}, relevance_level=2).evaluate(
        {q: dict(zip(g["doc_id"], g["score"], strict=True)) for q, g in run.groupby("query_id")})
    assert p10.to_dict() == pytest.approx({q: v["P_10"] for q, v in reference.items()})
    assert p10.mean() == pytest.approx(0.4116, abs=5e-5)


def test_a_run_sharing_no_query_with_the_judgments_is_refused(nist):
    stray = pd.DataFrame({"query_id": ["x1", "x1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    with pytest.raises(InputError, match=r"run stray shares no query with the judgments: its queries \(x1, \.\.\.\)"):
        per_query_values(nist, {"stray": stray}, ["ndcg@10"])


def test_compare_streams_a_run_file_above_the_threshold_and_returns_its_per_query_values(nist, monkeypatch):
    streamed = []
    read_in_blocks = runstream.query_blocks

    def recording(path, *args, **kwargs):  # passes through: records which files were read in blocks
        streamed.append(str(path))
        return read_in_blocks(path, *args, **kwargs)

    whole = compare_runs(nist, RUNS, "ndcg@10", permutations=999)
    assert streamed == []  # small files are read whole
    monkeypatch.setattr(runstream, "query_blocks", recording)
    monkeypatch.setattr(runstream, "STREAM_ABOVE_COMPRESSED_BYTES", 0)
    by_blocks = compare_runs(nist, RUNS, "ndcg@10", permutations=999)
    assert sorted(streamed) == sorted(RUNS)
    assert by_blocks.results == whole.results
    pd.testing.assert_frame_equal(by_blocks.per_query.values("ndcg@10"), whole.per_query.values("ndcg@10"))
    assert by_blocks.results[0].mean_difference == pytest.approx(0.7645 - 0.5058, abs=1e-4)
