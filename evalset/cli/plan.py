"""The ``evalset plan`` commands: ``plan power`` (the queries a comparison needs, from a pilot) and ``plan cost``
(the pairs of a pool and what judging them costs)."""

from __future__ import annotations

import sys

import click

from evalset.cli.emit import emit
from evalset.cli.metric_option import one_metric
from evalset.cli.options import contract_options, evaluation_from_options, force_option, png_path, run_pairs
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_METRIC
from evalset.planning.spec import CostSpec, PowerSpec


@click.group("plan")
def plan_group():
    """How many queries a comparison needs (plan power), and what judging a pool costs (plan cost)."""


@plan_group.command("power")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("--compare", "comparisons", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A planned comparison (run names); repeatable [default: the set's planned comparisons, else "
                   "the first run against each other].")
@one_metric(f"The metric [default: {DEFAULT_METRIC}, or the set's headline].")
@contract_options
@ruled(PowerSpec, "delta", "--delta", help="Smallest difference worth shipping [default: each observed difference].")
@ruled(PowerSpec, "power", "--power", help="Target power.")
@ruled(PowerSpec, "alpha", "--alpha", help="Family-wise error rate.")
@ruled(PowerSpec, "planned", "--planned", help="Planned comparisons for the Bonferroni threshold [default: the "
                                               "set's, else the comparisons given].")
@ruled(PowerSpec, "at", "--n-queries", "at", multiple=True, metavar="N",
       help="A number of queries at which to report the smallest detectable difference (repeatable).")
@ruled(PowerSpec, "sizes", "--sizes", separator=",", metavar="N,N,...",
       help="Comma-separated sizes of the power curve [default: a grid to 2x the needed].")
@ruled(PowerSpec, "resamples", "--resamples", help="Bootstrap resamples per size.")
@ruled(PowerSpec, "permutations", "--permutations", help="Sign flips per simulated test.")
@ruled(PowerSpec, "seed", "--seed", help="Seed of the simulation.")
@format_option()
@click.option("--plot", type=click.Path(dir_okay=False), callback=png_path,
              help="Write power against queries as a PNG.")
@force_option(folder=False)
def power_command(qrels_path, runs, comparisons, metric, contract, set_path, split, override_contract, delta, power,
                  alpha, planned, at, sizes, resamples, permutations, seed, output_format, plot, force):
    """How many queries a comparison needs, from a pilot: RUNS scored on --qrels or --set.

    Per comparison: the per-query differences and their sd, the queries needed to detect --delta with --power at
    the Bonferroni threshold (paired t-test formula, and a bootstrap simulation of the permutation test), and the
    smallest difference N queries detect. What judging them costs: `evalset plan cost`.
    """
    spec = PowerSpec(runs=runs, comparisons=run_pairs(comparisons, "--compare"), metric=metric, planned=planned,
                     delta=delta, power=power, alpha=alpha, at=at, sizes=sizes, resamples=resamples,
                     permutations=permutations, seed=seed)
    from tqdm import tqdm

    from evalset.io.outputs import check_outputs
    from evalset.planning import plan

    check_outputs({"--plot": plot}, {"--qrels": qrels_path, "--set": set_path, "RUNS": runs}, force=force)
    evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract)
    result = plan.make_power_plan(evaluation, spec, progress=lambda cells: tqdm(
        cells, desc="simulating", unit="size", disable=None, file=sys.stderr))
    emit(result, output_format, notes_first=True, written=[result.plot(plot)] if plot else [])


@plan_group.command("cost")
@click.argument("runs", nargs=-1, type=click.Path(exists=True))
@ruled(CostSpec, "depths", "-k", "--depth", "depths", multiple=True, metavar="K",
       help="Pool RUNS at this depth (repeatable).")
@click.option("--pool", "pool_folder", type=click.Path(file_okay=False),
              help="A pool folder (pool.json) instead of RUNS and --depth.")
@ruled(CostSpec, "at", "--n-queries", "at", multiple=True, metavar="N",
       help="Another number of queries to cost, at the pool's pairs per query (repeatable).")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False),
              help="queries.tsv or topics: the queries pooled, and their text for token counts.")
@click.option("--corpus", type=click.Path(dir_okay=False), help="Document texts for the LLM token counts.")
@ruled(CostSpec, "seconds_per_judgment", "--seconds-per-judgment", help="Annotator seconds per judgment.")
@ruled(CostSpec, "annotators", "--annotators", help="Annotators sharing the judging.")
@ruled(CostSpec, "overlap", "--overlap", help="Annotators who judge each pair (at most --annotators).")
@ruled(CostSpec, "price_in", "--price-in", help="LLM price per million input tokens.")
@ruled(CostSpec, "price_out", "--price-out", help="With --price-in: LLM price per million output tokens.")
@ruled(CostSpec, "prompt_tokens", "--prompt-tokens", help="Fixed input tokens per task (instructions, guideline).")
@ruled(CostSpec, "output_tokens", "--output-tokens", help="Output tokens per task.")
@ruled(CostSpec, "tokenizer", "--tokenizer", help="auto: tiktoken o200k_base if it loads, else ceil(characters / 4).")
@format_option()
def cost_command(runs, depths, pool_folder, at, queries_path, corpus, seconds_per_judgment, annotators, overlap,
                 price_in, price_out, prompt_tokens, output_tokens, tokenizer, output_format):
    """The pairs of a pool and what judging them costs: RUNS pooled at --depth, or a --pool folder; at the pool's
    queries and at each --n-queries, in annotator hours and LLM tokens and money."""
    from evalset.planning import budget

    spec = CostSpec(runs=runs, depths=depths, pool_folder=pool_folder, at=at, queries_path=queries_path,
                    corpus=corpus, prompt_tokens=prompt_tokens, tokenizer=tokenizer,
                    seconds_per_judgment=seconds_per_judgment, annotators=annotators, overlap=overlap,
                    price_in=price_in, price_out=price_out, output_tokens=output_tokens)
    emit(budget.make_cost_plan(spec), output_format, notes_first=True)
