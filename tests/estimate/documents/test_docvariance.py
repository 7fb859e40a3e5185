"""The "this set" variance's floor and quantile (evalset/estimate/documents/variance.py) on hand-made columns: two
runs that agree on every drawn pair but differ on undrawn ones get the floor's width, never 0; two identical runs
get exactly 0 and the normal quantile; few sampled terms get Student's t on Satterthwaite's degrees of freedom; and
nDCG's secant counts the window below 0 at slope 0."""

import numpy as np
import pytest
from scipy import stats

from evalset.contract import EvaluationContract
from evalset.estimate.documents.estimate import mean_intervals
from evalset.estimate.documents.estimators import _secant
from evalset.estimate.documents.rules import DOCUMENT_SAMPLE
from evalset.metrics.decomposition import discount_area as ideal_area
from evalset.metrics.documents import document_terms

# one query, four pairs at pi = 0.5; pairs 0 and 1 drawn. Runs a and b weigh pairs 0 and 1 alike (0.5 each); a also
# has pair 2, b pair 3, neither drawn; c is a copy of a
PI = np.full(4, 0.5)
SAMPLED = np.array([True, True, False, False])
FACTOR = np.where(SAMPLED, (1 - PI) / PI ** 2, 0.0)
WEIGHTS = np.array([[0.5, 0.5, 0.5, 0.0], [0.5, 0.5, 0.0, 0.5], [0.5, 0.5, 0.5, 0.0]])
SPREAD = np.full(4, 0.25)  # each pair's variance of the quantity (the Bernoulli bound of an indicator)
FLOOR = (WEIGHTS, SPREAD, PI, np.zeros(4, dtype=np.int64))  # the floor's terms: weights, spread, pi, query


def intervals(pairs):
    residual = np.array([0.3, -0.2, 0.0, 0.0])  # e where drawn, 0 elsewhere
    z = WEIGHTS * residual[None, :]
    values = np.array([[0.6], [0.6], [0.6]])
    return mean_intervals(values, z, FACTOR, PI, 0.95, pairs, floor=FLOOR)


def test_runs_that_agree_on_every_drawn_pair_but_differ_on_undrawn_ones_get_the_floors_width():
    got = intervals([(0, 1)])
    # the sampled terms of b - a are 0; the floor: pairs 2 and 3, (1 - pi) / pi * w^2 * v = 1 * 0.25 * 0.25 each
    floor = DOCUMENT_SAMPLE.floor_share * 2 * 0.25 * 0.25
    assert got["estimate"][3] == 0.0
    assert got["se_set"][3] == pytest.approx(np.sqrt(floor))
    # the floor's degrees of freedom: 2 (sum e)^2 / sum (1 - pi) / pi e^2 = 2 * 0.125^2 / (2 * 0.0625^2) = 4
    assert got["df_set"][3] == pytest.approx(4.0)
    assert got["z"][3] == pytest.approx(stats.t.ppf(0.975, 4))  # 2.776, not the normal's 1.96
    assert got["z"][3] * got["se_set"][3] > 0.2


def test_identical_runs_differ_by_exactly_zero_with_no_width():
    got = intervals([(0, 2)])
    assert got["estimate"][3] == 0.0 and got["se_set"][3] == 0.0
    assert got["z"][3] == pytest.approx(stats.norm.ppf(0.975))


def test_few_sampled_pairs_take_students_t_on_satterthwaites_degrees_of_freedom():
    # one run, three drawn pairs of equal term at pi = 0.2: df = 2 (3 b)^2 / (3 (1 - 0.2) b^2) = 7.5; no floor
    pi = np.full(5, 0.2)
    factor = np.where(np.arange(5) < 3, (1 - pi) / pi ** 2, 0.0)
    z = np.array([[0.1, -0.1, 0.1, 0.0, 0.0]])
    got = mean_intervals(np.array([[0.5]]), z, factor, pi, 0.95)
    assert got["df_set"][0] == pytest.approx(7.5)
    assert got["z"][0] == pytest.approx(stats.t.ppf(0.975, 7.5))
    assert got["z"][0] == pytest.approx(2.333, abs=1e-3)
    assert got["se_set"][0] == pytest.approx(np.sqrt(3 * 0.8 / 0.04 * 0.01))


def test_the_secant_counts_the_window_below_zero_at_slope_zero():
    count, sd = np.array([0.0, 4.0, -3.0]), np.array([2.0, 1.0, 1.0])
    slope = _secant(document_terms("ndcg@10", EvaluationContract()), count, sd, 10)
    # at 0 the rise from 0 to 2 over the whole 4: half the rise's own slope; wholly below 0, no rise
    assert slope[0] == pytest.approx(ideal_area(np.array([2.0]), 10)[0] / 4)
    assert slope[1] == pytest.approx((ideal_area(np.array([5.0]), 10)[0] - ideal_area(np.array([3.0]), 10)[0]) / 2)
    assert slope[2] == 0.0


def test_a_difference_of_runs_weighing_every_pair_alike_is_exactly_zero_not_a_rounding():
    values = np.array([[0.1 + 0.2 + 0.3], [0.3 + 0.2 + 0.1]])  # the same sum in another order: 1e-16 apart
    z = np.zeros((2, 4))
    got = mean_intervals(values, z, FACTOR, PI, 0.95, [(0, 1)], floor=(WEIGHTS[[0, 2]], *FLOOR[1:]))
    assert values[1, 0] - values[0, 0] != 0.0
    assert got["estimate"][2] == 0.0 and got["se_set"][2] == 0.0


def test_a_sample_of_a_sets_holes_takes_the_whole_floor_below_its_units_and_a_blend_above():
    """The hole design's rule (evalset/estimate/documents/rules.py), on the normal quantile: a column drawn from fewer
    than HOLE_SAMPLE.thin_below units is max(V, F); one drawn from more, (1 - b) V + b F."""
    from dataclasses import replace

    from evalset.estimate.documents.rules import HOLE_SAMPLE

    z = WEIGHTS * np.array([0.3, -0.2, 0.0, 0.0])[None, :]
    got = mean_intervals(np.array([[0.6], [0.6], [0.6]]), z, FACTOR, PI, 0.95, [(0, 1)], floor=FLOOR, rules=HOLE_SAMPLE)
    assert got["se_set"][3] == pytest.approx(np.sqrt(2 * 0.25 * 0.25))  # b - a: no drawn unit, the whole floor
    assert got["z"][3] == pytest.approx(stats.norm.ppf(0.975))  # not t on its 4 degrees of freedom
    sampled = (1 - 0.5) / 0.5 ** 2 * 0.5 ** 2 * (0.3 ** 2 + 0.2 ** 2)  # run a: two drawn units, V
    assert got["se_set"][0] == pytest.approx(np.sqrt(max(sampled, 3 * 0.25 * 0.25)))
    thick = replace(HOLE_SAMPLE, thin_below=2)
    got = mean_intervals(np.array([[0.6], [0.6], [0.6]]), z, FACTOR, PI, 0.95, [(0, 1)], floor=FLOOR, rules=thick)
    blend = (1 - HOLE_SAMPLE.blend) * sampled + HOLE_SAMPLE.blend * 3 * 0.25 * 0.25
    assert got["se_set"][0] == pytest.approx(np.sqrt(blend))
    assert HOLE_SAMPLE.this_set == ("normal, within-query sampling variance: never below its floor under 6 drawn "
                                    "units, else 0.6 of the sampled one and 0.4 of the floor")
    assert DOCUMENT_SAMPLE.this_set == "Student's t, within-query sampling variance never below 0.25 of its floor"
