"""The ``evalset`` command line: one short function per command, parsing and printing only."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalset import __version__
from evalset.contract import DEFAULT_SEED, MERGE_RULES, TIE_RULES, WEIGHTINGS, EvaluationContract
from evalset.errors import InputError

# The library (pandas, numpy, scipy, ...) is imported inside each command: `evalset --help` and a command
# start without the modules the others need.
if TYPE_CHECKING:
    import pandas as pd

    from evalset.compare import Comparison
    from evalset.metrics import Measure
    from evalset.sets import FrozenSet


class _Group(click.Group):
    """Prints bad input as one line (no traceback unless --debug) and exits non-zero."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (InputError, ValueError, OSError) as exc:
            if ctx.params.get("debug"):
                raise
            click.echo(f"evalset: error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="evalset")
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def main(debug: bool) -> None:
    """Build search evaluation sets the way TREC does, and score rankers on them honestly.

    Stages: sample -> pool -> push/pull and judge -> agreement -> freeze -> score/compare.
    """


# ------------------------------------------------------------------------------------------- score / compare
_CONTRACT_DEFAULTS = EvaluationContract()


def _apply(command, options):
    for option in reversed(options):
        command = option(command)
    return command


def _evaluation_options(command):
    """The evaluation-contract options (defaults: the set's with --set, else the contract's)."""
    return _apply(command, [
        click.option("--rel-level", type=int, help="Binary measures count a document relevant when grade >= this "
                                                   "[default: 1, or the set's]."),
        click.option("--gain", type=click.Choice(["linear", "exponential"]),
                     help="nDCG gain: the grade, or 2^grade - 1 [default: linear, or the set's]."),
        click.option("--ties", type=click.Choice(list(TIE_RULES)),
                     help="Tie rule for equal scores: trec (doc id descending), run (the run's order), docid "
                          "(ascending), expected (expectation over tied orders) [default: trec, or the set's]."),
        click.option("--missing", type=click.Choice(["zero", "skip"]),
                     help="A judged query absent from a run scores 0, or is skipped as trec_eval does "
                          "[default: zero, or the set's]."),
        click.option("--undefined", type=click.Choice(["skip", "zero"]),
                     help="A query with no relevant document is left out of the mean, or scores 0 as trec_eval "
                          "does [default: skip, or the set's]."),
    ])


def _contract_options(command):
    """The evaluation-contract options and the frozen-set options shared by score, compare and plan."""
    return _evaluation_options(_apply(command, [
        click.option("--set", "set_path", type=click.Path(file_okay=False),
                     help="Score on a frozen set (sets/NAME/vN): its qrels, queries and contract."),
        click.option("--split", type=click.Choice(["test", "dev", "all"]), default="test", show_default=True,
                     help="With --set: the queries scored."),
        click.option("--override-contract", is_flag=True,
                     help="With --set: allow options that contradict the set's contract (the output says so)."),
    ]))


def _contract(**given) -> EvaluationContract:
    """The default contract with the options that were given."""
    chosen = {k: v for k, v in given.items() if v is not None}
    return EvaluationContract.from_dict(_CONTRACT_DEFAULTS.to_dict() | chosen)


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
    from evalset.sets import load_set, select_split
    from evalset.tables import read_qrels

    if bool(qrels_path) == bool(set_path):
        raise click.UsageError("give either --qrels or --set")
    given = {k: v for k, v in given.items() if v is not None}
    if qrels_path:
        return _Scoring(_contract(**given), read_qrels(qrels_path))
    frozen = load_set(set_path)
    recorded = frozen.contract.evaluation.to_dict()
    overridden = [f"{k}={v} (set: {recorded[k]})" for k, v in given.items() if recorded[k] != v]
    if overridden and not override:
        raise click.UsageError("these options contradict the set's contract: " + ", ".join(overridden)
                               + "; add --override-contract to score anyway")
    queries = select_split(frozen.queries, split)
    qrels = frozen.qrels[frozen.qrels["query_id"].isin(queries["query_id"])]
    return _Scoring(EvaluationContract.from_dict(recorded | given), qrels, frozen, queries, overridden)


def _read_runs(paths: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    from evalset.tables import read_run, run_name

    runs: dict[str, pd.DataFrame] = {}
    for path in paths:
        name = run_name(path)
        if name in runs:
            raise InputError(f"two runs are named {name!r}; rename one file", path)
        runs[name] = read_run(path)
    return runs


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


@main.command()
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), help="TREC qrels: qid 0 docid grade.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Repeatable: ndcg@10, ndcg, ap, ap@100, p@10, recall@100, rr, rr@10, rprec, bpref, success@10, "
                   "judged@10 (trec_eval names such as ndcg_cut_10 or P_10 work too). Default: ndcg@10, ap, rr, "
                   "p@10 (with --set: the set's headline metric). judged@k is added beside every ndcg@k.")
@_contract_options
@click.option("--per-query", is_flag=True, help="Also print every query's value.")
@click.option("--format", "output_format", type=click.Choice(["table", "tsv", "json"]), default="table",
              show_default=True, help="Output format (the JSON and TSV layouts are a documented contract).")
