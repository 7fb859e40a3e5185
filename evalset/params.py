"""Declared parameter constraints, in the model of scikit-learn's ``validate_params``: a parameter's constraint is
a value (``Interval(int, 1)``), and :func:`check` turns a value that breaks it into one line naming the parameter::

    depth = check("depth", depth, POSITIVE_INT)  # InputError: depth must be a positive integer, got 0

Integers are Python or numpy integers, never bools; a number is any real number but a bool, and NaN is in no
interval. :func:`check` returns the value as its kind (a numpy integer as ``int``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Literal

from evalset.errors import InputError


@dataclass(frozen=True)
class Interval:
    """The numbers of ``kind`` (``int`` or ``float``) from ``low`` to ``high`` (None: unbounded); ``closed`` says
    which bounds are included."""

    kind: type[int] | type[float]
    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"

    def __contains__(self, value: object) -> bool:
        kind = numbers.Integral if self.kind is int else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind):
            return False
        low_in, high_in = self._ends_included()
        above = self.low is None or (value >= self.low if low_in else value > self.low)
        below = self.high is None or (value <= self.high if high_in else value < self.high)
        return bool(above and below)

    def __str__(self) -> str:
        low_in, high_in = self._ends_included()
        if self.kind is int and self.high is None and low_in and self.low in (0, 1):
            return "a positive integer" if self.low == 1 else "a non-negative integer"
        what = "an integer" if self.kind is int else "a number"
        if self.low is None and self.high is None:
            return what
        if self.high is None:
            return f"{what} {'>=' if low_in else '>'} {self.low}"
        if self.low is None:
            return f"{what} {'<=' if high_in else '<'} {self.high}"
        return f"{what} in {'[' if low_in else '('}{self.low}, {self.high}{']' if high_in else ')'}"

    def _ends_included(self) -> tuple[bool, bool]:
        return self.closed in ("both", "left"), self.closed in ("both", "right")


POSITIVE_INT = Interval(int, 1)
NON_NEGATIVE_INT = Interval(int, 0)
POSITIVE_NUMBER = Interval(float, 0, None, closed="neither")
PROBABILITY = Interval(float, 0, 1, closed="neither")


def check(name: str, value: Any, constraint: Interval) -> Any:
    """``value`` (as ``constraint.kind``) if it meets ``constraint``, else :class:`InputError`:
    ``NAME must be CONSTRAINT, got VALUE``."""
    if value not in constraint:
        shown = value if isinstance(value, numbers.Number) else repr(value)
        raise InputError(f"{name} must be {constraint}, got {shown}")
    return constraint.kind(value)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else :class:`InputError`: ``NAME must be one of A, B, got VALUE``."""
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def check_fields(instance: Any, rules: dict[str, Interval]) -> None:
    """Check each field of a frozen or plain dataclass ``instance`` named in ``rules`` (None: not given), in the
    order of ``rules``: the rules of a settings object declared beside it, in its ``__post_init__``."""
    for name, rule in rules.items():
        value = getattr(instance, name)
        if value is not None:
            object.__setattr__(instance, name, check(name, value, rule))
