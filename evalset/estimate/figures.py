"""``evalset estimate``: each run's mean, and each paired difference, from LLM grades on every query corrected by
human grades on a random slice of them (PPI++, :mod:`evalset.stats.ppi`), beside the human slice alone.

Conventions
-----------
- Per run and metric, three figures: the **human-only** mean of the slice with its classical interval; the
  **PPI++** estimate of the mean over every query of the set, with its interval; the **LLM-only** mean over every
  query (no interval: it carries the LLM's bias). ``effective_n`` is the number of human-graded queries the
  PPI++ interval is worth.
- A **paired difference** is candidate minus baseline per query, estimated the same way. Its interval is at
  level ``1 - threshold``, the threshold ``alpha / size`` of the comparison family
  (:mod:`evalset.stats.family`: the planned count, or on a set its planned list and comparison log). A planned
  difference's verdict is the one rule of every verdict's (:func:`evalset.stats.verdicts.decide`, its ``rule``
  kept beside it): a planned difference whose PPI++ interval excludes 0 is established; an exploratory one, or one
  on a set's dev split, never is; one whose PPI++ estimate or interval left the difference's range gets none.
- A **stratified** slice (:mod:`evalset.estimate.slicing`) is estimated per stratum (the stratum's slice against
  its other queries) and combined with the traffic shares (:func:`evalset.stats.ppi.combine_strata`). A stratum
  the slice covers in full has no unlabelled query: its PPI++ figure is its human-only one.
- Every interval keeps inside the measure's range (its registered bounds; a difference's, their width either
  side of 0), with a variance floor for slices bunched at a bound, or at no difference (:mod:`evalset.stats.ppi`);
  the caveats name the runs and pairs whose slice values were all equal (degenerate) and whose intervals were
  clipped to the range. A PPI++ estimate outside the range (``λ Ŷ`` can carry it there) is clipped too, and named
  (:func:`evalset.stats.verdicts.bounded`).
- A query of the set a run lacks follows the missing-queries rule (:mod:`evalset.estimate.inputs`): refused unless
  chosen; ``zero``, it scores 0; ``skip``, it is left out of that run's estimate and of its differences (their
  slice and other queries without it), each said in a note.
- **Favouritism** on the slice, per metric, with at least 2 runs: on the slice queries both grades define for every
  run, each run's gap (LLM mean minus human mean), its excess beyond the average run's gap and the runs the LLM
  inflates or deflates (:mod:`evalset.agreement.favouritism`; the gaps' intervals at ``level``). The slice's
  queries count alike (a stratified slice is not traffic-weighted there).
- The inputs' rules (which grades, undefined values) are :mod:`evalset.estimate.inputs`'.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from evalset.agreement.favouritism import Favouritism, favouritism
from evalset.contract import DEFAULT_METRIC, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.differences import DECIDED, PairedDifference
from evalset.estimate.inputs import (
    check_coverage,
    chosen_conventions,
    missing_rule,
    query_values,
    values_by_run,
)
from evalset.estimate.sources import Grades
from evalset.estimate.spec import EstimateSettings, check_pairs
from evalset.io.slicerecord import SliceRecord
from evalset.metrics.measures import measure_bounds
from evalset.params import rules_of, validate_params
from evalset.render import number, records, text_table
from evalset.stats.family import ComparisonFamily
from evalset.stats.ppi import classical_means, combine_strata, ppi_means, quantile
from evalset.stats.quantiles import around
from evalset.stats.verdicts import bounded

FIGURES = ("stratum", "n", "N", "human_mean", "human_low", "human_high", "estimate", "low", "high", "se", "df",
           "effective_n", "llm_mean")
"""The figures of every row: the human-only mean and interval, the PPI++ estimate and interval, the LLM-only mean."""
WEIGHTED = "weighted"
"""The stratum name of the traffic-weighted rows of a stratified estimate."""


@dataclass(frozen=True)
class Estimate:
    """The estimates: ``runs`` (one row per run, metric and stratum) and ``comparisons`` (one row per pair and
    metric), with the settings and the ``caveats``: what was left out or should be checked, said after the
    estimate and in its JSON (``notes``)."""

    runs: pd.DataFrame
    comparisons: pd.DataFrame
    record: SliceRecord
    settings: dict[str, Any]
    caveats: list[str] = field(default_factory=list)
    favouritism: tuple[Favouritism, ...] = ()

    def to_text(self) -> str:
        """The estimates as ``evalset estimate`` prints them: per metric a table of runs (per stratum and
        weighted, when there are several strata), then one block per paired difference, then the caveats."""
        return _text(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset estimate --format json`` (undefined numbers are null)."""
        return {"settings": self.settings, "slice": {"design": self.record.design, "seed": self.record.seed,
                                                     "queries": list(self.record.slice)},
                "runs": records(self.runs),
                "comparisons": records(self.comparisons),
                "favouritism": [f.to_dict() for f in self.favouritism], "notes": self.caveats}


