"""Condensed scoring (``unjudged="condensed"``): unjudged documents leave the ranking before scoring and the ranks
close up. It equals pytrec_eval's ``judged_docs_only_flag=True`` (trec_eval ``-J``) per query, a worked example by
hand, and the default convention on the run with its unjudged rows filtered out beforehand, under every tie rule."""

import math

import pandas as pd
import pytest
import pytrec_eval

from evalset.contract import TIE_RULES, EvaluationContract
from evalset.errors import InputError
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame, read_qrels, read_run
from evalset.metrics import evaluate
from tests.support.doubles import ordered_as_doubles

# pytrec_eval measure -> our spelling (every measure of ours that trec_eval has)
PYTREC = {"ndcg_cut_10": "ndcg@10", "ndcg": "ndcg", "map": "ap", "map_cut_100": "ap@100", "recip_rank": "rr",
          "P_10": "p@10", "P_5": "p@5", "recall_100": "recall@100", "recall_10": "recall@10", "Rprec": "rprec",
          "bpref": "bpref", "success_10": "success@10"}


def as_pytrec(run: pd.DataFrame, qrels: pd.DataFrame) -> tuple[dict, dict]:
    judgments: dict = {}
    for row in qrels.itertuples():
        judgments.setdefault(str(row.query_id), {})[str(row.doc_id)] = int(row.grade)
    ranked: dict = {}
    for row in run.itertuples():
        ranked.setdefault(str(row.query_id), {})[str(row.doc_id)] = float(row.score)
    return judgments, ranked


def assert_equals_trec_eval_minus_j(run: pd.DataFrame, qrels: pd.DataFrame, rel_level: int = 1) -> int:
    """Every query and measure against pytrec_eval with judged_docs_only_flag=True; returns the values checked."""
    judgments, ranked = as_pytrec(run, qrels)
    reference = pytrec_eval.RelevanceEvaluator(judgments, set(PYTREC), relevance_level=rel_level,
                                               judged_docs_only_flag=True).evaluate(ordered_as_doubles(ranked))
    contract = EvaluationContract(rel_level=rel_level, missing="skip", undefined="zero", unjudged="condensed")
    ours = evaluate(run, qrels, PYTREC.values(), contract)
    assert set(ours.index) == set(reference)
    checked = 0
    for query, values in reference.items():
        for measure, value in values.items():
            assert ours.loc[query, PYTREC[measure]] == pytest.approx(value, abs=1e-9), (query, measure)
            checked += 1
    return checked


# ------------------------------------------------------------------------------------------------ worked example
def test_a_five_document_ranking_with_two_unjudged_documents_by_hand():
    # q: d1 has no qrels line, d3 is pooled but not judged (-1); d6 is relevant and not retrieved, so R = 3.
    qrels = qrels_from_frame(pd.DataFrame({"query_id": ["q"] * 5, "doc_id": ["d2", "d3", "d4", "d5", "d6"],
                                           "grade": [2, -1, 0, 1, 1]}))
    run = run_from_frame(pd.DataFrame({"query_id": ["q"] * 5, "doc_id": ["d1", "d2", "d3", "d4", "d5"],
                                       "score": [5.0, 4.0, 3.0, 2.0, 1.0]}))
    measures = ["p@3", "recall@3", "rr", "ap", "ndcg@3", "bpref", "judged@3"]
    default = evaluate(run, qrels, measures).loc["q"]
    condensed_table = evaluate(run, qrels, measures, EvaluationContract(unjudged="condensed"))
    condensed = condensed_table.loc["q"]
    ideal = 2 + 1 / math.log2(3) + 1 / math.log2(4)  # gains 2, 1, 1 at ranks 1-3
    # as given: d1 d2 d3 d4 d5, relevant at ranks 2 and 5
    assert default.to_dict() == pytest.approx({
        "p@3": 1 / 3, "recall@3": 1 / 3, "rr": 1 / 2, "ap": (1 / 2 + 2 / 5) / 3, "ndcg@3": (2 / math.log2(3)) / ideal,
        "bpref": (1 + 0) / 3,  # d2: no judged non-relevant above; d5: d4 above, 1 - min(1, 3) / min(1, 3) = 0
        "judged@3": 1 / 3})
    # condensed: d2 d4 d5 at ranks 1-3, relevant at ranks 1 and 3
    assert condensed.to_dict() == pytest.approx({
        "p@3": 2 / 3, "recall@3": 2 / 3, "rr": 1.0, "ap": (1 / 1 + 2 / 3) / 3, "ndcg@3": (2 + 1 / math.log2(4)) / ideal,
        "bpref": 1 / 3,  # unchanged: bpref never looks at unjudged documents
        "judged@3": 1 / 3})  # measured on the ranking as given, under either convention
    assert condensed_table.attrs["unjudged_removed"] == 2
    assert "unjudged_removed" not in evaluate(run, qrels, measures).attrs  # the default's notes keep their shape


def test_a_query_whose_retrieved_documents_are_all_unjudged_scores_zero_when_condensed():
    qrels = qrels_from_frame(pd.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "b"], "grade": [1, 1]}))
    run = run_from_frame(pd.DataFrame({"query_id": ["q", "q", "r"], "doc_id": ["x", "y", "b"],
                                       "score": [2.0, 1.0, 1.0]}))
    table = evaluate(run, qrels, ["ndcg@10", "ap", "p@10", "judged@10"], EvaluationContract(unjudged="condensed"))
    assert table.loc["q"].to_dict() == {"ndcg@10": 0.0, "ap": 0.0, "p@10": 0.0, "judged@10": 0.0}
    assert table.loc["r", "ndcg@10"] == 1.0 and table.attrs["unjudged_removed"] == 2
    assert table.attrs["missing_queries"] == 0  # q is in the run: it returned nothing judged, it is not missing


