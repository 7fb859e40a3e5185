"""Scoring runs on qrels or on a frozen set: the contract in force, the measures as spelled, the summaries, the
comparisons, two versions of a set side by side, and their printed forms.

Conventions
-----------
- On qrels, the contract is the options given (the others default). On a frozen set it is the set's recorded
  contract: an option that contradicts it is refused (:class:`~evalset.errors.InputError`) unless
  ``override_contract``, and the contradictions are kept in :attr:`Scoring.overridden` so that the output says
  so. Only the queries of the split are scored.
- ``judged@k`` is placed after every ``nDCG@k`` that is not already beside it, so that a pool bias is visible.
- A mean is over the defined queries (:mod:`evalset.stats.strata`); on a set, means also come per stratum and
  across strata, and the score table shows the traffic-weighted mean when the set weights by traffic.
- An undefined value prints as ``undef`` (:data:`evalset.render.UNDEFINED`), is ``null`` in JSON and empty in TSV.
- Comparisons are made in the family of :mod:`evalset.stats.family` (on a set: logged, and counted in the
  threshold).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalset.contract import DEFAULT_SEED, EvaluationContract
from evalset.errors import InputError
from evalset.io.runstream import first_query_ids
from evalset.io.trec import expand_run_paths, read_qrels
from evalset.metrics import Measure, evaluate_run_files, evaluate_runs, parse_measure
from evalset.render import UNDEFINED, json_safe, number, text_table
from evalset.sets import FrozenSet, contract_changes, diff_sets, load_set, select_split
from evalset.stats.family import ComparisonFamily
from evalset.stats.paired import Comparison, format_comparison
from evalset.stats.strata import MeanSummary, StratifiedSummary, mean_summary, stratified_summary

DEFAULT_METRICS = ("ndcg@10", "ap", "rr", "p@10")
"""What ``score`` reports on qrels when no metric is asked for (on a set: its headline metric)."""


# ------------------------------------------------------------------------------------------------ the contract
@dataclass(frozen=True)
class Scoring:
    """What scoring needs: the contract in force, the qrels, and on a set the set, its split and its queries."""

    contract: EvaluationContract
    qrels: pd.DataFrame
    frozen: FrozenSet | None = None
    split: str | None = None
    queries: pd.DataFrame | None = None
    overridden: list[str] = field(default_factory=list)
    source: str | None = None  # the qrels file or the set's folder, for messages

    @property
    def headline(self) -> str:
        """The set's headline metric, or ``ndcg@10`` on qrels."""
        return self.frozen.contract.headline if self.frozen else "ndcg@10"


def scoring_on_qrels(qrels_path: str | os.PathLike, **options: Any) -> Scoring:
    """Scoring on a qrels file; ``options`` are :class:`EvaluationContract` fields (None: the default)."""
    given = {k: v for k, v in options.items() if v is not None}
    return Scoring(EvaluationContract.from_options(**given), read_qrels(qrels_path), source=os.fspath(qrels_path))


def scoring_on_set(set_path: str | os.PathLike, split: str = "test", *, override_contract: bool = False,
                   **options: Any) -> Scoring:
    """Scoring on a frozen set's split, under its contract; ``options`` that contradict the contract are refused
    unless ``override_contract`` (None: the set's value)."""
    frozen = load_set(set_path)
    given = {k: v for k, v in options.items() if v is not None}
    recorded = frozen.contract.evaluation.to_dict()
    overridden = [f"{k}={v} (set: {recorded[k]})" for k, v in given.items() if recorded[k] != v]
    if overridden and not override_contract:
        raise InputError("these options contradict the set's contract: " + ", ".join(overridden)
                         + "; add --override-contract to score anyway")
    queries = select_split(frozen.queries, split)
    qrels = frozen.qrels[frozen.qrels["query_id"].isin(queries["query_id"])]
    if not (qrels["grade"] >= 0).any():
        raise InputError(f"no judgments on the {split} split of the set ({len(queries)} queries, none judged)",
                         os.fspath(set_path))
    return Scoring(EvaluationContract.from_dict(recorded | given), qrels, frozen, split, queries, overridden,
                   os.fspath(set_path))


