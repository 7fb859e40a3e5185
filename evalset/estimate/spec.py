"""What an estimate or a validation is asked: one frozen spec per command (verb and design), each holding only its
design's settings, its required ones without a default, so that none can be filled wrongly; the keyword arguments of
the library's :func:`evalset.estimate.make_estimate` are the same objects.

- :class:`RunSlice`: ``estimate run slice`` (a slice of whole queries, PPI++);
- :class:`RunDocuments`: ``estimate run documents`` (a document sample of every query);
- :class:`RunHoles`: ``estimate run holes`` (a sample of a frozen set's holes, the set's pairs known);
- :class:`RunSet`: ``estimate run set`` (a frozen set, by the design it was frozen with);
- :class:`ValidateSlice`, :class:`ValidateDocuments`, :class:`ValidateHoles`: ``estimate validate slice``,
  ``documents`` and ``holes`` (seeded draws of the design on fully graded data).

Each spec names its design (:mod:`evalset.estimate.designs`, which answers it) and its verb. Each field's rule is
declared once, in :attr:`EstimateSettings.RULES` (the command line builds its options from it,
:func:`evalset.cli.ruled.ruled`; :func:`~evalset.estimate.figures.estimate_runs` and
:func:`~evalset.estimate.frozen.set_estimate` declare their parameters' rules from it). The few rules between fields
are choices between two ways to give one thing (``llm`` or ``no_llm``; ``holes_fraction`` or ``holes_precision``) and
one dependency (``other_judge`` on ``llm``), each a line naming the command's options. What only the inputs can tell
(a slice too large for the queries, a set without an LLM-graded part) is checked as they are read. This module loads
nothing heavy, so that a command reads its rules before the statistics load.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from evalset.contract import CONFLICTING_GRADES, DEFAULT_SEED, PPI_INTERVALS, SPLITS, ContractOptions
from evalset.errors import InputError
from evalset.params import (
    DEPTH,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    POSITIVE_NUMBER,
    PROBABILITY,
    RESAMPLES,
    SEED,
    Choice,
    Constraint,
    Interval,
    as_tuple,
    check_fields,
)

FilePath = str | os.PathLike

SELECT_RULES: dict[str, Constraint] = {"size": Interval(int, 2), "per_stratum": Interval(int, 2),
                                       "fraction": Interval(float, 0, 1, closed="right"), "seed": SEED}
"""evalset.estimate.select_slice (an interval needs two queries of the slice, two of each stratum)."""
DOCUMENT_SAMPLE_RULES: dict[str, Constraint] = {"budget": POSITIVE_INT, "fraction": PROBABILITY, "seed": SEED}
"""evalset.estimate.documents.select.select_documents: judgments expected, or a share of the pool's pairs."""
HOLE_SIZING_RULES: dict[str, Constraint] = {"precision": POSITIVE_NUMBER}
"""evalset.estimate.documents.holesizing.size_holes (and select_documents): the standard error each run's mean is sized
for."""


NO_LLM = "give the LLM grades of every {pairs} (--llm), or --no-llm for Horvitz-Thompson's estimator: one of them"
"""The one choice of the document designs' grades (:class:`Judges`): the LLM's files, or none."""


