"""Near-identical runs through the document design's simulation on DL19 (NIST's grades the pool, Llama-3-70B the
judge, B = 1,000): ``test1`` and ``TUA1-1`` (true P@10 difference 0, nDCG@10 -9.3e-7) and ``bm25base_p`` against a copy
with its ranks 9 and 10 exchanged in 5 queries. The "this set" interval of such a difference rarely excludes 0 and
never has zero width where the two runs could differ; where they cannot (the copy's P@10: the same top 10), the
difference is exactly 0. The benchmark (scripts/bench_document_sample.py --swapped-copy) gives the 200-draw
figures over the 37 runs; here 40 draws over these four."""

from pathlib import Path

import numpy as np
import pytest

from evalset.contract import EvaluationContract
from evalset.estimate.documents.validation import simulate_documents
from evalset.estimate.sources import read_grades, read_judges
from evalset.io.trec import read_run
from evalset.metrics.ranking import top_k

RUNS = Path("data/dl19/runs")


def swapped(run, queries):
    """``run`` with the documents at ranks 9 and 10 exchanged in ``queries`` (scores kept)."""
    top = top_k(run, 10)
    copy = run.copy()
    for query in queries:
        ninth, tenth = top[top["query_id"] == query].set_index("rank").loc[[9, 10], "doc_id"]
        rows = copy["query_id"] == query
        at_ninth, at_tenth = rows & (copy["doc_id"] == ninth), rows & (copy["doc_id"] == tenth)
        copy.loc[at_ninth, "doc_id"], copy.loc[at_tenth, "doc_id"] = tenth, ninth
    return copy


@pytest.fixture(scope="module")
def columns():
    qrels = read_grades(["data/dl19/nist.qrels"], "human").qrels
    llm = read_judges([Path("data/dl19/llm_labels/llama-3-70b.fourprompts.qrels")], "refuse", qrels)
    runs = {name: read_run(RUNS / f"{name}.run.gz") for name in ("test1", "TUA1-1", "bm25base_p")}
    runs["copy"] = swapped(runs["bm25base_p"], sorted(qrels["query_id"].unique())[:5])
    result = simulate_documents(runs, qrels, llm, budget=1000, draws=40, measures=["ndcg@10", "p@10"],
                                contract=EvaluationContract(rel_level=2), compare_slices=False)
    return result.columns.set_index(["measure", "name"])


@pytest.mark.slow
@pytest.mark.parametrize("measure", ["ndcg@10", "p@10"])
def test_two_runs_that_rank_alike_rarely_differ_and_never_with_zero_width(columns, measure):
    row = columns.loc[(measure, "TUA1-1 - test1")]
    assert abs(row["truth"]) < 1e-5  # P@10 0; nDCG@10 -9.3e-7
    assert row["excludes_zero"] <= 0.05 and row["least_width"] > 0


@pytest.mark.slow
def test_a_copy_with_two_top_ten_documents_swapped(columns):
    ndcg = columns.loc[("ndcg@10", "copy - bm25base_p")]
    assert -1e-3 < ndcg["truth"] < 0 and ndcg["excludes_zero"] <= 0.05 and ndcg["least_width"] > 0
    precision = columns.loc[("p@10", "copy - bm25base_p")]  # the same top 10: the same function of the grades
    assert precision["truth"] == 0.0 and precision["estimate_mean"] == 0.0 and precision["least_width"] == 0.0
    assert not np.isnan(precision["coverage_set"])