def score(qrels_path, runs, metrics, rel_level, gain, ties, missing, undefined, set_path, split, override_contract,
          per_query, output_format):
    """Score RUN files (TREC format, .gz allowed) against QRELS or a frozen set.

    Means are over queries where the measure is defined; the number of defined and undefined queries is
    printed with each mean. With --set, results come per stratum with the traffic-weighted mean across
    strata, on the test split by default. A run's name is its file name without extensions.
    """
    import pandas as pd

    from evalset.metrics import evaluate_runs

    scoring = _scoring(qrels_path, set_path, split, override_contract, rel_level=rel_level, gain=gain, ties=ties,
                       missing=missing, undefined=undefined)
    default = (scoring.headline,) if scoring.frozen else ("ndcg@10", "ap", "rr", "p@10")
    spelled = _metric_spellings(metrics, default)
    tables = evaluate_runs(_read_runs(runs), scoring.qrels, list(spelled.values()), scoring.contract)
    entries = {name: {text: _summary_entry(table, m, scoring) for text, m in spelled.items()}
               for name, table in tables.items()}
    if output_format == "json":
        document = {"contract": scoring.contract.to_dict(), "runs": entries,
                    "notes": {name: dict(table.attrs) for name, table in tables.items()}}
        if scoring.frozen is not None:
            document["set"] = {"path": str(scoring.frozen.path), "split": split,
                               "weighting": scoring.frozen.contract.weighting,
                               "contract_overridden": scoring.overridden or []}
        if per_query:
            document["per_query"] = [
                {"run": row.run, "query_id": row.query_id, "metric": row.metric, "value": _json_number(row.value)}
                for row in _long_per_query(tables, spelled).itertuples()
            ]
        click.echo(json.dumps(document, indent=2))
    elif output_format == "tsv":
        if per_query:
            click.echo(_long_per_query(tables, spelled).to_csv(sep="\t", index=False, na_rep=""), nl=False)
        else:
            rows = [{"run": name, "metric": text, **{k: entry[k] for k in ("mean", "defined", "undefined")},
                     **({"weighted_mean": entry["weighted_mean"]} if "weighted_mean" in entry else {})}
                    for name, by_metric in entries.items() for text, entry in by_metric.items()]
            click.echo(pd.DataFrame(rows).to_csv(sep="\t", index=False, na_rep=""), nl=False)
    else:
        click.echo(format_score_table(entries, scoring, len(next(iter(tables.values())))))
        if per_query:
            wide = _long_per_query(tables, spelled).pivot_table(
                index=["run", "query_id"], columns="metric", values="value", sort=False, dropna=False)
            click.echo("\n" + wide[list(spelled)].to_string(float_format=lambda v: f"{v:.4f}", na_rep="undef"))
    for name, table in tables.items():
        _warn_counts(name, table.attrs, scoring.qrels)


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


