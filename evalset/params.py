"""Declared parameter constraints, in the model of scikit-learn's ``validate_params``: a parameter's constraint is
a value (``Interval(int, 1)``), and :func:`check` turns a value that breaks it into one line naming the parameter::

    depth = check("depth", depth, POSITIVE_INT)  # InputError: depth must be a positive integer, got 0

Integers are Python or numpy integers, never bools; a number is any finite real number but a bool (NaN and the
infinities are in no interval: no parameter of evalset means anything at infinity). :func:`check` returns the value
as its kind (a numpy integer as ``int``). A choice is a :class:`Choice` of names.

A settings object declares its fields' rules in a ``RULES`` mapping beside its fields and checks them in its
``__post_init__`` (:func:`check_fields`); the command line builds each option's type from the same rule
(:func:`evalset.cli.options.ruled`), so the library and the CLI refuse the same values with the same words and the
option's help states the rule.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from evalset.errors import InputError

F = TypeVar("F", bound=Callable[..., Any])
S = TypeVar("S")


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
        if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value):
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


@dataclass(frozen=True)
class Choice:
    """One of ``values`` (names, or numbers where a name is a number: trec_eval's versions)."""

    values: tuple[Any, ...]

    def __contains__(self, value: object) -> bool:
        return not isinstance(value, bool) and any(type(value) is type(v) and value == v for v in self.values)

    def __str__(self) -> str:
        return "one of " + ", ".join(map(str, self.values))


@dataclass(frozen=True)
class Length:
    """A text of ``low`` to ``high`` characters (leading and trailing white space counted)."""

    low: int
    high: int

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self.low <= len(value) <= self.high

    def __str__(self) -> str:
        return f"a text of {self.low} to {self.high} characters"


Constraint = Interval | Choice | Length

POSITIVE_INT = Interval(int, 1)
NON_NEGATIVE_INT = Interval(int, 0)
POSITIVE_NUMBER = Interval(float, 0, None, closed="neither")
PROBABILITY = Interval(float, 0, 1, closed="neither")
SEED = NON_NEGATIVE_INT
"""What a seed may be (numpy's seeds are non-negative integers; :mod:`evalset.seeds` makes the generators)."""
MAX_RESAMPLES = 1_000_000
"""The most bootstrap resamples or permutations a parameter takes: beyond, a command runs for hours (a million
resamples of a thousand queries already hold a billion numbers) for a gain no interval shows."""
RESAMPLES = Interval(int, 1, MAX_RESAMPLES)
"""A count of bootstrap resamples or permutations."""
QUERY_COUNT = Interval(int, 1, 100_000_000)
"""A number of queries a plan is asked about: at most a hundred million (beyond about 9e18 numpy's integers
overflow, and no set is judged at that size)."""
DEPTH = Interval(int, 1, 1_000_000)
"""The depth of a pool, the top k of every run: at most a million documents a query (no run ranks more; beyond
about 9e18, the cutoff of the measure judged@k overflows numpy's integers)."""


def check(name: str, value: Any, constraint: Constraint | tuple[str, ...], path: str | None = None,
          line: int | None = None) -> Any:
    """``value`` (an interval's as its kind) if it meets ``constraint`` (a tuple of names is a :class:`Choice`),
    else :class:`InputError`: ``NAME must be CONSTRAINT, got VALUE`` (with the file and line it came from)."""
    if isinstance(constraint, tuple):
        constraint = Choice(constraint)
    if value not in constraint:
        shown = value if isinstance(value, numbers.Number) else repr(value)
        raise InputError(f"{name} must be {constraint}, got {shown}", path, line)
    return constraint.kind(value) if isinstance(constraint, Interval) else value


def check_fields(instance: Any, rules: dict[str, Constraint]) -> None:
    """Check each field of a frozen or plain dataclass ``instance`` named in ``rules`` (None: not given), in the
    order of ``rules``: the rules of a settings object declared beside it, in its ``__post_init__``."""
    for name, rule in rules.items():
        object.__setattr__(instance, name, _checked(name, getattr(instance, name), rule))


def validate_params(rules: dict[str, Constraint]) -> Callable[[F], F]:
    """Declare the rules of a function's parameters beside it, as scikit-learn's ``validate_params`` does: each
    call checks the named arguments that are given (None: not given; each item of a list or tuple), and the
    function carries them as ``RULES`` for the command line to build its options from."""
    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        unknown = set(rules) - set(signature.parameters)
        if unknown:  # a rule naming no parameter is a bug of the declaration, found on import
            raise TypeError(f"{function.__qualname__} has no parameter {', '.join(sorted(unknown))}")

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            for name, value in bound.arguments.items():
                if name in rules:
                    bound.arguments[name] = _checked(name, value, rules[name])
            return function(*bound.args, **bound.kwargs)

        checked.RULES = rules  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]
    return decorate


def _checked(name: str, value: Any, rule: Constraint) -> Any:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return type(value)(check(name, item, rule) for item in value)
    return check(name, value, rule)


# --- a command's settings object (``evalset.<room>.spec``), given whole or built from a library call's keywords
def settings_of(kind: type[S], spec: S | None, options: dict[str, Any]) -> S:
    """``spec``, or the ``kind`` of keyword ``options`` (a library call's): one or the other, so that a setting is
    never given twice."""
    if spec is None:
        return kind(**options)
    if not isinstance(spec, kind):
        raise TypeError(f"spec: expected {kind.__name__} or None, got {type(spec).__name__} (give the settings as "
                        "keywords)")
    if options:
        raise TypeError("give the settings as spec= or as keyword arguments, not both")
    return spec


def rules_of(owner: Any, *names: str) -> dict[str, Constraint]:
    """The rules a settings class ``owner`` declares for the fields ``names``: those of a library function that
    takes some of its fields as its own parameters (:func:`validate_params`), declared once, on the settings."""
    return {name: owner.RULES[name] for name in names}


def as_tuple(value: Any) -> tuple:
    """A settings object's sequence field as a tuple (frozen, as the object is); a path, a name or a number alone is
    a tuple of one (its rule then checks it as the one item it is)."""
    if isinstance(value, str | os.PathLike | numbers.Number):
        return (value,)
    return tuple(value)


def minimum_resamples(threshold: float) -> int:
    """The fewest resamples R that put at least one resample beyond each end of an interval at level
    ``1 - threshold`` (R * threshold / 2 >= 1): what a level asks of a count of resamples."""
    return math.ceil(2 / threshold - 1e-9)


def is_http_url(url: str) -> bool:
    """True for ``http(s)://host[:port]...`` with a port, if any, from 1 up: the form a service's URL must take."""
    parts = urllib.parse.urlsplit(url.strip())
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and port_ok
