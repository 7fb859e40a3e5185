"""Per-query values of runs: the one door through which every analysis scores a run.

Conventions
-----------
- Runs come as files or folders of run files (:func:`evalset.io.trec.expand_run_paths`) or held in Python: frames,
  ir_measures' and pytrec_eval's shapes (:func:`evalset.io.frames.run_frame`); a big file
  is streamed in blocks of whole queries (:func:`evalset.metrics.evaluate_run_files`, one decision:
  :func:`evalset.io.runstream.streams`), a small one read whole: the values are the same.
- Metrics are kept as spelled (``ndcg@10``, ``P_10``); with ``judged=True`` ``judged@k`` is placed beside every
  ``nDCG@k`` that is not already asked for, so that a pool bias is visible.
- A run that shares no query with the judgments is refused: every value would be a zero (or undefined) that
  says nothing of the run; it is almost always an id mismatch.
- A mean is over the defined queries (:mod:`evalset.stats.strata`); on a set, means also come per stratum and
  across strata, and a run's headline mean is the traffic-weighted one when the set weights by traffic.
- What the engine left out is counted per run (:attr:`PerQuery.tables`' ``attrs``): repeated documents, queries
  without judgments, judged queries missing from the run, unjudged documents removed (condensed).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from evalset.contract import reads_ranks
from evalset.errors import InputError
from evalset.evaluation.scope import Evaluation
from evalset.io.frames import RunLike, run_frame
from evalset.io.runstream import first_query_ids
from evalset.io.trec import expand_run_paths, read_run
from evalset.metrics import Measure, evaluate_run_files, evaluate_runs, expand_measures, parse_measure
from evalset.metrics.relstring import relstrings
from evalset.metrics.trec_eval_names import asked_lines, asks_relstring
from evalset.stats.strata import MeanSummary, mean_summary, on_summary_scale, stratified_summary

Run = RunLike | str | os.PathLike
Runs = Mapping[str, Run] | Sequence[str | os.PathLike]


@dataclass(frozen=True)
class PerQuery:
    """Runs scored per query: the measures by spelling, and one table per run (indexed by query id, a column
    per measure named ``str(measure)``, ``attrs`` counting what was left out)."""

    evaluation: Evaluation
    measures: dict[str, Measure]
    tables: dict[str, pd.DataFrame]
    relstrings: dict[str, pd.Series] = field(default_factory=dict)  # trec_eval's, when asked (metrics/relstring)
    trec_eval_lines: tuple[str, ...] = ()  # trec_eval's runid and num_q, when asked (metrics/trec_eval_names)

    @property
    def runs(self) -> list[str]:
        return list(self.tables)

    def column(self, run: str, metric: str) -> pd.Series:
        """One run's values of ``metric`` (a spelling asked for), indexed by query id; NaN where undefined."""
        return self.tables[run][str(self.measures[metric])]

    def values(self, metric: str) -> pd.DataFrame:
        """``metric``'s values of every run: queries x runs."""
        return pd.DataFrame({run: self.column(run, metric) for run in self.tables})

    def analysed(self, run: str, metric: str) -> pd.Series:
        """One run's values of ``metric`` on the scale a statistic over queries takes (a comparison's mean, test
        and interval): the values, or for a measure summarised geometrically (gm_ap, gm_bpref) their logs,
        log(max(v, 0.00001)), whose mean is the log of the summary (:func:`evalset.stats.strata.on_summary_scale`)."""
        return on_summary_scale(self.column(run, metric), self.measures[metric].kind.summary)

    def analysed_values(self, metric: str) -> pd.DataFrame:
        """:meth:`analysed` of every run: queries x runs."""
        return pd.DataFrame({run: self.analysed(run, metric) for run in self.tables})

    def summary(self, run: str, metric: str) -> MeanSummary:
        """The mean over defined queries; on a set also per stratum and across strata (module docstring)."""
        values, rule = self.column(run, metric), self.measures[metric].kind.summary  # gm_ap: geometric
        evaluation = self.evaluation
        if evaluation.frozen is None:
            return mean_summary(values, rule)
        return stratified_summary(values, evaluation.queries, evaluation.frozen.contract.weighting, rule)

    def mean(self, run: str, metric: str) -> float:
        """The run's headline mean of ``metric``: traffic-weighted on a set weighted by traffic, else plain."""
        summary = self.summary(run, metric)
        return float(summary.weighted_mean if self.evaluation.weighted else summary.mean)

    def notes(self, run: str) -> dict[str, int]:
        """What the engine left out of ``run`` (module docstring)."""
        return dict(self.tables[run].attrs)

    def long(self) -> pd.DataFrame:
        """``run, query_id, metric, value``: every query's value, metrics spelled as given."""
        parts = []
        for name, table in self.tables.items():
            renamed = table[[str(m) for m in self.measures.values()]].set_axis(list(self.measures), axis=1)
            long = renamed.reset_index().melt(id_vars="query_id", var_name="metric", value_name="value")
            parts.append(long.assign(run=name))
        return pd.concat(parts, ignore_index=True)[["run", "query_id", "metric", "value"]]


