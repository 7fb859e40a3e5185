"""The three ways to an estimate, from the inputs of ``evalset estimate``: on a frozen set's LLM-graded part
(``set_path``), from LLM grades and the human grades of a drawn slice (``slice_path``), or the validation on fully
human-graded data (``draws`` random slices of ``slice_size`` queries). With ``design="documents"`` (default
``"queries"``: the slice), the document design's estimate from a sample record (``sample_path``) or its
validation (``draws`` samples of ``budget`` judgments), :mod:`evalset.estimate.documents.report`; with a set,
``draws`` and ``groups_path``, the simulation of a sample of the set's holes, each group of runs left out of its
pool in turn (:func:`evalset.estimate.documents.holesimulate.simulate_holes`: the set's judgments on its ``split``
are the full ones; the LLM files, one judge each, must grade every pair the set judges).

Defaults (those of the command): the metric is :data:`~evalset.contract.DEFAULT_METRIC`, or on a set its headline;
a validation estimates the first metric only. The pairs default to none, on a set to its planned comparisons whose
runs were given, in a validation to every pair of runs. The contract is ``options`` over the default contract, or
on a set the set's under the override rule (:meth:`evalset.contract.ContractOptions.applied_to`). The comparison
family is the pairs given (``planned`` overrides their count), or on a set the set's
(:mod:`evalset.estimate.frozen`). A run that lacks queries of the set is refused unless ``options`` chose the
contract's ``missing`` (:mod:`evalset.estimate.inputs`), naming its file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from evalset.contract import DEFAULT_METRIC
from evalset.errors import InputError
from evalset.estimate.documents.holes import hole_sample_report
from evalset.estimate.documents.holesimulate import MEASURES, HoleSimulation, simulate_holes, sized_by
from evalset.estimate.documents.report import DocumentReport, document_sample_report, document_validation, read_judges
from evalset.estimate.documents.sample import refuse_traffic_strata
from evalset.estimate.documents.simulate import DocumentSimulation
from evalset.estimate.figures import Estimate, estimate_runs
from evalset.estimate.frozen import NO_LLM_PART, set_estimate
from evalset.estimate.inputs import ensemble_of, read_grades
from evalset.estimate.simulate import Simulation, simulate
from evalset.estimate.spec import EstimateSpec
from evalset.evaluation import Evaluation
from evalset.holes.find import judged_pairs
from evalset.io.groups import read_run_groups
from evalset.io.setfolder import load_set
from evalset.io.slicerecord import read_slice
from evalset.io.trec import expand_run_paths, read_run
from evalset.metrics import parse_measure
from evalset.params import settings_of
from evalset.stats.family import ComparisonFamily
from evalset.stats.ppi import ppi_py_module

FilePath = str | os.PathLike


def make_estimate(spec: EstimateSpec | None = None, *, progress: Callable[[Iterable], Iterable] = iter,
                  **options: Any) -> Estimate | Simulation | DocumentReport | DocumentSimulation | HoleSimulation:
    """The estimate of ``spec.runs`` (files or folders) on a set, or from ``llm`` and ``human`` grade files (labels
    or qrels) and a slice record, or the validation of ``draws`` slices (module docstring); the settings are
    ``spec``, or the :class:`~evalset.estimate.spec.EstimateSpec` of keyword ``options`` (``runs=``, ``llm=``, ...),
    which refuses settings no estimate can have. ``progress`` wraps the simulated slices. Raises
    :class:`~evalset.errors.InputError` when the set has no LLM-graded part, or the inputs break the estimate's
    rules as they are read."""
    spec = settings_of(EstimateSpec, spec, options)
    if spec.design == "documents":
        return _documents(spec, progress)
    frozen = load_set(spec.set_path, check_headline=parse_measure) if spec.set_path else None
    if frozen is None or frozen.sample is None:  # a set frozen with a document sample needs no ppi_py
        ppi_py_module()  # a missing extra is said before any work
    named, sources = _read(spec.runs)
    chosen = tuple(spec.options.given())
    common = {"exploratory": spec.exploratory, "alpha": spec.alpha, "level": spec.level, "interval": spec.interval}
    if frozen is not None:
        llm_labels = read_grades(spec.llm, "llm", spec.conflicting_grades).judgments if spec.llm else None
        result = set_estimate(frozen, named, split=spec.split, metrics=list(spec.metrics),
                              pairs=list(spec.pairs) or None, planned=spec.planned, options=spec.options,
                              override_contract=spec.override_contract, llm_labels=llm_labels,
                              other_judge=spec.other_judge, sources=sources, **common)
        if result is None:
            raise InputError(NO_LLM_PART, os.fspath(spec.set_path))
        return result
    contract = spec.options.applied_to()[0]
    human_grades = read_grades(spec.human, "human", spec.conflicting_grades)
    llm_grades = read_grades(spec.llm, "llm", spec.conflicting_grades)
    metrics = spec.metrics or (DEFAULT_METRIC,)
    if spec.draws is not None:
        return simulate(named, human_grades, llm_grades, slice_size=spec.slice_size, draws=spec.draws,
                        metrics=metrics, contract=contract, pairs=list(spec.pairs) or None, level=spec.level,
                        interval=spec.interval, seed=spec.seed, progress=progress, ensemble=spec.ensemble,
                        chosen=chosen, sources=sources)
    caveats = []
    if spec.ensemble:
        llm_grades, note = ensemble_of(llm_grades, human_grades)
        caveats.append(note.removeprefix("note: "))
    return estimate_runs(named, human_grades, llm_grades, read_slice(spec.slice_path), metrics=metrics,
                         contract=contract, pairs=spec.pairs,
                         family=ComparisonFamily.of(len(spec.pairs), planned=spec.planned),
                         record_source=os.fspath(spec.slice_path), caveats=caveats, chosen=chosen, sources=sources,
                         **common)


def _documents(spec: EstimateSpec, progress: Callable[[Iterable], Iterable]
               ) -> DocumentReport | DocumentSimulation | HoleSimulation:
    """The document design (:mod:`evalset.estimate.documents.report`): a set frozen with a sample, a sample record's
    estimate, a validation, or the simulation of a sample of a set's holes (the spec has checked which)."""
    if spec.groups_path:
        return _hole_simulation(spec, progress)
    if spec.set_path and spec.sample_path:
        named, sources = _read(spec.runs)
        return hole_sample_report(named, set_path=spec.set_path, sample_path=spec.sample_path, human=spec.human,
                              llm=spec.llm, no_llm=spec.no_llm, split=spec.split, metrics=spec.metrics,
                              pairs=spec.pairs, planned=spec.planned, exploratory=spec.exploratory, alpha=spec.alpha,
                              level=spec.level, conflicting_grades=spec.conflicting_grades, options=spec.options,
                              override_contract=spec.override_contract, sources=sources)
    if spec.set_path:
        frozen = load_set(spec.set_path, check_headline=parse_measure)
        if frozen.sample is None:
            raise InputError("the set records no document sample (freeze --sample): it is estimated by the query "
                             "slice design (estimate run set)", os.fspath(spec.set_path))
        named, sources = _read(spec.runs)
        return set_estimate(frozen, named, split=spec.split, metrics=list(spec.metrics),
                            pairs=list(spec.pairs) or None, planned=spec.planned, exploratory=spec.exploratory,
                            alpha=spec.alpha, level=spec.level, interval=spec.interval, options=spec.options,
                            override_contract=spec.override_contract, sources=sources)
    named, sources = _read(spec.runs)
    common = {"human": spec.human, "llm": spec.llm, "no_llm": spec.no_llm, "metrics": spec.metrics,
              "level": spec.level, "conflicting_grades": spec.conflicting_grades,
              "contract": spec.options.applied_to()[0], "chosen": tuple(spec.options.given()), "sources": sources}
    if spec.draws is not None:
        return document_validation(named, draws=spec.draws, budget=spec.budget, seed=spec.seed, progress=progress,
                                   **common)
    return document_sample_report(named, sample_path=spec.sample_path, pairs=spec.pairs, planned=spec.planned,
                             exploratory=spec.exploratory, alpha=spec.alpha, **common)


