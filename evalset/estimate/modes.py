"""The three ways to an estimate, from the inputs of ``evalset estimate``: on a frozen set's LLM-graded part
(``set_path``), from LLM grades and the human grades of a drawn slice (``slice_path``), or the validation on fully
human-graded data (``draws`` random slices of ``slice_size`` queries). With ``design="documents"`` (default
``"queries"``: the slice), the document design's estimate from a sample record (``sample_path``) or its
validation (``draws`` samples of ``budget`` judgments), :mod:`evalset.estimate.documents.modes`.

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

from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED, ContractOptions
from evalset.errors import InputError
from evalset.estimate.documents.modes import DocumentReport, document_estimate, document_validation
from evalset.estimate.documents.simulate import DocumentSimulation
from evalset.estimate.figures import Estimate, estimate_runs
from evalset.estimate.frozen import NO_LLM_PART, set_estimate
from evalset.estimate.inputs import check_settings, ensemble_of, read_grades
from evalset.estimate.simulate import Simulation, simulate
from evalset.io.setfolder import load_set
from evalset.io.slicerecord import read_slice
from evalset.io.trec import expand_run_paths, read_run
from evalset.stats.family import ComparisonFamily
from evalset.stats.ppi import ppi_py_module

FilePath = str | os.PathLike


def make_estimate(runs: Sequence[FilePath], *, llm: Sequence[FilePath] = (), human: Sequence[FilePath] = (),
                  slice_path: FilePath | None = None, set_path: FilePath | None = None, split: str = "test",
                  metrics: Sequence[str] = (), pairs: Sequence[tuple[str, str]] = (), planned: int | None = None,
                  exploratory: bool = False, alpha: float = 0.05, level: float = 0.95, interval: str = "t",
                  draws: int | None = None, slice_size: int | None = None, seed: int = DEFAULT_SEED,
                  conflicting_grades: str = "refuse", options: ContractOptions | None = None,
                  override_contract: bool = False, design: str = "queries", sample_path: FilePath | None = None,
                  no_llm: bool = False, budget: float | None = None, other_judge: bool = False,
                  ensemble: bool = False,
                  progress: Callable[[Iterable], Iterable] = iter
                  ) -> Estimate | Simulation | DocumentReport | DocumentSimulation:
    """The estimate of ``runs`` (files or folders) on a set, or from ``llm`` and ``human`` grade files (labels or
    qrels) and a slice record, or the validation of ``draws`` slices (module docstring); ``progress`` wraps the
    simulated slices. Raises :class:`~evalset.errors.InputError` unless exactly one of ``set_path``,
    ``slice_path`` and ``draws`` is given (with grade files unless a set), when the set has no LLM-graded
    part, or on settings no estimate can have (:func:`~evalset.estimate.inputs.check_settings`)."""
    if other_judge and not (set_path and llm and design == "queries"):
        raise InputError("--other-judge goes with --set and --llm: LLM labels of another judge than the set's")
    if ensemble and (set_path or design != "queries"):
        raise InputError("--ensemble calibrates the LLM files' judges on the human slice: give it with --llm, --human "
                         "and --slice or --simulate (the document design calibrates its judges itself)")
    if design == "documents":
        return _documents(runs, llm=llm, human=human, slice_path=slice_path, set_path=set_path, metrics=metrics,
                          pairs=pairs, planned=planned, exploratory=exploratory, alpha=alpha, level=level,
                          draws=draws, slice_size=slice_size, seed=seed, conflicting_grades=conflicting_grades,
                          options=options, sample_path=sample_path, no_llm=no_llm, budget=budget, progress=progress,
                          interval=interval, override_contract=override_contract, split=split)
    if design != "queries":
        raise InputError(f"the design is queries (a slice of queries) or documents (a document sample), got {design!r}")
    if sample_path is not None or no_llm or budget is not None:
        raise InputError("--sample, --no-llm and --budget go with the document design (--design documents)")
    if sum(bool(given) for given in (set_path, slice_path, draws is not None)) != 1 or \
            (set_path and human) or (not set_path and not (llm and human)):
        raise InputError("give one of: a set (with another judge's LLM grades, or none); LLM and human grades and a "
                         "slice record (an estimate); LLM and human grades and a number of simulated slices (a "
                         "validation)")
    if draws is not None and slice_size is None:
        raise InputError("a validation needs the size of its simulated slices")
    check_settings(alpha=alpha, level=level, planned=planned, pairs=pairs)
    frozen = load_set(set_path) if set_path else None
    if frozen is None or frozen.sample is None:  # a set frozen with a document sample needs no ppi_py
        ppi_py_module()  # a missing extra is said before any work
    options = options or ContractOptions()
    named, sources = _read(runs)
    chosen = tuple(options.given())
    common = {"exploratory": exploratory, "alpha": alpha, "level": level, "interval": interval}
    if frozen is not None:
        llm_labels = read_grades(llm, "llm", conflicting_grades).judgments if llm else None
        result = set_estimate(frozen, named, split=split, metrics=list(metrics), pairs=list(pairs) or None,
                              planned=planned, options=options, override_contract=override_contract,
                              llm_labels=llm_labels, other_judge=other_judge, sources=sources, **common)
        if result is None:
            raise InputError(NO_LLM_PART, os.fspath(set_path))
        return result
    contract = options.applied_to()[0]
    human_grades = read_grades(human, "human", conflicting_grades)
    llm_grades = read_grades(llm, "llm", conflicting_grades)
    if draws is not None:
        return simulate(named, human_grades, llm_grades, slice_size=slice_size, draws=draws,
                        metrics=metrics or (DEFAULT_METRIC,), contract=contract, pairs=list(pairs) or None,
                        level=level, interval=interval, seed=seed, progress=progress, ensemble=ensemble,
                        chosen=chosen, sources=sources)
    caveats = []
    if ensemble:
        llm_grades, note = ensemble_of(llm_grades, human_grades)
        caveats.append(note.removeprefix("note: "))
    return estimate_runs(named, human_grades, llm_grades, read_slice(slice_path), metrics=metrics or (DEFAULT_METRIC,),
                         contract=contract, pairs=pairs, family=ComparisonFamily.of(len(pairs), planned=planned),
                         record_source=os.fspath(slice_path), caveats=caveats, chosen=chosen, sources=sources,
                         **common)


def _documents(runs: Sequence[FilePath], *, llm: Sequence[FilePath], human: Sequence[FilePath],
               slice_path: FilePath | None, set_path: FilePath | None, metrics: Sequence[str],
               pairs: Sequence[tuple[str, str]], planned: int | None, exploratory: bool, alpha: float, level: float,
               draws: int | None, slice_size: int | None, seed: int, conflicting_grades: str,
               options: ContractOptions | None, sample_path: FilePath | None, no_llm: bool, budget: float | None,
               progress: Callable[[Iterable], Iterable], interval: str = "t",
               override_contract: bool = False, split: str = "test") -> DocumentReport | DocumentSimulation:
    """The document design (:mod:`evalset.estimate.documents.modes`), its inputs checked against the slice design's."""
    if set_path is not None:
        if sample_path is not None or draws is not None or llm or human or no_llm:
            raise InputError("a set frozen with a document sample holds its record and its grades: give the set "
                             "alone (no --sample, --simulate, --llm, --human or --no-llm)")
        frozen = load_set(set_path)
        if frozen.sample is None:
            raise InputError("the set records no document sample (freeze --sample): it is estimated by the query "
                             "slice design (no --design documents)", os.fspath(set_path))
        named, sources = _read(runs)
        return set_estimate(frozen, named, split=split, metrics=list(metrics), pairs=list(pairs) or None,
                            planned=planned, exploratory=exploratory, alpha=alpha, level=level, interval=interval,
                            options=options, override_contract=override_contract, sources=sources)
    if interval != "t" or override_contract:
        raise InputError("the document design's intervals are its own (\"this set\" and \"new queries\") and it reads "
                         "no set: give no --interval or --override-contract")
    if slice_path is not None or slice_size is not None:
        raise InputError("the document design reads a sample record (--sample), not a slice: give no --slice or "
                         "--slice-size")
    if (sample_path is None) == (draws is None):
        raise InputError("give the document design one of: a sample record (an estimate); a number of simulated "
                         "samples and a budget (a validation)")
    if draws is None and budget is not None:
        raise InputError("--budget goes with --simulate (the sample record holds its own budget)")
    check_settings(alpha=alpha, level=level, planned=planned, pairs=pairs)
    options = options or ContractOptions()
    named, sources = _read(runs)
    common = {"human": human, "llm": llm, "no_llm": no_llm, "metrics": metrics, "level": level,
              "conflicting_grades": conflicting_grades, "contract": options.applied_to()[0],
              "chosen": tuple(options.given()), "sources": sources}
    if draws is not None:
        return document_validation(named, draws=draws, budget=budget, seed=seed, progress=progress, **common)
    return document_estimate(named, sample_path=sample_path, pairs=pairs, planned=planned, exploratory=exploratory,
                             alpha=alpha, **common)


def _read(runs: Sequence[FilePath]) -> tuple[dict, dict[str, str]]:
    """The runs (files or folders) read, by name, and each one's file (named when a run is refused)."""
    files = {name: os.fspath(path) for name, path in expand_run_paths(runs).items()}
    return {name: read_run(path) for name, path in files.items()}, files