@main.command()
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), help="TREC qrels: qid 0 docid grade.")
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("candidates", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--metric", help="The one metric the verdict is on [default: ndcg@10, or the set's headline].")
@_contract_options
@click.option("--planned", type=int, default=None,
              help="Number of planned comparisons for the Bonferroni threshold 0.05/N [default: the candidates; "
                   "with --set: the set's planned comparisons].")
@click.option("--exploratory", is_flag=True, help="Not planned beforehand: reported, never established.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Family-wise error rate.")
@click.option("--permutations", type=int, default=9999, show_default=True, help="Random sign flips.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of every resampling.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
def compare(qrels_path, baseline, candidates, metric, rel_level, gain, ties, missing, undefined, set_path, split,
            override_contract, planned, exploratory, alpha, permutations, seed, output_format):
    """Compare each CANDIDATE run against BASELINE, per query, on one metric.

    The verdict comes from a paired permutation test at the Bonferroni threshold alpha/planned; the paired
    t-test, a BCa bootstrap interval (level 1 - threshold) and the effect size are printed beside it.
    With --set, a comparison not in the set's planned list is exploratory, every comparison is appended to
    the set's comparison log, and the threshold counts every distinct comparison made on that split.
    """
    from evalset.compare import compare_paired
    from evalset.metrics import evaluate_runs, parse_measure
    from evalset.sets import comparisons_made, log_comparison

    scoring = _scoring(qrels_path, set_path, split, override_contract, rel_level=rel_level, gain=gain, ties=ties,
                       missing=missing, undefined=undefined)
    metric = metric or scoring.headline
    measure = parse_measure(metric)
    runs = _read_runs((baseline, *candidates))
    tables = evaluate_runs(runs, scoring.qrels, [measure], scoring.contract)
    names = list(runs)
    results = []
    for name in names[1:]:
        kind_exploratory, count = exploratory, planned or len(candidates)
        if scoring.frozen is not None:
            listed = scoring.frozen.planned
            if listed:
                kind_exploratory = exploratory or (names[0], name) not in listed
                count = planned or len(listed)
            made = comparisons_made(scoring.frozen.path, split) | {(names[0], name, metric)}
            count = max(count, len(made))
        result = compare_paired(tables[names[0]][str(measure)], tables[name][str(measure)], baseline_name=names[0],
                                candidate_name=name, metric=metric, planned=count, exploratory=kind_exploratory,
                                alpha=alpha, permutations=permutations, seed=seed)
        if scoring.frozen is not None:
            log_comparison(scoring.frozen.path, {"version": scoring.frozen.version, "split": split,
                                                 "baseline": names[0], "candidate": name, "metric": metric,
                                                 "kind": result.kind, "permutation_p": result.permutation_p,
                                                 "threshold": result.threshold, "at": _now()})
        results.append(result)
    if output_format == "json":
        click.echo(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        click.echo("\n\n".join(format_comparison(r) for r in results))
        if scoring.overridden:
            click.echo("CONTRACT OVERRIDDEN: " + ", ".join(scoring.overridden))


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


# ------------------------------------------------------------------------------------------------------ pool
@main.command("pool")
@click.argument("runs", nargs=-1, type=click.Path(exists=True))
@click.option("-k", "--depth", type=int, help="Pool the top K documents of every run per query.")
@click.option("-o", "--output", type=click.Path(file_okay=False), help="Folder for pool.tsv and the rest.")
@click.option("--system-depth", "depths", multiple=True, metavar="NAME=K", help="Depth for one run (repeatable).")
@click.option("--ties", type=click.Choice(TIE_RULES), help="Tie rule of the ranking (default trec, as scoring).")
@click.option("--seed", type=int, help="Seed of the blind judging order (default 0).")
@click.option("--queries", type=click.Path(), help="queries.tsv or topics file: pool only these queries.")
@click.option("--exclude-judged", type=click.Path(), help="Qrels or labels: leave judged pairs out.")
@click.option("--budget", type=int, help="Keep at most N pairs (best rank first, queries filled fairly).")
@click.option("--corpus", type=click.Path(), help="Document texts (JSONL or TSV, .gz ok) for tasks.jsonl.")
@click.option("--spec", type=click.Path(), help="A pool specification (TOML) holding the same options.")
def pool_command(runs, depth, output, depths, ties, seed, queries, exclude_judged, budget, corpus, spec):
    """Pool the top K of several runs into blind judging pairs (judge-the-holes with --exclude-judged)."""
    from evalset import pooling

    per_system = {}
    for item in depths:
        name, _, k = item.rpartition("=")
        if not name or not k.strip().lstrip("-").isdigit():
            raise click.BadParameter(f"expected NAME=K, got {item!r}", param_hint="--system-depth")
        per_system[name] = int(k)
    base = pooling.PoolSpec.from_toml(spec) if spec else pooling.PoolSpec()
    settings = base.with_overrides(runs=runs, depth=depth, output=output, depths=per_system, ties=ties, seed=seed,
                                   queries=queries, exclude_judged=exclude_judged, budget=budget, corpus=corpus)
    if not settings.output:
        raise click.UsageError("no output folder (give -o DIR or `output` in the spec)")
    build = pooling.build_from_spec(settings)
    for line in pooling.summary_lines(build):
        click.echo(line)
    for path in pooling.write_pool(build, settings.output):
        click.echo(f"wrote {path}")


# ---------------------------------------------------------------------------------------- freeze / verify / diff
@main.command()
@click.argument("labels", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--llm-labels", multiple=True, type=click.Path(dir_okay=False),
              help="Labels table or qrels of an LLM judge (kind llm); repeatable.")
@click.option("--queries", "queries_path", required=True, type=click.Path(dir_okay=False),
              help="queries.tsv from `evalset sample`, or a TREC topics file (one stratum, all in the test split).")
@click.option("--guideline", "guideline_path", required=True, type=click.Path(dir_okay=False),
              help="The labeling guideline: its scale validates every grade; its sha256 goes in the manifest.")
@click.option("--name", required=True, help="The set's name: sets-dir/NAME/vN.")
@click.option("--sets-dir", default="sets", show_default=True, type=click.Path(file_okay=False),
              help="Folder holding the sets.")
@click.option("--version", "version_number", type=int, help="Version number [default: the next one].")
@click.option("--merge", type=click.Choice(list(MERGE_RULES)), default="median", show_default=True,
              help="How the grades of one pair are merged (ties and large gaps are unresolved).")
@click.option("--priority", help="Comma-separated annotators, first wins (with --merge annotator-priority).")
@click.option("--allow-llm", is_flag=True, help="Let LLM grades take part in the merge.")
@click.option("--max-gap", type=int, default=2, show_default=True,
              help="Grades of one pair further apart than this are unresolved.")
@click.option("--adjudication", type=click.Path(dir_okay=False), help="Labels table or qrels that settle pairs.")
@click.option("--headline", default="ndcg@10", show_default=True, help="The set's headline metric.")
@click.option("--weighting", type=click.Choice(list(WEIGHTINGS)), default="traffic", show_default=True,
              help="Means across strata: by traffic share, or every query alike.")
@click.option("--plan", "plans", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A planned comparison (run names); repeatable. Others on this set are exploratory.")
@_evaluation_options
def freeze(labels, llm_labels, queries_path, guideline_path, name, sets_dir, version_number, merge, priority,
           allow_llm, max_gap, adjudication, headline, weighting, plans, rel_level, gain, ties, missing, undefined):
    """Freeze LABELS (labels tables, or qrels as one human annotator each) into sets-dir/NAME/vN.

    Grades are merged per pair by the declared rule (human grades only unless --allow-llm); unresolved pairs
    block the freeze unless --adjudication settles them. The folder is built aside, renamed into place, made
    read-only, and never rewritten.
    """
    import pandas as pd

    from evalset.digests import file_sha256
    from evalset.guideline import read_guideline
    from evalset.sets import SetContract, load_set
    from evalset.sets import freeze as freeze_set
    from evalset.tables import labels_from_file, read_queries

    frames = [labels_from_file(path, "human") for path in labels] + [labels_from_file(p, "llm") for p in llm_labels]
    unjudged = sum(frame.attrs.get("unjudged_rows", 0) for frame in frames)
    table = pd.concat(frames, ignore_index=True)
    planned = _pairs(plans, "--plan")
    evaluation = _contract(rel_level=rel_level, gain=gain, ties=ties, missing=missing, undefined=undefined)
    contract = SetContract(evaluation, headline, weighting)
    inputs = {path: file_sha256(path) for path in (*labels, *llm_labels, queries_path)}
    target = freeze_set(
        table, read_queries(queries_path), read_guideline(guideline_path), name, sets_dir, version=version_number,
        contract=contract, merge=merge, allow_llm=allow_llm, max_gap=max_gap,
        priority=[p.strip() for p in priority.split(",")] if priority else None,
        adjudication=labels_from_file(adjudication) if adjudication else None, planned=planned, inputs=inputs,
    )
    manifest = load_set(target).manifest
    click.echo(f"froze {target}: {manifest['counts']['judgments']} judgments over {manifest['counts']['queries']} "
               f"queries from {len(table)} labels by {len(manifest['annotators'])} annotators "
               f"(merge: {merge}; {manifest['merge']['multiply_judged']} pairs judged more than once, "
               f"{manifest['merge']['adjudicated']} adjudicated)")
    if unjudged:
        click.echo(f"note: {unjudged} qrels lines with a negative grade (pooled, not judged) were not labels")
    if manifest["merge"]["llm_labels_left_out"]:
        click.echo(f"note: {manifest['merge']['llm_labels_left_out']} LLM labels kept in labels.tsv but not merged "
                   "(use --allow-llm to merge them)")


@main.command()
@click.argument("set_path", type=click.Path(file_okay=False))
def verify(set_path):
    """Check every hash and the manifest of a frozen set version; exit 1 naming each changed file."""
    from evalset.sets import verify_set

    problems = verify_set(set_path)
    for problem in problems:
        click.echo(f"FAILED {problem}")
    if problems:
        sys.exit(1)
    click.echo(f"OK {set_path}: every file matches its manifest hash")


@main.command()
@click.argument("old_path", type=click.Path(file_okay=False))
@click.argument("new_path", type=click.Path(file_okay=False))
@click.option("--runs", "runs", multiple=True, type=click.Path(dir_okay=False),
              help="Runs whose headline score under each version is shown; repeatable.")
@click.option("--split", type=click.Choice(["test", "dev", "all"]), default="all", show_default=True,
              help="The queries the runs are scored on.")
def diff(old_path, new_path, runs, split):
    """Judgments added, removed and changed between two versions of a set, and how runs move."""
    from evalset.metrics import evaluate_runs
    from evalset.sets import diff_sets, load_set, select_split, stratified_summary

    old, new = load_set(old_path), load_set(new_path)
    changes = diff_sets(old, new)
    counts = changes["change"].value_counts()
    click.echo(f"{old.name} {old.version} -> {new.name} {new.version}: {counts.get('added', 0)} added, "
               f"{counts.get('removed', 0)} removed, {counts.get('changed', 0)} changed")
    if len(changes):
        click.echo(changes.head(50).to_string(index=False))
        if len(changes) > 50:
            click.echo(f"... and {len(changes) - 50} more")
    if runs:
        headline = new.contract.headline
        rows = [["run", f"{headline} {old.version}", f"{headline} {new.version}", "change"]]
        scores = {}
        for frozen in (old, new):
            queries = select_split(frozen.queries, split)
            qrels = frozen.qrels[frozen.qrels["query_id"].isin(queries["query_id"])]
            tables = evaluate_runs(_read_runs(runs), qrels, [headline], frozen.contract.evaluation)
            scores[frozen.version] = {n: stratified_summary(t[headline], queries, frozen.contract.weighting)
                                      for n, t in tables.items()}
        for name in scores[old.version]:
            before = scores[old.version][name]["weighted_mean"]
            after = scores[new.version][name]["weighted_mean"]
            rows.append([name, f"{before:.4f}", f"{after:.4f}", f"{after - before:+.4f}"])
        click.echo("\n" + "\n".join(_table(rows)))


# ---------------------------------------------------------------------------------------------------- sample
@main.command()
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="queries.tsv to write (its manifest goes beside it).")
@click.option("--per-stratum", required=True, help="Queries per stratum: 50, or head=100,torso=50,tail=20.")
@click.option("--format", "fmt", type=click.Choice(["tsv", "csv", "jsonl", "parquet"]),
              help="Log format (default: from the file name; .log is TSV).")
@click.option("--no-header", is_flag=True,
              help="TSV/CSV without a header line: give columns as 1-based positions.")
@click.option("--query", "query_column", default="query", show_default=True,
              help="Query column (name or position).")
@click.option("--count", "count_column", help="Count column of a pre-aggregated log.")
@click.option("--timestamp", "timestamp_column", help="Timestamp column.")
@click.option("--timestamp-format", help="strptime format of the timestamps (default ISO 8601).")
@click.option("--user", "user_column", help="User id column.")
@click.option("--stratum-column", help="The log's own stratum column (e.g. agent/human).")
@click.option("--count-by", type=click.Choice(["submissions", "users"]), default="submissions",
              show_default=True, help="Traffic of a query: its submissions, or the distinct users who typed it.")
@click.option("--normalise", default="case,nfkc,space", show_default=True,
              help="Steps: case, nfkc, space, none.")
@click.option("--since", type=click.DateTime(), help="Keep submissions at or after this time.")
@click.option("--until", type=click.DateTime(), help="Keep submissions before this time.")
@click.option("--blocklist", multiple=True, type=click.Path(dir_okay=False), help="File of blocked terms.")
@click.option("--exclude", multiple=True, type=click.Path(dir_okay=False),
              help="File of queries to leave out (e.g. an earlier queries.tsv).")
@click.option("--strata", "strata_spec", help="Cut points, e.g. head:0.5,torso:0.8,tail (default: thirds).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample (numpy Generator).")
@click.option("--holdout", type=float, default=0.0, show_default=True,
              help="Share of each stratum's sample marked test.")
@click.option("--engine", type=click.Choice(["auto", "pandas", "duckdb"]), default="auto",
              show_default=True, help="In memory (pandas), out of core (DuckDB), or by size (auto).")
@click.option("--memory-limit", default="1GB", show_default=True,
              help="DuckDB memory limit (it spills beyond).")
def sample(logs, output, per_stratum, fmt, no_header, query_column, count_column, timestamp_column,
           timestamp_format, user_column, stratum_column, count_by, normalise, since, until, blocklist,
           exclude, strata_spec, seed, holdout, engine, memory_limit) -> None:
    """Draw a stratified sample of queries from query LOGS into queries.tsv (+ queries.manifest.json)."""
    from evalset.digests import describe_files_in_background

    described = describe_files_in_background(logs)  # the sha256 of the logs runs while the library loads

    from evalset import sampling
    from evalset.tables import LogColumns

    result = sampling.sample_log(
        logs, sampling.parse_per_stratum(per_stratum),
        columns=LogColumns(query_column, count_column, timestamp_column, user_column, stratum_column),
        fmt=fmt, header=not no_header, count_by=count_by,
        normalisation=sampling.Normalisation.parse(normalise),
        window=sampling.Window(since, until, timestamp_format),
        strata=sampling.Strata.parse(strata_spec) if strata_spec else sampling.Strata(),
        seed=seed, holdout=holdout, blocklists=blocklist, exclusions=exclude, engine=engine,
        memory_limit=memory_limit, described=described)
    written = sampling.write_sample(result, output)
    click.echo("\n".join(sampling.report_lines(result, written)))

# ------------------------------------------------------------------------------------------------------ plan
def _pairs(values: tuple[str, ...], option: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        base, _, candidate = value.partition(":")
        if not base or not candidate:
            raise click.BadParameter(f"expected BASELINE:CANDIDATE, got {value!r}", param_hint=option)
        pairs.append((base, candidate))
    return pairs


def _plan_pilot(scoring: _Scoring, runs: tuple[str, ...], comparisons: tuple[str, ...], metric: str | None,
                **settings):
    from tqdm import tqdm

    from evalset import plan
    from evalset.metrics import evaluate_runs, parse_measure

    metric = metric or scoring.headline
    tables = evaluate_runs(_read_runs(runs), scoring.qrels, [parse_measure(metric)], scoring.contract)
    names = list(tables)
    chosen = _pairs(comparisons, "--compare") or (scoring.frozen.planned if scoring.frozen else []) or \
        [(names[0], name) for name in names[1:]]
    if not chosen:
        raise click.UsageError("nothing to compare: give two or more runs, or --compare BASELINE:CANDIDATE")
    if settings["planned"] is None and scoring.frozen is not None and scoring.frozen.planned:
        settings["planned"] = len(scoring.frozen.planned)
    differences = plan.pilot_differences({n: t.rename(columns={str(parse_measure(metric)): metric})
                                          for n, t in tables.items()}, metric, chosen, scoring.queries)
    return plan.plan_power(differences, metric=metric, progress=lambda cells: tqdm(
        cells, desc="simulating", unit="size", disable=None, file=sys.stderr), **settings)


def _plan_budget(scoring: _Scoring | None, runs: tuple[str, ...], pool_folder, pool_runs, depths, corpus,
                 queries_path, prompt_tokens, tokenizer):
    from evalset import budget
    from evalset.tables import expand_run_paths, read_queries, read_run

    if pool_folder:
        return [budget.pool_size_from_folder(pool_folder, prompt_tokens=prompt_tokens, tokenizer=tokenizer)]
    if not depths:
        return []
    files = expand_run_paths(pool_runs or runs)
    queries = read_queries(queries_path) if queries_path else (scoring.queries if scoring and scoring.frozen
                                                               is not None else None)
    if corpus and queries is None:
        raise click.UsageError("--corpus needs the query texts too: give --queries (or --set)")
    pairs = budget.pool_pairs_from_runs({name: read_run(path) for name, path in files.items()}, list(depths),
                                        query_ids=None if queries is None else queries["query_id"])
    sizes = []
    for depth, frame in pairs.items():
        texts = budget.task_texts(frame, corpus, queries) if corpus and queries is not None else None
        sizes.append(budget.pool_size_from_runs(frame, depth, texts=texts, prompt_tokens=prompt_tokens,
                                                tokenizer=tokenizer))
    return sizes


@main.command("plan")
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), help="Pilot qrels: qid 0 docid grade.")
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--compare", "comparisons", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A planned comparison (run names); repeatable [default: the set's planned comparisons, else "
                   "the first run against each other].")
@click.option("-m", "--metric", help="The metric [default: ndcg@10, or the set's headline].")
@_contract_options
@click.option("--delta", type=float, help="Smallest difference worth shipping [default: each observed difference].")
@click.option("--power", type=float, default=0.8, show_default=True, help="Target power.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Family-wise error rate.")
@click.option("--planned", type=int, help="Planned comparisons for the Bonferroni threshold [default: the set's, "
                                          "else the comparisons given].")
@click.option("--n-queries", "at", type=int, multiple=True, metavar="N",
              help="With N queries: the smallest detectable difference, and the budget (repeatable).")
@click.option("--sizes", help="Comma-separated sizes of the power curve [default: a grid to 2x the needed].")
@click.option("--resamples", type=int, default=500, show_default=True, help="Bootstrap resamples per size.")
@click.option("--permutations", type=int, default=999, show_default=True, help="Sign flips per simulated test.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the simulation.")
@click.option("--pool", "pool_folder", type=click.Path(file_okay=False), help="A pool folder (pool.json).")
@click.option("--pool-runs", multiple=True, type=click.Path(exists=True),
              help="Runs (files or folders) to pool for the budget [default: the pilot runs].")
@click.option("-k", "--depth", "depths", type=int, multiple=True, help="Pool depth for the budget (repeatable).")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False),
              help="queries.tsv or topics: the queries pooled, and their text for token counts.")
