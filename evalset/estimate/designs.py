"""The three designs of an estimate's human part, each a :class:`Design` with three verbs: ``select`` (draw what
humans grade), ``estimate`` (the runs' means and paired differences with intervals, from a spec of ``estimate
run``) and ``validate`` (seeded draws on fully graded data, from a spec of ``estimate validate``).

- :data:`QUERY_SLICE`: humans grade a random slice of whole queries, the LLM every query; PPI++ (ppi_py);
- :data:`DOCUMENT_SAMPLE`: humans grade a sample of every query's pooled pairs, each with a known inclusion
  probability (:mod:`evalset.estimate.documents`);
- :data:`HOLE_SAMPLE`: a document sample whose set's pairs are known: a sample of a frozen set's holes.

A frozen set with an LLM-graded part estimates itself by the design it was frozen with
(:func:`evalset.estimate.frozen.set_estimate`). :func:`make_estimate` answers any spec of
:mod:`evalset.estimate.spec` by the design it names.

Defaults (those of the commands): the metric is :data:`~evalset.contract.DEFAULT_METRIC`, or on a set its headline.
The pairs default to none, on a set to its planned comparisons whose runs were given, in a slice validation to every
pair of runs. The contract is the spec's options over the default contract, or on a set the set's under the override
rule (:meth:`evalset.contract.ContractOptions.applied_to`). The comparison family is the pairs given (``planned``
overrides their count), or on a set the set's (:mod:`evalset.estimate.frozen`). A run that lacks queries is refused
unless the options chose the contract's ``missing`` (:mod:`evalset.estimate.inputs`), naming its file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from evalset.contract import DEFAULT_METRIC
from evalset.errors import InputError
from evalset.estimate.documents.holes import hole_sample_report
from evalset.estimate.documents.holevalidation import MEASURES, simulate_holes, sized_by
from evalset.estimate.documents.report import DocumentReport, document_sample_report, document_validation
from evalset.estimate.documents.sample import refuse_traffic_strata
from evalset.estimate.documents.select import DocumentSelection, select_document_pool
from evalset.estimate.figures import Estimate, estimate_runs
from evalset.estimate.frozen import NO_LLM_PART, set_estimate
from evalset.estimate.inputs import ensemble_of
from evalset.estimate.simulate import Validation
from evalset.estimate.slicevalidation import simulate_slices
from evalset.estimate.slicing import SliceSelection, select_slice_pool
from evalset.estimate.sources import Grades, read_grades, read_judges, read_runs_and_files
from evalset.estimate.spec import (
    EstimateSettings,
    RunDocuments,
    RunHoles,
    RunSet,
    RunSlice,
    ValidateDocuments,
    ValidateHoles,
    ValidateSlice,
)
from evalset.evaluation import Evaluation
from evalset.holes.find import judged_pairs
from evalset.io.groups import read_run_groups
from evalset.io.setfolder import load_set
from evalset.io.slicerecord import read_slice
from evalset.metrics import parse_measure
from evalset.stats.family import ComparisonFamily
from evalset.stats.ppi import ppi_py_module

FilePath = str | os.PathLike
Progress = Callable[[Iterable], Iterable]


class Design(Protocol):
    """A design of an estimate's human part (module docstring)."""

    name: str

    def select(self, pool_dir: FilePath, output: FilePath, **settings: Any) -> Any:
        """Draw, seeded, what humans grade from the pool at ``pool_dir`` and write its pool folder and record."""

    def estimate(self, spec: Any) -> Any:
        """The runs' means and paired differences with intervals (a spec of ``estimate run``)."""

    def validate(self, spec: Any, progress: Progress = iter) -> Any:
        """Bias, RMSE, coverage and width over ``spec.draws`` seeded draws on fully graded data: the one simulation
        (:func:`evalset.estimate.simulate.simulate`) of the design's ``simulate_one`` (one draw, estimated)."""