def refuse_geometric(metric: str, stage: str) -> None:
    """Refuse a measure summarised geometrically (gm_ap, gm_bpref) in a ``stage`` whose figures are arithmetic
    means of per-query values (one line naming where it is taken)."""
    measure = parse_measure(metric)
    if measure.kind.summary == "geometric":
        raise InputError(f"{metric} is a geometric mean over queries; {stage} rests on arithmetic means of "
                         f"per-query values: use {measure.name.removeprefix('gm_')} here, or compare {metric} (it "
                         "tests the runs on log(max(value, 0.00001)) per query)")


def metric_spellings(metrics: Sequence[str], judged: bool = True, trec_eval_version: int = 10) -> dict[str, Measure]:
    """Spelling as given -> Measure (a trec_eval nickname, as that ``trec_eval_version`` has it, or ``NAME.PARAMS``
    spelled out as its measures: :mod:`evalset.metrics.trec_eval_names`); with ``judged``, judged@k beside every
    nDCG@k (pool bias made visible)."""
    given = {text: parse_measure(text) for text in expand_measures(metrics, trec_eval_version)}
    spelled: dict[str, Measure] = {}
    for text, measure in given.items():
        spelled[text] = measure
        beside = Measure("judged", measure.cutoff) if judged and measure.name == "ndcg" and measure.cutoff else None
        if beside and beside not in given.values() and beside not in spelled.values():
            spelled[str(beside)] = beside
    return spelled


def per_query_values(evaluation: Evaluation, runs: Runs, metrics: Sequence[str] = (), *, judged: bool = False,
                     stream: bool | None = None, max_retrieved: int | None = None) -> PerQuery:
    """Score ``runs`` (name -> file, frame or run held in Python: :func:`evalset.io.frames.run_frame`; or files and
    folders of runs) per query on ``metrics`` (default: the headline), against the evaluation's prepared qrels.
    ``stream`` forces streaming either way; ``max_retrieved``, where each ranking ends (trec_eval's ``-M``):
    :func:`evalset.metrics.evaluate`'s. The trec_eval version whose rules the measures follow is the contract's."""
    named = runs if isinstance(runs, Mapping) else expand_run_paths(runs)
    if not named:
        raise InputError("no run to score")
    spelled = metric_spellings(metrics or (evaluation.headline,), judged, evaluation.contract.trec_eval_version)
    measures = list(spelled.values())
    files = {name: run for name, run in named.items() if isinstance(run, str | os.PathLike)}
    frames = {name: run_frame(run, f"run {name}") for name, run in named.items() if name not in files}
    tables = evaluate_runs(frames, evaluation.prepared, measures, max_retrieved=max_retrieved) if frames else {}
    if files:
        tables |= evaluate_run_files(files, evaluation.prepared, measures, stream=stream, max_retrieved=max_retrieved)
    tables = {name: tables[name] for name in named}
    _refuse_runs_without_judged_queries(evaluation, tables, {**named, **frames})
    pictures = {}
    if asks_relstring(metrics):  # read again: a picture of each ranking, not a measure (evalset.metrics.relstring)
        rank = reads_ranks(evaluation.contract.ties)
        pictures = {name: relstrings(frames[name] if name in frames else read_run(files[name], rank=rank),
                                     evaluation.prepared, max_retrieved) for name in named}
    return PerQuery(evaluation, spelled, tables, pictures, asked_lines(metrics))


def _refuse_runs_without_judged_queries(evaluation: Evaluation, tables: Mapping[str, pd.DataFrame],
                                        runs: Mapping[str, Run]) -> None:
    for name, table in tables.items():
        missing = table.attrs.get("missing_queries", 0)
        shared = len(table) - missing if evaluation.contract.missing == "zero" else len(table)
        if shared == 0:
            run = runs[name]
            first = pd.unique(run["query_id"])[:3] if isinstance(run, pd.DataFrame) else first_query_ids(run, 3)
            run_ids = ", ".join(map(str, first)) or "none: the run is empty"
            judged = ", ".join(map(str, pd.unique(evaluation.qrels["query_id"])[:3]))
            raise InputError(f"run {name} shares no query with the judgments: its queries ({run_ids}, ...) are none "
                             f"of the judged ones ({judged}, ...)", evaluation.source)