@click.option("--corpus", type=click.Path(dir_okay=False), help="Document texts for the LLM token counts.")
@click.option("--seconds-per-judgment", type=float, help="Annotator seconds per judgment.")
@click.option("--annotators", type=int, default=1, show_default=True, help="Annotators sharing the judging.")
@click.option("--overlap", type=int, default=1, show_default=True, help="Annotators who judge each pair.")
@click.option("--price-in", type=float, help="LLM price per million input tokens.")
@click.option("--price-out", type=float, help="LLM price per million output tokens.")
@click.option("--prompt-tokens", type=int, default=0, show_default=True,
              help="Fixed input tokens per task (instructions, guideline).")
@click.option("--output-tokens", type=int, default=10, show_default=True, help="Output tokens per task.")
@click.option("--tokenizer", type=click.Choice(["auto", "tiktoken", "chars"]), default="auto", show_default=True,
              help="auto: tiktoken o200k_base if it loads, else ceil(characters / 4).")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write power against queries as a PNG.")
def plan_command(qrels_path, runs, comparisons, metric, rel_level, gain, ties, missing, undefined, set_path, split,
                 override_contract, delta, power, alpha, planned, at, sizes, resamples, permutations, seed,
                 pool_folder, pool_runs, depths, queries_path, corpus, seconds_per_judgment, annotators, overlap,
                 price_in, price_out, prompt_tokens, output_tokens, tokenizer, output_format, plot):
    """How many queries and judgments a set needs, and what they cost, from a pilot.

    From a pilot (--set or --qrels, and RUNS): per-query differences of each comparison, their sd, the queries
    needed to detect --delta with --power at the Bonferroni threshold (paired t-test formula, and a bootstrap
    simulation of the permutation test), and the smallest difference N queries detect. With --depth (and
    --pool-runs) or --pool: the pairs to judge, annotator hours and LLM cost.
    """
    from evalset import budget, plan

    if pool_folder and depths:
        raise click.UsageError("give either --pool (a pool folder) or --depth (pool the runs), not both")
    try:
        grid = [int(v) for v in sizes.split(",")] if sizes else None
    except ValueError:
        raise click.BadParameter(f"expected sizes like 20,50,100, got {sizes!r}", param_hint="--sizes") from None
    scoring = power_plan = None
    if runs or qrels_path or set_path:
        scoring = _scoring(qrels_path, set_path, split, override_contract, rel_level=rel_level, gain=gain,
                           ties=ties, missing=missing, undefined=undefined)
    if runs:
        power_plan = _plan_pilot(scoring, runs, comparisons, metric, delta=delta, power=power, alpha=alpha,
                                 planned=planned, at=at, resamples=resamples, permutations=permutations, seed=seed,
                                 sizes=grid)
    sizes_found = _plan_budget(scoring, runs, pool_folder, pool_runs, depths, corpus, queries_path, prompt_tokens,
                               tokenizer)
    if power_plan is None and not sizes_found:
        raise click.UsageError("nothing to plan: give a pilot (--qrels or --set, and RUNS) or a budget (--depth or "
                               "--pool)")
    needed = [] if power_plan is None else [int(n) for n in power_plan.rows.loc[
        power_plan.rows["stratum"] == plan.ALL_QUERIES, "queries_needed"] if n != float("inf") and n == n]
    costs = dict(seconds_per_judgment=seconds_per_judgment, annotators=annotators, overlap=overlap,
                 price_in=price_in, price_out=price_out, output_tokens=output_tokens)
    table = budget.judging_budget(sizes_found, [*at, *needed], **costs) if sizes_found else None
    if price_in is not None and all(size.tokens_per_task is None for size in sizes_found):
        click.echo("note: no LLM cost without the tasks' texts: give --corpus and --queries, or a pool folder "
                   "with tasks.jsonl", err=True)
    if plot and power_plan is not None:
        plan.plot_power(power_plan, plot)
    if output_format == "json":
        document = {"pilot": None if power_plan is None else plan.plan_to_dict(power_plan),
                    "budget": None if table is None else {"settings": costs, "rows": plan.records(table),
                                                          "pools": [budget.pool_size_dict(s) for s in sizes_found]}}
        click.echo(json.dumps(document, indent=2))
        return
    lines = [] if power_plan is None else plan.summary_lines(power_plan)
    if table is not None:
        lines += ["", *budget.budget_lines(table, sizes_found, **costs)] if lines else budget.budget_lines(
            table, sizes_found, **costs)
    click.echo("\n".join(lines))
    if plot and power_plan is not None:
        click.echo(f"wrote {plot}")

