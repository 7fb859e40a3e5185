"""Scoring runs on qrels or on a frozen set (through the evaluation room, :mod:`evalset.evaluation`): the score
table and its summaries, and their printed forms.

Conventions
-----------
- The contract in force, the split and the per-query values are the evaluation room's: see
  :class:`evalset.evaluation.Evaluation` and :func:`evalset.evaluation.per_query_values`.
- ``judged@k`` is placed after every ``nDCG@k`` that is not already beside it, so that a pool bias is visible.
- A mean is over the defined queries (:mod:`evalset.stats.strata`); on a set, means also come per stratum and
  across strata, and the score table shows the traffic-weighted mean when the set weights by traffic.
- An undefined value prints as ``undef`` (:data:`evalset.render.UNDEFINED`), is ``null`` in JSON and empty in TSV.
- Comparisons are made in the family of :mod:`evalset.stats.family` (on a set: logged, and counted in the
  threshold).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalset.contract import DEFAULT_METRICS
from evalset.evaluation import Evaluation, PerQuery, per_query_values, unusual_grades, unusual_grades_note
from evalset.evaluation.values import Runs
from evalset.metrics import Measure
from evalset.render import UNDEFINED, json_safe, number, text_table
from evalset.stats.strata import MeanSummary, StratifiedSummary


# ------------------------------------------------------------------------------------------------- scores
@dataclass(frozen=True)
class RunScores:
    """Runs scored: their per-query values, and each run's summary per metric spelling."""

    per_query: PerQuery
    summaries: dict[str, dict[str, MeanSummary]]
    show_per_query: bool = False  # every query's value in the printed forms too

    def to_text(self) -> str:
        """The score table (and every query's value with ``show_per_query``), as ``evalset score`` prints it."""
        table = _score_table(self)
        return table + "\n\n" + _per_query_table(self) if self.show_per_query else table

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset score --format json`` (a documented contract)."""
        return _document(self)

    def to_tsv(self) -> str:
        """``run, metric, mean, defined, undefined[, weighted_mean]``, or with ``show_per_query`` the long
        per-query table ``run, query_id, metric, value`` (an undefined value is empty)."""
        return _tsv(self)

    @property
    def notes(self) -> list[str]:
        """One note per run about what was left out (repeated documents, unjudged or missing queries, the
        unjudged documents a condensed contract removed), and one on unusual grades."""
        return _notes(self)

    @property
    def evaluation(self) -> Evaluation:
        return self.per_query.evaluation

    @property
    def measures(self) -> dict[str, Measure]:
        return self.per_query.measures

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        return self.per_query.tables


def score_runs(evaluation: Evaluation, runs: Runs, metrics: Sequence[str] = (), *, per_query: bool = False,
               stream: bool | None = None) -> RunScores:
    """Score ``runs`` (name -> file or frame, or files and folders of runs) on ``metrics`` (default: the set's
    headline, else :data:`DEFAULT_METRICS`), judged@k beside every nDCG@k; ``per_query``: print every query's
    value too."""
    default = (evaluation.headline,) if evaluation.frozen else DEFAULT_METRICS
    values = per_query_values(evaluation, runs, metrics or default, judged=True, stream=stream)
    summaries = {run: {text: values.summary(run, text) for text in values.measures} for run in values.runs}
    return RunScores(values, summaries, per_query)


def _cell(summary: MeanSummary, mean: float | None = None) -> str:
    value = number(summary.mean if mean is None else mean)
    return value if summary.undefined == 0 else f"{value} ({summary.defined}/{summary.undefined})"


def _score_table(scores: RunScores) -> str:
    """One row per run, one column per metric, then the set, the split and the contract."""
    evaluation, frozen, summaries = scores.evaluation, scores.evaluation.frozen, scores.summaries
    metrics = list(scores.measures)
    weighted = frozen is not None and frozen.contract.weighting == "traffic"

    def headline_cell(summary: MeanSummary) -> str:
        return _cell(summary, summary.weighted_mean if weighted else None)

    lines = text_table([["run", *metrics], *[[name, *(headline_cell(s[m]) for m in metrics)]
                                             for name, s in summaries.items()]])
    if frozen is not None:
        first: StratifiedSummary = next(iter(summaries.values()))[metrics[0]]
        if len(first.strata) > 1:
            lines.append(f"\n{metrics[0]} per stratum (traffic share):")
            header = ["run", *(f"{s} ({first.strata[s].share:.3f})" for s in first.strata), "weighted", "unweighted"]
            rows = [[name, *(_cell(s[metrics[0]].strata[stratum]) for stratum in first.strata),
                     number(s[metrics[0]].weighted_mean), _cell(s[metrics[0]])] for name, s in summaries.items()]
            lines += text_table([header, *rows])
        splits = ",".join(sorted(evaluation.queries["split"].unique()))
        averaging = "traffic-weighted across strata" if weighted else "unweighted"
        lines.append(f"\nset {frozen.path} ({frozen.manifest['name']} {frozen.version}), split {splits}, "
                     f"{len(next(iter(scores.tables.values())))} judged queries; means are {averaging}")
        if evaluation.overridden:
            lines.append("CONTRACT OVERRIDDEN: " + ", ".join(evaluation.overridden))
    else:
        lines.append(f"\n{len(next(iter(scores.tables.values())))} queries scored")
    lines.append("contract: " + " ".join(f"{k}={v}" for k, v in evaluation.contract.to_dict().items()))
    lines.append("a mean is over defined queries; (n/m) = defined/undefined when some are undefined")
    return "\n".join(lines)


def _per_query_table(scores: RunScores) -> str:
    """Every query's value, one row per run and query, one column per metric."""
    wide = scores.per_query.long().pivot_table(index=["run", "query_id"], columns="metric", values="value",
                                               sort=False, dropna=False)
    return wide[list(scores.measures)].to_string(float_format=lambda v: f"{v:.4f}", na_rep=UNDEFINED)