def _labelled_and_unlabelled(human: pd.DataFrame, llm: pd.DataFrame, slice_ids: list[str], others: list[str]):
    return human.loc[slice_ids].to_numpy(float), llm.loc[slice_ids].to_numpy(float), llm.loc[others].to_numpy(float)


def estimate_columns(human: pd.DataFrame, llm: pd.DataFrame, record: SliceRecord, *, level: float = 0.95,
                     interval: str = "t", bounds: tuple[float, float] | None = None, difference: bool = False,
                     left_out: Mapping[str, Collection[str]] | None = None) -> pd.DataFrame:
    """Human-only, PPI++ and LLM-only figures of each column (a run, or a paired difference) of the per-query
    values ``human`` (slice queries x columns) and ``llm`` (every query x columns), per stratum of ``record`` and,
    with several strata, traffic-weighted: one row per column and stratum (``column, stratum, ...``, and
    ``degenerate, clipped``, ``named``); ``bounds`` the measure's range (``difference``: the columns are paired
    differences). A PPI++ estimate or interval outside the range is clipped to it, ``clipped``, and ``named``
    (:func:`evalset.stats.verdicts.bounded`; ``""``: nothing). ``left_out``: column -> queries left out of its
    estimate (``-c missing=skip``: those its runs lack), each such column estimated on the others."""
    groups: dict[frozenset[str], list[str]] = {}
    for column in human.columns:
        groups.setdefault(frozenset((left_out or {}).get(column, ())), []).append(column)
    tables = []
    for dropped, columns in groups.items():
        kept = replace(record, queries=record.queries[~record.queries["query_id"].isin(dropped)],
                       slice=tuple(q for q in record.slice if q not in dropped)) if dropped else record
        tables.append(_columns(human.loc[~human.index.isin(dropped), columns],
                               llm.loc[~llm.index.isin(dropped), columns], kept, level=level, interval=interval,
                               bounds=bounds, difference=difference))
    table = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    order = {name: i for i, name in enumerate([*sorted(record.queries["stratum"].unique()), WEIGHTED])}
    position = {column: i for i, column in enumerate(human.columns)}
    table = table.iloc[np.lexsort((table["column"].map(position), table["stratum"].map(order)))]
    return _named(table.reset_index(drop=True), level, interval, bounds, difference)


