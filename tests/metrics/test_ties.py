"""Tie rules: trec_eval's order equals pytrec_eval; the expectation over tied orders equals scikit-learn's
tie-averaged nDCG and the brute-force average over every order."""

import itertools

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from sklearn.metrics import ndcg_score

from evalset.contract import TIE_RULES, EvaluationContract
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame, read_qrels, read_run
from evalset.metrics import evaluate, order_run
from evalset.metrics.ranking import strict_ties

PYTREC = {"ndcg_cut_10": "ndcg@10", "map": "ap", "P_10": "p@10", "recip_rank": "rr", "bpref": "bpref",
          "ndcg": "ndcg", "Rprec": "rprec", "recall_100": "recall@100", "map_cut_100": "ap@100",
          "success_10": "success@10"}


@pytest.fixture(scope="module")
def tied_run(shared_data):
    """A DL19 BM25 run with scores rounded to integers: 94% of its rows tie with another."""
    run = read_run(shared_data / "dl19" / "runs" / "official_top100" / "bm25base_p.run.gz")
    run["score"] = run["score"].round(0)
    assert run.duplicated(["query_id", "score"]).sum() == 4052
    return run


@pytest.fixture(scope="module")
def qrels(shared_data):
    return read_qrels(shared_data / "dl19" / "qrels.txt")


def test_trec_ties_equal_pytrec_eval_per_query(tied_run, qrels):
    judged = {}
    for row in qrels.itertuples():
        judged.setdefault(row.query_id, {})[row.doc_id] = int(row.grade)
    ranked = {}
    for row in tied_run.itertuples():
        ranked.setdefault(str(row.query_id), {})[str(row.doc_id)] = float(row.score)
    reference = pytrec_eval.RelevanceEvaluator(judged, set(PYTREC)).evaluate(ranked)
    ours = evaluate(tied_run, qrels, PYTREC.values(), EvaluationContract(ties="trec", undefined="zero"))
    assert len(reference) == len(ours) == 43
    for query, values in reference.items():
        for measure, value in values.items():
            assert ours.loc[query, PYTREC[measure]] == pytest.approx(value, abs=1e-12), (query, measure)


def test_tie_rules_change_the_score_of_a_tied_run(tied_run, qrels):
    means = {rule: evaluate(tied_run, qrels, ["ndcg@10"], EvaluationContract(ties=rule))["ndcg@10"].mean()
             for rule in ("trec", "docid", "run", "expected")}
    assert len({round(v, 6) for v in means.values()}) == 4
    assert min(means.values()) < means["expected"] < max(means.values())


def test_expected_ndcg_equals_scikit_learn_ndcg_score(tied_run, qrels):
    ours = evaluate(tied_run, qrels, ["ndcg@5", "ndcg@10", "ndcg@100"], EvaluationContract(ties="expected"))
    for query, ranking in tied_run.groupby("query_id", observed=True):
        judged = qrels[qrels["query_id"] == query]
        docs = ranking["doc_id"].astype(str).tolist()
        unretrieved = sorted(set(judged["doc_id"]) - set(docs))
        grade = dict(zip(judged["doc_id"], judged["grade"], strict=True))
        # scikit-learn's recipe: every judged document in the row, the unretrieved ones below the run
        y_true = [[max(grade.get(doc, 0), 0) for doc in docs + unretrieved]]
        scores = ranking["score"].tolist()
        y_score = [scores + [min(scores) - 1.0] * len(unretrieved)]
        for k in (5, 10, 100):
            assert ours.loc[query, f"ndcg@{k}"] == pytest.approx(ndcg_score(y_true, y_score, k=k), abs=1e-12)


ALL_MEASURES = ["ndcg@3", "ndcg", "ap", "ap@3", "rr", "rr@2", "p@3", "recall@3", "rprec", "bpref", "success@2",
                "judged@3"]


