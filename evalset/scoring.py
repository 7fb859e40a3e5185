"""Scoring runs on qrels or on a frozen set (through the evaluation room, :mod:`evalset.evaluation`): the score
table and its summaries, the comparisons, two versions of a set side by side, and their printed forms.

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

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.evaluation import Evaluation, PerQuery, per_query_values, unusual_grades, unusual_grades_note
from evalset.evaluation.values import Runs
from evalset.io.setfolder import FrozenSet, contract_changes, diff_sets, load_set
from evalset.metrics import Measure, parse_measure
from evalset.render import UNDEFINED, json_safe, number, text_table
from evalset.stats.family import ComparisonFamily
from evalset.stats.paired import Comparison, format_comparison
from evalset.stats.strata import MeanSummary, StratifiedSummary

DEFAULT_METRICS = ("ndcg@10", "ap", "rr", "p@10")
"""What ``score`` reports on qrels when no metric is asked for (on a set: its headline metric)."""


# ------------------------------------------------------------------------------------------------- scores
@dataclass(frozen=True)
class RunScores:
    """Runs scored: their per-query values, and each run's summary per metric spelling."""

    per_query: PerQuery
    summaries: dict[str, dict[str, MeanSummary]]

    @property
    def evaluation(self) -> Evaluation:
        return self.per_query.evaluation

    @property
    def measures(self) -> dict[str, Measure]:
        return self.per_query.measures

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        return self.per_query.tables


def score_runs(evaluation: Evaluation, runs: Runs, metrics: Sequence[str] = (), *,
               stream: bool | None = None) -> RunScores:
    """Score ``runs`` (name -> file or frame, or files and folders of runs) on ``metrics`` (default: the set's
    headline, else :data:`DEFAULT_METRICS`), judged@k beside every nDCG@k."""
    default = (evaluation.headline,) if evaluation.frozen else DEFAULT_METRICS
    values = per_query_values(evaluation, runs, metrics or default, judged=True, stream=stream)
    summaries = {run: {text: values.summary(run, text) for text in values.measures} for run in values.runs}
    return RunScores(values, summaries)


def _cell(summary: MeanSummary, mean: float | None = None) -> str:
    value = number(summary.mean if mean is None else mean)
    return value if summary.undefined == 0 else f"{value} ({summary.defined}/{summary.undefined})"


def format_score_table(scores: RunScores) -> str:
    """The score table: one row per run, one column per metric, then the set, the split and the contract."""
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


def format_per_query(scores: RunScores) -> str:
    """Every query's value, one row per run and query, one column per metric."""
    wide = scores.per_query.long().pivot_table(index=["run", "query_id"], columns="metric", values="value",
                                               sort=False, dropna=False)
    return wide[list(scores.measures)].to_string(float_format=lambda v: f"{v:.4f}", na_rep=UNDEFINED)


def score_document(scores: RunScores, per_query: bool = False) -> dict[str, Any]:
    """The JSON of ``evalset score --format json`` (a documented contract)."""
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
    if per_query:
        document["per_query"] = [{"run": row.run, "query_id": row.query_id, "metric": row.metric,
                                  "value": json_safe(row.value)} for row in scores.per_query.long().itertuples()]
    return document


def format_score_tsv(scores: RunScores, per_query: bool = False) -> str:
    """``run, metric, mean, defined, undefined[, weighted_mean]``, or with ``per_query`` the long per-query
    table ``run, query_id, metric, value`` (an undefined value is empty)."""
    if per_query:
        return scores.per_query.long().to_csv(sep="\t", index=False, na_rep="")
    rows = []
    for name, by_metric in scores.summaries.items():
        for text, summary in by_metric.items():
            entry = summary.to_dict()
            rows.append({"run": name, "metric": text, **{k: entry[k] for k in ("mean", "defined", "undefined")},
                         **({"weighted_mean": entry["weighted_mean"]} if "weighted_mean" in entry else {})})
    return pd.DataFrame(rows).to_csv(sep="\t", index=False, na_rep="")


def score_notes(scores: RunScores) -> list[str]:
    """One note per run about what was left out (repeated documents, unjudged or missing queries, and the unjudged
    documents a condensed contract removed from the rankings)."""
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


# -------------------------------------------------------------------------------------------- comparisons
@dataclass(frozen=True)
class Comparisons:
    """The comparisons of a baseline with each candidate, and the per-query values they rest on."""

    results: list[Comparison]
    per_query: PerQuery

    @property
    def evaluation(self) -> Evaluation:
        return self.per_query.evaluation