def _document(scores: RunScores) -> dict[str, Any]:
    evaluation = scores.evaluation
    document: dict[str, Any] = {
        "contract": evaluation.contract.to_dict(),
        "runs": {name: {text: s.to_dict() for text, s in by_metric.items()}
                 for name, by_metric in scores.summaries.items()},
        "notes": {name: dict(table.attrs) for name, table in scores.tables.items()},
    }
    unusual, _ = unusual_grades(evaluation)
    if unusual:  # said only when there are some, so that the document of good input keeps its shape
        for notes in document["notes"].values():
            notes["unusual_grades"] = {str(g): n for g, n in unusual.items()}
    if evaluation.frozen is not None:
        document["set"] = {"path": str(evaluation.frozen.path), "split": evaluation.split,
                           "weighting": evaluation.frozen.contract.weighting,
                           "contract_overridden": list(evaluation.overridden)}
    if scores.show_per_query:
        document["per_query"] = [{"run": row.run, "query_id": row.query_id, "metric": row.metric,
                                  "value": json_safe(row.value)} for row in scores.per_query.long().itertuples()]
    return document


def _tsv(scores: RunScores) -> str:
    if scores.show_per_query:
        return scores.per_query.long().to_csv(sep="\t", index=False, na_rep="")
    rows = []
    for name, by_metric in scores.summaries.items():
        for text, summary in by_metric.items():
            entry = summary.to_dict()
            rows.append({"run": name, "metric": text, **{k: entry[k] for k in ("mean", "defined", "undefined")},
                         **({"weighted_mean": entry["weighted_mean"]} if "weighted_mean" in entry else {})})
    return pd.DataFrame(rows).to_csv(sep="\t", index=False, na_rep="")


def _notes(scores: RunScores) -> list[str]:
    said_of_qrels = []
    qrels = scores.evaluation.qrels
    if qrels.attrs.get("collapsed_duplicates"):
        said_of_qrels.append(f"{qrels.attrs['collapsed_duplicates']} repeated qrels lines collapsed")
    texts = {"duplicates_removed": "repeated documents counted once", "unjudged_queries": "queries with no qrels "
             "ignored", "missing_queries": "judged queries absent from the run",
             "unjudged_removed": "unjudged documents removed before scoring (condensed)"}
    notes = []
    for name, table in scores.tables.items():
        said = [f"{table.attrs[key]} {text}" for key, text in texts.items() if table.attrs.get(key)] + said_of_qrels
        if said:
            notes.append(f"note: {name}: " + "; ".join(said))
    unusual = unusual_grades_note(scores.evaluation)
    return notes + ([unusual] if unusual else [])
