"""Paired comparisons: statistics checked against scipy, the verdict rules, and the DL19 cases."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalset.errors import InputError
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate_runs
from evalset.stats.paired import compare_paired, permutation_p_value, permutation_p_values


@pytest.fixture(scope="module")
def dl19_ndcg10(shared_data):
    root = shared_data / "dl19"
    names = ["bm25base_p", "idst_bert_p1", "p_bert", "p_exp_bert"]
    runs = {name: read_run(root / "runs" / "official_top100" / f"{name}.run.gz") for name in names}
    return {name: table["ndcg@10"] for name, table in evaluate_runs(runs, read_qrels(root / "qrels.txt"),
                                                                   ["ndcg@10"]).items()}


def test_bert_against_bm25_is_established(dl19_ndcg10):
    base, cand = dl19_ndcg10["bm25base_p"], dl19_ndcg10["idst_bert_p1"]
    result = compare_paired(base, cand, planned=2)
    reference = stats.ttest_rel(cand, base)
    assert result.t == pytest.approx(reference.statistic, abs=1e-12)
    assert round(result.t, 4) == 7.1275
    assert result.ttest_p == pytest.approx(reference.pvalue)
    assert result.permutation_p == pytest.approx(1 / 10000)  # no flip reaches the observed mean
    assert result.established and result.threshold == 0.025 and result.ci_level == 0.975
    assert result.ci_low < result.mean_difference < result.ci_high and result.ci_low > 0
    assert (result.wins, result.losses, result.ties) == (38, 5, 0)
    differences = cand - base
    assert result.effect_size == pytest.approx(differences.mean() / differences.std(ddof=1))
    assert result.median_difference == pytest.approx(differences.median())
    assert [loss["query_id"] for loss in result.largest_losses] == list(differences.nsmallest(5).index)


def test_p_bert_against_p_exp_bert_is_not_established(dl19_ndcg10):
    result = compare_paired(dl19_ndcg10["p_bert"], dl19_ndcg10["p_exp_bert"])
    assert result.ttest_p == pytest.approx(0.37, abs=0.01)
    assert not result.established and result.verdict.startswith("not established")
    assert result.permutation_p > 0.05


def test_exploratory_is_never_established(dl19_ndcg10):
    result = compare_paired(dl19_ndcg10["bm25base_p"], dl19_ndcg10["idst_bert_p1"], exploratory=True)
    assert result.permutation_p < 0.001 and not result.established and result.kind == "exploratory"


def test_same_seed_same_result_and_bootstrap_matches_scipy(dl19_ndcg10):
    base, cand = dl19_ndcg10["p_bert"], dl19_ndcg10["p_exp_bert"]
    first, second = compare_paired(base, cand, seed=7), compare_paired(base, cand, seed=7)
    assert first == second
    rng = np.random.default_rng(7)
    permutation_p_value((cand - base).to_numpy(), 9999, rng)  # the interval's draws come after the test's
    reference = stats.bootstrap(((cand - base).to_numpy(),), np.mean, confidence_level=0.95, n_resamples=9999,
                                method="BCa", random_state=rng)
    assert (first.ci_low, first.ci_high) == pytest.approx(
        (reference.confidence_interval.low, reference.confidence_interval.high), abs=1e-12)


def test_permutation_p_of_a_known_case_matches_the_exact_test():
    differences = np.array([0.3, 0.2, 0.25, 0.1, -0.05, 0.15, 0.05, 0.2])
    # exact: enumerate all 2^8 sign vectors
    signs = np.array(np.meshgrid(*[[-1, 1]] * 8)).reshape(8, -1).T
    exact = np.mean(np.abs(signs @ differences) >= abs(differences.sum()) - 1e-12)
    estimate = permutation_p_value(differences, 99999, np.random.default_rng(1))
    assert exact == pytest.approx(6 / 256)
    assert estimate == pytest.approx(exact, abs=0.002)


def test_undefined_queries_are_left_out_and_counted():
    base = pd.Series([0.1, np.nan, 0.5, 0.2], index=list("abcd"))
    cand = pd.Series([0.3, np.nan, 0.4, 0.6], index=list("abcd"))
    result = compare_paired(base, cand)
    assert result.n == 3 and result.undefined == 1 and (result.wins, result.losses) == (2, 1)


def test_mismatched_queries_are_refused():
    with pytest.raises(InputError, match="different queries"):
        compare_paired(pd.Series([1.0], index=["a"]), pd.Series([1.0], index=["b"]))


@pytest.mark.parametrize(("option", "message"), [
    ({"permutations": 0}, "permutations must be a positive integer, got 0"),
    ({"alpha": 1.5}, r"alpha must be a number in \(0, 1\), got 1.5"),
    ({"planned": 0}, "planned must be a positive integer, got 0"),
])
def test_settings_that_would_give_a_meaningless_p_are_refused(option, message):
    scores = pd.Series([0.1, 0.5, 0.3], index=["a", "b", "c"])
    with pytest.raises(InputError, match=message):
        compare_paired(scores, scores + 0.1, **option)


def test_the_rows_of_a_matrix_share_their_flips_and_each_gets_its_own_p_value():
    samples = np.random.default_rng(3).normal(0.2, 1.0, size=(6, 37))
    together = permutation_p_values(samples, 999, np.random.default_rng(11))
    assert together.tolist() == [permutation_p_value(row, 999, np.random.default_rng(11)) for row in samples]


def test_flips_drawn_in_chunks_are_one_draw_of_all_the_flips():
    differences = np.random.default_rng(5).normal(0.05, 0.3, size=43)
    rng = np.random.default_rng(9)
    p = permutation_p_value(differences, 2500, rng)  # three chunks: 1000, 1000, 500
    by_hand = np.random.default_rng(9)
    signs = by_hand.integers(0, 2, size=(2500, 43), dtype=np.int8) * 2 - 1
    extreme = np.sum(np.abs(signs @ differences / 43) >= abs(differences.mean()) - 1e-12)
    assert p == (extreme + 1) / 2501
    assert rng.random() == by_hand.random()  # what is drawn next (the BCa interval) does not depend on chunking


def test_undefined_statistics_print_as_undef():
    result = compare_paired(pd.Series([0.1, np.nan], index=["a", "b"]), pd.Series([0.3, 0.2], index=["a", "b"]))
    assert result.n == 1 and np.isnan(result.t) and np.isnan(result.effect_size)
    text = result.to_text()
    assert "paired t          t = undef, p = undef" in text
    assert "effect size       undef (mean / sd of differences)" in text
    assert result.to_dict()["t"] is None and result.to_dict()["effect_size"] is None


# ------------------------------------------------------------------------------------------------ strata
STRATA = pd.DataFrame({"query_id": [f"q{i}" for i in range(10)], "stratum": ["head"] * 6 + ["tail"] * 4,
                       "stratum_share": [0.8] * 6 + [0.2] * 4})
BASE = pd.Series([0.5, 0.4, 0.6, 0.3, 0.7, 0.5, 0.2, 0.1, 0.4, 0.3], index=STRATA["query_id"])
CAND = pd.Series([0.6, 0.45, 0.55, 0.5, 0.9, 0.5, 0.1, 0.0, 0.2, 0.35], index=STRATA["query_id"])


def test_the_stratified_permutation_p_equals_a_brute_force_enumeration_of_every_sign_pattern():
    differences = (CAND - BASE).to_numpy()
    weights = np.array([0.8 / 6] * 6 + [0.2 / 4] * 4)
    observed = abs(weights @ differences)
    patterns = np.array(np.meshgrid(*[[-1, 1]] * 10)).reshape(10, -1).T  # all 1,024 sign patterns
    exact = np.mean(np.abs(patterns @ (weights * differences)) >= observed - 1e-12)
    result = compare_paired(BASE, CAND, strata=STRATA, weighting="traffic", permutations=200_000)
    assert result.mean_difference == pytest.approx(weights @ differences, abs=1e-15)
    assert abs(result.permutation_p - exact) <= 4 * np.sqrt(exact * (1 - exact) / 200_000)
    assert result.weighting == "traffic" and result.other_weighting["weighting"] == "uniform"
    assert result.other_weighting["mean_difference"] == pytest.approx(differences.mean())


def test_the_stratified_t_is_the_weighted_mean_over_its_stratified_standard_error():
    result = compare_paired(BASE, CAND, strata=STRATA, weighting="traffic")
    d = (CAND - BASE).to_numpy()
    head, tail = d[:6], d[6:]
    se = np.sqrt(0.8 ** 2 * head.var(ddof=1) / 6 + 0.2 ** 2 * tail.var(ddof=1) / 4)
    t = (0.8 * head.mean() + 0.2 * tail.mean()) / se
    assert result.t == pytest.approx(t)
    # Welch-Satterthwaite's degrees of freedom, not n - strata
    a = np.array([0.8 ** 2 * head.var(ddof=1) / 6, 0.2 ** 2 * tail.var(ddof=1) / 4])
    freedom = a.sum() ** 2 / (a[0] ** 2 / 5 + a[1] ** 2 / 3)
    assert 3 < freedom < 8
    assert result.ttest_p == pytest.approx(2 * stats.t.sf(abs(t), freedom))


def test_strata_whose_signs_differ_inside_intervals_holding_0_are_not_said_to_disagree():
    result = compare_paired(BASE, CAND, strata=STRATA)
    assert result.weighting == "uniform"
    assert [row["stratum"] for row in result.strata] == ["head", "tail"]
    head, tail = result.strata
    assert head["mean_difference"] > 0 > tail["mean_difference"]
    assert head["ci_low"] <= 0 <= head["ci_high"] or tail["ci_low"] <= 0 <= tail["ci_high"]
    assert result.strata_disagree == ""


def test_strata_whose_intervals_lie_on_both_sides_of_0_disagree():
    ids = [f"q{i}" for i in range(16)]
    strata = pd.DataFrame({"query_id": ids, "stratum": ["head"] * 8 + ["tail"] * 8, "stratum_share": [0.5] * 16})
    base = pd.Series(0.5, index=ids)
    step = np.linspace(0.1, 0.2, 8)
    candidate = pd.Series(np.r_[0.5 + step, 0.5 - step], index=ids)
    result = compare_paired(base, candidate, strata=strata)
    head, tail = result.strata
    assert head["ci_low"] > 0 > tail["ci_high"]
    assert result.strata_disagree == ("the strata disagree: candidate better on head (+0.1500), worse on tail "
                                      "(-0.1500) (each interval excludes 0)")


def test_a_stratum_of_one_query_has_no_interval_and_a_traffic_weighted_verdict_on_it_abstains():
    strata = STRATA.assign(stratum=["solo"] + ["rest"] * 9, stratum_share=[0.99] + [0.01] * 9)
    result = compare_paired(BASE, CAND, strata=strata, weighting="traffic")
    solo = next(row for row in result.strata if row["stratum"] == "solo")
    assert solo["n"] == 1 and np.isnan(solo["ci_low"]) and np.isnan(solo["ci_high"])
    assert np.isnan(result.t) and np.isnan(result.ttest_p)  # no variance in a stratum of one
    assert not result.established and result.rule == "few queries"
    assert result.verdict == ("no verdict: stratum solo (1 query) cannot carry an interval (a stratum needs 2 "
                              "queries or more: merge it with a neighbour in the queries file)")


def test_the_traffic_weighted_effect_size_divides_the_weighted_mean_by_the_weighted_sd():
    result = compare_paired(BASE, CAND, strata=STRATA, weighting="traffic")
    d = (CAND - BASE).to_numpy()
    w = np.r_[[0.8 / 6] * 6, [0.2 / 4] * 4]
    mean = w @ d
    variance = w @ (d - mean) ** 2 / (1 - w @ w)
    assert result.effect_size == pytest.approx(mean / np.sqrt(variance))
    uniform = compare_paired(BASE, CAND)
    assert uniform.effect_size == pytest.approx(d.mean() / d.std(ddof=1))


def test_a_traffic_weighted_comparison_needs_strata():
    with pytest.raises(InputError, match="a traffic-weighted comparison needs the strata"):
        compare_paired(BASE, CAND, weighting="traffic")


def test_the_percentile_interval_is_scipys_percentile_bootstrap_after_the_tests_flips():
    base, cand = BASE.reset_index(drop=True), CAND.reset_index(drop=True)
    result = compare_paired(base, cand, interval="percentile", permutations=999, bootstrap_resamples=2000, seed=5)
    rng = np.random.default_rng(5)
    permutation_p_value((cand - base).to_numpy(), 999, rng)
    reference = stats.bootstrap(((cand - base).to_numpy(),), np.mean, confidence_level=0.95, n_resamples=2000,
                                method="percentile", random_state=rng, vectorized=True, batch=500)
    assert (result.ci_low, result.ci_high) == pytest.approx(tuple(reference.confidence_interval))
    assert result.ci_method == "percentile"


def test_an_unknown_interval_or_primary_test_is_one_line():
    with pytest.raises(InputError, match="interval must be one of bca, percentile, got 'normal'"):
        compare_paired(BASE, CAND, interval="normal")
    with pytest.raises(InputError, match="primary_test must be one of permutation, t, got 'wilcoxon'"):
        compare_paired(BASE, CAND, primary_test="wilcoxon")
