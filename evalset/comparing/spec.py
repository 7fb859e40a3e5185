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


SINGLE_ONLY = {"planned": "--planned", "exploratory": "--exploratory"}
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
    interval, primary_test
        The bootstrap interval of the mean difference and the test the verdict rests on.
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
    strata: Any = None
    all_pairs: bool = False
    baseline: str | None = None
    correction: str | None = None

    RULES: ClassVar[dict] = {"planned": POSITIVE_INT, "alpha": PROBABILITY, "permutations": RESAMPLES,
                             "seed": NON_NEGATIVE_INT, "depth": DEPTH, "interval": Choice(BOOTSTRAP_INTERVALS),
                             "primary_test": Choice(PRIMARY_TESTS), "correction": Choice(CORRECTIONS)}

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)
        if self.many:
            given = [flag for name, flag in SINGLE_ONLY.items() if getattr(self, name) not in (None, False)]
            given += [flag for name, flag in (("interval", "--interval"), ("primary_test", "--test"))
                      if getattr(self, name) != getattr(CompareSpec, name)]
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
