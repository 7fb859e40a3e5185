"""A measure summarised geometrically (gm_ap, gm_bpref: trec_eval's gm_map) is compared on the scale of its
summary, log(max(value, 0.00001)) per query, and its means are shown as geometric means (issue 74: compare once
tested and printed AP's arithmetic difference under the name gm_ap); a stage whose figures are arithmetic means
refuses it in one line."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalset.comparing import compare_runs
from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.evaluation import Evaluation, per_query_values
from evalset.io.annotations import labels_from_file
from evalset.io.guideline import read_guideline
from evalset.io.queries import read_queries
from evalset.io.setfolder import SetContract, load_set
from evalset.report import collect
from evalset.sets import freeze
from tests.support.dl19files import NIST, invoke

RUNS = {name: f"data/dl19/runs/{name}.run.gz" for name in ("bm25base_p", "idst_bert_p1", "TUA1-1")}


@pytest.fixture(scope="module")
def evaluation():
    return Evaluation.on_qrels(NIST)


def logs(evaluation, run: str, measure: str = "ap") -> pd.Series:
    return np.log(np.maximum(per_query_values(evaluation, {run: RUNS[run]}, [measure]).column(run, measure), 1e-5))


def test_gmap_is_compared_on_log_ap_and_its_means_are_geometric_as_scipy_computes_them(evaluation):
    pair = {name: RUNS[name] for name in ("bm25base_p", "idst_bert_p1")}
    result = compare_runs(evaluation, pair, "gm_ap", permutations=999).results[0]
    base, cand = logs(evaluation, "bm25base_p"), logs(evaluation, "idst_bert_p1")
    assert result.geometric_means == pytest.approx({"baseline": 0.1788, "candidate": 0.3760}, abs=5e-5)
    assert result.geometric_means["baseline"] == pytest.approx(stats.gmean(np.exp(base)), abs=1e-12)
    assert result.mean_difference == pytest.approx(float((cand - base).mean()), abs=1e-12)  # 0.7433, not AP's 0.1454
    expected = stats.ttest_rel(cand, base)
    assert result.t == pytest.approx(expected.statistic, abs=1e-9)
    assert result.ttest_p == pytest.approx(expected.pvalue, rel=1e-9)
    assert "geometric means   baseline 0.1788, candidate 0.3760 (tested on log(max(value, 1e-05)) per query: the " \
           "differences are log ratios)" in result.to_text()


def test_the_command_prints_gmaps_means_and_every_other_measure_is_unchanged():
    gmap = invoke("compare", "--qrels", NIST, RUNS["bm25base_p"], RUNS["idst_bert_p1"], "-m", "gm_ap")
    assert gmap.exit_code == 0 and "mean difference   +0.7433" in gmap.output
    assert "geometric means   baseline 0.1788, candidate 0.3760" in gmap.output
    ap = invoke("compare", "--qrels", NIST, RUNS["bm25base_p"], RUNS["idst_bert_p1"], "-m", "ap")
    assert "mean difference   +0.1454" in ap.output and "geometric" not in ap.output
    document = json.loads(invoke("compare", "--qrels", NIST, RUNS["bm25base_p"], RUNS["idst_bert_p1"], "-m", "gm_bpref",
                                 "--format", "json").stdout)
    assert set(document[0]["geometric_means"]) == {"baseline", "candidate"}


def test_many_runs_at_once_rank_by_the_geometric_mean(evaluation):
    result = invoke("compare", "--qrels", NIST, *RUNS.values(), "-m", "gm_ap", "--all", "--format", "json")
    document = json.loads(result.stdout)
    assert document["means"] == pytest.approx({"idst_bert_p1": 0.3760, "TUA1-1": 0.3275, "bm25base_p": 0.1788},
                                              abs=5e-5)
    assert "its means and ranges are geometric, its differences log ratios" in result.stderr


@pytest.mark.parametrize(("command", "stage"), [
    (["agreement", "--human", NIST, "data/dl19/llm_labels/llama-3-70b.fourprompts.qrels", "--runs", RUNS["TUA1-1"],
      "--runs", RUNS["bm25base_p"], "-m", "gm_ap", "--resamples", "20"], "agreement's system rankings"),
])
def test_a_stage_of_arithmetic_means_refuses_a_geometric_measure_in_one_line(command, stage):
    refused = invoke(*command)
    assert refused.exit_code == 2
    assert refused.output == (f"evalset: error: gm_ap is a geometric mean over queries; {stage} rests on arithmetic "
                              "means of per-query values: use ap here, or compare gm_ap (it tests the runs on "
                              "log(max(value, 0.00001)) per query)\n")


def test_an_estimate_refuses_a_geometric_measure():
    from evalset.estimate.inputs import query_values

    with pytest.raises(InputError, match="gm_bpref is a geometric mean over queries; an estimate rests on"):
        query_values({}, pd.DataFrame(columns=["query_id", "doc_id", "grade"]), [], "gm_bpref", EvaluationContract())


@pytest.mark.slow
def test_a_report_on_a_set_whose_headline_is_gmap_shows_geometric_means(shared_data, tmp_path):
    root = shared_data / "dl19"
    target = freeze(labels_from_file(root / "qrels.txt", "human"), read_queries(root / "topics.tsv"),
                    read_guideline("guidelines/relevance-v2.md"), "gm", tmp_path,
                    contract=SetContract(headline="gm_ap"), planned=[("bm25base_p", "idst_bert_p1")])
    from evalset.io.trec import read_run

    runs = {name: read_run(RUNS[name]) for name in ("bm25base_p", "idst_bert_p1")}
    data = collect(load_set(target.path), runs, resamples=200, permutations=200)
    assert data.scores["mean"].to_dict() == pytest.approx({"bm25base_p": 0.1788, "idst_bert_p1": 0.3760}, abs=5e-5)
    low, high = data.scores.loc["bm25base_p", ["ci_low", "ci_high"]]
    assert low < 0.1788 < high
    assert data.comparisons[0].result.geometric_means == pytest.approx({"baseline": 0.1788, "candidate": 0.3760},
                                                                       abs=5e-5)