@dataclass(frozen=True, kw_only=True)
class EstimateSettings:
    """What every estimate and validation is asked.

    runs
        Run files or folders of runs (at least one).
    metrics
        The metrics (none: :data:`~evalset.contract.DEFAULT_METRIC`, or a set's headline; the hole sample's
        validation: nDCG@10 and P(rel=2)@10, :data:`evalset.estimate.documents.holevalidation.MEASURES`).
    level
        The run means' confidence level.
    conflicting_grades
        One annotator's repeats of a pair: ``refuse``, or keep the ``latest`` or ``first``.
    options
        The contract options given (none given: ``ContractOptions()``), over the default contract or a set's.
    """

    runs: Sequence[FilePath]
    metrics: Sequence[str] = ()
    level: float = 0.95
    conflicting_grades: str = "refuse"
    options: ContractOptions | None = None

    design: ClassVar[str] = ""
    """The design whose call answers the spec (:mod:`evalset.estimate.designs`): ``slice``, ``documents``, ``holes``,
    or ``set`` (the design a set was frozen with)."""
    verb: ClassVar[str] = ""
    """``estimate`` or ``validate``."""
    unit: ClassVar[str] = "draw"
    """What a validation's progress counts (a slice, a sample, a run whose holes are drawn)."""
    RULES: ClassVar[dict[str, Constraint]] = {
        "split": Choice(SPLITS), "planned": POSITIVE_INT, "alpha": PROBABILITY, "level": PROBABILITY,
        "interval": Choice(PPI_INTERVALS), "draws": RESAMPLES, "slice_size": POSITIVE_INT, "seed": NON_NEGATIVE_INT,
        "conflicting_grades": Choice(CONFLICTING_GRADES), "budget": POSITIVE_NUMBER, "holes_fraction": PROBABILITY,
        "holes_precision": POSITIVE_NUMBER, "depth": DEPTH}
    """Every field's rule, declared once for the seven specs (each checks those of its fields)."""

    def __post_init__(self) -> None:
        names = {field.name for field in dataclasses.fields(self)}
        check_fields(self, {name: rule for name, rule in self.RULES.items() if name in names})
        for name in {"runs", "llm", "human", "metrics"} & names:
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        if "pairs" in names:
            object.__setattr__(self, "pairs", tuple(tuple(pair) for pair in self.pairs))
            check_pairs(self.pairs)
        object.__setattr__(self, "options", self.options or ContractOptions())
        if not self.runs:
            raise InputError("give RUN: the run files or folders to estimate")
        self.check()

    def check(self) -> None:
        """The spec's rules between fields (none here)."""


@dataclass(frozen=True, kw_only=True)
class Compared(EstimateSettings):
    """An estimate's paired differences and the family their verdicts are decided in.

    pairs, planned, exploratory, alpha
        The paired differences (baseline, candidate); the planned count of the Bonferroni threshold (None: the
        pairs, or a set's planned comparisons); whether they were not planned (leads, never differences); the
        family-wise error rate.
    """

    pairs: Sequence[tuple[str, str]] = ()
    planned: int | None = None
    exploratory: bool = False
    alpha: float = 0.05
    verb: ClassVar[str] = "estimate"


@dataclass(frozen=True, kw_only=True)
class Drawn(EstimateSettings):
    """A validation on fully graded data: ``draws`` seeded draws of the design, each estimated as the design's run
    would, held against the full grades."""

    draws: int
    seed: int = DEFAULT_SEED
    verb: ClassVar[str] = "validate"


@dataclass(frozen=True, kw_only=True)
class Judges(EstimateSettings):
    """The document designs' LLM: ``llm``, grade files of every pair the design needs (:attr:`graded`), each file one
    judge; or ``no_llm``, Horvitz-Thompson's estimator from the human sample alone. One of them."""

    llm: Sequence[FilePath] = ()
    no_llm: bool = False
    graded: ClassVar[str] = "pooled pair"

    def check(self) -> None:
        if bool(self.llm) == self.no_llm:
            raise InputError(NO_LLM.format(pairs=self.graded))


@dataclass(frozen=True, kw_only=True)
class RunSlice(Compared):
    """``estimate run slice``: the LLM's grades of every query (``llm``, repeatable, merged by median) corrected by
    the humans' of a slice (``human``) that ``slice_path`` records (PPI++); ``interval`` ``t`` or ``normal``;
    ``ensemble`` combines the LLM files' judges into one calibrated on the slice."""

    llm: Sequence[FilePath]
    human: Sequence[FilePath]
    slice_path: FilePath
    interval: str = "t"
    ensemble: bool = False
    design: ClassVar[str] = "slice"


