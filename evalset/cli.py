"""The ``evalset`` command line: one short function per command, parsing and printing only."""

from __future__ import annotations

import json
import sys

import click
import pandas as pd

from evalset import __version__
from evalset.compare import DEFAULT_SEED, Comparison, compare_paired
from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.metrics import TIE_RULES, Measure, evaluate_runs, parse_measure, summarize
from evalset.tables import read_qrels, read_run, run_name


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
def _contract_options(command):
    """The evaluation-contract options shared by score and compare."""
    options = [
        click.option("--rel-level", type=int, default=1, show_default=True,
                     help="Binary measures count a document relevant when grade >= this."),
        click.option("--gain", type=click.Choice(["linear", "exponential"]), default="linear", show_default=True,
                     help="nDCG gain: the grade, or 2^grade - 1."),
        click.option("--ties", type=click.Choice(list(TIE_RULES)), default="trec", show_default=True,
                     help="Tie rule for equal scores: trec (doc id descending), run (the run's order), "
                          "docid (ascending), expected (expectation over tied orders)."),
        click.option("--missing", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
                     help="A judged query absent from a run scores 0, or is skipped (trec_eval)."),
        click.option("--undefined", type=click.Choice(["skip", "zero"]), default="skip", show_default=True,
                     help="A query with no relevant document is left out of the mean, or scores 0 (trec_eval)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _contract(rel_level: int, gain: str, ties: str, missing: str, undefined: str) -> EvaluationContract:
    return EvaluationContract(rel_level=rel_level, gain=gain, ties=ties, missing=missing, undefined=undefined)


def _read_runs(paths: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    runs: dict[str, pd.DataFrame] = {}
    for path in paths:
        name = run_name(path)
        if name in runs:
            raise InputError(f"two runs are named {name!r}; rename one file", path)
        runs[name] = read_run(path)
    return runs


def _metric_spellings(metrics: tuple[str, ...], default: tuple[str, ...]) -> dict[str, Measure]:
    """Spelling as given -> Measure, with judged@k placed beside every nDCG@k (pool bias made visible)."""
    given = {text: parse_measure(text) for text in (metrics or default)}
    spelled: dict[str, Measure] = {}
    for text, measure in given.items():
        spelled[text] = measure
        judged = Measure("judged", measure.cutoff) if measure.name == "ndcg" and measure.cutoff else None
        if judged and judged not in given.values() and judged not in spelled.values():
            spelled[str(judged)] = judged
    return spelled


def _json_number(value: float) -> float | None:
    return None if pd.isna(value) else float(value)


@main.command()
@click.option("--qrels", "qrels_path", required=True, type=click.Path(dir_okay=False),
              help="TREC qrels: qid 0 docid grade.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Repeatable: ndcg@10, ndcg, ap, ap@100, p@10, recall@100, rr, rr@10, rprec, bpref, success@10, "
                   "judged@10 (trec_eval names such as ndcg_cut_10 or P_10 work too). "
                   "Default: ndcg@10, ap, rr, p@10. judged@k is added beside every ndcg@k.")
@_contract_options
@click.option("--per-query", is_flag=True, help="Also print every query's value.")
@click.option("--format", "output_format", type=click.Choice(["table", "tsv", "json"]), default="table",
              show_default=True)
def score(qrels_path, runs, metrics, rel_level, gain, ties, missing, undefined, per_query, output_format):
    """Score RUN files (TREC format, .gz allowed) against QRELS.

    Means are over queries where the measure is defined; the number of defined and undefined queries is
    printed with each mean. A run's name is its file name without extensions.
    """
    contract = _contract(rel_level, gain, ties, missing, undefined)
    spelled = _metric_spellings(metrics, ("ndcg@10", "ap", "rr", "p@10"))
    qrels = read_qrels(qrels_path)
    tables = evaluate_runs(_read_runs(runs), qrels, list(spelled.values()), contract)
    summaries = {name: summarize(table) for name, table in tables.items()}
    if output_format == "json":
        document = {
            "contract": contract.to_dict(),
            "runs": {
                name: {text: {"mean": _json_number(summary.loc[str(m), "mean"]),
                              "defined": int(summary.loc[str(m), "defined"]),
                              "undefined": int(summary.loc[str(m), "undefined"])}
                       for text, m in spelled.items()}
                for name, summary in summaries.items()
            },
            "notes": {name: dict(table.attrs) for name, table in tables.items()},
        }
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
            rows = [{"run": name, "metric": text, **summary.loc[str(m)].to_dict()}
                    for name, summary in summaries.items() for text, m in spelled.items()]
            click.echo(pd.DataFrame(rows).to_csv(sep="\t", index=False, na_rep=""), nl=False)
    else:
        click.echo(format_score_table(summaries, spelled, contract, tables))
        if per_query:
            wide = _long_per_query(tables, spelled).pivot_table(
                index=["run", "query_id"], columns="metric", values="value", sort=False, dropna=False)
            click.echo("\n" + wide[list(spelled)].to_string(float_format=lambda v: f"{v:.4f}", na_rep="undef"))
    for name, table in tables.items():
        _warn_counts(name, table.attrs, qrels)


def _long_per_query(tables: dict[str, pd.DataFrame], spelled: dict[str, Measure]) -> pd.DataFrame:
    parts = []
    for name, table in tables.items():
        renamed = table[[str(m) for m in spelled.values()]].set_axis(list(spelled), axis=1)
        long = renamed.reset_index().melt(id_vars="query_id", var_name="metric", value_name="value")
        parts.append(long.assign(run=name))
    return pd.concat(parts, ignore_index=True)[["run", "query_id", "metric", "value"]]


def format_score_table(summaries, spelled, contract, tables) -> str:
    header = ["run", *spelled]
    rows = [[name, *(_cell(summary.loc[str(m)]) for m in spelled.values())] for name, summary in summaries.items()]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
             for row in [header, *rows]]
    settings = " ".join(f"{key}={value}" for key, value in contract.to_dict().items())
    first = next(iter(tables.values()))
    lines.append(f"\n{len(first)} queries scored; contract: {settings}")
    lines.append("a mean is over defined queries; (n/m) = defined/undefined when some are undefined")
    return "\n".join(lines)


def _cell(row: pd.Series) -> str:
    mean = "n/a" if pd.isna(row["mean"]) else f"{row['mean']:.4f}"
    return mean if row["undefined"] == 0 else f"{mean} ({int(row['defined'])}/{int(row['undefined'])})"


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
@click.option("--qrels", "qrels_path", required=True, type=click.Path(dir_okay=False))
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("candidates", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--metric", default="ndcg@10", show_default=True, help="The one metric the verdict is on.")
@_contract_options
@click.option("--planned", type=int, default=None,
              help="Number of planned comparisons for the Bonferroni threshold 0.05/N [default: the candidates].")
@click.option("--exploratory", is_flag=True, help="Not planned beforehand: reported, never established.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Family-wise error rate.")
@click.option("--permutations", type=int, default=9999, show_default=True, help="Random sign flips.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of every resampling.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
def compare(qrels_path, baseline, candidates, metric, rel_level, gain, ties, missing, undefined, planned,
            exploratory, alpha, permutations, seed, output_format):
    """Compare each CANDIDATE run against BASELINE, per query, on one metric.

    The verdict comes from a paired permutation test at the Bonferroni threshold alpha/planned; the paired
    t-test, a BCa bootstrap interval (level 1 - threshold) and the effect size are printed beside it.
    """
    contract = _contract(rel_level, gain, ties, missing, undefined)
    measure = parse_measure(metric)
    runs = _read_runs((baseline, *candidates))
    tables = evaluate_runs(runs, read_qrels(qrels_path), [measure], contract)
    names = list(runs)
    results = [
        compare_paired(tables[names[0]][str(measure)], tables[name][str(measure)], baseline_name=names[0],
                       candidate_name=name, metric=metric, planned=planned or len(candidates),
                       exploratory=exploratory, alpha=alpha, permutations=permutations, seed=seed)
        for name in names[1:]
    ]
    if output_format == "json":
        click.echo(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        click.echo("\n\n".join(format_comparison(r) for r in results))


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
