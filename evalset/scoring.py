"""Scoring runs on qrels or on a frozen set: the contract in force, the measures as spelled, the summaries
and the score table.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import click

from evalset.contract import EvaluationContract

# The library (pandas, numpy, scipy, ...) is imported inside each command: `evalset --help` and a command
# start without the modules the others need.
if TYPE_CHECKING:
    import pandas as pd

    from evalset.compare import Comparison
    from evalset.metrics import Measure
    from evalset.sets import FrozenSet


@dataclass
class _Scoring:
    """What score and compare share: the contract in force, the qrels, and (with --set) the set and split."""

    contract: EvaluationContract
    qrels: pd.DataFrame
    frozen: FrozenSet | None = None
    queries: pd.DataFrame | None = None
    overridden: list[str] | None = None

    @property
    def headline(self) -> str:
        return self.frozen.contract.headline if self.frozen else "ndcg@10"


def _scoring(qrels_path, set_path, split, override, **given) -> _Scoring:
    from evalset.io.trec import read_qrels
    from evalset.sets import load_set, select_split

    if bool(qrels_path) == bool(set_path):
        raise click.UsageError("give either --qrels or --set")
    given = {k: v for k, v in given.items() if v is not None}
    if qrels_path:
        return _Scoring(EvaluationContract.from_options(**given), read_qrels(qrels_path))
    frozen = load_set(set_path)
    recorded = frozen.contract.evaluation.to_dict()
    overridden = [f"{k}={v} (set: {recorded[k]})" for k, v in given.items() if recorded[k] != v]
    if overridden and not override:
        raise click.UsageError("these options contradict the set's contract: " + ", ".join(overridden)
                               + "; add --override-contract to score anyway")
    queries = select_split(frozen.queries, split)
    qrels = frozen.qrels[frozen.qrels["query_id"].isin(queries["query_id"])]
    return _Scoring(EvaluationContract.from_dict(recorded | given), qrels, frozen, queries, overridden)


def _metric_spellings(metrics: tuple[str, ...], default: tuple[str, ...]) -> dict[str, Measure]:
    """Spelling as given -> Measure, with judged@k placed beside every nDCG@k (pool bias made visible)."""
    from evalset.metrics import Measure, parse_measure

    given = {text: parse_measure(text) for text in (metrics or default)}
    spelled: dict[str, Measure] = {}
    for text, measure in given.items():
        spelled[text] = measure
        judged = Measure("judged", measure.cutoff) if measure.name == "ndcg" and measure.cutoff else None
        if judged and judged not in given.values() and judged not in spelled.values():
            spelled[str(judged)] = judged
    return spelled


def _json_number(value: float) -> float | None:
    import pandas as pd

    return None if pd.isna(value) else float(value)


def _summary_entry(table: pd.DataFrame, measure: Measure, scoring: _Scoring) -> dict:
    from evalset.sets import stratified_summary

    column = table[str(measure)]
    if scoring.frozen is not None:
        return stratified_summary(column, scoring.queries, scoring.frozen.contract.weighting)
    return {"mean": _json_number(column.mean()), "defined": int(column.notna().sum()),
            "undefined": int(column.isna().sum())}


def _long_per_query(tables: dict[str, pd.DataFrame], spelled: dict[str, Measure]) -> pd.DataFrame:
    import pandas as pd

    parts = []
    for name, table in tables.items():
        renamed = table[[str(m) for m in spelled.values()]].set_axis(list(spelled), axis=1)
        long = renamed.reset_index().melt(id_vars="query_id", var_name="metric", value_name="value")
        parts.append(long.assign(run=name))
    return pd.concat(parts, ignore_index=True)[["run", "query_id", "metric", "value"]]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


def _cell(entry: dict, key: str = "mean") -> str:
    mean = "n/a" if entry[key] is None else f"{entry[key]:.4f}"
    return mean if entry["undefined"] == 0 else f"{mean} ({entry['defined']}/{entry['undefined']})"


def format_score_table(entries: dict[str, dict[str, dict]], scoring: _Scoring, queries: int) -> str:
    metrics = list(next(iter(entries.values())))
    frozen = scoring.frozen
    key = "weighted_mean" if frozen is not None and frozen.contract.weighting == "traffic" else "mean"
    lines = _table([["run", *metrics], *[[name, *(_cell(e[m], key) for m in metrics)] for name, e in entries.items()]])
    settings = " ".join(f"{k}={v}" for k, v in scoring.contract.to_dict().items())
    if frozen is not None:
        strata = list(next(iter(next(iter(entries.values())).values()))["strata"])
        if len(strata) > 1:
            headline = metrics[0]
            lines.append(f"\n{headline} per stratum (traffic share):")
            shares = next(iter(entries.values()))[headline]["strata"]
            header = ["run", *(f"{s} ({shares[s]['share']:.3f})" for s in strata), "weighted", "unweighted"]
            rows = [[name, *(_cell(e[headline]["strata"][s]) for s in strata),
                     "n/a" if e[headline]["weighted_mean"] is None else f"{e[headline]['weighted_mean']:.4f}",
                     _cell(e[headline])] for name, e in entries.items()]
            lines += _table([header, *rows])
        splits = ",".join(sorted(scoring.queries["split"].unique()))
        averaging = "traffic-weighted across strata" if key != "mean" else "unweighted"
        lines.append(f"\nset {frozen.path} ({frozen.manifest['name']} {frozen.version}), split {splits}, "
                     f"{queries} judged queries; means are {averaging}")
        if scoring.overridden:
            lines.append("CONTRACT OVERRIDDEN: " + ", ".join(scoring.overridden))
    else:
        lines.append(f"\n{queries} queries scored")
    lines.append(f"contract: {settings}")
    lines.append("a mean is over defined queries; (n/m) = defined/undefined when some are undefined")
    return "\n".join(lines)


def _warn_counts(name: str, counts: dict, qrels: pd.DataFrame) -> None:
    notes = {
        "duplicates_removed": "repeated documents counted once",
        "unjudged_queries": "queries with no qrels ignored",
        "missing_queries": "judged queries absent from the run",
    }
    said = [f"{counts[key]} {text}" for key, text in notes.items() if counts.get(key)]
    if qrels.attrs.get("collapsed_duplicates"):
        said.append(f"{qrels.attrs['collapsed_duplicates']} repeated qrels lines collapsed")
    if said:
        click.echo(f"note: {name}: " + "; ".join(said), err=True)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def format_comparison(result: Comparison) -> str:
    lines = [
        f"{result.candidate} vs {result.baseline} on {result.metric} ({result.n} queries"
        + (f", {result.undefined} undefined left out" if result.undefined else "") + f", {result.kind})",
        f"  mean difference   {result.mean_difference:+.4f}   median {result.median_difference:+.4f}",
        f"  wins/losses/ties  {result.wins}/{result.losses}/{result.ties}",
        f"  permutation p     {result.permutation_p:.4g}  ({result.permutations} sign flips, seed {result.seed})",
        f"  paired t          t = {result.t:.4f}, p = {result.ttest_p:.4g}",
        f"  BCa {result.ci_level:.1%} CI     [{result.ci_low:+.4f}, {result.ci_high:+.4f}]",
        f"  effect size       {result.effect_size:.3f} (mean / sd of differences)",
        f"  verdict           {result.verdict}",
    ]
    if result.largest_losses:
        lines.append("  largest losses    " + ", ".join(
            f"{loss['query_id']} ({loss['difference']:+.4f})" for loss in result.largest_losses))
    return "\n".join(lines)
