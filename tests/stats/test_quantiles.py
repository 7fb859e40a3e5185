"""The quantiles and the intervals they make (evalset.stats.quantiles): the normal's and Student's t, and an
estimate's interval from its standard error, for numbers and for columns alike."""

import math

import numpy as np
import pytest

from evalset.stats.quantiles import around, two_sided


def test_the_two_sided_quantile_is_the_normals_or_students_t():
    assert two_sided(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert two_sided(0.95, 9) == pytest.approx(2.262157, abs=1e-6)
    columns = two_sided(0.95, np.array([9.0, math.inf]))
    assert columns == pytest.approx([2.262157, 1.959964], abs=1e-6)


def test_an_interval_is_the_estimate_give_or_take_the_quantile_times_its_standard_error():
    assert around(0.5, 0.1, 2.0) == pytest.approx((0.3, 0.7))
    low, high = around(np.array([0.5, 0.2]), np.array([0.1, 0.05]), np.array([2.0, 1.0]))
    assert low == pytest.approx([0.3, 0.15]) and high == pytest.approx([0.7, 0.25])
    low, high = around(0.5, math.nan, 2.0)  # no standard error: no interval, never a point
    assert math.isnan(low) and math.isnan(high)