# ---------------------------------------------------------------------------------------------------- report
@main.command("report")
@click.argument("set_path", metavar="SET", type=click.Path(file_okay=False))
@click.argument("more_runs", metavar="[RUN]...", nargs=-1, type=click.Path())
@click.option("--runs", "runs", metavar="RUN", multiple=True, type=click.Path(),
              help="Run files or folders of runs (TREC format, .gz allowed); `--runs A B C` works too.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--split", type=click.Choice(["test", "dev", "all"]), default="test", show_default=True,
              help="The queries the page is about.")
@click.option("--agreement", "agreement_path", type=click.Path(dir_okay=False),
              help="JSON of `evalset agreement --format json` [default: the set manifest's agreement block].")
@click.option("--resamples", type=int, default=9999, show_default=True, help="Bootstrap resamples per interval.")
@click.option("--permutations", type=int, default=9999, show_default=True, help="Sign flips per comparison.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of every resampling.")
def report_command(set_path, more_runs, runs, output, split, agreement_path, resamples, permutations, seed):
    """Write a self-contained HTML report of the frozen set SET (sets/NAME/vN) and the runs scored on it.

    The page (no script, no external resource; plots embedded as PNG) shows the set (queries per stratum,
    judgments per grade, judged@k per run), the agreement heatmap, the headline score of every run with a BCa
    bootstrap interval over queries, and each planned comparison: per-query differences, verdict, largest losses.
    """
    from evalset.report import build_report
    from evalset.sets import load_set
    from evalset.tables import atomic_path, expand_run_paths, read_run

    paths = (*runs, *more_runs)
    if not paths:
        raise click.UsageError("give the runs with --runs RUN [RUN ...]")
    named = expand_run_paths(paths)
    agreement = None
    if agreement_path:
        try:
            agreement = json.loads(Path(agreement_path).read_text())
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", agreement_path) from None
    page = build_report(load_set(set_path), {name: read_run(path) for name, path in named.items()},
                        agreement=agreement, split=split, seed=seed, resamples=resamples, permutations=permutations)
    with atomic_path(output) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(page)
    click.echo(f"wrote {output} ({len(page.encode()) / 1e6:.1f} MB): set {set_path}, {len(named)} runs, split {split}")