def metric_spellings(metrics: Sequence[str]) -> dict[str, Measure]:
    """Spelling as given -> Measure, with judged@k placed beside every nDCG@k (pool bias made visible)."""
    given = {text: parse_measure(text) for text in metrics}
    spelled: dict[str, Measure] = {}
    for text, measure in given.items():
        spelled[text] = measure
        judged = Measure("judged", measure.cutoff) if measure.name == "ndcg" and measure.cutoff else None
        if judged and judged not in given.values() and judged not in spelled.values():
            spelled[str(judged)] = judged
    return spelled


def refuse_runs_without_judged_queries(tables: Mapping[str, pd.DataFrame],
                                       runs: Mapping[str, pd.DataFrame | str | os.PathLike], scoring: Scoring) -> None:
    """Refuse a run that shares no query with the qrels (``tables`` are :func:`evaluate_runs`' for ``runs``, run
    frames or files): every value would be a zero (or undefined) that says nothing about the run, and a comparison
    ``t = nan``. It is almost always an id mismatch (another collection's run, ids written differently)."""
    for name, table in tables.items():
        missing = table.attrs.get("missing_queries", 0)
        shared = len(table) - missing if scoring.contract.missing == "zero" else len(table)
        if shared == 0:
            run = runs[name]
            first = first_query_ids(run, 3) if isinstance(run, (str, os.PathLike)) else pd.unique(run["query_id"])[:3]
            run_ids = ", ".join(map(str, first)) or "none: the run is empty"
            judged = ", ".join(map(str, pd.unique(scoring.qrels["query_id"])[:3]))
            raise InputError(f"run {name} shares no query with the judgments: its queries ({run_ids}, ...) are none "
                             f"of the judged ones ({judged}, ...)", scoring.source)


UNUSUAL_GRADE_ABOVE = 10
"""Without a scale (qrels read from elsewhere), a grade above this is noted as unusual."""


def unusual_grades(scoring: Scoring) -> tuple[dict[int, int], str]:
    """Grades outside the set's scale (on a set) or above :data:`UNUSUAL_GRADE_ABOVE` (on qrels), with their
    number of judgments, and the rule they break. A gain grows with the grade, so one such grade (a typo, 999
    for 3) can move nDCG more than every other judgment; negative grades mean "not judged" and are never
    unusual."""
    grade = scoring.qrels["grade"]
    scale = (scoring.frozen.manifest.get("scale") or {}) if scoring.frozen is not None else {}
    if scale:
        allowed = sorted(int(g) for g in scale)
        unusual = (grade >= 0) & ~grade.isin(allowed)
        rule = "the set's scale is " + ", ".join(map(str, allowed))
    else:
        unusual = grade > UNUSUAL_GRADE_ABOVE
        rule = f"grades above {UNUSUAL_GRADE_ABOVE} are unusual"
    counts = grade[unusual].value_counts().sort_index()
    return {int(g): int(n) for g, n in counts.items()}, rule


def unusual_grades_note(scoring: Scoring) -> str | None:
    """The note on unusual grades (see :func:`unusual_grades`), or None."""
    counts, rule = unusual_grades(scoring)
    if not counts:
        return None
    shown = ", ".join(f"{g} ({n}x)" for g, n in list(counts.items())[:5]) + (", ..." if len(counts) > 5 else "")
    return (f"note: {scoring.source}: {sum(counts.values())} judgment(s) with an unusual grade, {shown} ({rule}): "
            "a gain grows with the grade, so such a grade can dominate nDCG; check the qrels")


# ------------------------------------------------------------------------------------------------- scores
@dataclass(frozen=True)
class RunScores:
    """Runs scored: the per-query tables, the measures by spelling, and each run's summary per spelling."""

    scoring: Scoring
    measures: dict[str, Measure]
    tables: dict[str, pd.DataFrame]
    summaries: dict[str, dict[str, MeanSummary]]

    def long_per_query(self) -> pd.DataFrame:
        """``run, query_id, metric, value``: every query's value, metrics spelled as given."""
        parts = []
        for name, table in self.tables.items():
            renamed = table[[str(m) for m in self.measures.values()]].set_axis(list(self.measures), axis=1)
            long = renamed.reset_index().melt(id_vars="query_id", var_name="metric", value_name="value")
            parts.append(long.assign(run=name))
        return pd.concat(parts, ignore_index=True)[["run", "query_id", "metric", "value"]]


