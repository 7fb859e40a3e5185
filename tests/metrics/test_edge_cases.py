"""Worked examples with known answers for the cases the contract names."""

import math

import pandas as pd
import pytest

from evalset.contract import EvaluationContract
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame
from evalset.metrics import Measure, evaluate, parse_measure, summarize

QRELS = qrels_from_frame(pd.DataFrame({
    "query_id": ["q1", "q1", "q1", "q2", "q2", "q3"],
    "doc_id": ["a", "b", "c", "a", "x", "a"],
    "grade": [3, 0, 1, 0, 0, 2],
}))


def run_of(rows):
    return run_from_frame(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]))


def test_a_worked_ranking():
    # q1: ranking a(3) z(unjudged) c(1) b(0); R = 2 relevant (a, c)
    run = run_of([("q1", "a", 4), ("q1", "z", 3), ("q1", "c", 2), ("q1", "b", 1)])
    values = evaluate(run, QRELS, ["p@2", "recall@2", "rr", "ap", "ndcg@3", "rprec", "judged@4", "bpref",
                                   "success@1"]).loc["q1"]
    assert values["p@2"] == 0.5
    assert values["recall@2"] == 0.5
    assert values["rr"] == 1.0
    assert values["ap"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    ideal = 3 + 1 / math.log2(3)
    assert values["ndcg@3"] == pytest.approx((3 + 1 / math.log2(4)) / ideal)
    assert values["rprec"] == 0.5
    assert values["judged@4"] == 0.75
    assert values["bpref"] == 1.0  # no judged non-relevant document above a relevant one
    assert values["success@1"] == 1.0


def test_exponential_gain():
    run = run_of([("q1", "c", 2), ("q1", "a", 1)])
    value = evaluate(run, QRELS, ["ndcg@2"], EvaluationContract(gain="exponential")).loc["q1", "ndcg@2"]
    assert value == pytest.approx((1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3)))


def test_query_with_no_relevant_document_is_undefined_and_counted():
    run = run_of([("q1", "a", 1), ("q2", "a", 1), ("q3", "a", 1)])
    per_query = evaluate(run, QRELS, ["ndcg@10", "ap", "rr", "recall@10", "p@1"])
    assert per_query.loc["q2", ["ndcg@10", "ap", "rr", "recall@10"]].isna().all()
    assert per_query.loc["q2", "p@1"] == 0.0  # precision is defined without relevant documents
    summary = summarize(per_query)
    assert summary.loc["ap", "defined"] == 2 and summary.loc["ap", "undefined"] == 1
    assert summary.loc["ap", "mean"] == 0.75  # (q1: 1/2 + q3: 1) / 2 defined queries
    zero = evaluate(run, QRELS, ["ap"], EvaluationContract(undefined="zero"))
    assert zero.loc["q2", "ap"] == 0.0 and zero["ap"].mean() == pytest.approx(1.5 / 3)


def test_query_missing_from_the_run_scores_zero_or_is_skipped():
    run = run_of([("q1", "a", 1)])
    zero = evaluate(run, QRELS, ["ap", "p@1"])
    assert zero.loc["q3", "ap"] == 0.0 and zero.loc["q3", "p@1"] == 0.0
    assert zero.attrs["missing_queries"] == 2
    skip = evaluate(run, QRELS, ["ap"], EvaluationContract(missing="skip"))
    assert list(skip.index) == ["q1"]


def test_empty_run_scores_every_judged_query_zero():
    run = run_from_frame(pd.DataFrame({"query_id": [], "doc_id": [], "score": []}))
    per_query = evaluate(run, QRELS, ["ndcg@10", "ap"])
    assert per_query.loc["q1", "ndcg@10"] == 0.0 and per_query.loc["q3", "ap"] == 0.0
    assert math.isnan(per_query.loc["q2", "ap"])
    assert per_query.attrs["missing_queries"] == 3


def test_ranking_shorter_than_k():
    run = run_of([("q1", "a", 1)])
    values = evaluate(run, QRELS, ["p@10", "ndcg@10", "judged@10"]).loc["q1"]
    assert values["p@10"] == 0.1  # divides by k, as trec_eval
    assert values["judged@10"] == 0.1
    assert values["ndcg@10"] == pytest.approx(3 / (3 + 1 / math.log2(3)))


def test_duplicate_document_counts_once_at_its_first_position():
    run = run_of([("q1", "a", 3), ("q1", "a", 2), ("q1", "c", 1)])
    per_query = evaluate(run, QRELS, ["p@2", "ap"])
    assert per_query.loc["q1", "p@2"] == 1.0  # a at 1, c at 2: the repeat of a does not take rank 2
    assert per_query.loc["q1", "ap"] == 1.0
    assert per_query.attrs["duplicates_removed"] == 1


def test_unjudged_documents_are_not_relevant_and_lower_judged_at_k():
    run = run_of([("q3", "u1", 3), ("q3", "u2", 2), ("q3", "a", 1)])
    values = evaluate(run, QRELS, ["rr", "judged@3", "p@3"]).loc["q3"]
    assert values["rr"] == pytest.approx(1 / 3)
    assert values["judged@3"] == pytest.approx(1 / 3)


def test_queries_without_judgments_are_ignored_and_counted():
    run = run_of([("q1", "a", 1), ("zz", "a", 1), ("zz", "b", 0)])
    per_query = evaluate(run, QRELS, ["ap"])
    assert "zz" not in per_query.index
    assert per_query.attrs["unjudged_queries"] == 1 and per_query.attrs["unjudged_query_rows"] == 2


@pytest.mark.parametrize("text", ["ndcg@0", "p@-3", "p@1.5", "p", "success", "rprec@10", "nonsense"])
def test_bad_measures_are_refused(text):
    with pytest.raises(ValueError):
        parse_measure(text)


def test_measure_spellings():
    assert parse_measure("ndcg_cut_10") == Measure("ndcg", 10) == parse_measure("NDCG@10")
    assert parse_measure("map") == Measure("ap")
    assert parse_measure("P_10") == Measure("p", 10)
    assert parse_measure("recip_rank") == Measure("rr")
    assert str(parse_measure("recall_100")) == "recall@100"


def test_contract_refuses_bad_values():
    with pytest.raises(ValueError, match="rel_level"):
        EvaluationContract(rel_level=0)
    with pytest.raises(ValueError, match="ties"):
        EvaluationContract(ties="random")
