"""The verdicts `compare` printed without the data to support them (issue 48), each now withheld or abstained.

Each case is a command a new user ran on TREC DL 2019 and the verdict it printed before: the holes of a measure
without cutoff, a stratum of one query, a stratified t on too many degrees of freedom, too few sign flips for the
threshold, strata "disagreeing" inside intervals that hold 0, a stratum column without its traffic share.
"""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from tests.comparing.test_compare import BM25, DL19, RUNS, plain_qrels, plain_run, top


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def compare_json(*args) -> list[dict]:
    result = invoke("compare", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def bm25_pool(tmp_path_factory):
    """NIST's judgments of the depth-10 pool of the eight BM25 runs only (docs/compare-holes.md)."""
    nist = plain_qrels(DL19 / "nist.qrels")
    pooled = {(q, d) for name in BM25 for q, docs in plain_run(RUNS / f"{name}.run.gz").items() for d in top(docs, 10)}
    path = tmp_path_factory.mktemp("qrels") / "bm25-pool.qrels"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in nist.items() for d, g in docs.items()
                            if (q, d) in pooled))
    return path


BERT = (RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz")


# ------------------------------------------------------------------------------- 1. holes of a measure without cutoff
@pytest.mark.parametrize("metric, low, high", [("ap", -0.2107, 0.2364), ("ndcg", -0.0922, 0.2798)])
def test_a_measure_without_cutoff_is_bounded_at_the_default_depth_and_its_verdict_withheld(bm25_pool, metric, low,
                                                                                           high):
    # before: "established: candidate worse (p = 0.0001)", "holes not bounded: ap has no cutoff"
    [document] = compare_json("--qrels", bm25_pool, *BERT, "-m", metric)
    assert document["judged_at_k"] == {"k": 10, "baseline": 1.0, "candidate": pytest.approx(0.4762, abs=5e-5)}
    bound = document["hole_bound"]
    assert (bound["depth"], bound["unjudged"], bound["could_flip"]) == (10, 220, True)
    assert (round(bound["mean_low"], 4), round(bound["mean_high"], 4)) == (low, high)
    assert bound["text"].endswith(f"({metric} has no cutoff: bounded at depth 10, the default; --depth K to choose)")
    assert not document["established"] and document["rule"] == "holes could flip"
    assert document["verdict"] == ("not established: 220 unjudged documents in the candidate's top 10 could flip "
                                   "it (judge them, or a sample of them: evalset holes -o DIR)")


def test_on_nists_full_judgments_the_measure_without_cutoff_keeps_its_verdict():
    [document] = compare_json("--qrels", DL19 / "nist.qrels", *BERT, "-m", "ap")
    assert round(document["mean_difference"], 4) == 0.1454
    assert document["verdict"] == "established: candidate better (p = 0.0001 < 0.05)"
    assert document["judged_at_k"] == {"k": 10, "baseline": 1.0, "candidate": 1.0}


def test_many_runs_on_a_measure_without_cutoff_bound_their_holes_too(bm25_pool):
    result = invoke("compare", "--qrels", bm25_pool, "--all", "-m", "ap", "--permutations", "999",
                    *(RUNS / f"{name}.run.gz" for name in ("bm25base_p", "bm25tuned_p", "idst_bert_p1")),
                    "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    pairs = [pair for pair in document["pairs"] if "idst_bert_p1" in (pair["a"], pair["b"])]
    assert pairs and all(not pair["verdict"].startswith("established") for pair in pairs)
    assert any(pair["verdict"] == "not established: holes could flip" for pair in pairs)


# ----------------------------------------------------------------------------------------- 2. a stratum of one query
@pytest.fixture(scope="module")
def solo_strata(tmp_path_factory):
    topics = pd.read_csv(DL19 / "topics.tsv", sep="\t", names=["query_id", "query"], dtype=str)
    first = topics["query_id"].iloc[0]
    topics["stratum"] = np.where(topics["query_id"] == first, "solo", "rest")
    topics["stratum_share"] = np.where(topics["query_id"] == first, 0.99, 0.01)
    path = tmp_path_factory.mktemp("strata") / "solo.tsv"
    topics.to_csv(path, sep="\t", index=False)
    return path, first


def test_a_stratum_of_one_query_gives_no_verdict_where_the_stratified_t_gave_p_4e_104(solo_strata):
    path, _ = solo_strata
    # before: "stratified t = -2023.3755, p = 4.0e-104", a zero-width stratum interval, "established: candidate worse"
    [document] = compare_json("--qrels", DL19 / "nist.qrels", RUNS / "bm25base_p.run.gz",
                              RUNS / "bm25tuned_p.run.gz", "--queries", path, "--decide", "t+bca")
    solo = next(row for row in document["strata"] if row["stratum"] == "solo")
    assert solo["n"] == 1 and solo["ci_low"] is None and solo["ci_high"] is None
    assert document["t"] is None and document["ttest_p"] is None
    assert not document["established"] and document["rule"] == "few queries"
    assert document["verdict"].startswith("no verdict: stratum solo (1 query) cannot carry an interval")


def test_the_stratified_t_takes_welch_satterthwaites_degrees_of_freedom(tmp_path):
    """The demo's strata: 12 short topics carry 92% of the traffic (docs/compare.md)."""
    import subprocess
    import sys

    from tests.conftest import REPO
    subprocess.run([sys.executable, REPO / "scripts" / "dl19_strata.py", "--log",
                    REPO / "data" / "querylog" / "excite-small.log", "--topics", DL19 / "topics.tsv", "-o",
                    tmp_path / "strata.tsv"], check=True, capture_output=True)
    [document] = compare_json("--qrels", DL19 / "nist.qrels", *BERT, "--queries", tmp_path / "strata.tsv")
    assert round(document["t"], 4) == 3.0929
    # before: n - H = 41 degrees of freedom, p = 0.00356
    assert round(document["ttest_p"], 4) == 0.0102
    # the weighted effect size: the weighted mean over the weighted sd (no longer over the unweighted sd)
    assert document["effect_size"] != pytest.approx(0.821, abs=5e-4)


# ------------------------------------------------------------------------------ 4. too few sign flips for the threshold
def test_sign_flips_too_few_to_reach_the_threshold_give_no_verdict():
    # before: "not established (p = 0.05 >= 0.025)" beside a t-test p of 9.6e-09, "evidence near the threshold"
    [document] = compare_json("--qrels", DL19 / "nist.qrels", *BERT, "--permutations", "19", "--planned", "2")
    assert document["permutation_p"] == 0.05 and document["ttest_p"] < 1e-8
    assert document["rule"] == "too few flips"
    assert document["verdict"] == ("no verdict: 19 sign flips cannot reach p < 0.025 (the smallest p they give is "
                                   "0.05); give at least 40")
    [enough] = compare_json("--qrels", DL19 / "nist.qrels", *BERT, "--permutations", "40", "--planned", "2")
    assert enough["established"] and enough["permutation_p"] == pytest.approx(1 / 41)


# ----------------------------------------------------------------------------- 6. strata disagreeing inside noise
def test_strata_are_said_to_disagree_only_where_their_intervals_exclude_0(tmp_path):
    import subprocess
    import sys

    from tests.conftest import REPO
    subprocess.run([sys.executable, REPO / "scripts" / "dl19_strata.py", "--log",
                    REPO / "data" / "querylog" / "excite-small.log", "--topics", DL19 / "topics.tsv", "-o",
                    tmp_path / "strata.tsv"], check=True, capture_output=True)
    # before: "better on long (+0.0008), worse on short (-0.0068)" though both intervals hold 0
    [document] = compare_json("--qrels", DL19 / "nist.qrels", RUNS / "idst_bert_p1.run.gz",
                              RUNS / "idst_bert_p2.run.gz", "--queries", tmp_path / "strata.tsv")
    signs = {np.sign(row["mean_difference"]) for row in document["strata"]}
    assert signs == {-1.0, 1.0} and all(row["ci_low"] <= 0 <= row["ci_high"] for row in document["strata"])
    assert document["strata_disagree"] == ""


def test_a_stratum_column_without_traffic_shares_is_refused(tmp_path):
    topics = pd.read_csv(DL19 / "topics.tsv", sep="\t", names=["query_id", "query"], dtype=str)
    topics.assign(stratum=np.where(topics.index < 20, "head", "tail")).to_csv(tmp_path / "q.tsv", sep="\t",
                                                                             index=False)
    # before: a silently unweighted comparison
    result = invoke("compare", "--qrels", DL19 / "nist.qrels", *BERT, "--queries", tmp_path / "q.tsv")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"evalset: error: {tmp_path / 'q.tsv'}: a stratum column without stratum_share: give each stratum's traffic "
        "share (stratum_share), or drop the stratum column for an unweighted comparison"]


def test_many_runs_with_too_few_permutations_say_that_no_pair_can_be_significant():
    # before: "significant pairs: 0 of 3" and one letter group, as if the runs were not distinguishable
    result = invoke("compare", "--qrels", DL19 / "nist.qrels", "--all", "--permutations", "5",
                    *(RUNS / f"{name}.run.gz" for name in ("bm25base_p", "idst_bert_p1", "bm25tuned_p")))
    assert result.exit_code == 0, result.output
    assert ("note: every pair: no verdict: 5 sign flips cannot reach p < 0.05 (the smallest p they give is 0.1667); "
            "give at least 20") in result.stderr.splitlines()
