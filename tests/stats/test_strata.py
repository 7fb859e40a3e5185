"""Means over defined queries, per stratum and across strata, and the bootstrap interval of the set's mean."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalset.errors import InputError
from evalset.stats.strata import StratifiedSummary, mean_summary, score_interval, stratified_summary, t_intervals


# ------------------------------------------------------------------------------------------------ means
def test_a_mean_is_over_the_defined_queries_and_undefined_when_none_is():
    summary = mean_summary(pd.Series([0.2, np.nan, 0.4]))
    assert (summary.mean, summary.defined, summary.undefined) == (pytest.approx(0.3), 2, 1)
    nothing = mean_summary(pd.Series([np.nan, np.nan]))
    assert math.isnan(nothing.mean) and nothing.to_dict() == {"mean": None, "defined": 0, "undefined": 2}


def test_traffic_weighting_renormalises_over_the_strata_with_a_value():
    queries = pd.DataFrame({"query_id": ["h1", "h2", "t1", "x1", "other"],
                            "stratum": ["head", "head", "tail", "x", "x"], "stratum_share": [0.5, 0.5, 0.3, 0.2, 0.2]})
    values = pd.Series({"h1": 0.2, "h2": 0.6, "t1": 1.0, "x1": np.nan, "unknown": 0.9})  # "unknown" is in no stratum
    summary = stratified_summary(values, queries)
    assert isinstance(summary, StratifiedSummary)
    assert summary.strata["head"].mean == pytest.approx(0.4) and summary.strata["head"].share == 0.5
    assert math.isnan(summary.strata["x"].mean) and summary.strata["x"].undefined == 1
    assert summary.strata_without_value == ["x"]
    assert summary.weighted_mean == pytest.approx((0.5 * 0.4 + 0.3 * 1.0) / 0.8)
    assert (summary.mean, summary.defined, summary.undefined) == (pytest.approx(0.6), 3, 1)
    assert stratified_summary(values, queries, "uniform").weighted_mean == pytest.approx(0.6)
    assert summary.to_dict() == {
        "mean": pytest.approx(0.6), "defined": 3, "undefined": 1,
        "strata": {"head": {"mean": pytest.approx(0.4), "defined": 2, "undefined": 0, "share": 0.5},
                   "tail": {"mean": 1.0, "defined": 1, "undefined": 0, "share": 0.3},
                   "x": {"mean": None, "defined": 0, "undefined": 1, "share": 0.2}},
        "weighted_mean": pytest.approx(0.625), "weighting": "traffic", "strata_without_value": ["x"]}


# ------------------------------------------------------------------------------------------------ intervals
QUERIES = pd.DataFrame({"query_id": [f"q{i}" for i in range(12)], "stratum": ["a"] * 4 + ["b"] * 8,
                        "stratum_share": [0.25] * 4 + [0.75] * 8})
VALUES_B = np.array([0.1, 0.5, 0.35, 0.9, 0.0, 0.65, 0.2, 0.45])


def test_one_stratum_interval_is_scipys_bca_on_the_defined_queries():
    queries = QUERIES.assign(stratum="all", stratum_share=1.0)
    values = pd.Series([*VALUES_B, np.nan, 0.3, 0.8, np.nan], index=queries["query_id"])
    estimate, low, high = score_interval(values, queries, rng=np.random.default_rng(7), resamples=3000)
    defined = values.dropna().to_numpy()
    expected = stats.bootstrap((defined,), np.mean, method="BCa", n_resamples=3000, vectorized=True,
                               random_state=np.random.default_rng(7)).confidence_interval
    assert estimate == pytest.approx(defined.mean())
    assert (low, high) == pytest.approx((expected.low, expected.high))


def test_strata_are_resampled_apart_and_weighted_by_traffic_share():
    # stratum a is constant (1.0): the interval is 0.25 * 1 + 0.75 * (interval of stratum b's mean)
    values = pd.Series([1.0] * 4 + list(VALUES_B), index=QUERIES["query_id"])
    estimate, low, high = score_interval(values, QUERIES, rng=np.random.default_rng(3), resamples=20000)
    alone = stats.bootstrap((VALUES_B,), np.mean, method="BCa", n_resamples=20000, vectorized=True,
                            random_state=np.random.default_rng(3)).confidence_interval
    assert estimate == pytest.approx(0.25 + 0.75 * VALUES_B.mean())
    assert low == pytest.approx(0.25 + 0.75 * alone.low, abs=0.01)
    assert high == pytest.approx(0.25 + 0.75 * alone.high, abs=0.01)
    uniform = score_interval(values, QUERIES, "uniform", resamples=2000)
    assert uniform[0] == pytest.approx(values.mean())


def test_degenerate_and_undefined_intervals():
    constant = pd.Series(0.5, index=QUERIES["query_id"])
    assert score_interval(constant, QUERIES) == (0.5, 0.5, 0.5)
    assert all(np.isnan(score_interval(constant * np.nan, QUERIES)))


def test_t_intervals_of_columns_are_scipys_and_degenerate_without_spread_or_queries():
    values = np.array([[0.1, 0.5, 0.3], [0.4, 0.5, 0.2], [0.2, 0.5, 0.9], [0.7, 0.5, 0.4]])
    means, lows, highs = t_intervals(values, 0.9)
    for column in (0, 2):
        low, high = stats.t.interval(0.9, 3, loc=values[:, column].mean(), scale=stats.sem(values[:, column]))
        assert (means[column], lows[column], highs[column]) == pytest.approx((values[:, column].mean(), low, high))
    assert lows[1] == highs[1] == means[1] == 0.5  # no spread: the point
    one = t_intervals(values[:1], 0.95)
    assert list(one[0]) == list(values[0]) and np.isnan(one[1]).all() and np.isnan(one[2]).all()
    with pytest.raises(InputError, match="matrix"):
        t_intervals(values[:, 0], 0.95)
