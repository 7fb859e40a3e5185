"""The parameters a measure may take, written as ir_measures writes them (``P(rel=2)@10``).

A parameter overrides the evaluation contract for its measure alone (``Param.contract``), or is read by the
measure's computation itself (RBP's ``p``):

============  ==================================  =========================================================
parameter     values                              contract convention it overrides
============  ==================================  =========================================================
rel           integer >= 1                        ``rel_level``: relevant when grade >= rel
judged_only   True, False                         ``unjudged``: True is ``condensed``, False ``nonrelevant``
dcg           'log2', 'exp-log2'                  ``gain``: ``linear``, ``exponential`` (ir_measures' names)
p             a number in (0, 1) (default 0.8)    none: RBP's persistence
beta          a number > 0 (default 1)            none: F's weight of recall (trec_eval's set_F.x)
recall        a number in [0, 1]                  none: iprec's recall level (``iprec@0.5``), required
multiple      a number > 0                        none: rprec_mult's multiple of R (``rprec_mult@0.2``), required
============  ==================================  =========================================================

A measure kind lists the parameters it takes (:attr:`evalset.metrics.measures.MeasureKind.params`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalset.params import PROBABILITY, Interval


@dataclass(frozen=True)
class Param:
    """A measure's parameter: its ``name``, the values it takes (``check`` returns the value or raises
    ``ValueError`` with what it must be) and the contract convention it overrides (``contract`` maps the value to
    that convention's; None for a parameter the computation reads itself)."""

    name: str
    check: Callable[[Any], Any]
    contract: tuple[str, Callable[[Any], Any]] | None = None


def _rel(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("an integer >= 1")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("True or False")
    return value


def _number(constraint: Interval) -> Callable[[Any], float]:
    def check_number(value: Any) -> float:
        if value not in constraint:
            raise ValueError(str(constraint))
        return float(value)
    return check_number


def _choice(*choices: str) -> Callable[[Any], str]:
    def check_choice(value: Any) -> str:
        if value not in choices:
            raise ValueError("one of " + ", ".join(map(repr, choices)))
        return value
    return check_choice


PARAMS: dict[str, Param] = {param.name: param for param in (
    Param("rel", _rel, ("rel_level", int)),
    Param("judged_only", _flag, ("unjudged", lambda only: "condensed" if only else "nonrelevant")),
    Param("dcg", _choice("log2", "exp-log2"), ("gain", {"log2": "linear", "exp-log2": "exponential"}.get)),
    Param("p", _number(PROBABILITY)),
    Param("beta", _number(Interval(float, 0, closed="neither"))),
    Param("recall", _number(Interval(float, 0, 1))),
    Param("multiple", _number(Interval(float, 0, closed="neither"))),
)}
"""Every measure parameter by name (the table in the module docstring); a kind lists those it takes."""
BINARY = ("rel", "judged_only")  # the parameters of a measure of relevant documents
