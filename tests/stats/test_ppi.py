"""PPI++ means (evalset.stats.ppi) against ppi_py itself, called column by column, and the classical interval
against scipy's t distribution."""

import numpy as np
import ppi_py
import pytest
from scipy import stats

from evalset.errors import InputError
from evalset.stats.ppi import classical_means, combine_strata, departure_floor, ppi_means


@pytest.fixture(scope="module")
def values():
    rng = np.random.default_rng(7)
    labelled = rng.random((12, 70))
    predicted = np.clip(labelled + rng.normal(0, 0.15, labelled.shape), 0, 1)
    unlabelled = rng.random((40, 70))
    predicted[:, 3] = unlabelled[:, 3] = 0.25  # an LLM that says the same for every query
    return labelled, predicted, unlabelled


def test_the_normal_interval_is_ppi_py_called_on_each_column_alone_with_its_own_lambda(values):
    labelled, predicted, unlabelled = values
    table = ppi_means(labelled, predicted, unlabelled, level=0.9, interval="normal")
    for column in (0, 1, 64, 69):
        args = (labelled[:, column], predicted[:, column], unlabelled[:, column])
        assert table["estimate"][column] == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(*args))[0]))
        low, high = ppi_py.ppi_mean_ci(*args, alpha=0.1)
        assert (table["low"][column], table["high"][column]) == pytest.approx((float(low[0]), float(high[0])))


def test_the_t_interval_keeps_the_centre_and_standard_error_on_welch_satterthwaite_degrees_of_freedom(values):
    labelled, predicted, unlabelled = values
    normal = ppi_means(labelled, predicted, unlabelled, interval="normal")
    t = ppi_means(labelled, predicted, unlabelled, interval="t")
    assert np.allclose(t["estimate"], normal["estimate"]) and np.allclose(t["se"], normal["se"])
    for column in (0, 1, 69):
        y, y_hat, y_u = labelled[:, column], predicted[:, column], unlabelled[:, column]
        lam = (normal["estimate"][column] - y.mean()) / (y_u.mean() - y_hat.mean())  # ppi_py's, from its estimate
        imputed, rectifier = (lam * y_u).var() / 40, (y - lam * y_hat).var() / 12
        df = (imputed + rectifier) ** 2 / (rectifier**2 / 11 + imputed**2 / 39)
        assert t["df"][column] == pytest.approx(df)
        ratio = (t["high"][column] - t["low"][column]) / (normal["high"][column] - normal["low"][column])
        assert ratio == pytest.approx(stats.t.ppf(0.975, df) / stats.norm.ppf(0.975))
    assert t["df"][3] == 11  # the LLM carries no weight: the slice's n - 1
    assert (t["df"] >= 11).all() and (t["df"] < 51).all()  # between the slice's n - 1 and n + N - 2


def test_a_constant_llm_column_falls_back_to_the_classical_mean_instead_of_nan(values):
    labelled, predicted, unlabelled = values
    table = ppi_means(labelled, predicted, unlabelled, interval="normal")
    assert table["estimate"][3] == pytest.approx(labelled[:, 3].mean())
    assert table["se"][3] == pytest.approx(labelled[:, 3].std() / np.sqrt(12))
    assert table["effective_n"][3] == pytest.approx(12)


def test_effective_n_is_the_human_variance_over_the_squared_standard_error(values):
    labelled, predicted, unlabelled = values
    table = ppi_means(labelled, predicted, unlabelled)
    assert np.allclose(table["effective_n"], labelled.var(axis=0) / table["se"] ** 2)
    assert (table["effective_n"][[0, 1, 2]] > 12).all()  # a good predictor is worth more than the slice


def test_the_classical_interval_is_the_t_interval_of_the_slice(values):
    labelled = values[0][:, 0]
    row = classical_means(labelled).iloc[0]
    low, high = stats.t.interval(0.95, 11, loc=labelled.mean(), scale=stats.sem(labelled))
    assert (row["estimate"], row["low"], row["high"]) == pytest.approx((labelled.mean(), low, high))


def test_strata_combine_with_renormalised_shares_and_welch_satterthwaite_degrees_of_freedom():
    a, b = classical_means(np.array([0.1, 0.3, 0.5])), classical_means(np.array([0.6, 0.7, 0.8, 0.9, 1.0]))
    row = combine_strata({"head": a, "tail": b}, {"head": 3.0, "tail": 1.0}).iloc[0]
    assert row["estimate"] == pytest.approx(0.75 * 0.3 + 0.25 * 0.8)
    parts = np.array([(0.75 * a["se"][0]) ** 2, (0.25 * b["se"][0]) ** 2])
    df = parts.sum() ** 2 / (parts[0] ** 2 / 2 + parts[1] ** 2 / 4)
    assert row["high"] - row["estimate"] == pytest.approx(stats.t.ppf(0.975, df) * np.sqrt(parts.sum()))