if __name__ == "__main__":
    main()
# ------------------------------------------------------------------------------------------------ agreement
@main.command("agreement")
@click.argument("inputs", nargs=-1, type=click.Path(dir_okay=False), metavar="[LABELS]...")
@click.option("--human", "humans", multiple=True, metavar="NAME|FILE",
              help="A qrels annotator that is human (its name, or its file, which is then read too). Repeatable; "
                   "qrels files not named here are LLM judges. Labels tables carry their own kind.")
@click.option("--guideline", type=click.Path(dir_okay=False), help="Guideline file: its scale (default 0,1,2,3).")
@click.option("--scale", help="The grade scale as comma-separated integers, when no guideline is given.")
@click.option("--out-of-scale", type=click.Choice(["error", "clip", "drop"]), default="error", show_default=True,
              help="A grade off the scale: refuse (naming file and line), clip it to the scale's end, or drop it.")
@click.option("--kappa", type=click.Choice(["unweighted", "linear", "quadratic"]), default="quadratic",
              show_default=True, help="The kappa of the matrix, heatmap and calibration verdict.")
@click.option("--bootstrap", "resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Query resamples (0: no bootstrap interval).")
@click.option("--confidence", type=float, default=0.95, show_default=True, help="Two-sided interval level.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the bootstrap.")
@click.option("--runs", "run_paths", multiple=True, type=click.Path(exists=True),
              help="A run file or a folder of runs (repeatable): compare system rankings under each annotator.")
