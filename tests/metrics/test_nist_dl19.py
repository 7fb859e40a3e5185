"""NIST's published TREC DL 2019 passage summaries reproduce to within 5e-5 (their 4-decimal rounding).

NIST computed them with trec_eval 9, which compared scores as 32-bit floats: the full runs are scored under
``trec_eval_version=9``; under 10 (doubles, evalset's default) one summary moves, as it does in trec_eval 10.
"""

import json

import pytest

from evalset.contract import EvaluationContract
from evalset.io.trec import read_qrels, read_run, run_name
from evalset.metrics import evaluate, prepare_qrels

NIST_TO_OURS = {
    "map": "ap", "bpref": "bpref", "recip_rank": "rr", "P_10": "p@10", "P_100": "p@100", "P_1000": "p@1000",
    "recall_10": "recall@10", "recall_100": "recall@100", "recall_1000": "recall@1000", "ndcg": "ndcg",
    "ndcg_cut_10": "ndcg@10", "ndcg_cut_100": "ndcg@100", "ndcg_cut_1000": "ndcg@1000",
}
LEVELS = {"trec_eval": 1, "passages-eval": 2}


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    return {
        "summaries": json.loads((root / "nist_summaries.json").read_text()),
        "qrels": read_qrels(root / "qrels.txt"),
        "full": sorted((root / "runs" / "official_full").glob("*.run.gz")),
        "top100": sorted((root / "runs" / "official_top100").glob("*.run.gz")),
    }


def nist_prepared(dl19, summary, version=10):
    """The qrels under NIST's conventions for one summary: its relevance level, trec_eval's averaging."""
    contract = EvaluationContract(rel_level=LEVELS[summary], missing="skip", undefined="zero",
                                  trec_eval_version=version)
    return prepare_qrels(dl19["qrels"], contract)


@pytest.mark.parametrize("summary", list(LEVELS))
def test_every_measure_of_the_9_full_depth_runs(dl19, summary):
    assert len(dl19["full"]) == 9
    prepared = nist_prepared(dl19, summary, version=9)
    for path in dl19["full"]:
        per_query = evaluate(read_run(path), prepared, NIST_TO_OURS.values())
        assert len(per_query) == 43
        published = dl19["summaries"][run_name(path)][summary]
        assert set(published) == set(NIST_TO_OURS)
        for measure, value in published.items():
            assert per_query[NIST_TO_OURS[measure]].mean() == pytest.approx(value, abs=5e-5), (path.name, measure)


@pytest.mark.parametrize("summary", list(LEVELS))
def test_ndcg10_and_p10_of_all_37_top100_runs(dl19, summary):
    assert len(dl19["top100"]) == 37
    prepared = nist_prepared(dl19, summary)
    for path in dl19["top100"]:
        per_query = evaluate(read_run(path), prepared, ["ndcg@10", "p@10"])
        published = dl19["summaries"][run_name(path)][summary]
        assert per_query["ndcg@10"].mean() == pytest.approx(published["ndcg_cut_10"], abs=5e-5), path.name
        assert per_query["p@10"].mean() == pytest.approx(published["P_10"], abs=5e-5), path.name


def test_trec_eval_10_compares_scores_as_doubles_and_moves_tua1_1s_map(dl19):
    """TUA1-1, query 148538: two documents whose scores differ by 7.1e-7 tie as 32-bit floats (trec_eval 9) and
    not as doubles (trec_eval 10); its AP is 0.3911 under 9 and 0.3915 under 10, and the run's map 0.4723 and
    0.4724 (what both trec_evals print)."""
    run = read_run(next(path for path in dl19["full"] if run_name(path) == "TUA1-1"))
    nine, ten = (evaluate(run, nist_prepared(dl19, "trec_eval", version), ["ap"])["ap"] for version in (9, 10))
    assert f"{nine['148538']:.4f}" == "0.3911" and f"{ten['148538']:.4f}" == "0.3915"
    assert f"{nine.mean():.4f}" == "0.4723" and f"{ten.mean():.4f}" == "0.4724"
    assert (nine.drop("148538") == ten.drop("148538")).all()


def test_level_2_changes_binary_measures_but_not_ndcg(dl19):
    run = read_run(dl19["full"][0])
    level1 = evaluate(run, dl19["qrels"], ["p@10", "ndcg@10"], EvaluationContract(rel_level=1))
    level2 = evaluate(run, dl19["qrels"], ["p@10", "ndcg@10"], EvaluationContract(rel_level=2))
    assert (level2["p@10"] <= level1["p@10"]).all() and (level2["p@10"] < level1["p@10"]).any()
    assert level2["ndcg@10"].equals(level1["ndcg@10"])
