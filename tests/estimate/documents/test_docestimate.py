"""The document design's estimate from frames: the intervals of a sample on TREC DL 2019 (NIST as the humans), the
full sample at pi = 1 is the truth with no width, and bad input is one InputError naming the cause."""

import numpy as np
import pandas as pd
import pytest

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.estimate import estimate_documents, prepare_pool
from evalset.estimate.documents.sample import inclusion_probabilities, poisson_sample
from evalset.estimate.documents.validation import pool_prior
from evalset.estimate.inputs import values_by_run
from evalset.io.trec import read_qrels, read_runs

RUNS = ["bm25base_p", "idst_bert_p1", "TUA1-1"]


@pytest.fixture(scope="module")
def dl19():
    runs = read_runs([f"data/dl19/runs/{name}.run.gz" for name in RUNS])
    qrels = read_qrels("data/dl19/nist.qrels")
    llm = read_qrels("data/dl19/llm_labels/llama-3-70b.fourprompts.qrels").assign(judge="llama-3-70b")
    return runs, qrels, llm


def sample_frames(qrels, budget, runs, seed=1):
    pool = prepare_pool(qrels[["query_id", "doc_id"]], None, runs, EvaluationContract())
    pi = inclusion_probabilities(pool_prior(pool, 10), budget)
    sampled = poisson_sample(pi, seed)
    pairs = qrels[["query_id", "doc_id"]].assign(pi=pi, sampled=sampled)
    return pairs, qrels[sampled].reset_index(drop=True)


@pytest.mark.slow
def test_every_pair_sampled_gives_the_truth_with_no_width(dl19):
    runs, qrels, llm = dl19
    pairs = qrels[["query_id", "doc_id"]].assign(pi=1.0, sampled=True)
    contract = EvaluationContract(rel_level=2)
    result = estimate_documents(pairs, qrels, llm, runs, measures=["ndcg@10", "p@10", "ap"], contract=contract)
    for measure, rows in result.table[result.table["kind"] == "run"].groupby("measure"):
        truth = values_by_run(runs, qrels, sorted(qrels["query_id"].unique()), measure, contract).mean()
        np.testing.assert_allclose(rows["estimate"], truth[RUNS].to_numpy(), atol=1e-12)
        np.testing.assert_allclose(rows["se_set"], 0, atol=1e-12)
    assert result.settings["sampled"] == 9260 and not result.caveats


def test_a_sample_of_a_thousand_pairs_gives_both_intervals_and_the_small_sample_warning_below(dl19):
    runs, qrels, llm = dl19
    pairs, human = sample_frames(qrels, 1000, runs)
    result = estimate_documents(pairs, human, llm, runs, comparisons=[("bm25base_p", "idst_bert_p1")])
    table = result.table.set_index("name")
    difference = table.loc["idst_bert_p1 - bm25base_p"]
    assert difference["estimate"] == pytest.approx(table.loc["idst_bert_p1", "estimate"]
                                                   - table.loc["bm25base_p", "estimate"])
    for name in ("set", "new"):  # the truth under NIST's full grades: +0.2586; this sample's estimate +0.2858
        assert 0 < difference[f"{name}_low"] < 0.2586 < difference[f"{name}_high"]
    assert difference["estimate"] == pytest.approx(0.2858, abs=1e-4)
    assert "this set" in result.to_text() and "new queries" in result.to_text()
    assert result.to_dict()["settings"]["judges"] == ["llama-3-70b"]
    small = estimate_documents(*sample_frames(qrels, 400, runs), None, runs)
    assert small.settings["estimator"] == "Horvitz-Thompson, no LLM"
    assert any("unreliable" in note for note in small.caveats)


@pytest.mark.parametrize("broken", ["pi zero", "unsampled graded", "sampled ungraded", "llm missing", "twice"])
def test_bad_input_is_one_line_naming_the_cause(dl19, broken):
    runs, qrels, llm = dl19
    pairs, human = sample_frames(qrels, 1000, runs)
    message = {"pi zero": "has pi 0: an inclusion probability", "unsampled graded": "which was not sampled",
               "sampled ungraded": "has no human grade", "llm missing": "has no grade of the pooled pair",
               "twice": "is given twice"}[broken]
    if broken == "pi zero":
        pairs.loc[3, "pi"] = 0.0
    elif broken == "unsampled graded":
        human = pd.concat([human, qrels[~pairs["sampled"]].head(1)])
    elif broken == "sampled ungraded":
        human = human.iloc[1:]
    elif broken == "llm missing":
        llm = llm.iloc[1:]
    else:
        pairs = pd.concat([pairs, pairs.head(1)])
    with pytest.raises(InputError, match=message):
        estimate_documents(pairs, human, llm, runs)
