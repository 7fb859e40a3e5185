"""The ``evalset holes`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.metric_option import one_metric
from evalset.cli.options import contract_options, evaluation_from_options, force_option
from evalset.cli.ruled import format_option, ruled
from evalset.comparing.spec import CompareSpec
from evalset.contract import DEFAULT_METRIC


@click.command("holes")
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("candidates", nargs=-1, required=True, type=click.Path(dir_okay=False))
@one_metric(f"The metric of the comparisons [default: {DEFAULT_METRIC}, or the set's headline].")
@contract_options
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="The holes' pool folder (pool.tsv, pool_sources.tsv, pool.json; tasks.jsonl with --corpus), for "
                   "push, judge or estimate select holes.")
@ruled(CompareSpec, "depth", "--depth", metavar="K", help="The top k whose unjudged documents are the holes [default: "
                                                     "the metric's cutoff].")
@click.option("--queries", type=click.Path(dir_okay=False),
              help="Queries (queries.tsv or topics): the strata of a traffic-weighted verdict, and with --corpus the "
                   "texts of the pool's tasks.")
@click.option("--corpus", type=click.Path(dir_okay=False), help="With --queries: document texts for tasks.jsonl.")
@ruled(CompareSpec, "planned", "--planned", help="Number of planned comparisons for the Bonferroni threshold alpha/N "
                                                 "[default: the candidates; with --set: the set's planned ones].")
@click.option("--exploratory", is_flag=True, help="Not planned beforehand: reported as a lead, never as a difference.")
@ruled(CompareSpec, "alpha", "--alpha", help="Family-wise error rate.")
@ruled(CompareSpec, "permutations", "--permutations", help="Random sign flips of each test.")
@ruled(CompareSpec, "seed", "--seed", help="Seed of every resampling, and of the pool's judging order.")
@format_option()
@force_option()
def holes(qrels_path, baseline, candidates, metric, contract, set_path, split, override_contract, output, depth,
          queries, corpus, planned, exploratory, alpha, permutations, seed, output_format, force):
    """The holes of each comparison of BASELINE with a CANDIDATE: the unjudged documents of the runs' top k, the
    range of the difference and of the verdict over extreme fills of them (every hole not relevant, every hole at
    the top grade), whether they could flip the verdict, and the pool folder -o of the holes to judge (or a sample
    of them: `evalset estimate select holes FOLDER --set SET`). On a set the comparisons are logged, as compare's are.
    """
    from evalset.io.outputs import check_outputs
    from evalset.io.poolfiles import POOL_FILES

    runs = (baseline, *candidates)
    spec = CompareSpec(metric=metric, planned=planned, exploratory=exploratory, alpha=alpha, permutations=permutations,
                       seed=seed, depth=depth, strata=queries)
    check_outputs({}, {"--qrels": qrels_path, "BASELINE": baseline, "CANDIDATES": candidates, "--set": set_path,
                       "--queries": queries, "--corpus": corpus}, folders={"-o": (output, POOL_FILES)}, force=force)
    evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract)
    from evalset.comparing import compare_with_holes

    result = compare_with_holes(evaluation, runs, output, spec=spec, corpus=corpus)
    written = result.write(replace=force)  # before printing: a closed stdout loses no pool
    emit(result, output_format, written=written)