@dataclass(frozen=True, kw_only=True)
class RunSet(Compared):
    """``estimate run set``: a frozen set with an LLM-graded part (``set_path``, its ``split``), estimated by the
    design it was frozen with; ``llm``: its judge's labels again, or with ``other_judge`` another judge's;
    ``override_contract`` allows contract options that contradict the set's."""

    set_path: FilePath
    split: str = "test"
    llm: Sequence[FilePath] = ()
    other_judge: bool = False
    interval: str = "t"
    override_contract: bool = False
    design: ClassVar[str] = "set"

    def check(self) -> None:
        if self.other_judge and not self.llm:
            raise InputError("--other-judge goes with --llm: LLM labels of another judge than the set's")


@dataclass(frozen=True, kw_only=True)
class RunDocuments(Compared, Judges):
    """``estimate run documents``: a document sample of every query (``sample_path``, the record of ``estimate
    select documents``), the humans' grades of its pairs (``human``), the LLM's of every pooled pair
    (:class:`Judges`)."""

    sample_path: FilePath
    human: Sequence[FilePath]
    design: ClassVar[str] = "documents"


@dataclass(frozen=True, kw_only=True)
class RunHoles(Compared, Judges):
    """``estimate run holes``: a sample of a frozen set's holes (``sample_path``, the record of ``estimate select
    holes``; ``set_path``, its ``split``), the humans' grades of the drawn holes, the LLM's of every pair of the set
    and of the holes (:class:`Judges`); ``override_contract`` as :class:`RunSet`'s."""

    set_path: FilePath
    sample_path: FilePath
    human: Sequence[FilePath]
    split: str = "test"
    override_contract: bool = False
    design: ClassVar[str] = "holes"
    graded: ClassVar[str] = "pair of the set and of the holes"


@dataclass(frozen=True, kw_only=True)
class ValidateSlice(Drawn):
    """``estimate validate slice``: ``draws`` random slices of ``slice_size`` of the queries humans graded in full
    (``human``), the LLM's grades of every query (``llm``); ``pairs``: the differences validated (none: every pair
    of runs); ``interval`` and ``ensemble`` as :class:`RunSlice`'s."""

    human: Sequence[FilePath]
    llm: Sequence[FilePath]
    slice_size: int
    pairs: Sequence[tuple[str, str]] = ()
    interval: str = "t"
    ensemble: bool = False
    design: ClassVar[str] = "slice"
    unit: ClassVar[str] = "slice"


@dataclass(frozen=True, kw_only=True)
class ValidateDocuments(Drawn, Judges):
    """``estimate validate documents``: ``draws`` document samples of ``budget`` judgments expected from the pairs
    humans graded in full (``human``), the LLM's of every pooled pair (:class:`Judges`)."""

    human: Sequence[FilePath]
    budget: float
    design: ClassVar[str] = "documents"
    unit: ClassVar[str] = "sample"


@dataclass(frozen=True, kw_only=True)
class ValidateHoles(Drawn, Judges):
    """``estimate validate holes`` (:mod:`evalset.estimate.documents.holevalidation`): each group of runs
    (``groups_path``, :func:`evalset.io.groups.read_run_groups`) left out of the set's depth-``depth`` pool (None:
    10) in turn, ``draws`` samples of its runs' holes, each the share ``holes_fraction`` of a run's holes or the
    share sized for the standard error ``holes_precision`` (one of them); the set's judgments on its ``split`` are the
    full ones, the LLM's of every pair the set judges (:class:`Judges`)."""

    set_path: FilePath
    groups_path: FilePath
    holes_fraction: float | None = None
    holes_precision: float | None = None
    depth: int | None = None
    split: str = "test"
    override_contract: bool = False
    design: ClassVar[str] = "holes"
    graded: ClassVar[str] = "pair the set judges"
    unit: ClassVar[str] = "run"

    def check(self) -> None:
        if (self.holes_fraction is None) == (self.holes_precision is None):
            raise InputError("give one of --fraction P (the share of each run's holes a draw takes: 0.25 or 25%) or "
                             "--precision SE (each run's share sized for it)")
        super().check()


def check_pairs(pairs: Sequence[tuple[str, str]]) -> None:
    """Refuse a paired difference of one run with itself (every estimate function's rule)."""
    for baseline, candidate in pairs:
        if baseline == candidate:
            raise InputError(f"comparison {baseline}:{candidate} compares a run with itself: give two different runs")