@click.option("-m", "--measure", default="ndcg@10", show_default=True, help="Measure of the system rankings.")
@_evaluation_options
@click.option("--queries", type=click.Path(dir_okay=False), help="queries.tsv or topics: query texts.")
@click.option("--corpus", type=click.Path(dir_okay=False), help="Document texts (JSONL or TSV, .gz ok).")
@click.option("--disagreements", "disagreements_path", type=click.Path(dir_okay=False),
              help="Write every disagreement (largest gap first) to this TSV.")
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="Disagreements shown in the report.")
@click.option("--pairs", type=click.Choice(["all", "with-human"]), default="all", show_default=True,
              help="Pairs listed in the table format (JSON always has all).")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Heatmap of the pairwise kappa matrix (PNG).")
def agreement_command(inputs, humans, guideline, scale, out_of_scale, kappa, resamples, confidence, seed, run_paths,
                      measure, rel_level, gain, ties, missing, undefined, queries, corpus, disagreements_path, top,
                      pairs, output_format, output, plot):
    """Agreement of annotators in LABELS tables and TREC qrels files (a qrels file is one annotator, named by
    its file name): kappas with intervals, alpha, LLM calibration, system rankings, disagreements."""
    from evalset import agreement
    from evalset.agreement import report as render
    from evalset.guideline import read_guideline
    from evalset.tables import expand_run_paths, read_corpus, read_queries, read_run

    if guideline and scale:
        raise click.UsageError("give --guideline or --scale, not both")
    grades_scale = read_guideline(guideline).grades if guideline else _parse_scale(scale or "0,1,2,3")
    grades, counts = agreement.load_grades(list(inputs), humans)
    runs = {name: read_run(path) for name, path in expand_run_paths(run_paths).items()} if run_paths else None
    result = agreement.agreement_report(
        grades, grades_scale, out_of_scale=out_of_scale, kappa=kappa, resamples=resamples, level=confidence,
        seed=seed, runs=runs, measure=measure,
        contract=_contract(rel_level=rel_level, gain=gain, ties=ties, missing=missing, undefined=undefined),
        input_counts=counts)
    table = result.disagreements
    if queries or corpus:
        table = agreement.with_texts(table, read_queries(queries) if queries else None,
                                     read_corpus(corpus, set(table["doc_id"])) if corpus else None)
    if disagreements_path:
        render.write_disagreements(table, disagreements_path)
    if plot:
        render.write_heatmap(result, plot)
    text = (render.to_json(result, table, top) if output_format == "json"
            else render.format_table(result, pairs=pairs, disagreements=table, top=top))
    if output:
        render.write_text(text, output)
    else:
        click.echo(text, nl=False)


def _parse_scale(text: str) -> list[int]:
    try:
        grades = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise click.BadParameter(f"expected integers separated by commas, got {text!r}", param_hint="--scale") from None
    if len(grades) < 2:
        raise click.BadParameter("a scale needs at least two grades", param_hint="--scale")
    return grades
# ----------------------------------------------------------------------------------------------- push / pull
@main.command("push")
@click.argument("pool_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--guideline", "guideline_path", required=True, type=click.Path(dir_okay=False),
              help="The guideline (Markdown with a TOML scale): the labeling config and the instructions.")
@click.option("--project", "title", required=True, help="Project title: found, or created if absent.")
@click.option("--overlap", default=1, show_default=True, type=click.IntRange(min=1),
              help="How many annotators judge each task.")
@click.option("--url", default=None, help="Label Studio URL. Default: $LABEL_STUDIO_URL.")
@click.option("--api-key-env", default="LABEL_STUDIO_API_KEY", show_default=True,
              help="The environment variable holding the API token (the token itself is never an argument).")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(min=1),
              help="Tasks per import request.")
