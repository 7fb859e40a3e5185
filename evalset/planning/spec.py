"""What a plan is asked, as one frozen value per job that checks itself: :class:`PowerSpec` (``evalset plan power``
and :func:`evalset.planning.plan.make_power_plan`) and :class:`CostSpec` (``evalset plan cost`` and
:func:`evalset.planning.budget.make_cost_plan`).

Each field's rule is declared once in the spec's ``RULES`` (the command line builds its options from it,
:func:`evalset.cli.ruled.ruled`; :func:`~evalset.planning.plan.plan_power` and
:func:`~evalset.planning.budget.judging_budget` declare their parameters' rules from it); the rules between fields
are the spec's ``__post_init__``'s, each message one line naming the command's options. What only the inputs can
tell (a pilot without spread, a query id in no run) is checked as they are read. This module loads nothing heavy,
so that a command reads its rules before the statistics load.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from evalset.contract import (
    DEFAULT_POWER,
    DEFAULT_SEED,
    SIMULATION_PERMUTATIONS,
    SIMULATION_RESAMPLES,
    TOKENIZERS,
)
from evalset.errors import InputError
from evalset.params import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    POSITIVE_NUMBER,
    PROBABILITY,
    QUERY_COUNT,
    RESAMPLES,
    Choice,
    Interval,
    as_tuple,
    check_fields,
)

FilePath = str | os.PathLike
PRICE = Interval(float, 0)
"""A price per million tokens: free (0) or more."""


@dataclass(frozen=True)
class PowerSpec:
    """What ``evalset plan power`` is asked: the queries a comparison needs, from a pilot (defaults: the
    command's; :mod:`evalset.planning.plan` states how each is used).

    runs, comparisons, metric
        The pilot's runs (files or folders), its comparisons (baseline, candidate; none: the set's planned ones,
        else the first run against each other), and its metric (None: the headline).
    planned, delta, power, alpha
        The planned count of the Bonferroni threshold (None: the set's, else the comparisons), the smallest
        difference worth finding (None: each observed one), the target power, the family-wise error rate.
    at, sizes
        The numbers of queries to report the smallest detectable difference at; the power curve's sizes (None: a
        grid to twice the queries needed).
    resamples, permutations, seed
        The simulated power's bootstrap resamples per size, random sign flips per test, and their seed.
    """

    runs: Sequence[FilePath] = ()
    comparisons: Sequence[tuple[str, str]] = ()
    metric: str | None = None
    planned: int | None = None
    delta: float | None = None
    power: float = DEFAULT_POWER
    alpha: float = 0.05
    at: Sequence[int] = ()
    sizes: Sequence[int] | None = None
    resamples: int = SIMULATION_RESAMPLES
    permutations: int = SIMULATION_PERMUTATIONS
    seed: int = DEFAULT_SEED

    RULES: ClassVar[dict] = {"planned": POSITIVE_INT, "delta": POSITIVE_NUMBER, "power": PROBABILITY,
                             "alpha": PROBABILITY, "at": QUERY_COUNT, "sizes": QUERY_COUNT, "resamples": RESAMPLES,
                             "permutations": RESAMPLES, "seed": NON_NEGATIVE_INT}

    def __post_init__(self) -> None:
        for name in ("runs", "at"):
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        object.__setattr__(self, "comparisons", tuple(tuple(pair) for pair in self.comparisons))
        if self.sizes is not None:
            object.__setattr__(self, "sizes", as_tuple(self.sizes))
        check_fields(self, self.RULES)
        if not self.runs:
            raise InputError("a power plan is a pilot's: give its runs (RUNS), scored on --qrels or --set")


@dataclass(frozen=True)
class CostSpec:
    """What ``evalset plan cost`` is asked: the pairs a pool holds and what judging them costs, at the pool's
    queries and at other numbers of queries (defaults: the command's; :mod:`evalset.planning.budget`).

    runs, depths, pool_folder
        The runs (files or folders) pooled at each depth, or a pool folder (its pairs as pooled).
    at
        The other numbers of queries to cost (at the pool's mean pairs per query).
    queries_path, corpus, prompt_tokens, tokenizer
        The queries pooled and their texts, the document texts, the fixed input tokens per task, and how tokens
        are counted (``auto``, ``tiktoken``, ``chars``).
    seconds_per_judgment, annotators, overlap
        Annotator time per judgment, the annotators sharing the judging, those who judge each pair.
    price_in, price_out, output_tokens
        An LLM's price per million input and output tokens, and its output tokens per task.
    """

    runs: Sequence[FilePath] = ()
    depths: Sequence[int] = ()
    pool_folder: FilePath | None = None
    at: Sequence[int] = ()
    queries_path: FilePath | None = None
    corpus: FilePath | None = None
    prompt_tokens: int = 0
    tokenizer: str = "auto"
    seconds_per_judgment: float | None = None
    annotators: int = 1
    overlap: int = 1
    price_in: float | None = None
    price_out: float | None = None
    output_tokens: int = 10

    RULES: ClassVar[dict] = {"depths": POSITIVE_INT, "at": QUERY_COUNT, "prompt_tokens": NON_NEGATIVE_INT,
                             "tokenizer": Choice(TOKENIZERS), "seconds_per_judgment": POSITIVE_NUMBER,
                             "annotators": POSITIVE_INT, "overlap": POSITIVE_INT, "price_in": PRICE,
                             "price_out": PRICE, "output_tokens": NON_NEGATIVE_INT}

    def __post_init__(self) -> None:
        for name in ("runs", "depths", "at"):
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        check_fields(self, self.RULES)
        if self.pool_folder and (self.depths or self.runs):
            raise InputError("give either --pool (a pool folder) or RUNS with --depth (pool them), not both")
        if not self.pool_folder and not (self.runs and self.depths):
            raise InputError("nothing to cost: give a pool folder (--pool) or the runs to pool (RUNS) at --depth K")
        check_overlap(self.overlap, self.annotators)
        if self.price_out is not None and self.price_in is None:
            raise InputError("--price-out goes with --price-in: the LLM cost is of the input and output tokens")


def check_overlap(overlap: int, annotators: int) -> None:
    """Refuse more annotators judging each pair than there are annotators (every budget's rule)."""
    if overlap > annotators:
        raise InputError(f"--overlap ({overlap} annotators per pair) cannot exceed --annotators ({annotators})")