def test_a_slice_of_one_query_or_no_query_outside_it_is_refused(values):
    labelled, predicted, unlabelled = values
    with pytest.raises(InputError, match="at least 2"):
        ppi_means(labelled[:1], predicted[:1], unlabelled)
    with pytest.raises(InputError, match="no query outside the slice"):
        ppi_means(labelled, predicted, unlabelled[:0])


def _ceiling_population():
    """A reciprocal rank near the ceiling: 39 of 43 queries at 1, four at 0.5 (the mean 0.9535)."""
    return np.array([1.0] * 39 + [0.5] * 4)


def test_the_departure_floor_is_laplace_s_share_of_departures_times_their_mean_square():
    at_ceiling = np.ones((10, 1))
    llm = np.array([[1.0]] * 40 + [[0.5]] * 2 + [[0.0]])  # departures of 0.5, 0.5 and 1: mean square 0.5
    share = 1 / 12
    assert departure_floor(at_ceiling, (0.0, 1.0), reference=llm)[0] == pytest.approx(share * (1 - share) * 0.5)
    assert departure_floor(at_ceiling, (0.0, 1.0))[0] == pytest.approx(share * (1 - share) * 1.0)  # no reference: w²
    two_down = np.array([[1.0]] * 8 + [[0.5], [0.0]])
    share = 3 / 12
    assert departure_floor(two_down, (0.0, 1.0))[0] == pytest.approx(share * (1 - share) * (0.25 + 1.0) / 2)
    near_floor = np.array([[0.0]] * 9 + [[0.2]])  # a mean near 0 bunches at 0
    assert departure_floor(near_floor, (0.0, 1.0))[0] == pytest.approx((2 / 12) * (10 / 12) * 0.04)
    agree = np.array([[0.0]] * 9 + [[-0.5]])  # a paired difference bunches at 0, where the runs agree
    assert departure_floor(agree, (0.0, 1.0), difference=True)[0] == pytest.approx((2 / 12) * (10 / 12) * 0.25)


def test_a_slice_tied_at_the_bound_gets_an_interval_that_reaches_below_it_and_is_flagged():
    labelled = np.ones((10, 1))
    classical = classical_means(labelled, bounds=(0.0, 1.0))
    ppi = ppi_means(labelled, labelled, np.ones((33, 1)), bounds=(0.0, 1.0))
    for table in (classical, ppi):
        assert table["estimate"][0] == 1.0 and table["high"][0] == 1.0
        assert table["low"][0] < 1.0 - 0.05 and bool(table["degenerate"][0])  # was [1, 1]
    assert classical_means(labelled)["low"][0] == 1.0  # without the measure's range: the old point interval


def test_the_departure_floor_makes_ceiling_slices_cover_at_their_level():
    population = _ceiling_population()
    rng = np.random.default_rng(3)
    draws = 2000
    slices = np.array([rng.permutation(len(population))[:10] for _ in range(draws)])
    values = population[slices].T  # 10 x draws: every column a slice
    truth = population.mean()
    floored = classical_means(values, bounds=(0.0, 1.0), reference=np.tile(population[:, None], (1, draws)))
    raw = classical_means(values)
    coverage = ((floored["low"] <= truth) & (truth <= floored["high"])).mean()
    assert ((raw["low"] <= truth) & (truth <= raw["high"])).mean() < 0.75  # the point intervals miss
    assert coverage >= 0.95  # two values only: every slice that sees a 0.5 covers


def test_the_floor_leaves_a_human_slice_with_spread_and_every_point_estimate_as_they_were(values):
    labelled, predicted, unlabelled = values
    raw, floored = ppi_means(labelled, predicted, unlabelled), ppi_means(labelled, predicted, unlabelled,
                                                                         bounds=(0.0, 1.0))
    assert np.allclose(raw["estimate"], floored["estimate"]) and (floored["se"] >= raw["se"] - 1e-15).all()
    assert np.allclose(classical_means(labelled)["se"], classical_means(labelled, bounds=(0.0, 1.0))["se"])


def test_intervals_are_clipped_to_the_measure_range_and_flagged():
    labelled = np.array([[1.0, 0.0, 0.4], [1.0, 0.05, 0.6], [0.5, 0.0, 0.5], [1.0, 0.0, 0.5]])
    classical = classical_means(labelled, bounds=(0.0, 1.0))
    ppi = ppi_means(labelled, labelled, np.vstack([labelled] * 3), bounds=(0.0, 1.0))
    for table in (classical, ppi):
        assert (table["low"] >= 0).all() and (table["high"] <= 1).all()
        assert list(table["clipped"]) == [True, True, False]  # near 1, near 0; in the middle
    assert (classical_means(labelled)["high"] > 1).any() and (classical_means(labelled)["low"] < 0).any()
    differences = classical_means(np.array([[1.0], [-1.0], [1.0], [1.0]]), bounds=(0.0, 1.0), difference=True)
    assert differences["low"][0] >= -1 and differences["high"][0] == 1.0 and differences["clipped"][0]
    stratified = combine_strata({"a": classical, "b": classical}, {"a": 1, "b": 1}, bounds=(0.0, 1.0))
    assert (stratified["low"] >= 0).all() and (stratified["high"] <= 1).all()