def push_command(pool_dir, guideline_path, title, overlap, url, api_key_env, batch_size):
    """Push POOL_DIR's tasks.jsonl to a Label Studio project, adding only pairs not already there."""
    from evalset import labelstudio
    from evalset.guideline import read_guideline

    guideline = read_guideline(guideline_path)
    client = labelstudio.connect(url, api_key_env)
    result = labelstudio.push(client, pool_dir, guideline, title, overlap=overlap, batch_size=batch_size)
    state = "created" if result.project_created else "found"
    click.echo(f"project {title!r} (id {result.project_id}, {state}): {result.pool_tasks} pool tasks, "
               f"{result.already_present} already there, {result.added} added; overlap {result.overlap}")
    for note in result.notes:
        click.echo(f"note: {note}")
    if result.duplicates:
        click.echo(f"warning: the project holds {result.duplicates} duplicate task(s) of the same pair_id "
                   "(not made by this push)", err=True)


@main.command("pull")
@click.option("--project", "title", required=True, help="Project title.")
@click.option("--pool", "pool_dir", required=True, type=click.Path(file_okay=False, exists=True),
              help="The pool folder that was pushed (its pool.tsv maps pair_id to query and document ids).")
@click.option("--guideline", "guideline_path", required=True, type=click.Path(dir_okay=False),
              help="The guideline the project was made from (its scale reads the grades).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The labels table (TSV).")
@click.option("--url", default=None, help="Label Studio URL. Default: $LABEL_STUDIO_URL.")
@click.option("--api-key-env", default="LABEL_STUDIO_API_KEY", show_default=True,
              help="The environment variable holding the API token.")
def pull_command(title, pool_dir, guideline_path, output, url, api_key_env):
    """Write every submitted annotation of a project as rows of the labels table."""
    from evalset import labelstudio
    from evalset.guideline import read_guideline
    from evalset.tables import write_labels

    guideline = read_guideline(guideline_path)
    client = labelstudio.connect(url, api_key_env)
    labels, report = labelstudio.pull(client, title, pool_dir, guideline)
    write_labels(labels, output)
    for line in report.lines():
        click.echo(line)
    click.echo(f"wrote {output}")
# ----------------------------------------------------------------------------------------------------- judge
@main.command("judge")
@click.argument("pool_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--guideline", "guideline_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The guideline file (its text goes into the prompt verbatim).")
@click.option("--model", required=True, help="Model name, as the endpoint knows it.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The labels table (TSV).")
@click.option("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL, else OpenAI).")
@click.option("--limit", type=int, help="Judge only the first N pairs in judging order.")
@click.option("--concurrency", type=int, default=8, show_default=True, help="Requests in flight.")
@click.option("--rpm", type=float, help="Client-side limit: requests per minute.")
@click.option("--tpm", type=float, help="Client-side limit: tokens per minute (estimated, chars/4).")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request.")
@click.option("--max-retries", type=int, default=6, show_default=True, help="Per pair: 429/5xx/timeout retries.")
@click.option("--max-invalid", type=int, default=2, show_default=True,
              help="Per pair: re-asks after an unparsable or off-scale answer before it is a failure.")
@click.option("--structured", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
              help="Structured output (JSON schema); auto falls back to the strict parser on a 400.")
@click.option("--max-tokens", type=int, help="max_completion_tokens for the answer (default: the server's).")
@click.option("--template", "template_path", type=click.Path(exists=True, dir_okay=False),
              help="Prompt template (default: the shipped relevance-judge-v1).")
@click.option("--journal", "journal_path", type=click.Path(dir_okay=False),
              help="Journal (SQLite; default OUTPUT.journal.sqlite).")
@click.option("--failures", "failures_path", type=click.Path(dir_okay=False),
              help="Failures table (default: OUTPUT stem + .failures.tsv).")
@click.option("--retry-failed", is_flag=True, help="Ask again the pairs the journal lists as failed.")
@click.option("--batch", is_flag=True, help="Use the Batch API (upload, poll, collect) instead of live requests.")
@click.option("--poll", "poll_seconds", type=float, default=30.0, show_default=True, help="Batch poll interval (s).")
@click.option("--price-in", type=float, help="Price per million input tokens (for the cost line).")
@click.option("--price-out", type=float, help="Price per million output tokens.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the backoff jitter.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
def judge_command(pool_dir, guideline_path, model, output, base_url, limit, concurrency, rpm, tpm, timeout,
                  max_retries, max_invalid, structured, max_tokens, template_path, journal_path, failures_path,
                  retry_failed, batch, poll_seconds, price_in, price_out, seed, progress):
    """Grade the pool's pairs with an LLM through an OpenAI-compatible endpoint (key: OPENAI_API_KEY)."""
    import openai

    from evalset.judge import job
    from evalset.judge.client import JudgeAborted, JudgeSettings
    from evalset.judge.prompt import DEFAULT_TEMPLATE

    for name, value in (("--concurrency", concurrency), ("--rpm", rpm), ("--tpm", tpm), ("--timeout", timeout)):
        if value is not None and value <= 0:
            raise click.BadParameter(f"must be > 0, got {value}", param_hint=name)
    settings = JudgeSettings(model=model, base_url=base_url, concurrency=concurrency, rpm=rpm, tpm=tpm,
                             timeout=timeout, max_retries=max_retries, max_invalid=max_invalid, structured=structured,
                             max_tokens=max_tokens, seed=seed, retry_failed=retry_failed)
    try:
        result = job.judge_pool(pool_dir, guideline_path, output, settings, limit=limit,
                                template_path=template_path or DEFAULT_TEMPLATE, journal_path=journal_path,
                                failures_path=failures_path, batch=batch, poll_seconds=poll_seconds,
                                progress=progress)
    except JudgeAborted as exc:
        raise click.ClickException(f"the endpoint refused the job ({exc}); answers so far are in the journal") from None
    except openai.APIError as exc:  # the batch path's upload/create/poll, after the client's own retries
        raise click.ClickException(f"{type(exc).__name__}: {exc}; answers so far are in the journal") from None
    for line in job.summary_lines(result, price_in, price_out):
        click.echo(line)