def _named(table: pd.DataFrame, level: float, interval: str, bounds: tuple[float, float] | None,
           difference: bool) -> pd.DataFrame:
    """``table`` with each PPI++ estimate and interval outside the range clipped and named (``named``)."""
    if bounds is None:
        return table.assign(named="", outside=False)
    width = bounds[1] - bounds[0]
    limits = (-width, width) if difference else bounds
    lows, highs = around(table["estimate"].to_numpy(float), table["se"].to_numpy(float),
                         quantile(level, interval, table["df"].to_numpy(float)))
    several = table["stratum"].nunique() > 1
    kept = [bounded(row.estimate, low, high, limits, f"{row.column} (PPI++{', ' + row.stratum if several else ''})")
            for row, low, high in zip(table.itertuples(), lows, highs, strict=True)]
    named = [k.clipped for k in kept]
    # the interval was clipped by stats.ppi already; bounded names it, and clips the estimate
    estimate = np.array([k.estimate for k in kept], dtype=float)
    return table.assign(estimate=estimate, named=named, outside=estimate != table["estimate"].to_numpy(float),
                        clipped=table["clipped"].to_numpy() | (np.array(named) != ""))


def _columns(human: pd.DataFrame, llm: pd.DataFrame, record: SliceRecord, *, level: float, interval: str,
             bounds: tuple[float, float] | None, difference: bool) -> pd.DataFrame:
    """:func:`estimate_columns` of columns estimated on the same queries."""
    ranged = {"bounds": bounds, "difference": difference}
    queries = record.queries.assign(in_slice=record.in_slice)
    labelled = set(record.slice) & set(human.index)
    per_stratum: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
    shares, llm_means = {}, {}
    for stratum, group in queries.groupby("stratum", sort=True):
        slice_ids = [q for q in group.loc[group["in_slice"], "query_id"] if q in labelled]
        others = group.loc[~group["in_slice"], "query_id"].tolist()
        if len(slice_ids) < 2:
            raise InputError(f"stratum {stratum}: {len(slice_ids)} human-graded slice queries with a defined value; "
                             "an interval needs at least 2")
        y, y_hat, y_unlabelled = _labelled_and_unlabelled(human, llm, slice_ids, others)
        classical = classical_means(y, level=level, interval=interval, columns=list(human.columns),
                                    reference=llm.loc[group["query_id"]].to_numpy(float), **ranged)
        if others:
            ppi = ppi_means(y, y_hat, y_unlabelled, level=level, interval=interval, columns=list(human.columns),
                            **ranged)
        else:  # the slice covers the stratum: nothing for the LLM grades to stand in for
            ppi = classical.assign(N=0, effective_n=float(len(slice_ids)))
        per_stratum[stratum] = (classical, ppi)
        shares[stratum] = float(group["stratum_share"].iloc[0])
        llm_means[stratum] = llm.loc[group["query_id"]].mean(axis=0)
    if len(per_stratum) > 1:
        classical = combine_strata({s: c for s, (c, _) in per_stratum.items()}, shares, level=level, interval=interval,
                                   **ranged)
        ppi = combine_strata({s: p for s, (_, p) in per_stratum.items()}, shares, level=level, interval=interval,
                             **ranged)
        total = sum(shares.values())
        per_stratum[WEIGHTED] = (classical, ppi)
        llm_means[WEIGHTED] = sum(shares[s] / total * llm_means[s] for s in shares)
    rows = []
    for stratum, (classical, ppi) in per_stratum.items():
        rows.append(pd.DataFrame({
            "column": list(human.columns), "stratum": stratum, "n": ppi["n"].to_numpy(), "N": ppi["N"].to_numpy(),
            "human_mean": classical["estimate"].to_numpy(), "human_low": classical["low"].to_numpy(),
            "human_high": classical["high"].to_numpy(), "estimate": ppi["estimate"].to_numpy(),
            "low": ppi["low"].to_numpy(), "high": ppi["high"].to_numpy(), "se": ppi["se"].to_numpy(),
            "df": ppi["df"].to_numpy(),
            "effective_n": ppi["effective_n"].to_numpy(), "llm_mean": llm_means[stratum].to_numpy(),
            "degenerate": classical["degenerate"].to_numpy(),
            "clipped": (classical["clipped"] | ppi["clipped"]).to_numpy()}))
    return pd.concat(rows, ignore_index=True)


