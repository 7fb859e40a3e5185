"""The merge rules: one grade per (query, document) from the grades of several annotators. Each rule, and what a
tie is under it, is stated once in :data:`evalset.judgments.registry.RULES`; :func:`pair_grades` computes every
rule in one place.

A tie is settled by the tie policy the caller names, the same for every rule that can tie:

==============  ===============================================================  ==============================
tie policy      a tied pair                                                      used by
==============  ===============================================================  ==============================
``unresolved``  gets no grade (``<NA>``), for a person to adjudicate             ``evalset freeze``
``low``         gets the lowest of its tied grades (a median: the lower middle)  ``evalset estimate``, scripts
==============  ===============================================================  ==============================

The registry is a module of its own (:mod:`evalset.judgments.registry`) because crowd-kit's models
(:mod:`evalset.judgments.crowd`), which :func:`pair_grades` fits, read it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.judgments.crowd import Aggregate, aggregate
from evalset.judgments.registry import merge_rule
from evalset.params import check

PAIR = ["query_id", "doc_id"]
TiePolicy = Literal["unresolved", "low"]
TIE_POLICIES: tuple[str, ...] = ("unresolved", "low")


@dataclass(frozen=True)
class PairGrades:
    """One grade per pair under a rule and a tie policy.

    ``table`` is indexed by (``query_id``, ``doc_id``), sorted, with ``n`` (the grades given), ``low`` and ``high``
    (their range), ``grade`` (``Int64``; ``<NA>`` for a tie left unresolved) and ``tie``; ``fit`` is crowd-kit's
    fitted model for its rules (:class:`~evalset.judgments.crowd.Aggregate`), else ``None``.
    """

    rule: str
    ties: TiePolicy
    table: pd.DataFrame
    fit: Aggregate | None = None

    @property
    def tied(self) -> int:
        """How many pairs were tied (left unresolved or settled low, as the policy says)."""
        return int(self.table["tie"].sum())

    def qrels(self) -> pd.DataFrame:
        """The pairs with a grade, as ``query_id, doc_id, grade`` (int64), sorted."""
        graded = self.table.loc[self.table["grade"].notna(), "grade"]
        return graded.astype(np.int64).reset_index()


def pair_grades(judgments: pd.DataFrame, rule: str = "median", *, ties: TiePolicy = "unresolved",
                priority: Sequence[str] = ()) -> PairGrades:
    """One grade per pair of ``judgments`` (one per annotator and pair: ``query_id, doc_id, annotator, grade``) by
    ``rule`` (:data:`evalset.judgments.registry.RULES`), a tie settled by the policy ``ties`` (module docstring).
    ``priority`` is the list of annotators of ``annotator-priority`` (:func:`check_priority`)."""
    spec = merge_rule(rule)
    check_priority(rule, priority, judgments["annotator"])
    check("tie policy", ties, TIE_POLICIES)
    grouped = judgments.groupby(PAIR, sort=True)["grade"]
    table = pd.DataFrame({"n": grouped.size(), "low": grouped.min(), "high": grouped.max()})
    fit = None
    if spec.crowd_class:
        fit = aggregate(judgments, rule)
        grade, tie = fit.grades.set_index(PAIR)["grade"], False
    elif rule == "median":
        grade = grouped.quantile(0.5, interpolation="lower")
        tie = grade != grouped.quantile(0.5, interpolation="higher")
    elif rule == "majority":
        grade, tie = _majority(judgments)
    else:
        grade, tie = _by_priority(judgments, priority), False
    table["grade"], table["tie"] = grade.astype("Int64"), tie
    if ties == "unresolved":
        table["grade"] = table["grade"].mask(table["tie"])
    return PairGrades(rule, ties, table, fit)


def check_priority(rule: str, priority: Sequence[str], annotators: Iterable[str],
                   why: Mapping[str, str] | None = None) -> None:
    """Refuse a priority list that ``rule`` would not follow: ``annotator-priority`` without one, one given with
    another rule, or a name that is not among ``annotators`` (those whose grades are merged; ``why`` says why a
    name is not, e.g. excluded), naming the annotators known."""
    if rule != "annotator-priority":
        if priority:
            raise InputError(f"--merge priority goes with the merge rule annotator-priority, not {rule} (which "
                             "ignores it)")
        return
    if not priority:
        raise InputError("the merge rule annotator-priority needs --merge priority=NAMES: the annotators, first wins")
    known = sorted(set(annotators))
    for name in priority:
        if name not in known:
            reason = (why or {}).get(name, "no annotator of that name")
            raise InputError(f"--merge priority: {name!r} is not an annotator whose grades are merged ({reason}; "
                             f"annotators: {', '.join(known)})")


def _majority(judgments: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per pair the most frequent grade (of several, the lowest) and whether another grade is as frequent."""
    votes = judgments.groupby([*PAIR, "grade"]).size().rename("votes").reset_index()
    votes = votes.sort_values([*PAIR, "votes", "grade"], ascending=[True, True, False, True], kind="stable")
    place = votes.groupby(PAIR, sort=False).cumcount().to_numpy()
    first = votes[place == 0].set_index(PAIR)
    runner_up = votes[place == 1].set_index(PAIR)["votes"].reindex(first.index)
    return first["grade"], runner_up == first["votes"]


def _by_priority(judgments: pd.DataFrame, priority: Sequence[str]) -> pd.Series:
    order = {name: i for i, name in enumerate(priority)}
    ranked = judgments.assign(rank=judgments["annotator"].map(lambda a: (order.get(a, len(order)), a)))
    first = ranked.sort_values("rank", kind="stable").groupby(PAIR).head(1)
    return first.set_index(PAIR)["grade"]