@pytest.mark.slow
def test_expected_equals_the_average_over_every_order_of_each_tie_group():
    run = pd.DataFrame({
        "query_id": ["a"] * 7 + ["b"] * 5,
        "doc_id": ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "e1", "e2", "e3", "e4", "e5"],
        "score": [9, 5, 5, 5, 5, 2, 2, 3, 3, 3, 3, 1],
    })
    qrels = qrels_from_frame(pd.DataFrame({
        "query_id": ["a"] * 7 + ["b"] * 4,
        "doc_id": ["d1", "d2", "d4", "d5", "d7", "x1", "x2", "e2", "e4", "e5", "x3"],
        "grade": [0, 2, 0, 3, 1, 2, -1, 1, 0, 2, 3],
    }))
    expected = evaluate(run_from_frame(run), qrels, ALL_MEASURES, EvaluationContract(ties="expected"))

    def orders(frame):
        groups = [list(g.index) for _, g in frame.groupby("score", sort=False)]
        for combination in itertools.product(*(itertools.permutations(g) for g in groups)):
            yield frame.loc[[i for group in combination for i in group]]

    for query, frame in run.groupby("query_id"):
        values = []
        for ordered in orders(frame.sort_values("score", ascending=False, kind="stable")):
            ranked = ordered.assign(score=np.arange(len(ordered), 0, -1, dtype=float))  # a strict order
            scored = evaluate(run_from_frame(ranked), qrels[qrels["query_id"] == query], ALL_MEASURES)
            values.append(scored.loc[query])
        average = pd.DataFrame(values).mean()
        assert len(values) == (24 * 2 if query == "a" else 24)
        for measure in ALL_MEASURES:
            assert expected.loc[query, measure] == pytest.approx(average[measure], abs=1e-12), (query, measure)


def test_trec_rule_breaks_ties_by_doc_id_descending_at_double_precision_or_float32_for_trec_eval_9():
    run = run_from_frame(pd.DataFrame({
        "query_id": ["q"] * 4,
        "doc_id": ["a", "c", "b", "z"],
        "score": [1.0, 1.0, 1.0 + 1e-9, 0.5],  # 1 + 1e-9 equals 1 as a float32, as trec_eval 9 read it
    }))
    assert order_run(run, "trec", single_precision=True).to_frame()["doc_id"].tolist() == ["c", "b", "a", "z"]
    assert order_run(run, "trec").to_frame()["doc_id"].tolist() == ["b", "c", "a", "z"]
    assert order_run(run, "docid").to_frame()["doc_id"].tolist() == ["b", "a", "c", "z"]
    assert order_run(run, "run").to_frame()["doc_id"].tolist() == ["b", "a", "c", "z"]
    # expected keeps the scores at double precision (its tie groups are of equal scores) ...
    assert order_run(run, "expected").to_frame()["doc_id"].tolist() == ["b", "c", "a", "z"]
    # ... and a stage that needs one strict order takes trec's
    assert order_run(run, strict_ties("expected")).to_frame()["doc_id"].tolist() == ["b", "c", "a", "z"]
    assert [strict_ties(rule) for rule in TIE_RULES] == ["trec", "run", "docid", "trec"]


def test_run_rule_keeps_the_runs_own_rank_then_line_order():
    run = run_from_frame(pd.DataFrame({
        "query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "score": [1.0, 1.0, 1.0, 2.0], "rank": [3, 2, 2, 1],
    }))
    assert order_run(run, "run").to_frame()["doc_id"].tolist() == ["d", "b", "c", "a"]


@pytest.mark.parametrize("rule", ["trec", "docid", "expected"])
def test_line_order_repeats_and_unjudged_queries_leave_the_scores_unchanged(tied_run, qrels, rule):
    """The shuffled run takes the re-sorting path and the grouped run the in-place one; repeated lines (counted
    once, at their first position) and a query without judgments change nothing either."""
    measures = ["ndcg@10", "ap", "rr", "bpref", "p@10", "ndcg"]
    contract = EvaluationContract(ties=rule)
    expected = evaluate(tied_run, qrels, measures, contract)
    repeats = tied_run.groupby("query_id", observed=True).tail(3).assign(score=-1.0)  # ranked last, again
    unjudged = tied_run.head(5).assign(query_id="no-such-query")
    noisy = pd.concat([tied_run, repeats, unjudged]).sample(frac=1.0, random_state=7)
    ours = evaluate(noisy, qrels, measures, contract)
    pd.testing.assert_frame_equal(ours, expected, check_exact=False, rtol=0, atol=1e-12)
    assert ours.attrs["duplicates_removed"] == len(repeats)
    assert (ours.attrs["unjudged_queries"], ours.attrs["unjudged_query_rows"]) == (1, 5)
