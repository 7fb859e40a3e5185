"""What a comparison is asked, as one frozen value that checks itself: the options of ``evalset compare`` (and of
``evalset holes``, whose comparisons are the same) and the keyword arguments of :func:`evalset.comparing.compare_runs`
and :func:`evalset.comparing.compare_many` alike.

Each field's rule is declared once in :attr:`CompareSpec.RULES` (the command line builds its options from it,
:func:`evalset.cli.ruled.ruled`); the rules between fields are :meth:`CompareSpec.__post_init__`'s. This module
loads nothing heavy, so that a command reads its rules before the statistics load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from evalset.contract import BOOTSTRAP_INTERVALS, CORRECTIONS, DEFAULT_SEED, PRIMARY_TESTS
from evalset.errors import InputError
from evalset.params import (
    DEPTH,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    PROBABILITY,
    RESAMPLES,
    Choice,
    Constraint,
    Interval,
    check_fields,
)

EXPLAIN_RULES: dict[str, Constraint] = {"depth": DEPTH, "epsilon": Interval(float, 0), "top": NON_NEGATIVE_INT}
"""evalset.comparing.explain_runs (epsilon: the largest per-query difference that is no change)."""


SINGLE_ONLY = {"planned": "--planned", "exploratory": "--exploratory", "min_effect": "--min-effect"}
"""The fields of a baseline-against-candidates comparison that many systems compared at once have no use for."""


@dataclass(frozen=True)
class CompareSpec:
    """A comparison's settings (defaults: the command's).

    metric
        The one metric of the verdict (None: the evaluation's headline).
    planned, exploratory
        The planned comparisons of the Bonferroni threshold (None: the candidates; on a set its planned list),
        and whether the comparisons were not planned (leads, never differences).
    alpha, permutations, seed
        The family-wise error rate, the random sign flips (or permutations of many systems), their seed.
    depth, accept_holes
        The top k of judged@k and of the holes' bound (None: the metric's cutoff); keep a verdict the holes could
        flip (said).
    interval, primary_test, interval_decides
        The bootstrap interval of the mean difference, the test the verdict rests on, and whether the interval must
        exclude 0 as well (the default) or only describes (the permutation test alone decides, as the evaluation
        books let it: :data:`DECIDE`).
    min_effect
        The smallest gap worth the change: an established difference is said to reach it, to fall below it, or not
        to be shown to reach it (None: none asked).
    strata
        Queries (a file or a frame with ``stratum`` and ``stratum_share``): a traffic-weighted verdict on qrels.
    all_pairs, baseline, correction
        Many systems: every pair (``all_pairs``) or every run against the run named ``baseline``, under
        ``correction`` (None: tukey).
    """

    metric: str | None = None
    planned: int | None = None
    exploratory: bool = False
    alpha: float = 0.05
    permutations: int = 9999
    seed: int = DEFAULT_SEED
    depth: int | None = None
    accept_holes: bool = False
    interval: str = "bca"
    primary_test: str = "permutation"
    interval_decides: bool = True
    min_effect: float | None = None
    strata: Any = None
    all_pairs: bool = False
    baseline: str | None = None
    correction: str | None = None

    RULES: ClassVar[dict] = {"planned": POSITIVE_INT, "alpha": PROBABILITY, "permutations": RESAMPLES,
                             "seed": NON_NEGATIVE_INT, "depth": DEPTH, "interval": Choice(BOOTSTRAP_INTERVALS),
                             "primary_test": Choice(PRIMARY_TESTS), "correction": Choice(CORRECTIONS),
                             "min_effect": Interval(float, 0, closed="neither")}

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)
        if self.many:
            given = [flag for name, flag in SINGLE_ONLY.items() if getattr(self, name) not in (None, False)]
            given += ["--decide"] * any(getattr(self, name) != getattr(CompareSpec, name)
                                        for name in ("interval", "primary_test", "interval_decides"))
            if self.all_pairs and self.baseline is not None:
                given.insert(0, "both --all and --baseline")
            if given:
                raise InputError("--all and --baseline compare the runs at once, under a family-wise correction: "
                                 f"give one of them without {', '.join(given)}")
        elif self.correction is not None:
            raise InputError("--correction is for many systems at once: give --all or --baseline NAME")

    @property
    def many(self) -> bool:
        """Many systems at once (``--all`` or ``--baseline``), rather than a baseline against candidates."""
        return self.all_pairs or self.baseline is not None


DECIDE = {f"{test}+{interval}": {"primary_test": test, "interval": interval, "interval_decides": True}
          for test in PRIMARY_TESTS for interval in BOOTSTRAP_INTERVALS} | {
          test: {"primary_test": test, "interval": "bca", "interval_decides": False} for test in PRIMARY_TESTS}
"""What decides a verdict, by its name on the command line (``--decide``): the primary test and the interval that
must both exclude 0 (``permutation+bca``, the default: BCa under-covers on a few dozen queries, so the interval's
check keeps the rule conservative, docs/compare.md), or the test alone, the BCa interval describing
(``permutation``: the evaluation books' rule)."""
DEFAULT_DECIDE = "permutation+bca"
