"""Does the estimate hold on the user's own data? With human grades for every query (a pilot, or public data),
draw many random slices, estimate from each as ``estimate`` would, and count how often the intervals cover the
mean under the full human grades.

Conventions
-----------
- The set is the queries with a defined value under the full human grades for every run (the others are left
  out and counted). Each draw is a uniform slice of ``slice_size`` of them, without replacement, from one seeded
  ``numpy`` Generator; the other queries are the unlabelled set, graded by the LLM only.
- The truth of a column (a run, or a paired difference) is its mean over the set under the full human grades.
- Reported (:class:`~evalset.estimate.simulate.Validation`) per metric (each on the same slices) and kind
  (single-run means; paired differences, by default every pair of runs), for three intervals: PPI++'s (as
  ``estimate`` computes it), the same centre and standard error with the normal quantile, and the human slice's
  alone, with the bias and RMSE of the estimate each is centred on (PPI++'s; the slice's mean, ``bias_human``).
  Beside (``beside``): per metric and kind, the PPI++ width over the human-only width (their mean widths' ratio),
  and ``outside_range``, the share of intervals reaching outside the measure's range (0: they are clipped to it,
  :mod:`evalset.stats.ppi`).
- A query a run lacks follows the missing-queries rule as the estimate's (:class:`evalset.estimate.inputs.Missing`;
  ``chosen`` and ``sources`` as :func:`evalset.estimate.estimate_runs`'): refused unless chosen; ``zero`` scores it
  0, said in a note; ``skip`` is refused (a simulation's columns are over every query of the set).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.inputs import (
    chosen_conventions,
    ensemble_of,
    missing_rule,
    query_values,
    refuse_skip,
    values_by_run,
)
from evalset.estimate.simulate import KINDS, Drawn, Validation, simulate, summarize
from evalset.estimate.sources import Grades
from evalset.metrics.measures import measure_bounds
from evalset.params import POSITIVE_INT, check
from evalset.seeds import generator
from evalset.stats.ppi import classical_columns, ppi_columns, quantile
from evalset.stats.quantiles import around

Predicted = np.ndarray | Callable[[np.ndarray], np.ndarray]
"""The LLM's per-query values (queries x columns), or the map from a slice (row indices) to them (an ensemble
calibrated on the slice)."""


def _draws(human: np.ndarray, llm: Predicted, slice_size: int, draws: int, rng: np.random.Generator, level: float,
           interval: str, progress: Callable[[Iterable], Iterable], bounds: tuple[float, float],
           difference: bool) -> tuple[pd.DataFrame, dict[str, float]]:
    """One kind's columns' figures over ``draws`` slices (the one simulation,
    :func:`~evalset.estimate.simulate.simulate`): PPI++'s interval, the same centre and standard error with the
    normal quantile, the human slice's; and the kind's own figures (module docstring)."""
    normal = float(quantile(level, "normal", np.inf))

    def simulate_one(_: int) -> dict[str, Drawn]:
        order = rng.permutation(len(human))  # the kinds' draws follow each other on one Generator
        labelled, unlabelled = order[:slice_size], order[slice_size:]
        predicted = llm(labelled) if callable(llm) else llm
        ppi = ppi_columns(human[labelled], predicted[labelled], predicted[unlabelled], level=level,
                          interval=interval, bounds=bounds, difference=difference)
        classical = classical_columns(human[labelled], level=level, interval=interval, bounds=bounds,
                                      difference=difference, reference=predicted)
        return {"ppi": (ppi["estimate"], {"ppi": (ppi["low"], ppi["high"]),
                                          "ppi_normal": around(ppi["estimate"], ppi["se"], normal)}, {}),
                "human": (classical["estimate"], {"human": (classical["low"], classical["high"])}, {})}

    truth = human.mean(axis=0)
    tallies = simulate(simulate_one, range(draws), {"ppi": truth, "human": truth}, progress)
    human_only = tallies["human"].figures().drop(columns=["name", "truth"])
    own = ["estimate_mean", "estimate_sd", "bias", "bias_mc", "rmse", "rmse_mc"]
    figures = tallies["ppi"].figures().join(human_only[own].add_suffix("_human")).join(human_only.drop(columns=own))
    width_of_range = bounds[1] - bounds[0]
    lowest, highest = (-width_of_range, width_of_range) if difference else bounds
    outside = [np.mean((low < lowest) | (high > highest)) for low, high in (tallies["ppi"].ends("ppi"),
                                                                          tallies["human"].ends("human"))]
    return figures, {"width_ratio": float(figures["width_ppi"].mean() / figures["width_human"].mean()),
                     "outside_range": float(np.mean(outside))}


def simulate_slices(runs: Mapping[str, pd.DataFrame], human: Grades, llm: Grades, *, slice_size: int, draws: int = 1000,
                    metrics: Sequence[str] = (DEFAULT_METRIC,), contract: EvaluationContract | None = None,
                    pairs: Sequence[tuple[str, str]] | None = None, level: float = 0.95, interval: str = "t",
                    seed: int = DEFAULT_SEED, progress: Callable[[Iterable], Iterable] = iter,
                    ensemble: bool = False, chosen: Collection[str] | None = None,
                    sources: Mapping[str, object] | None = None) -> Validation:
    """Coverage of the full-human mean by the PPI++ and human-only intervals over ``draws`` random slices of
    ``slice_size`` queries (module docstring), for each of ``metrics`` on the same slices (one Generator from
    ``seed`` each); ``pairs`` (baseline, candidate) default to every pair of runs. ``progress`` wraps the draws of
    each kind (e.g. ``tqdm``). With ``ensemble``, the LLM files' judges are combined into an ensemble calibrated on
    each drawn slice's human grades (:func:`~evalset.estimate.inputs.ensemble_of`)."""
    chosen = chosen_conventions(contract, chosen)
    contract = contract or EvaluationContract()
    check("the number of simulated slices", draws, POSITIVE_INT)
    if not metrics:
        raise InputError("no metric to simulate")
    for metric in metrics:
        measure_bounds(metric)  # an unbounded measure refused before any work
    besides, columns, caveats, settings = [], [], [], {}
    for metric in metrics:
        beside, figures, said, first = _simulate_metric(
            runs, human, llm, slice_size=slice_size, draws=draws, metric=metric, contract=contract, pairs=pairs,
            level=level, interval=interval, seed=seed, progress=progress, ensemble=ensemble, chosen=chosen,
            sources=sources)
        besides.append(beside)
        columns.append(figures)
        caveats += [line for line in said if line not in caveats]
        settings = settings or first  # the first metric's queries: each row counts its own
    settings = {**settings, "metrics": list(metrics)}
    settings.pop("metric")
    beside = pd.concat(besides, ignore_index=True)
    columns = pd.concat(columns, ignore_index=True)
    table = summarize(columns, {"ppi": f"PPI++ ({interval})", "ppi_normal": "PPI++ (normal)", "human": "human-only"},
                      {"human": "_human"})
    return Validation("slice", _heading(settings), table, columns, beside, _said(beside), settings, caveats)