@dataclass(frozen=True)
class QuerySlice:
    """Humans grade a random slice of whole queries (:mod:`evalset.estimate.slicing`), the LLM every query."""

    name: str = "slice"

    def select(self, pool_dir: FilePath, output: FilePath, **settings: Any) -> SliceSelection:
        return select_slice_pool(pool_dir, output, **settings)

    def estimate(self, spec: RunSlice) -> Estimate:
        runs, sources, human, llm = _slice_inputs(spec)
        caveats = []
        if spec.ensemble:
            llm, note = ensemble_of(llm, human)
            caveats.append(note.removeprefix("note: "))
        return estimate_runs(runs, human, llm, read_slice(spec.slice_path), metrics=spec.metrics or (DEFAULT_METRIC,),
                             contract=spec.options.applied_to()[0], pairs=spec.pairs,
                             family=ComparisonFamily.of(len(spec.pairs), planned=spec.planned),
                             record_source=os.fspath(spec.slice_path), caveats=caveats,
                             chosen=tuple(spec.options.given()), sources=sources, exploratory=spec.exploratory,
                             alpha=spec.alpha, level=spec.level, interval=spec.interval)

    def validate(self, spec: ValidateSlice, progress: Progress = iter) -> Validation:
        runs, sources, human, llm = _slice_inputs(spec)
        return simulate_slices(runs, human, llm, slice_size=spec.slice_size, draws=spec.draws,
                               metrics=spec.metrics or (DEFAULT_METRIC,), contract=spec.options.applied_to()[0],
                               pairs=list(spec.pairs) or None, level=spec.level, interval=spec.interval,
                               seed=spec.seed, progress=progress, ensemble=spec.ensemble,
                               chosen=tuple(spec.options.given()), sources=sources)


@dataclass(frozen=True)
class DocumentSample:
    """Humans grade a sample of every query's pooled pairs (:mod:`evalset.estimate.documents`)."""

    name: str = "documents"

    def select(self, pool_dir: FilePath, output: FilePath, **settings: Any) -> DocumentSelection:
        return select_document_pool(pool_dir, output, **settings)

    def estimate(self, spec: RunDocuments) -> DocumentReport:
        runs, sources = read_runs_and_files(spec.runs)
        return document_sample_report(runs, sample_path=spec.sample_path, pairs=spec.pairs, planned=spec.planned,
                                      exploratory=spec.exploratory, alpha=spec.alpha, **_document_settings(spec),
                                      sources=sources)

    def validate(self, spec: ValidateDocuments, progress: Progress = iter) -> Validation:
        runs, sources = read_runs_and_files(spec.runs)
        return document_validation(runs, draws=spec.draws, budget=spec.budget, seed=spec.seed, progress=progress,
                                   **_document_settings(spec), sources=sources)


@dataclass(frozen=True)
class HoleSample:
    """A document sample whose set's pairs are known: humans grade a sample of a frozen set's holes
    (:mod:`evalset.estimate.documents.holes`)."""

    name: str = "holes"

    def select(self, pool_dir: FilePath, output: FilePath, *, frozen_set: FilePath,
               **settings: Any) -> DocumentSelection:
        return select_document_pool(pool_dir, output, frozen_set=frozen_set, **settings)

    def estimate(self, spec: RunHoles) -> DocumentReport:
        runs, sources = read_runs_and_files(spec.runs)
        return hole_sample_report(runs, set_path=spec.set_path, sample_path=spec.sample_path, human=spec.human,
                                  llm=spec.llm, no_llm=spec.no_llm, split=spec.split, metrics=spec.metrics,
                                  pairs=spec.pairs, planned=spec.planned, exploratory=spec.exploratory,
                                  alpha=spec.alpha, level=spec.level, conflicting_grades=spec.conflicting_grades,
                                  options=spec.options, override_contract=spec.override_contract, sources=sources)

    def validate(self, spec: ValidateHoles, progress: Progress = iter) -> Validation:
        """Each group of the spec's runs left out of the set's pool in turn, its runs' holes sampled
        (:mod:`evalset.estimate.documents.holevalidation`: the set's judgments on its split are the full ones; the
        LLM files, one judge each, grade every pair the set judges)."""
        evaluation = Evaluation.on_set(spec.set_path, spec.split, spec.options,
                                       override_contract=spec.override_contract)
        refuse_traffic_strata(evaluation.frozen.contract.weighting, evaluation.queries["stratum"].nunique(),
                              os.fspath(spec.set_path), "simulate")
        groups = read_run_groups(spec.groups_path)
        runs, sources = read_runs_and_files(spec.runs)
        llm = None if spec.no_llm else read_judges(spec.llm, spec.conflicting_grades,
                                                    judged_pairs(evaluation.qrels)[["query_id", "doc_id"]])
        depth = {} if spec.depth is None else {"depth": spec.depth}
        sized = {} if spec.holes_precision is None else {"fractions": sized_by(spec.holes_precision)}
        return simulate_holes(runs, evaluation.qrels, llm, groups, fraction=spec.holes_fraction, draws=spec.draws,
                              seed=spec.seed, measures=spec.metrics or MEASURES, contract=evaluation.contract,
                              level=spec.level, progress=progress, chosen=tuple(spec.options.given()),
                              sources=sources, **depth, **sized)