def score_runs(scoring: Scoring, runs: Mapping[str, pd.DataFrame], metrics: Sequence[str] = ()) -> RunScores:
    """Score ``runs`` (name -> run) on ``metrics`` (default: the set's headline, else :data:`DEFAULT_METRICS`)."""
    spelled = _metrics_of(scoring, metrics)
    tables = evaluate_runs(runs, scoring.qrels, list(spelled.values()), scoring.contract)
    refuse_runs_without_judged_queries(tables, runs, scoring)
    return _run_scores(scoring, spelled, tables)


def score_run_files(scoring: Scoring, paths: Sequence[str | os.PathLike], metrics: Sequence[str] = (), *,
                    stream: bool | None = None) -> RunScores:
    """:func:`score_runs` of run files or folders of runs (:func:`evalset.io.trec.expand_run_paths`): a big file is
    streamed in blocks of whole queries (bounded memory), the runs are scored side by side against qrels prepared
    once (:func:`evalset.metrics.evaluate_run_files`); the same values as reading them whole."""
    files = expand_run_paths(paths)
    spelled = _metrics_of(scoring, metrics)
    tables = evaluate_run_files(files, scoring.qrels, list(spelled.values()), scoring.contract, stream=stream)
    refuse_runs_without_judged_queries(tables, files, scoring)
    return _run_scores(scoring, spelled, tables)


def _metrics_of(scoring: Scoring, metrics: Sequence[str]) -> dict[str, Measure]:
    """The metrics asked for, else the set's headline, else :data:`DEFAULT_METRICS`, by spelling."""
    return metric_spellings(metrics or ((scoring.headline,) if scoring.frozen else DEFAULT_METRICS))


def _run_scores(scoring: Scoring, spelled: dict[str, Measure], tables: dict[str, pd.DataFrame]) -> RunScores:

    def summary(values: pd.Series) -> MeanSummary:
        if scoring.frozen is None:
            return mean_summary(values)
        return stratified_summary(values, scoring.queries, scoring.frozen.contract.weighting)

    summaries = {name: {text: summary(table[str(m)]) for text, m in spelled.items()} for name, table in tables.items()}
    return RunScores(scoring, spelled, tables, summaries)


def _cell(summary: MeanSummary, mean: float | None = None) -> str:
    value = number(summary.mean if mean is None else mean)
    return value if summary.undefined == 0 else f"{value} ({summary.defined}/{summary.undefined})"


def format_score_table(scores: RunScores) -> str:
    """The score table: one row per run, one column per metric, then the set, the split and the contract."""
    scoring, frozen, summaries = scores.scoring, scores.scoring.frozen, scores.summaries
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
        splits = ",".join(sorted(scoring.queries["split"].unique()))
        averaging = "traffic-weighted across strata" if weighted else "unweighted"
        lines.append(f"\nset {frozen.path} ({frozen.manifest['name']} {frozen.version}), split {splits}, "
                     f"{len(next(iter(scores.tables.values())))} judged queries; means are {averaging}")
        if scoring.overridden:
            lines.append("CONTRACT OVERRIDDEN: " + ", ".join(scoring.overridden))
    else:
        lines.append(f"\n{len(next(iter(scores.tables.values())))} queries scored")
    lines.append("contract: " + " ".join(f"{k}={v}" for k, v in scoring.contract.to_dict().items()))
    lines.append("a mean is over defined queries; (n/m) = defined/undefined when some are undefined")
    return "\n".join(lines)


def format_per_query(scores: RunScores) -> str:
    """Every query's value, one row per run and query, one column per metric."""
    wide = scores.long_per_query().pivot_table(index=["run", "query_id"], columns="metric", values="value",
                                               sort=False, dropna=False)
    return wide[list(scores.measures)].to_string(float_format=lambda v: f"{v:.4f}", na_rep=UNDEFINED)


def score_document(scores: RunScores, per_query: bool = False) -> dict[str, Any]:
    """The JSON of ``evalset score --format json`` (a documented contract)."""
    scoring = scores.scoring
    document: dict[str, Any] = {
        "contract": scoring.contract.to_dict(),
        "runs": {name: {text: s.to_dict() for text, s in by_metric.items()}
                 for name, by_metric in scores.summaries.items()},
        "notes": {name: dict(table.attrs) for name, table in scores.tables.items()},
    }
    unusual, _ = unusual_grades(scoring)
    if unusual:  # said only when there are some, so that the document of good input keeps its shape
        for notes in document["notes"].values():
            notes["unusual_grades"] = {str(g): n for g, n in unusual.items()}
    if scoring.frozen is not None:
        document["set"] = {"path": str(scoring.frozen.path), "split": scoring.split,
                           "weighting": scoring.frozen.contract.weighting, "contract_overridden": scoring.overridden}
    if per_query:
        document["per_query"] = [{"run": row.run, "query_id": row.query_id, "metric": row.metric,
                                  "value": json_safe(row.value)} for row in scores.long_per_query().itertuples()]
    return document