def compare_runs(evaluation: Evaluation, runs: Runs, metric: str | None = None, *, planned: int | None = None,
                 exploratory: bool = False, alpha: float = 0.05, permutations: int = 9999,
                 seed: int = DEFAULT_SEED, stream: bool | None = None) -> Comparisons:
    """Compare the first run (the baseline) with each other one on ``metric`` (default: the headline).

    The comparisons form one :class:`~evalset.stats.family.ComparisonFamily` (the others asked for, the set's
    planned list and its log on the split; ``planned`` overrides the planned count); on a set each comparison is
    appended to the set's comparison log as it is made.
    """
    metric = metric or evaluation.headline
    values = per_query_values(evaluation, runs, [metric], stream=stream)
    baseline, *candidates = values.runs
    if not candidates:
        raise InputError(f"no candidate run to compare with the baseline {baseline}")
    family = ComparisonFamily.of(len(candidates), planned=planned, frozen=evaluation.frozen, split=evaluation.split)
    results = [family.compare(values.column(baseline, metric), values.column(name, metric), baseline_name=baseline,
                              candidate_name=name, metric=metric, exploratory=exploratory, alpha=alpha,
                              permutations=permutations, seed=seed) for name in candidates]
    return Comparisons(results, values)


def format_comparisons(comparisons: Comparisons) -> str:
    """The comparisons one after the other, and the contract overridden, if it was."""
    text = "\n\n".join(format_comparison(result) for result in comparisons.results)
    overridden = comparisons.evaluation.overridden
    return text + ("\nCONTRACT OVERRIDDEN: " + ", ".join(overridden) if overridden else "")


# --------------------------------------------------------------------------------------- two set versions
@dataclass(frozen=True)
class VersionDiff:
    """Two versions of a set: the judgments that changed (:func:`evalset.sets.diff_sets`), the contract fields
    that differ (:func:`evalset.sets.contract_changes`) and, when runs were given, their scores under each
    version (``run, old, new, change``; each version's own headline metric and contract; ``change`` is NaN
    when the headline metrics differ)."""

    old: FrozenSet
    new: FrozenSet
    changes: pd.DataFrame
    scores: pd.DataFrame | None = None
    contract: list[tuple[str, Any, Any]] = field(default_factory=list)


def diff_versions(old_path: str | os.PathLike, new_path: str | os.PathLike,
                  runs: Runs | None = None, split: str = "all") -> VersionDiff:
    """The judgments changed between two versions, their contract differences, and how ``runs`` move: each
    run's score on each version under that version's own contract (headline metric, evaluation contract,
    weighting) and queries of ``split`` (the weighted mean)."""
    old, new = load_set(old_path), load_set(new_path)
    differ = contract_changes(old, new)
    if not runs:
        return VersionDiff(old, new, diff_sets(old, new), contract=differ)
    scores = {}
    for frozen in (old, new):
        values = per_query_values(Evaluation.on_set(frozen, split), runs)
        scores[frozen.version] = {name: values.summary(name, frozen.contract.headline).weighted_mean
                                  for name in values.runs}
    table = pd.DataFrame({"run": list(scores[old.version]), "old": list(scores[old.version].values()),
                          "new": [scores[new.version][name] for name in scores[old.version]]})
    same_metric = parse_measure(old.contract.headline) == parse_measure(new.contract.headline)
    change = table["new"] - table["old"] if same_metric else float("nan")
    return VersionDiff(old, new, diff_sets(old, new), table.assign(change=change), differ)


def format_version_diff(diff: VersionDiff, shown: int = 50) -> str:
    """The contract differences first (each version is then scored under its own), the counts of judgments
    added, removed and changed, the first ``shown`` of them, and the runs' scores."""
    old, new, changes = diff.old, diff.new, diff.changes
    lines = []
    if diff.contract:
        lines.append(f"CONTRACT CHANGED between {old.version} and {new.version}: "
                     + ", ".join(f"{key} {before} -> {after}" for key, before, after in diff.contract)
                     + "; each version is scored under its own contract")
    counts = changes["change"].value_counts()
    lines.append(f"{old.name} {old.version} -> {new.name} {new.version}: {counts.get('added', 0)} added, "
                 f"{counts.get('removed', 0)} removed, {counts.get('changed', 0)} changed")
    if len(changes):
        lines.append(changes.head(shown).to_string(index=False))
        if len(changes) > shown:
            lines.append(f"... and {len(changes) - shown} more")
    if diff.scores is not None:
        same_metric = parse_measure(old.contract.headline) == parse_measure(new.contract.headline)
        header = ["run", f"{old.contract.headline} {old.version}", f"{new.contract.headline} {new.version}"]
        rows = [[row.run, number(row.old), number(row.new), *([number(row.change, sign=True)] if same_metric else [])]
                for row in diff.scores.itertuples()]
        lines.append("\n" + "\n".join(text_table([header + (["change"] if same_metric else []), *rows])))
        if not same_metric:
            lines.append(f"no change column: the headline metrics differ ({old.contract.headline} in {old.version}, "
                         f"{new.contract.headline} in {new.version})")
        elif diff.contract:
            lines.append("the change comes from the contract change (" + ", ".join(key for key, _, _ in diff.contract)
                         + ") as well as from the judgments")
    return "\n".join(lines)