QUERY_SLICE = QuerySlice()
"""Humans grade a random slice of whole queries (``estimate select|run|validate slice``)."""
DOCUMENT_SAMPLE = DocumentSample()
"""Humans grade a sample of every query's pooled pairs (``estimate select|run|validate documents``)."""
HOLE_SAMPLE = HoleSample()
"""Humans grade a sample of a frozen set's holes (``estimate select|run|validate holes``)."""
DESIGNS: dict[str, Design] = {design.name: design for design in (QUERY_SLICE, DOCUMENT_SAMPLE, HOLE_SAMPLE)}
"""The designs by name (a spec's ``design``)."""


def make_estimate(spec: EstimateSettings, *, progress: Progress = iter
                  ) -> Estimate | DocumentReport | Validation:
    """The answer to ``spec`` (one of :mod:`evalset.estimate.spec`'s): its design's estimate or validation, or a
    frozen set's estimate by the design it was frozen with. ``progress`` wraps a validation's draws. Raises
    :class:`~evalset.errors.InputError` when the inputs break the design's rules as they are read."""
    if not isinstance(spec, EstimateSettings):
        raise TypeError(f"spec: expected one of evalset.estimate.spec's settings (RunSlice, ...), got "
                        f"{type(spec).__name__}")
    if isinstance(spec, RunSet):
        return _set_estimate(spec)
    design = DESIGNS[spec.design]
    return design.estimate(spec) if spec.verb == "estimate" else design.validate(spec, progress)


def _set_estimate(spec: RunSet) -> Estimate | DocumentReport:
    """A frozen set's estimate by the design it was frozen with (its human slice, or its document sample)."""
    frozen = load_set(spec.set_path, check_headline=parse_measure)
    if frozen.sample is None:
        ppi_py_module()
    runs, sources = read_runs_and_files(spec.runs)
    llm = read_grades(spec.llm, "llm", spec.conflicting_grades).judgments if spec.llm else None
    result = set_estimate(frozen, runs, split=spec.split, metrics=list(spec.metrics), pairs=list(spec.pairs) or None,
                          planned=spec.planned, exploratory=spec.exploratory, alpha=spec.alpha, level=spec.level,
                          interval=spec.interval, options=spec.options, override_contract=spec.override_contract,
                          llm_labels=llm, other_judge=spec.other_judge, sources=sources)
    if result is None:
        raise InputError(NO_LLM_PART, os.fspath(spec.set_path))
    return result


def _slice_inputs(spec: RunSlice | ValidateSlice) -> tuple[dict, dict[str, str], Grades, Grades]:
    """The query slice's runs (and their files), human grades and LLM grades; ppi_py asked for first, so that a
    missing extra is said before any work."""
    ppi_py_module()
    runs, sources = read_runs_and_files(spec.runs)
    return (runs, sources, read_grades(spec.human, "human", spec.conflicting_grades),
            read_grades(spec.llm, "llm", spec.conflicting_grades))


def _document_settings(spec: RunDocuments | ValidateDocuments) -> dict[str, Any]:
    return {"human": spec.human, "llm": spec.llm, "no_llm": spec.no_llm, "metrics": spec.metrics,
            "level": spec.level, "conflicting_grades": spec.conflicting_grades,
            "contract": spec.options.applied_to()[0], "chosen": tuple(spec.options.given())}
