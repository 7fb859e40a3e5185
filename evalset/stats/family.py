"""The comparison family: which comparisons are planned, and the Bonferroni count given the comparison log.

The rule, decided here once (``compare``, ``report`` and ``plan`` all build a :class:`ComparisonFamily`):

- **The planned count**: ``planned`` when given (``--planned N``); else, with a set that records planned
  comparisons, their number; else the number of comparisons asked for (``compare``'s candidates, ``plan``'s
  comparisons).
- **Planned or exploratory**: with a set that records planned comparisons, a (baseline, candidate) not among them
  is exploratory; on a set, a comparison on a measure other than the set's headline is exploratory too (a measure
  chosen after the scores are seen is a look, not the test the set was frozen for); ``exploratory=True``
  (``--exploratory``) makes any comparison exploratory. An exploratory comparison is reported, never established.
- **The family size** of a comparison, the Bonferroni count: without a set, the planned count. On a set that
  records planned comparisons, the planned count too: its planned comparisons were fixed at freeze time, before
  any score, and an exploratory look (logged, listed by ``report``) is never established, so it can make no
  planned verdict less sure and is never counted. On a set that records none, every comparison can be
  established: the larger of the planned count and the number of distinct (baseline, candidate, metric)
  comparisons in the set's log for that version and split, this one included, so that repeated peeking at the
  test queries is paid for. The threshold is ``alpha / size`` (:func:`bonferroni_threshold`, also the level of a
  family of intervals, as agreement's favouritism uses it over the runs); :meth:`ComparisonFamily.basis` says
  where the size comes from, and every comparison prints it.
- **The log** is ``SETS/NAME/comparisons.jsonl``, beside the frozen version folders (which are never rewritten):
  one JSON object per line with ``version, split, baseline, candidate, metric, kind, permutation_p, threshold,
  at`` (UTC time), appended by every comparison recorded (``compare --set`` records each one). ``report`` shows a
  set's planned comparisons at the size ``compare`` would use for them and records nothing (its planned
  comparisons are counted in the planned count already); ``plan`` looks ahead and uses the planned count alone.

This module reads and writes no file: a family is given what the log holds (``made``: the distinct comparisons
logged on the version and split) as data, and hands back what to log (:meth:`ComparisonFamily.log_record`); the
log itself is read and appended through :mod:`evalset.io.comparisonlog` by its caller
(:mod:`evalset.comparing.setlog`: :func:`~evalset.comparing.setlog.set_family`,
:func:`~evalset.comparing.setlog.record_comparison`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import pandas as pd

from evalset.contract import DEFAULT_SEED
from evalset.metrics import parse_measure
from evalset.params import POSITIVE_INT, check
from evalset.stats.paired import Comparison, compare_paired

Made = tuple[str, str, str]
"""A comparison as the log counts it: (baseline, candidate, metric)."""


class PlannedSet(Protocol):
    """What the family needs of a frozen set (:class:`evalset.io.setfolder.FrozenSet` is one): its planned
    comparisons and its contract's headline."""

    @property
    def planned(self) -> list[tuple[str, str]]: ...

    @property
    def contract(self) -> Any: ...


