"""The Wilson interval of a share, against its closed form."""

import math

import pytest

from evalset.stats.proportions import wilson_interval


@pytest.mark.parametrize(("successes", "trials"), [(0, 10), (3, 10), (10, 10), (31, 100)])
def test_wilson_interval_is_the_closed_form(successes, trials):
    z = 1.959963984540054
    share = successes / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    low, high = wilson_interval(successes, trials)
    assert low == pytest.approx(centre - half, abs=1e-12) and high == pytest.approx(centre + half, abs=1e-12)


def test_no_trial_is_undefined_not_zero():
    assert all(math.isnan(bound) for bound in wilson_interval(0, 0))


def test_at_no_success_or_every_success_the_bound_is_the_end_exactly():
    assert wilson_interval(0, 111)[0] == 0.0 and wilson_interval(111, 111)[1] == 1.0
