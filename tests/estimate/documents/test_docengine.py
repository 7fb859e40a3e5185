"""The document design through the metrics engine: with every pooled pair drawn (pi = 1), each run's estimate is
``evalset score``'s mean under every contract, to 1e-12; what the decomposition does not cover is refused.

The data is DL19's NIST grades with two queries changed so that every convention matters: one query's grades
capped at 1 (AP at rel 2 undefined), one's all 0 (nDCG undefined too); four runs, one with its scores rounded
(ties on every query) and one lacking two queries."""

import itertools

import numpy as np
import pytest

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.estimate import estimate_documents
from evalset.evaluation import Evaluation
from evalset.io.trec import read_qrels, read_run
from evalset.metrics.documents import document_terms
from evalset.metrics.measures import parse_measure
from evalset.scoring.scores import score_runs

MEASURES = ["ndcg@10", "p@10", "ap", "dcg@5", "ndcg", "ap@20", "P(rel=2)@5", "nDCG(judged_only=True)@10",
            "ndcg_cut_5", "P_20", "map"]
CONVENTIONS = {"ties": ["trec", "run", "docid", "expected"], "unjudged": ["nonrelevant", "condensed"],
               "missing": ["zero", "skip"], "undefined": ["skip", "zero"], "rel_level": [1, 2],
               "gain": ["linear", "exponential"]}
GRID = [dict(zip(CONVENTIONS, values, strict=True)) for values in itertools.product(*CONVENTIONS.values())]
ONE_AT_A_TIME = [{}] + [{name: values[-1]} for name, values in CONVENTIONS.items()] + [
    {"ties": "expected", "unjudged": "condensed", "rel_level": 2, "gain": "exponential"},
    {"ties": "docid", "missing": "skip", "undefined": "zero", "unjudged": "condensed"}]


@pytest.fixture(scope="module")
def dl19():
    qrels = read_qrels("data/dl19/nist.qrels")
    queries = sorted(qrels["query_id"].unique())
    capped = qrels["query_id"] == queries[0]
    qrels.loc[capped, "grade"] = qrels.loc[capped, "grade"].clip(upper=1)
    qrels.loc[qrels["query_id"] == queries[1], "grade"] = 0
    runs = {name: read_run(f"data/dl19/runs/{name}.run.gz") for name in ("bm25base_p", "idst_bert_p1", "TUA1-1")}
    runs["rounded"] = runs["bm25base_p"].assign(score=runs["bm25base_p"]["score"].round(0))
    lacking = runs["idst_bert_p1"]
    runs["lacking"] = lacking[~lacking["query_id"].isin(queries[5:7])].reset_index(drop=True)
    pairs = qrels[["query_id", "doc_id"]].astype(str).assign(pi=1.0, sampled=True)
    return qrels, pairs, runs


def estimates_and_scores(dl19, conventions):
    qrels, pairs, runs = dl19
    contract = EvaluationContract(**conventions)
    measures = [m for m in MEASURES if not (contract.ties == "expected" and parse_measure(m).name == "ap")]
    estimate = estimate_documents(pairs, qrels, None, runs, measures=measures, contract=contract, comparisons=[])
    scores = score_runs(Evaluation.on_qrels(qrels, contract), runs, measures)
    got, expected = [], []
    for text in measures:
        rows = estimate.table[(estimate.table["measure"] == str(parse_measure(text)))]
        got += list(rows["estimate"])
        expected += [scores.summaries[name][text].mean for name in rows["name"]]
    return np.array(got), np.array(expected), estimate


@pytest.mark.parametrize("conventions", ONE_AT_A_TIME, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_at_pi_1_every_run_is_evalsets_score_under_each_convention(dl19, conventions):
    got, expected, estimate = estimates_and_scores(dl19, conventions)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert estimate.settings["contract"] == EvaluationContract(**conventions).to_dict()


@pytest.mark.slow
def test_at_pi_1_every_run_is_evalsets_score_over_the_whole_grid_of_contracts(dl19):
    seen = set()
    for conventions in GRID:
        got, expected, _ = estimates_and_scores(dl19, conventions)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, err_msg=str(conventions))
        seen.add(tuple(np.round(got, 12)))
    assert len(GRID) == 128 and len(seen) > 60  # the conventions change the values: the grid is not one case


@pytest.mark.slow
def test_the_conventions_change_the_values_so_the_equality_is_not_one_case(dl19):
    default, _, _ = estimates_and_scores(dl19, {})
    for conventions in ONE_AT_A_TIME[1:]:
        got, _, _ = estimates_and_scores(dl19, conventions)
        assert len(got) != len(default) or not np.allclose(got, default), conventions


def test_the_json_records_each_measures_applied_contract(dl19):
    _, _, estimate = estimates_and_scores(dl19, {"rel_level": 1, "unjudged": "nonrelevant"})
    applied = estimate.settings["applied"]
    assert applied["p(rel=2)@5"]["rel_level"] == 2 and applied["p@10"]["rel_level"] == 1
    assert applied["ndcg(judged_only=True)@10"]["unjudged"] == "condensed"


@pytest.mark.parametrize(("text", "conventions", "message"), [
    ("ap", {"ties": "expected"}, "ap cannot be estimated from a document sample under ties=expected"),
    ("ap@10", {"ties": "expected"}, "ap@10 cannot be estimated from a document sample under ties=expected"),
    ("rr", {}, "rr does not decompose over a query's documents"),
    ("recall@100", {}, "recall@100 does not decompose over a query's documents"),
    ("err@10", {}, "err@10 does not decompose"),
    ("ndgc@10", {}, "unknown measure 'ndgc@10'"),
])
def test_a_measure_or_convention_the_decomposition_does_not_cover_is_refused(text, conventions, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        document_terms(text, EvaluationContract(**conventions))


def test_under_expected_ties_a_linear_measure_is_the_mean_over_the_orders_of_each_tie_group(dl19):
    """The rounded run ties on every query: under expected ties its P@10 is evalset score's, and differs from the
    strict order's."""
    strict, _, _ = estimates_and_scores(dl19, {"ties": "trec"})
    expected, reference, _ = estimates_and_scores(dl19, {"ties": "expected"})
    np.testing.assert_allclose(expected, reference, rtol=0, atol=1e-12)
    assert len(expected) < len(strict)  # AP's three spellings are refused under expected
