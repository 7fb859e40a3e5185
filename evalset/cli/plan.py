"""The ``evalset plan`` command."""

from __future__ import annotations

import json
import sys

import click

from evalset.cli.options import contract_options, run_pairs
from evalset.contract import DEFAULT_SEED
from evalset.scoring import _Scoring, _scoring


def _plan_pilot(scoring: _Scoring, runs: tuple[str, ...], comparisons: tuple[str, ...], metric: str | None,
                **settings):
    from tqdm import tqdm

    from evalset import plan
    from evalset.io.trec import read_runs
    from evalset.metrics import evaluate_runs, parse_measure

    metric = metric or scoring.headline
    tables = evaluate_runs(read_runs(runs), scoring.qrels, [parse_measure(metric)], scoring.contract)
    names = list(tables)
    chosen = run_pairs(comparisons, "--compare") or (scoring.frozen.planned if scoring.frozen else []) or \
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
    from evalset.io.queries import read_queries
    from evalset.io.trec import expand_run_paths, read_run

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


@click.command("plan")
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), help="Pilot qrels: qid 0 docid grade.")
@click.argument("runs", nargs=-1, type=click.Path())
@click.option("--compare", "comparisons", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A planned comparison (run names); repeatable [default: the set's planned comparisons, else "
                   "the first run against each other].")
@click.option("-m", "--metric", help="The metric [default: ndcg@10, or the set's headline].")
@contract_options
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
