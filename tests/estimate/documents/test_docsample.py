"""The document sample's design: priors from the runs' ranks, inclusion probabilities that sum to the budget, a
seeded Poisson draw."""

import numpy as np
import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.estimate.documents.sample import (
    PRIOR_FLOOR,
    PRIOR_POWER,
    document_prior,
    inclusion_probabilities,
    poisson_sample,
)


def test_the_prior_sums_each_runs_discount_within_the_depth_and_is_floored():
    pairs = pd.DataFrame({"query_id": ["1", "1", "1", "2"], "doc_id": ["a", "b", "c", "a"]})
    sources = pd.DataFrame({"query_id": ["1", "1", "1", "1", "2"], "doc_id": ["a", "a", "b", "c", "a"],
                            "system": ["x", "y", "x", "y", "x"], "rank": [1, 3, 2, 11, 7]})
    prior = document_prior(pairs, sources, depth=10, power=1.0)
    # a: 1/log2 2 + 1/log2 4 = 1.5; b: 1/log2 3 = 0.631; c: rank 11 is beyond the depth: the floor; 2/a: 1/log2 8
    np.testing.assert_allclose(prior, [1.5, 1 / np.log2(3), PRIOR_FLOOR, 1 / 3])
    # evalset's prior: each weight to the power 1/4 (a: 1 + 0.5 ** 0.25 = 1.841; 2/a: (1/3) ** 0.25 = 0.760)
    assert PRIOR_POWER == 0.25
    np.testing.assert_allclose(document_prior(pairs, sources, depth=10),
                               [1 + 0.5 ** 0.25, (1 / np.log2(3)) ** 0.25, PRIOR_FLOOR, (1 / 3) ** 0.25])
    # power 0: the number of runs that rank the pair within the depth
    np.testing.assert_allclose(document_prior(pairs, sources, depth=10, power=0), [2, 1, PRIOR_FLOOR, 1])


def test_the_probabilities_sum_to_the_budget_the_largest_capped_at_one():
    prior = np.array([10.0, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(inclusion_probabilities(prior, 2), [1, 1 / 3, 1 / 3, 1 / 3])
    rng = np.random.default_rng(7)
    prior = np.maximum(rng.exponential(size=5000) ** 3, PRIOR_FLOOR)
    for budget in (1, 250, 1000, 4990):
        pi = inclusion_probabilities(prior, budget)
        assert pi.sum() == pytest.approx(budget, rel=1e-9)
        assert pi.max() <= 1 and pi.min() > 0
        uncapped = pi < 1
        ratio = pi[uncapped] / prior[uncapped]  # in proportion to the prior below the cap
        assert ratio.max() == pytest.approx(ratio.min(), rel=1e-9)
        assert prior[~uncapped].min(initial=np.inf) >= prior[uncapped].max()


@pytest.mark.parametrize(("budget", "message"), [
    (0, "above 0 and below the 3 pairs of the pool, got 0"),
    (3, "got 3 (all of them: judge the whole pool)"),
    (4.5, "got 4.5 (all of them"),
])
def test_a_budget_that_is_no_sample_is_refused(budget, message):
    with pytest.raises(InputError, match=r"the budget must be"):
        inclusion_probabilities(np.ones(3), budget)
    with pytest.raises(InputError) as raised:
        inclusion_probabilities(np.ones(3), budget)
    assert message in str(raised.value)


def test_the_draw_is_seeded_and_its_size_is_the_budget_in_expectation():
    pi = inclusion_probabilities(np.maximum(np.random.default_rng(1).exponential(size=9260) ** 3, PRIOR_FLOOR), 1000)
    first, again = poisson_sample(pi, 3), poisson_sample(pi, 3)
    assert np.array_equal(first, again) and not np.array_equal(first, poisson_sample(pi, 4))
    sizes = [poisson_sample(pi, seed).sum() for seed in range(200)]
    assert abs(np.mean(sizes) - 1000) < 3 * np.sqrt((pi * (1 - pi)).sum() / 200)
    assert first[pi == 1].all()