def _simulate_metric(runs: Mapping[str, pd.DataFrame], human: Grades, llm: Grades, *, slice_size: int, draws: int,
                     metric: str, contract: EvaluationContract, pairs: Sequence[tuple[str, str]] | None,
                     level: float, interval: str, seed: int, progress: Callable[[Iterable], Iterable],
                     ensemble: bool, chosen: Collection[str],
                     sources: Mapping[str, object] | None
                     ) -> tuple[pd.DataFrame, pd.DataFrame, list[str], dict[str, Any]]:
    """One metric's own figures (a kind each), its columns' figures, caveats and settings (:func:`simulate_slices`)."""
    bounds = measure_bounds(metric)
    query_ids = sorted(human.query_ids)
    scored = query_values(runs, human.qrels, query_ids, metric, contract, chosen)
    caveats = refuse_skip(missing_rule(scored, query_ids, sources)).notes()
    human_values = scored.values(metric).reindex(query_ids)
    undefined = human_values.index[human_values.isna().any(axis=1)]
    if len(undefined):
        caveats.append(f"{metric}: {len(undefined)} queries have no defined value under the human grades and were "
                       "left out")
        human_values = human_values.drop(index=undefined)
    missing = sorted(set(human_values.index) - llm.query_ids)
    if missing:
        raise InputError(f"{len(missing)} human-graded queries have no LLM grade (e.g. {', '.join(missing[:3])}): "
                         "the LLM must grade every query", llm.files[0] if llm.files else None)
    if not 2 <= slice_size < len(human_values):
        raise InputError(f"--size {slice_size}: a slice of {slice_size} queries out of {len(human_values)}; give at "
                         "least 2 and fewer than all")
    llm_values = values_by_run(runs, llm.qrels, list(human_values.index), metric, contract).fillna(0.0)
    names = list(human_values.columns)
    pairs = list(pairs) if pairs is not None else list(itertools.combinations(names, 2))
    unknown = sorted({name for pair in pairs for name in pair} - set(names))
    if unknown:
        pair = next(pair for pair in pairs if unknown[0] in pair)
        raise InputError(f"no run named {unknown[0]} to compare in {pair[0]}:{pair[1]} (runs: "
                         f"{', '.join(sorted(names))})")
    rng = generator(seed)
    predicted: Predicted = llm_values.to_numpy(float)
    if ensemble:
        predicted = _ensemble_values(runs, human, llm, list(human_values.index), names, metric, contract)
        caveats.append("the LLM files' judges are one ensemble, calibrated on each simulated slice's human grades")
    kinds = {"means": (human_values.to_numpy(float), predicted)}
    if pairs:
        base = [names.index(b) for b, _ in pairs]
        cand = [names.index(c) for _, c in pairs]
        kinds["differences"] = (kinds["means"][0][:, cand] - kinds["means"][0][:, base],
                                _columns_difference(predicted, base, cand))
    labels = {"means": names, "differences": [f"{c} - {b}" for b, c in pairs]}
    rows, columns = [], []
    for kind, (h, y) in kinds.items():
        figures, own = _draws(h, y, slice_size, draws, rng, level, interval, progress, bounds, kind == "differences")
        rows.append({"measure": metric, "kind": kind, **own})
        columns.append(figures.assign(measure=metric, kind=kind, name=labels[kind]))
    settings = {"metric": metric, "slice_size": slice_size, "queries": len(human_values), "draws": draws,
                "seed": seed, "level": level, "interval": interval, "runs": len(names), "pairs": len(pairs),
                "human": list(human.files), "llm": list(llm.files), "ensemble": ensemble,
                "contract": contract.to_dict()}
    columns = pd.concat(columns, ignore_index=True)
    return pd.DataFrame(rows), columns[["measure", "kind", *columns.columns[:-2]]], caveats, settings


