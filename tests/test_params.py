"""Declared parameter constraints: which values meet them, and the one line that names a parameter breaking one."""

import math

import numpy as np
import pytest

from evalset.errors import InputError
from evalset.params import NON_NEGATIVE_INT, POSITIVE_INT, PROBABILITY, Interval, check


def test_integers_are_python_or_numpy_integers_never_bools_or_floats():
    assert [value in POSITIVE_INT for value in (1, 7, np.int64(3), np.int32(1))] == [True] * 4
    assert [value in POSITIVE_INT for value in (0, -2, True, 1.0, "1", None)] == [False] * 6
    assert 0 in NON_NEGATIVE_INT and -1 not in NON_NEGATIVE_INT and False not in NON_NEGATIVE_INT


def test_the_bounds_of_an_interval_are_included_as_closed_says():
    inside = [value in PROBABILITY for value in (0.5, np.float64(0.01), 0, 1, math.nan, True)]
    assert inside == [True, True, False, False, False, False]
    assert 1 in Interval(float, 0, 1, closed="right") and 0 not in Interval(float, 0, 1, closed="right")
    assert 0 in Interval(float, 0, 1, closed="left") and 1 not in Interval(float, 0, 1, closed="left")
    assert -5 in Interval(int, None, 0) and 1 not in Interval(int, None, 0)


def test_each_constraint_says_what_it_is_in_words():
    assert [str(c) for c in (POSITIVE_INT, NON_NEGATIVE_INT, PROBABILITY)] == [
        "a positive integer", "a non-negative integer", "a number in (0, 1)"]
    assert str(Interval(int, 2)) == "an integer >= 2"
    assert str(Interval(float, 0, closed="neither")) == "a number > 0"
    assert str(Interval(int, 1, 5)) == "an integer in [1, 5]"
    assert str(Interval(float, None, 1, closed="left")) == "a number < 1"
    assert str(Interval(int)) == "an integer"


def test_check_returns_the_value_as_its_kind():
    value = check("depth", np.int64(10), POSITIVE_INT)
    assert value == 10 and type(value) is int
    assert check("alpha", 0.05, PROBABILITY) == 0.05


@pytest.mark.parametrize(("name", "value", "constraint", "message"), [
    ("depth", 0, POSITIVE_INT, "depth must be a positive integer, got 0"),
    ("depth", np.int64(-1), POSITIVE_INT, "depth must be a positive integer, got -1"),
    ("depth", "ten", POSITIVE_INT, "depth must be a positive integer, got 'ten'"),
    ("depth", True, POSITIVE_INT, "depth must be a positive integer, got True"),
    ("seed", -3, NON_NEGATIVE_INT, "seed must be a non-negative integer, got -3"),
    ("alpha", 1.5, PROBABILITY, "alpha must be a number in (0, 1), got 1.5"),
])
def test_a_value_that_breaks_its_constraint_is_one_line_naming_the_parameter(name, value, constraint, message):
    with pytest.raises(InputError) as raised:
        check(name, value, constraint)
    assert str(raised.value) == message