def format_score_tsv(scores: RunScores, per_query: bool = False) -> str:
    """``run, metric, mean, defined, undefined[, weighted_mean]``, or with ``per_query`` the long per-query
    table ``run, query_id, metric, value`` (an undefined value is empty)."""
    if per_query:
        return scores.long_per_query().to_csv(sep="\t", index=False, na_rep="")
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
    if scores.scoring.qrels.attrs.get("collapsed_duplicates"):
        said_of_qrels.append(f"{scores.scoring.qrels.attrs['collapsed_duplicates']} repeated qrels lines collapsed")
    texts = {"duplicates_removed": "repeated documents counted once", "unjudged_queries": "queries with no qrels "
             "ignored", "missing_queries": "judged queries absent from the run",
             "unjudged_removed": "unjudged documents removed before scoring (condensed)"}
    notes = []
    for name, table in scores.tables.items():
        said = [f"{table.attrs[key]} {text}" for key, text in texts.items() if table.attrs.get(key)] + said_of_qrels
        if said:
            notes.append(f"note: {name}: " + "; ".join(said))
    unusual = unusual_grades_note(scores.scoring)
    return notes + ([unusual] if unusual else [])


# -------------------------------------------------------------------------------------------- comparisons
def compare_runs(scoring: Scoring, runs: Mapping[str, pd.DataFrame], metric: str | None = None, *,
                 planned: int | None = None, exploratory: bool = False, alpha: float = 0.05,
                 permutations: int = 9999, seed: int = DEFAULT_SEED) -> list[Comparison]:
    """Compare the first run (the baseline) with each other one on ``metric`` (default: the headline).

    The comparisons form one :class:`~evalset.stats.family.ComparisonFamily` (the others asked for, the set's
    planned list and its log on the split; ``planned`` overrides the planned count); on a set each comparison is
    appended to the set's comparison log as it is made.
    """
    baseline, *candidates = list(runs)
    if not candidates:
        raise InputError(f"no candidate run to compare with the baseline {baseline}")
    metric = metric or scoring.headline
    measure = parse_measure(metric)
    tables = evaluate_runs(runs, scoring.qrels, [measure], scoring.contract)
    refuse_runs_without_judged_queries(tables, runs, scoring)
    family = ComparisonFamily.of(len(candidates), planned=planned, frozen=scoring.frozen, split=scoring.split)
    return [family.compare(tables[baseline][str(measure)], tables[name][str(measure)], baseline_name=baseline,
                           candidate_name=name, metric=metric, exploratory=exploratory, alpha=alpha,
                           permutations=permutations, seed=seed) for name in candidates]


def format_comparisons(results: Sequence[Comparison], scoring: Scoring) -> str:
    """The comparisons one after the other, and the contract overridden, if it was."""
    text = "\n\n".join(format_comparison(result) for result in results)
    return text + ("\nCONTRACT OVERRIDDEN: " + ", ".join(scoring.overridden) if scoring.overridden else "")


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
                  runs: Mapping[str, pd.DataFrame] | None = None, split: str = "all") -> VersionDiff:
    """The judgments changed between two versions, their contract differences, and how ``runs`` move: each
    run's score on each version under that version's own contract (headline metric, evaluation contract,
    weighting) and queries of ``split`` (the weighted mean)."""
    old, new = load_set(old_path), load_set(new_path)
    differ = contract_changes(old, new)
    if not runs:
        return VersionDiff(old, new, diff_sets(old, new), contract=differ)
    scores = {}
    for frozen in (old, new):
        headline = frozen.contract.headline
        queries = select_split(frozen.queries, split)
        qrels = frozen.qrels[frozen.qrels["query_id"].isin(queries["query_id"])]
        tables = evaluate_runs(runs, qrels, [headline], frozen.contract.evaluation)
        column = str(parse_measure(headline))
        scores[frozen.version] = {name: stratified_summary(table[column], queries, frozen.contract.weighting)
                                  .weighted_mean for name, table in tables.items()}
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
