"""The ``evalset plan`` command."""

from __future__ import annotations

import sys

import click

from evalset.cli.emit import emit
from evalset.cli.options import (
    contract_options,
    evaluation_from_options,
    force_option,
    one_metric,
    png_path,
    run_pairs,
)
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_METRIC
from evalset.planning.spec import PlanSpec


@click.command("plan")
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False),
              help="Pilot qrels: qid 0 docid grade. Required unless --set.")
@click.argument("runs", nargs=-1, type=click.Path())
@click.option("--compare", "comparisons", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A planned comparison (run names); repeatable [default: the set's planned comparisons, else "
                   "the first run against each other].")
@one_metric(f"The metric [default: {DEFAULT_METRIC}, or the set's headline].")
@contract_options
@ruled(PlanSpec, "delta", "--delta", help="Smallest difference worth shipping [default: each observed difference].")
@ruled(PlanSpec, "power", "--power", help="Target power.")
@ruled(PlanSpec, "alpha", "--alpha", help="Family-wise error rate.")
@ruled(PlanSpec, "planned", "--planned", help="Planned comparisons for the Bonferroni threshold [default: the set's, "
                                              "else the comparisons given].")
@ruled(PlanSpec, "at", "--n-queries", "at", multiple=True, metavar="N",
       help="A number of queries at which to report the smallest detectable difference and the budget "
            "(repeatable).")
@ruled(PlanSpec, "sizes", "--sizes", separator=",", metavar="N,N,...",
       help="Comma-separated sizes of the power curve [default: a grid to 2x the needed].")
@ruled(PlanSpec, "resamples", "--resamples", help="Bootstrap resamples per size.")
@ruled(PlanSpec, "permutations", "--permutations", help="Sign flips per simulated test.")
@ruled(PlanSpec, "seed", "--seed", help="Seed of the simulation.")
@click.option("--pool", "pool_folder", type=click.Path(file_okay=False), help="A pool folder (pool.json).")
@click.option("--pool-runs", multiple=True, type=click.Path(exists=True),
              help="Runs (files or folders) to pool at --depth for the budget [default: the pilot runs].")
@ruled(PlanSpec, "depths", "-k", "--depth", "depths", multiple=True, metavar="K",
       help="Pool depth for the budget (repeatable).")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False),
              help="queries.tsv or topics: the queries pooled, and their text for token counts.")
@click.option("--corpus", type=click.Path(dir_okay=False), help="Document texts for the LLM token counts.")
@ruled(PlanSpec, "seconds_per_judgment", "--seconds-per-judgment", help="Annotator seconds per judgment.")
@ruled(PlanSpec, "annotators", "--annotators", help="Annotators sharing the judging.")
@ruled(PlanSpec, "overlap", "--overlap", help="Annotators who judge each pair (at most --annotators).")
@ruled(PlanSpec, "price_in", "--price-in", help="LLM price per million input tokens.")
@ruled(PlanSpec, "price_out", "--price-out", help="With --price-in: LLM price per million output tokens.")
@ruled(PlanSpec, "prompt_tokens", "--prompt-tokens", help="Fixed input tokens per task (instructions, guideline).")
@ruled(PlanSpec, "output_tokens", "--output-tokens", help="Output tokens per task.")
@ruled(PlanSpec, "tokenizer", "--tokenizer",
       help="auto: tiktoken o200k_base if it loads, else ceil(characters / 4).")
@format_option()
@click.option("--plot", type=click.Path(dir_okay=False), callback=png_path,
              help="Write power against queries as a PNG.")
@force_option(folder=False)
def plan_command(qrels_path, runs, comparisons, metric, contract, set_path, split, override_contract, delta, power,
                 alpha, planned, at, sizes, resamples, permutations, seed, pool_folder, pool_runs, depths, queries_path,
                 corpus, seconds_per_judgment, annotators, overlap, price_in, price_out, prompt_tokens, output_tokens,
                 tokenizer, output_format, plot, force):
    """How many queries and judgments a set needs, and what they cost, from a pilot.

    From a pilot (--set or --qrels, and RUNS): per-query differences of each comparison, their sd, the queries
    needed to detect --delta with --power at the Bonferroni threshold (paired t-test formula, and a bootstrap
    simulation of the permutation test), and the smallest difference N queries detect. With --depth (and
    --pool-runs) or --pool: the pairs to judge, annotator hours and LLM cost.
    """
    spec = PlanSpec(runs=runs, comparisons=run_pairs(comparisons, "--compare"), metric=metric, planned=planned,
                    delta=delta, power=power, alpha=alpha, at=at, sizes=sizes, resamples=resamples,
                    permutations=permutations, seed=seed, pool_folder=pool_folder, pool_runs=pool_runs, depths=depths,
                    queries_path=queries_path, corpus=corpus, prompt_tokens=prompt_tokens, tokenizer=tokenizer,
                    seconds_per_judgment=seconds_per_judgment, annotators=annotators, overlap=overlap,
                    price_in=price_in, price_out=price_out, output_tokens=output_tokens)
    from tqdm import tqdm

    from evalset.io.outputs import check_outputs
    from evalset.planning import plan

    check_outputs({"--plot": plot}, {"--qrels": qrels_path, "--set": set_path, "RUNS": runs, "--pool": pool_folder,
                                     "--pool-runs": pool_runs, "--queries": queries_path, "--corpus": corpus},
                  force=force)
    evaluation = None
    if runs or qrels_path or set_path:
        evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract)
    result = plan.make_plan(evaluation, spec, progress=lambda cells: tqdm(cells, desc="simulating", unit="size",
                                                                          disable=None, file=sys.stderr))
    if plot and result.power is not None:
        plan.plot_power(result.power, plot)
    emit(result, output_format, notes_first=True)
    if plot and result.power is not None and output_format != "json":
        click.echo(f"wrote {plot}")
