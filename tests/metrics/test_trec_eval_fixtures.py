"""The engine reproduces trec_eval 10.0's own expected outputs (its `make quicktest` fixtures)."""

from pathlib import Path

import pytest

from evalset.contract import EvaluationContract
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate

# trec_eval measure name -> our spelling
MEASURES = {
    "map": "ap", "recip_rank": "rr", "ndcg": "ndcg", "ndcg_cut_10": "ndcg@10", "Rprec": "rprec",
    "bpref": "bpref", "recall_100": "recall@100", "P_5": "p@5", "P_10": "p@10", "P_15": "p@15",
    "P_20": "p@20", "P_30": "p@30", "P_100": "p@100", "P_200": "p@200", "P_500": "p@500", "P_1000": "p@1000",
    "recall_5": "recall@5", "recall_1000": "recall@1000", "ndcg_cut_5": "ndcg@5", "ndcg_cut_1000": "ndcg@1000",
    "success_1": "success@1", "success_10": "success@10", "map_cut_100": "ap@100",
}


def expected_values(path: Path) -> dict[tuple[str, str], float]:
    values = {}
    for line in path.read_text().splitlines():
        measure, query, value = line.split()
        if measure in MEASURES:
            values[(measure, query)] = float(value)
    return values


@pytest.mark.parametrize(
    ("expected", "qrels", "results", "contract"),
    [
        ("out.test.aq", "qrels.test", "results.test", EvaluationContract(missing="skip", undefined="zero")),
        ("out.test.aql", "qrels.rel_level", "results.test",
         EvaluationContract(rel_level=2, missing="skip", undefined="zero")),
        # -c: average over every judged query, a query absent from the run scoring 0
        ("out.test.aqc", "qrels.test", "results.trunc", EvaluationContract(missing="zero", undefined="zero")),
    ],
)
def test_per_query_and_mean_values_match_trec_eval_to_4_decimals(shared_data, expected, qrels, results, contract):
    fixtures = shared_data / "trec_eval"
    truth = expected_values(fixtures / expected)
    per_query = evaluate(read_run(fixtures / results), read_qrels(fixtures / qrels), MEASURES.values(), contract)
    checked = 0
    for (measure, query), value in truth.items():
        column = per_query[MEASURES[measure]]
        ours = column.mean() if query == "all" else column.loc[query]
        assert ours == pytest.approx(value, abs=5e-5), (expected, measure, query)
        checked += 1
    assert checked == len(MEASURES) * 4  # three queries and "all"


def test_summary_output_out_test_matches(shared_data):
    fixtures = shared_data / "trec_eval"
    truth = expected_values(fixtures / "out.test")
    per_query = evaluate(read_run(fixtures / "results.test"), read_qrels(fixtures / "qrels.test"),
                         ["ap", "rprec", "bpref", "rr", "p@5", "p@10", "p@1000"],
                         EvaluationContract(missing="skip", undefined="zero"))
    assert truth[("map", "all")] == 0.1785
    assert per_query["ap"].mean() == pytest.approx(0.1785, abs=5e-5)
    for measure in ("Rprec", "bpref", "recip_rank", "P_5", "P_10", "P_1000"):
        assert per_query[MEASURES[measure]].mean() == pytest.approx(truth[(measure, "all")], abs=5e-5)


def test_negative_grades_are_pooled_not_judged(shared_data):
    # qrels.rel_level holds grade -1 for 304 pairs: never relevant, and not judged.
    qrels = read_qrels(shared_data / "trec_eval" / "qrels.rel_level")
    assert (qrels["grade"] == -1).sum() == 304
    run = read_run(shared_data / "trec_eval" / "results.test")
    per_query = evaluate(run, qrels, ["judged@1000", "p@1000"], EvaluationContract(rel_level=1))
    merged = run.astype({"query_id": str, "doc_id": str}).merge(qrels, on=["query_id", "doc_id"], how="left")
    judged = merged[merged["grade"] >= 0].groupby("query_id").size() / 1000
    assert per_query["judged@1000"].to_dict() == pytest.approx(judged.to_dict())
