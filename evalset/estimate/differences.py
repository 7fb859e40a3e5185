"""Where an estimate's paired differences become evidence for the one decision module
(:func:`evalset.stats.verdicts.decide`), for every design: the comparison family gives each difference its kind
(planned, exploratory) and threshold (``alpha`` over the family's size for it), its interval is at level ``1 -
threshold``, and the verdict rests on that interval alone (an estimate has no test's p). The design gives the centre,
the interval (built in :mod:`evalset.stats`: :func:`~evalset.stats.quantiles.around` of its standard error, or
ppi_py's), what it is called and what it rests on (units, strata, what was clipped).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalset.stats.family import ComparisonFamily
from evalset.stats.verdicts import Evidence, decide

DECIDED = ("kind", "threshold", "level", "verdict", "rule")
"""The columns a decided difference adds to its design's row."""


@dataclass(frozen=True)
class PairedDifference:
    """One paired difference an estimate decides (candidate minus baseline, on ``measure``): its family's ``kind``
    and ``threshold``."""

    baseline: str
    candidate: str
    measure: str
    kind: str
    threshold: float

    @classmethod
    def of(cls, baseline: str, candidate: str, measure: str, family: ComparisonFamily, *, alpha: float,
           exploratory: bool) -> PairedDifference:
        """The difference in ``family``: its threshold ``alpha / family.size``, its kind the family's."""
        return cls(baseline, candidate, measure, family.kind(baseline, candidate, exploratory, measure),
                   alpha / family.size(baseline, candidate, measure))

    @property
    def name(self) -> str:
        return f"{self.candidate} - {self.baseline}"

    @property
    def level(self) -> float:
        """The level of the interval the verdict rests on."""
        return 1 - self.threshold

    def decided(self, estimate: float, low: float, high: float, *, interval: str, n: int, clipped: str = "",
                strata: Mapping[str, int] | None = None, split: str | None = None) -> dict[str, Any]:
        """The verdict on the interval ``[low, high]`` at :attr:`level` (called ``interval``) around ``estimate``,
        resting on ``n`` units (``strata``: each stratum's, when there are several): the :data:`DECIDED` columns."""
        verdict = decide(Evidence(estimate=estimate, threshold=self.threshold, kind=self.kind, split=split, low=low,
                                  high=high, interval=interval, n=n, clipped=clipped, strata=dict(strata or {})))
        return {"kind": self.kind, "threshold": self.threshold, "level": self.level, "verdict": verdict.text,
                "rule": verdict.rule}