def _names(table: pd.DataFrame, flag: str) -> str:
    names = list(dict.fromkeys(table.loc[table[flag], "column"]))
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _range_caveats(metric: str, table: pd.DataFrame, bounds: tuple[float, float],
                   difference: bool = False) -> list[str]:
    """The notes on slices whose values were all equal and on intervals clipped to the measure's range."""
    width = bounds[1] - bounds[0]
    low, high = (-width, width) if difference else bounds
    notes = []
    if table["degenerate"].any():
        notes.append(f"{metric}: every human-graded slice query has the same value for {_names(table, 'degenerate')}: "
                     "the slice shows no spread, so the intervals' width comes from the variance floor of a "
                     f"measure in [{low:g}, {high:g}] (docs/estimate.md)")
    if table["clipped"].any():
        notes.append(f"{metric}: intervals clipped to the measure's range [{low:g}, {high:g}] for "
                     f"{_names(table, 'clipped')}")
    notes += [f"warning: {metric}: {named}" for named in table.loc[table["outside"], "named"]]
    return notes


def _differences(values: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    return pd.DataFrame({f"{candidate} - {baseline}": values[candidate] - values[baseline]
                         for baseline, candidate in pairs}, index=values.index)


@validate_params(rules_of(EstimateSettings, "alpha", "level", "interval"))
def estimate_runs(runs: Mapping[str, pd.DataFrame], human: Grades, llm: Grades, record: SliceRecord, *,
                  metrics: Sequence[str] = (DEFAULT_METRIC,), contract: EvaluationContract | None = None,
                  pairs: Sequence[tuple[str, str]] = (), family: ComparisonFamily | None = None,
                  exploratory: bool = False, alpha: float = 0.05, level: float = 0.95, interval: str = "t",
                  caveats: Sequence[str] = (), record_source: str | None = None,
                  chosen: Collection[str] | None = None, sources: Mapping[str, object] | None = None,
                  split: str | None = None) -> Estimate:
    """Estimate every run's mean of each metric, and each paired difference (``pairs`` of run names, baseline
    first), from ``llm`` grades on every query of ``record`` and ``human`` grades on its slice (module
    docstring). The grades are checked against the slice first (:func:`~evalset.estimate.inputs.check_coverage`;
    ``record_source`` names the record in its messages). ``family`` decides each difference's threshold and kind
    (default: ``pairs`` planned, no set); ``caveats`` are said before the estimate's own. ``chosen``: the
    contract's conventions the user gave (the missing-queries rule, :mod:`evalset.estimate.inputs`; default: every
    one when ``contract`` is given), ``sources``: run name -> its file, named when a run is refused; ``split``: a
    set's (its dev split's comparisons are exploratory)."""
    check_pairs(pairs)
    bounds_of = {metric: measure_bounds(metric) for metric in metrics}  # an unbounded measure refused first
    chosen = chosen_conventions(contract, chosen)
    contract = contract or EvaluationContract()
    query_ids = record.queries["query_id"].tolist()
    caveats = [*check_coverage(human, llm, query_ids, record.slice, record_source), *caveats]
    unknown = sorted({name for pair in pairs for name in pair} - set(runs))
    if unknown:
        pair = next(pair for pair in pairs if unknown[0] in pair)
        raise InputError(f"no run named {unknown[0]} to compare in {pair[0]}:{pair[1]} (runs: "
                         f"{', '.join(sorted(runs))})")
    family = family or ComparisonFamily.of(len(pairs))
    run_rows, comparison_rows, favoured, missing = [], [], [], None
    for metric in metrics:
        scored = query_values(runs, llm.qrels, query_ids, metric, contract, chosen)
        if missing is None:  # the rule once, before any estimate
            missing = missing_rule(scored, query_ids, sources)
            caveats += missing.notes()
        llm_values = scored.values(metric).reindex(query_ids)
        human_values = values_by_run(runs, human.qrels, list(record.slice), metric, contract)
        lacking = pd.DataFrame({run: human_values.index.isin(list(missing.left_out.get(run, ())))
                                for run in human_values.columns}, index=human_values.index)
        undefined = human_values.index[(human_values.isna() & ~lacking).any(axis=1)]
        if len(undefined):
            caveats.append(f"{metric}: {len(undefined)} slice queries have no defined value under the human grades "
                           f"(e.g. {', '.join(map(str, undefined[:3]))}) and left the labelled set")
            human_values = human_values.drop(index=undefined)
        favoured += _slice_favouritism(human_values, llm_values, human, llm, metric, level, caveats)
        gaps = llm_values.isna() & ~pd.DataFrame({run: llm_values.index.isin(list(missing.left_out.get(run, ())))
                                                  for run in llm_values.columns}, index=llm_values.index)
        if gaps.to_numpy().any():
            caveats.append(f"{metric}: {int(gaps.to_numpy().sum())} run-query values are undefined under the LLM "
                           "grades (no relevant document) and predicted as 0")
            llm_values = llm_values.mask(gaps, 0.0)
        bounds = bounds_of[metric]
        table = estimate_columns(human_values, llm_values, record, level=level, interval=interval, bounds=bounds,
                                 left_out=missing.left_out)
        caveats += _range_caveats(metric, table, bounds)
        run_rows.append(table.rename(columns={"column": "run"}).assign(metric=metric))
        for baseline, candidate in pairs:
            pair = PairedDifference.of(baseline, candidate, metric, family, alpha=alpha, exploratory=exploratory)
            differences = estimate_columns(_differences(human_values, [(baseline, candidate)]),
                                           _differences(llm_values, [(baseline, candidate)]), record,
                                           level=pair.level, interval=interval, bounds=bounds, difference=True,
                                           left_out={pair.name: missing.of_pair(baseline, candidate)})
            caveats += _range_caveats(metric, differences, bounds, difference=True)
            final = differences.iloc[-1]
            strata = differences[differences["stratum"] != WEIGHTED]
            decided = pair.decided(final["estimate"], final["low"], final["high"], interval="PPI++ interval",
                                   n=int(final["n"]), clipped=final["named"], split=split,
                                   strata=dict(zip(strata["stratum"], strata["n"].astype(int), strict=True))
                                   if len(strata) > 1 else None)
            comparison_rows.append(differences.assign(baseline=baseline, candidate=candidate, metric=metric,
                                                      **decided))
    runs_table = pd.concat(run_rows, ignore_index=True)[["run", "metric", *FIGURES]]
    comparisons = (pd.concat(comparison_rows, ignore_index=True) if comparison_rows else pd.DataFrame())
    comparisons = comparisons.reindex(columns=["baseline", "candidate", "metric", *DECIDED[:3], *FIGURES,
                                               *DECIDED[3:]])
    settings = {"metrics": list(metrics), "interval": interval, "level": level, "alpha": alpha,
                "contract": contract.to_dict(), "human": list(human.files), "llm": list(llm.files),
                "queries": len(query_ids), "slice": len(record.slice), "missing": contract.missing,
                "lacking": {run: count for run, count in missing.counts.items() if count}}
    return Estimate(runs_table, comparisons, record, settings, caveats, tuple(favoured))


def _slice_favouritism(human_values: pd.DataFrame, llm_values: pd.DataFrame, human: Grades, llm: Grades,
                       metric: str, level: float, caveats: list[str]) -> list[Favouritism]:
    """The favouritism of the LLM grades on the slice queries (none with one run; a note when it has no
    figures)."""
    if human_values.shape[1] < 2:
        return []
    try:
        return [favouritism(human_values, llm_values.loc[human_values.index], level=level,
                            human_name=_grades_name(human, "human"), llm_name=_grades_name(llm, "llm"),
                            measure=metric, scope="on the human-graded slice")]
    except InputError as error:
        caveats.append(f"{metric}: no favouritism on the slice: {error.message}")
        return []


def _grades_name(grades: Grades, default: str) -> str:
    """The grades' annotator when there is one (a qrels file's name, a labels table's annotator), else
    ``default``."""
    names = grades.judgments["annotator"].unique() if "annotator" in grades.judgments else []
    return str(names[0]) if len(names) == 1 else default


def _interval(row: Any, prefix: str = "", sign: bool = False) -> str:
    centre = row[f"{prefix}mean"] if prefix else row["estimate"]
    return (f"{number(centre, sign=sign)} [{number(row[f'{prefix}low'], sign=sign)}, "
            f"{number(row[f'{prefix}high'], sign=sign)}]")


def _interval_name(estimate: Estimate, n: int, stratified: bool) -> str:
    if estimate.settings["interval"] != "t":
        return "normal intervals (ppi_py's)"
    if stratified:
        return ("Student's t intervals (df: human-only, a stratum's human-graded queries - 1; PPI++, "
                "Welch-Satterthwaite's of its two parts; across strata, Welch-Satterthwaite's)")
    return (f"Student's t intervals (df: human-only, human-graded queries - 1 = {n - 1}; PPI++, "
            "Welch-Satterthwaite's of its two parts)")


def _fewer(count: float, every: int | None) -> str:
    """`` (8 q)`` after a figure on fewer queries than its column's header says (a run's missing queries skipped;
    ``every`` None: the header says none, as a stratified table's)."""
    return f" ({int(count)} q)" if every is not None and int(count) != int(every) else ""


def _text(estimate: Estimate) -> str:
    record, settings, lines = estimate.record, estimate.settings, []
    stratified = estimate.runs["stratum"].nunique() > 1
    for metric, table in estimate.runs.groupby("metric", sort=False):
        n = int(table.loc[table["stratum"] == table["stratum"].iloc[-1], "n"].max())  # a run lacking none (skip)
        lines.append(f"{metric}: {n} human-graded of {settings['queries']} queries (slice: {record.how}); "
                     f"{_interval_name(estimate, n, stratified)}, level {settings['level']:.4g}")
        header = [*(["stratum (human-graded of all)"] if stratified else []), "run",
                  "human-only" if stratified else f"human-only ({n} q)",
                  "PPI++" if stratified else f"PPI++ ({settings['queries']} q)", "LLM-only", "effective n"]
        rows = [[*([f"{row['stratum']} ({int(row['n'])} of {int(row['n'] + row['N'])})"] if stratified else []),
                 row["run"], _interval(row, "human_") + _fewer(row["n"], None if stratified else n),
                 _interval(row) + _fewer(row["n"] + row["N"], None if stratified else settings["queries"]),
                 number(row["llm_mean"]),
                 number(row["effective_n"], 1)] for _, row in table.iterrows()]
        lines += [*text_table([header, *rows]), ""]
    for _, row in estimate.comparisons.iterrows():
        if stratified and row["stratum"] != WEIGHTED:
            continue
        lines.append(f"{row['candidate']} vs {row['baseline']} on {row['metric']} ({row['kind']}, threshold "
                     f"{row['threshold']:.4g}: intervals at level {row['level']:.4g})")
        lines += ["  " + line for line in text_table([
            [f"human-only ({int(row['n'])} q)", _interval(row, "human_", sign=True)],
            [f"PPI++ ({int(row['n'] + row['N'])} q)", f"{_interval(row, sign=True)}, worth "
                                                 f"{number(row['effective_n'], 1)} human-graded queries"],
            ["LLM-only", f"{number(row['llm_mean'], sign=True)} (biased: no interval)"],
            ["verdict", row["verdict"]]])] + [""]
    for favoured in estimate.favouritism:
        lines += [favoured.to_text(), ""]
    lines.append("PPI++: LLM grades on every query, corrected by the human grades of the random slice (ppi_py); "
                 "human-only: the slice alone; LLM-only: the LLM grades alone, biased")
    return "\n".join(lines + estimate.caveats)