def _hole_simulation(spec: EstimateSpec, progress: Callable[[Iterable], Iterable]) -> HoleSimulation:
    """Each group of ``spec.runs`` left out of the set's pool in turn, its runs' holes sampled (module docstring)."""
    evaluation = Evaluation.on_set(spec.set_path, spec.split, spec.options, override_contract=spec.override_contract)
    refuse_traffic_strata(evaluation.frozen.contract.weighting, evaluation.queries["stratum"].nunique(),
                          os.fspath(spec.set_path), "simulate")
    groups = read_run_groups(spec.groups_path)
    named, sources = _read(spec.runs)
    llm = None
    if not spec.no_llm:
        llm = read_judges(spec.llm, spec.conflicting_grades, judged_pairs(evaluation.qrels)[["query_id", "doc_id"]])
    depth = {} if spec.depth is None else {"depth": spec.depth}
    sized = {} if spec.holes_precision is None else {"fractions": sized_by(spec.holes_precision)}
    return simulate_holes(named, evaluation.qrels, llm, groups, fraction=spec.holes_fraction, draws=spec.draws,
                          seed=spec.seed, measures=spec.metrics or MEASURES, contract=evaluation.contract,
                          level=spec.level, progress=progress, chosen=tuple(spec.options.given()), sources=sources,
                          **depth, **sized)


def _read(runs: Sequence[FilePath]) -> tuple[dict, dict[str, str]]:
    """The runs (files or folders) read, by name, and each one's file (named when a run is refused)."""
    files = {name: os.fspath(path) for name, path in expand_run_paths(runs).items()}
    return {name: read_run(path) for name, path in files.items()}, files