# ------------------------------------------------------------------------------------------------ pytrec_eval
def test_condensed_equals_pytrec_eval_judged_docs_only_on_trec_eval_fixtures(shared_data):
    fixtures = shared_data / "trec_eval"
    run = read_run(fixtures / "results.test")
    assert assert_equals_trec_eval_minus_j(run, read_qrels(fixtures / "qrels.test")) == 3 * len(PYTREC)
    # qrels.rel_level: 304 pairs graded -1 (pooled, not judged: removed too), relevance at level 2
    rel_level = read_qrels(fixtures / "qrels.rel_level")
    assert (rel_level["grade"] == -1).sum() == 304
    assert assert_equals_trec_eval_minus_j(run, rel_level) == 3 * len(PYTREC)
    assert assert_equals_trec_eval_minus_j(run, rel_level, rel_level=2) == 3 * len(PYTREC)


@pytest.mark.slow
def test_condensed_equals_pytrec_eval_judged_docs_only_on_the_37_dl19_runs(shared_data):
    root = shared_data / "dl19"
    qrels = read_qrels(root / "qrels.txt")
    paths = sorted((root / "runs" / "official_top100").glob("*.run.gz"))
    assert len(paths) == 37
    checked = sum(assert_equals_trec_eval_minus_j(read_run(path), qrels) for path in paths)
    assert checked == 37 * 43 * len(PYTREC)


def test_condensing_changes_dl19_scores_only_where_unjudged_documents_were_ranked(shared_data):
    """Every official DL19 run was pooled to depth 10: nDCG@10 does not move. At depth 100 it does, never
    downwards, and only on the queries with holes in the top 100 (where a relevant document lies below a hole)."""
    root = shared_data / "dl19"
    qrels = read_qrels(root / "qrels.txt")
    run = read_run(root / "runs" / "official_top100" / "bm25base_p.run.gz")
    measures = ["ndcg@10", "ndcg@100", "judged@100"]
    default = evaluate(run, qrels, measures)
    condensed = evaluate(run, qrels, measures, EvaluationContract(unjudged="condensed"))
    assert condensed["ndcg@10"].equals(default["ndcg@10"])
    assert condensed["judged@100"].equals(default["judged@100"])
    complete = default["judged@100"] == 1.0
    assert 0 < complete.sum() < len(complete)
    assert condensed.loc[complete, "ndcg@100"].equals(default.loc[complete, "ndcg@100"])
    moved = condensed["ndcg@100"] - default["ndcg@100"]
    assert (moved[~complete] >= 0).all() and (moved[~complete] > 0).sum() > 30  # a relevant document moved up
    assert condensed.attrs["unjudged_removed"] == round((1 - default["judged@100"]).sum() * 100) == 2043


# ------------------------------------------------------------------------------------------------ tie rules
@pytest.mark.parametrize("ties", TIE_RULES)
def test_condensed_equals_scoring_the_run_without_its_unjudged_rows_under_every_tie_rule(shared_data, ties):
    """Condensing is removing the unjudged rows first, then scoring as usual (a plain pandas filter as reference),
    on a DL19 run whose scores are rounded so that most rows tie."""
    qrels = read_qrels(shared_data / "dl19" / "qrels.txt")
    run = read_run(shared_data / "dl19" / "runs" / "official_top100" / "bm25base_p.run.gz")
    run["score"] = run["score"].round(0)
    keys = run.astype({"query_id": str, "doc_id": str}).merge(qrels, on=["query_id", "doc_id"], how="left")
    judged_rows = run[(keys["grade"] >= 0).to_numpy()]
    assert 0 < len(judged_rows) < len(run)
    measures = list(PYTREC.values())
    condensed = evaluate(run, qrels, measures, EvaluationContract(ties=ties, unjudged="condensed"))
    reference = evaluate(judged_rows, qrels, measures, EvaluationContract(ties=ties))
    pd.testing.assert_frame_equal(condensed, reference, check_exact=False, rtol=0, atol=1e-12)
    assert condensed.attrs["unjudged_removed"] == len(run) - len(judged_rows)


# ------------------------------------------------------------------------------------------------ the contract
def test_the_contract_records_the_convention_and_an_old_record_reads_as_the_default():
    contract = EvaluationContract(unjudged="condensed")
    assert contract.to_dict()["unjudged"] == "condensed"
    assert EvaluationContract.from_dict(contract.to_dict()) == contract
    old = {"rel_level": 1, "gain": "linear", "ties": "trec", "missing": "zero", "undefined": "skip"}
    assert EvaluationContract.from_dict(old).unjudged == "nonrelevant"
    assert list(EvaluationContract().to_dict()) == [*old, "unjudged", "trec_eval_version"]
    assert EvaluationContract.from_dict(old).trec_eval_version == 10  # the only rule before it could be chosen
    with pytest.raises(InputError, match="unjudged must be one of nonrelevant, condensed, got 'ignored'"):
        EvaluationContract(unjudged="ignored")