def _ensemble_values(runs: Mapping[str, pd.DataFrame], human: Grades, llm: Grades, query_ids: list[str],
                     names: list[str], metric: str, contract: EvaluationContract) -> Callable[[np.ndarray], np.ndarray]:
    """The map from a slice (indices into ``query_ids``) to the runs' values under the ensemble calibrated on it."""
    def values(labelled: np.ndarray) -> np.ndarray:
        chosen = {query_ids[i] for i in labelled}
        on_slice = replace(human, judgments=human.judgments[human.judgments["query_id"].isin(chosen)])
        grades, _ = ensemble_of(llm, on_slice)
        return values_by_run(runs, grades.qrels, query_ids, metric, contract).fillna(0.0)[names].to_numpy(float)
    return values


def _columns_difference(predicted: Predicted, base: list[int], cand: list[int]) -> Predicted:
    if callable(predicted):
        return lambda labelled: _columns_difference(predicted(labelled), base, cand)
    return predicted[:, cand] - predicted[:, base]


def _heading(s: dict[str, Any]) -> tuple[str, ...]:
    return (f"{s['draws']} random slices of {s['slice_size']} of {s['queries']} queries (seed {s['seed']}), "
            f"{', '.join(s['metrics'])}, nominal level {s['level']:.4g}; truth: the mean under the full human grades",
            f"human: {', '.join(s['human'])}; LLM: {', '.join(s['llm'])}")


def _said(beside: pd.DataFrame) -> tuple[str, ...]:
    return ("PPI++ width over human-only: " + ", ".join(f"{row.measure} {KINDS[row.kind]} {row.width_ratio:.2f}"
                                                       for row in beside.itertuples()),)