@dataclass(frozen=True)
class ComparisonFamily:
    """The family of comparisons a threshold is shared by (see the module docstring for the rule).

    ``planned_count`` is the planned count; ``planned`` the (baseline, candidate) pairs a set declared planned
    (empty: every comparison is planned); ``made`` the distinct comparisons the set's log holds on the version and
    split (None: no log, without a set); ``headline`` the set's headline measure (None: no set, any measure).
    """

    planned_count: int
    planned: tuple[tuple[str, str], ...] = ()
    made: frozenset[Made] | None = None
    given: bool = False  # the planned count was given (--planned N), not the set's or the comparisons asked
    headline: str | None = None

    @classmethod
    def of(cls, asked: int, *, planned: int | None = None, frozen: PlannedSet | None = None,
           made: Iterable[Made] | None = None) -> ComparisonFamily:
        """The family of ``asked`` comparisons, on the set ``frozen`` (its planned list) or on no set, given the
        comparisons its log holds (``made``; None: no log); ``planned`` (a positive integer) overrides the planned
        count."""
        planned = check("planned", planned, POSITIVE_INT) if planned is not None else None
        pairs = tuple(tuple(pair) for pair in frozen.planned) if frozen is not None else ()
        return cls(planned or len(pairs) or asked, pairs, frozenset(made) if made is not None else None,
                   planned is not None, frozen.contract.headline if frozen is not None else None)

    def kind(self, baseline: str, candidate: str, exploratory: bool = False, metric: str | None = None) -> str:
        """``planned`` or ``exploratory`` (module docstring): a comparison off the set's plan, or on ``metric`` when
        it is not the set's headline, is exploratory."""
        unplanned = bool(self.planned) and (baseline, candidate) not in self.planned
        return "exploratory" if exploratory or unplanned or self.off_headline(metric) else "planned"

    def off_headline(self, metric: str | None) -> bool:
        """Whether ``metric`` is another measure than the set's headline (never, without a set)."""
        return self.headline is not None and metric is not None and parse_measure(metric) != parse_measure(
            self.headline)

    def size(self, baseline: str, candidate: str, metric: str) -> int:
        """The Bonferroni count of this comparison, given what the log holds (:attr:`made`; module docstring)."""
        if self.made is None or self.planned:
            return self.planned_count
        return max(self.planned_count, self._logged(baseline, candidate, metric))

    def _logged(self, baseline: str, candidate: str, metric: str) -> int:
        return len((self.made or frozenset()) | {(baseline, candidate, metric)})

    def basis(self, baseline: str, candidate: str, metric: str) -> str:
        """Where this comparison's Bonferroni count comes from, in words (``size`` first)."""
        size = self.size(baseline, candidate, metric)
        if self.made is not None and not self.planned and size > self.planned_count:
            return (f"{size}: the distinct comparisons in the set's log on this version and split, this one included "
                    "(the set plans none, so every comparison made on it counts)")
        if self.given:
            return f"{size}: --planned {size}"
        if self.planned:
            logged = sum((b, c) not in self.planned for b, c, _ in self.made or ())
            looks = f"; {logged} looks off the plan in its log are not counted (a look decides nothing)" \
                if logged else ""
            return f"{size}: the set's planned comparisons{looks}"
        return f"{size}: the comparisons asked"

    def after(self, result: Comparison) -> ComparisonFamily:
        """This family once ``result`` is logged: its comparison among :attr:`made` (the same family without a
        log)."""
        if self.made is None:
            return self
        return replace(self, made=self.made | {(result.baseline, result.candidate, result.metric)})

    @staticmethod
    def log_record(result: Comparison) -> dict[str, Any]:
        """What the log records of ``result`` (its caller adds the time and the version and split)."""
        return {"baseline": result.baseline, "candidate": result.candidate, "metric": result.metric,
                "kind": result.kind, "permutation_p": result.permutation_p, "threshold": result.threshold}

    def compare(self, baseline: pd.Series, candidate: pd.Series, *, baseline_name: str, candidate_name: str,
                metric: str, exploratory: bool = False, alpha: float = 0.05, permutations: int = 9999,
                bootstrap_resamples: int = 9999, seed: int = DEFAULT_SEED, largest: int = 5,
                **options: Any) -> Comparison:
        """:func:`~evalset.stats.paired.compare_paired` at this family's threshold and kind (``options``: its
        ``interval``, ``primary_test``, ``strata``, ``weighting``, ``split``). Nothing is logged: a caller that
        records the comparison appends :meth:`log_record` to the log and goes on with :meth:`after`."""
        kind = self.kind(baseline_name, candidate_name, exploratory, metric)
        result = compare_paired(baseline, candidate, baseline_name=baseline_name, candidate_name=candidate_name,
                                metric=metric, planned=self.size(baseline_name, candidate_name, metric),
                                exploratory=kind == "exploratory", alpha=alpha, permutations=permutations,
                                bootstrap_resamples=bootstrap_resamples, seed=seed, largest=largest, **options)
        return replace(result, family=f"{alpha:g} / {self.basis(baseline_name, candidate_name, metric)}")


def bonferroni_threshold(alpha: float, size: int) -> float:
    """The family-wise threshold of one comparison among ``size``: ``alpha / size`` (the one formula; a family of
    ``size`` intervals each at level ``1 - alpha / size`` covers all its values at ``1 - alpha`` or more)."""
    return alpha / check("a family's comparisons", size, POSITIVE_INT)
