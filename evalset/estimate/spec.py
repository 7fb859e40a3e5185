"""What an estimate is asked, as one frozen value that checks itself: the options of ``evalset estimate`` and the
keyword arguments of :func:`evalset.estimate.make_estimate` alike.

Each field's rule is declared once in :attr:`EstimateSpec.RULES` (the command line builds its options from it,
:func:`evalset.cli.ruled.ruled`; :func:`~evalset.estimate.figures.estimate_runs` and
:func:`~evalset.estimate.frozen.set_estimate` declare their parameters' rules from it); the rules between fields
are :meth:`EstimateSpec.__post_init__`'s, each message one line naming the command's options. What only the inputs
can tell (a slice too large for the queries, a set without an LLM-graded part) is checked as they are read. This
module loads nothing heavy, so that a command reads its rules before the statistics load.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from evalset.contract import (
    CONFLICTING_GRADES,
    DEFAULT_SEED,
    ESTIMATE_DESIGNS,
    PPI_INTERVALS,
    SPLITS,
    ContractOptions,
)
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


WAYS = ("give --runs and one of: --set; --llm, --human and --slice (an estimate); --llm, --human and --simulate R "
        "--size N (a validation)")
"""The ways to an estimate of the query slice design."""
DOCUMENT_INTERVALS = ("the document design's intervals are its own (\"this set\" and \"new queries\"): give no "
                      "--interval")
"""The refusal of ``--interval`` where the document design estimates (its design, or a set frozen with a sample)."""
HOLE_SIMULATION = ("--groups, --fraction, --precision and --depth simulate a sample of a set's holes: give "
                   "them with --design documents --set SET --simulate R (--groups and one of --fraction or "
                   "--precision required)")
"""Where the simulation of a set's hole sample's options go."""


@dataclass(frozen=True)
class EstimateSpec:
    """An estimate's settings (defaults: the command's; the ways, :mod:`evalset.estimate.modes`).

    runs
        Run files or folders of runs.
    llm, human
        Grade files (labels or qrels): the LLM's of every query (with ``set_path``: another judge's, said with
        ``other_judge``) and the humans' of the slice (of every query in a validation); with the document design
        each LLM file is one judge and the humans' are the sampled pairs'.
    slice_path, set_path, split
        A slice record of ``estimate select`` (an estimate), or a frozen set with an LLM-graded part (its ``split``).
    metrics, pairs, planned, exploratory
        The metrics (none: the default or the set's headline), the paired differences (baseline, candidate),
        the planned count of the Bonferroni threshold (None: the pairs), and whether they were not planned.
    alpha, level, interval
        The family-wise error rate, the run means' confidence level, and their interval (``t`` or ``normal``).
    draws, slice_size, seed
        A validation on fully human-graded data: this many random slices of ``slice_size`` queries, seeded.
    conflicting_grades, options, override_contract
        One annotator's repeats of a pair; the contract options given (none given: ``ContractOptions()``); with a
        set, allow the options that contradict its contract.
    design, sample_path, no_llm, budget
        ``queries`` (the slice) or ``documents``: a sample record of ``estimate select documents`` (an estimate),
        Horvitz-Thompson's estimator from the human sample alone, the judgments expected per simulated sample.
    other_judge, ensemble
        Estimate a set with another judge's LLM labels; combine the LLM files' judges into one calibrated on the
        human slice.
    groups_path, holes_fraction, holes_precision, depth
        With the document design, a set and ``draws``: the simulation of a sample of the set's holes
        (:mod:`evalset.estimate.documents.holesimulate`): the runs' groups (a TSV,
        :func:`evalset.io.groups.read_run_groups`), each left out of the set's depth-``depth`` pool (None: the
        library's, 10) in turn, and the share of each run's holes a simulated sample draws, or the standard error each
        run's share is sized for (:mod:`evalset.estimate.documents.holesizing`).
    """

    runs: Sequence[FilePath] = ()
    llm: Sequence[FilePath] = ()
    human: Sequence[FilePath] = ()
    slice_path: FilePath | None = None
    set_path: FilePath | None = None
    split: str = "test"
    metrics: Sequence[str] = ()
    pairs: Sequence[tuple[str, str]] = ()
    planned: int | None = None
    exploratory: bool = False
    alpha: float = 0.05
    level: float = 0.95
    interval: str = "t"
    draws: int | None = None
    slice_size: int | None = None
    seed: int = DEFAULT_SEED
    conflicting_grades: str = "refuse"
    options: ContractOptions | None = None
    override_contract: bool = False
    design: str = "queries"
    sample_path: FilePath | None = None
    no_llm: bool = False
    budget: float | None = None
    other_judge: bool = False
    ensemble: bool = False
    groups_path: FilePath | None = None
    holes_fraction: float | None = None
    holes_precision: float | None = None
    depth: int | None = None

    RULES: ClassVar[dict] = {"design": Choice(ESTIMATE_DESIGNS), "split": Choice(SPLITS), "planned": POSITIVE_INT,
                             "alpha": PROBABILITY, "level": PROBABILITY, "interval": Choice(PPI_INTERVALS),
                             "draws": RESAMPLES, "slice_size": POSITIVE_INT, "seed": NON_NEGATIVE_INT,
                             "conflicting_grades": Choice(CONFLICTING_GRADES), "budget": POSITIVE_NUMBER,
                             "holes_fraction": PROBABILITY, "holes_precision": POSITIVE_NUMBER, "depth": DEPTH}

    def __post_init__(self) -> None:
        for name in ("runs", "llm", "human", "metrics"):
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        object.__setattr__(self, "pairs", tuple(tuple(pair) for pair in self.pairs))
        object.__setattr__(self, "options", self.options or ContractOptions())
        check_fields(self, self.RULES)
        check_pairs(self.pairs)
        if self.override_contract and not self.set_path:
            raise InputError("--override-contract goes with --set: it allows contract options that contradict the "
                             "set's contract")
        if self.other_judge and not (self.set_path and self.llm and self.design == "queries"):
            raise InputError("--other-judge goes with --set and --llm: LLM labels of another judge than the set's")
        if self.ensemble and (self.set_path or self.design != "queries"):
            raise InputError("--ensemble calibrates the LLM files' judges on the human slice: give it with --llm, "
                             "--human and --slice or --simulate (the document design calibrates its judges itself)")
        if self.design == "documents":
            self._check_document_design()
        else:
            self._check_slice_design()

    def _check_slice_design(self) -> None:
        if self.groups_path or self._hole_options:
            raise InputError(HOLE_SIMULATION)
        if self.sample_path or self.no_llm or self.budget is not None:
            raise InputError("--sample, --no-llm and --budget go with the document design (--design documents)")
        ways = sum(bool(given) for given in (self.set_path, self.slice_path, self.draws is not None))
        if not self.runs or ways != 1 or (not self.set_path and not (self.llm and self.human)):
            raise InputError(WAYS)
        if self.set_path and self.human:
            raise InputError("with --set, its labels are the grades: give no --human (--llm: another judge's)")
        if self.draws is not None and self.slice_size is None:
            raise InputError("--simulate needs --size: the human-graded queries of each simulated slice")
        if self.draws is None and self.slice_size is not None:
            raise InputError("--size is the size of the slices --simulate draws: give --simulate R too")

    def _check_document_design(self) -> None:
        if not self.runs:
            raise InputError("give --runs: the run files or folders to estimate")
        if self.interval != "t":
            raise InputError(DOCUMENT_INTERVALS)
        if self.groups_path:
            self._check_hole_simulation()
            return
        if self._hole_options:
            raise InputError(HOLE_SIMULATION)
        if self.set_path and self.sample_path:  # a sample of the set's holes (evalset.estimate.documents.holes)
            if any((self.draws is not None, self.budget is not None, self.slice_path, self.slice_size is not None)):
                raise InputError("--set with --sample estimates from a sample of the set's holes: give no "
                                 "--simulate, --budget, --slice or --size")
            self._check_grades()
            return
        if self.set_path:
            given = (self.draws is not None, self.budget is not None, self.slice_path,
                     self.slice_size is not None, self.llm, self.human, self.no_llm)
            if any(given):
                raise InputError("a set frozen with a document sample holds its record and its grades: give the set "
                                 "alone (no --simulate, --budget, --slice, --size, --llm, --human or --no-llm), "
                                 "or with --sample, a sample of its holes, and their grades")
            return
        if self.slice_path or self.slice_size is not None:
            raise InputError("the document design reads a sample record (--sample), not a slice: give no --slice or "
                             "--size")
        if bool(self.sample_path) == (self.draws is not None):
            raise InputError("give the document design one of: --sample (an estimate); --simulate R and --budget B "
                             "(a validation)")
        if self.draws is None and self.budget is not None:
            raise InputError("--budget goes with --simulate (the sample record holds its own budget)")
        if self.draws is not None and self.budget is None:
            raise InputError("--simulate needs --budget B with the document design: the human judgments expected "
                             "per simulated sample")
        self._check_grades()

    def _check_hole_simulation(self) -> None:
        if not self.set_path or self.draws is None:
            raise InputError(HOLE_SIMULATION)
        given = (self.sample_path, self.budget is not None, self.slice_path, self.slice_size is not None, self.human,
                 self.pairs, self.planned is not None, self.exploratory)
        if any(given):
            raise InputError("the simulation of a set's hole sample takes the set's judgments as the full ones and "
                             "compares each run with the best run outside its group: give no --sample, --budget, "
                             "--slice, --size, --human, --compare, --planned or --exploratory")
        if (self.holes_fraction is None) == (self.holes_precision is None):
            raise InputError("--groups needs one of --fraction P (the share of each run's holes a simulated "
                             "sample draws: 0.25 or 25%) or --precision SE (each run's share sized for it)")
        if bool(self.llm) == self.no_llm:
            raise InputError("give the LLM grades of every pair the set judges (--llm), or --no-llm for "
                             "Horvitz-Thompson's estimator: one of them")

    @property
    def _hole_options(self) -> bool:
        return any(value is not None for value in (self.holes_fraction, self.holes_precision, self.depth))

    def _check_grades(self) -> None:
        if not self.human:
            raise InputError("the document design needs the human grades (--human): of the sampled pairs, or of "
                             "every pair with --simulate")
        if bool(self.llm) == self.no_llm:
            raise InputError("give the LLM grades of every pooled pair (--llm), or --no-llm for Horvitz-Thompson's "
                             "estimator: one of them")


def check_pairs(pairs: Sequence[tuple[str, str]]) -> None:
    """Refuse a paired difference of one run with itself (every estimate function's rule)."""
    for baseline, candidate in pairs:
        if baseline == candidate:
            raise InputError(f"comparison {baseline}:{candidate} compares a run with itself: give two different runs")
