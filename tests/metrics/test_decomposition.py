"""The decomposition of a measure over a query's documents: the discounts' area, a tie group's mean weight and AP's
pairwise numerator and its slopes, each against a direct computation."""

import itertools

import numpy as np
import pytest

from evalset.metrics.decomposition import (
    discount,
    discount_area,
    discount_area_slope,
    discounted,
    group_mean,
    pairwise_numerator,
)
from evalset.metrics.measures import MEASURES


def test_the_discounts_area_is_their_sum_at_integer_counts_and_linear_between():
    discounts = 1 / np.log2(np.arange(2, 12))
    np.testing.assert_allclose(discount_area(np.arange(11.0), 10), np.r_[0, np.cumsum(discounts)])
    assert discount_area(np.array([2.5]), 10)[0] == pytest.approx(discounts[:2].sum() + 0.5 * discounts[2])
    assert discount_area(np.array([40.0]), 10)[0] == pytest.approx(discounts.sum())
    np.testing.assert_allclose(discount_area_slope(np.array([0.0, 2.5, 9.9, 10.0]), 10),
                               [1.0, discounts[2], discounts[9], 0.0])


def test_a_tie_groups_places_share_the_mean_of_their_weights():
    weight = discounted(np.arange(6), 4)  # places 4 and 5 beyond the cutoff weigh 0
    start = np.array([0, 1, 1, 1, 4, 4])
    size = np.array([1, 3, 3, 3, 2, 2])
    np.testing.assert_allclose(group_mean(weight, start, size),
                               [weight[0], *[weight[1:4].mean()] * 3, 0.0, 0.0])


def test_a_group_straddling_the_cutoff_spreads_its_weight_beyond_it():
    weight = discounted(np.arange(4), 2)
    got = group_mean(weight, np.array([0, 1, 1, 1]), np.array([1, 3, 3, 3]))
    np.testing.assert_allclose(got, [1.0, discount(np.array(1.0)) / 3] + [discount(np.array(1.0)) / 3] * 2)


def brute_force_ap_numerator(x, weight):
    return sum(x[r] * (1 + x[:r].sum()) * weight[r] for r in range(len(x)))


def test_aps_pairwise_numerator_and_its_slopes_are_the_direct_sums_and_their_derivatives():
    rng = np.random.default_rng(3)
    x = rng.random(7)
    weight = np.where(np.arange(7) < 5, 1 / np.arange(1, 8), 0.0)
    numerator, slope = pairwise_numerator(x, weight)
    assert numerator == pytest.approx(brute_force_ap_numerator(x, weight))
    step = 1e-6
    for r in range(7):
        moved = x.copy()
        moved[r] += step
        assert slope[r] == pytest.approx((brute_force_ap_numerator(moved, weight) - numerator) / step, abs=1e-5)


def test_at_binary_values_the_pairwise_numerator_over_r_is_average_precision():
    for relevant in itertools.product([0.0, 1.0], repeat=5):
        x = np.array(relevant)
        if x.sum():
            ranks = np.flatnonzero(x) + 1
            ap = np.mean([k / rank for k, rank in enumerate(ranks, start=1)])
            assert pairwise_numerator(x, 1 / np.arange(1, 6))[0] / x.sum() == pytest.approx(ap)


def test_the_registry_declares_the_decomposable_measures():
    declared = {name for name, kind in MEASURES.items() if kind.decomposition is not None}
    assert declared == {"p", "dcg", "ndcg", "ap"}
