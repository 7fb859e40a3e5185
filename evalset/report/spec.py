"""What a report is asked, as one frozen value that checks itself: the options of ``evalset report`` and the keyword
arguments of :func:`evalset.report.collect` and :func:`evalset.report.write_report` alike. Its rules are declared
once in :attr:`ReportSpec.RULES` (the command line's options are built from them); the module loads nothing
heavy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from evalset.contract import DEFAULT_SEED, MISSING_POLICIES, SPLITS
from evalset.errors import InputError
from evalset.params import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    PROBABILITY,
    RESAMPLES,
    Choice,
    Interval,
    check,
    check_fields,
    minimum_resamples,
)


@dataclass(frozen=True)
class ReportSpec:
    """A report's settings (defaults: the command's).

    split
        The queries the page is about (``test``, ``dev`` or ``all``).
    seed, resamples, permutations
        The seed of every resampling; the bootstrap resamples of each interval (at least what the interval's level
        needs: :func:`evalset.params.minimum_resamples`); the sign flips of each comparison.
    level, alpha
        The level of a run's score interval; the family-wise error rate of the comparisons.
    largest
        The largest losses shown per planned comparison.
    missing
        What a judged query a run lacks does (``zero``, ``skip``; None: the run is refused).
    """

    split: str = "test"
    seed: int = DEFAULT_SEED
    resamples: int = 9999
    permutations: int = 9999
    level: float = 0.95
    alpha: float = 0.05
    largest: int = 10
    missing: str | None = None

    RULES: ClassVar[dict] = {"split": Choice(SPLITS), "seed": NON_NEGATIVE_INT, "resamples": RESAMPLES,
                             "permutations": RESAMPLES, "level": PROBABILITY, "alpha": PROBABILITY,
                             "largest": POSITIVE_INT, "missing": Choice(MISSING_POLICIES)}

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)
        try:
            check("resamples", self.resamples, Interval(int, minimum_resamples(1 - self.level)))
        except InputError as exc:
            raise InputError(f"{exc.message}: fewer cannot place the ends of a {self.level:.0%} interval of a run's "
                             "score (none would fall beyond them)") from None

    def settings(self) -> dict[str, Any]:
        """What the page records of how it was computed."""
        return {"seed": self.seed, "resamples": self.resamples, "permutations": self.permutations,
                "level": self.level, "alpha": self.alpha}

