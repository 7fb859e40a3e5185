"""The ``evalset estimate`` command (PPI++ from LLM grades and a human slice) and ``evalset estimate select``."""

from __future__ import annotations

import json

import click

from evalset.cli.options import conflicting_grades_option, evaluation_options, run_pairs
from evalset.contract import DEFAULT_SEED


class _EstimateGroup(click.Group):
    """``estimate`` with its one subcommand, ``select``; a stray argument is most often a second run after
    ``--runs``, so the message says how runs are given."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands:
            raise click.UsageError(f"unexpected argument {args[0]!r}: give each run file or folder with its own "
                                   "--runs (--runs A --runs B), or `estimate select POOL_DIR` to draw a slice")
        return super().resolve_command(ctx, args)


@click.group("estimate", cls=_EstimateGroup, invoke_without_command=True)
@click.option("--runs", "runs", metavar="RUN", multiple=True, type=click.Path(),
              help="Run files or folders of runs (TREC format, .gz allowed); repeatable.")
@click.option("--llm", "llm_paths", multiple=True, type=click.Path(dir_okay=False),
              help="LLM grades of every query: labels of `evalset judge`, or qrels; repeatable (merged by median).")
@click.option("--human", "human_paths", multiple=True, type=click.Path(dir_okay=False),
              help="Human grades of the slice (labels of `evalset pull`, or qrels); with --simulate: of every query.")
@click.option("--slice", "slice_path", type=click.Path(), help="The slice record (slice.json, or its folder) of "
              "`evalset estimate select`. Required unless --simulate.")
@click.option("-m", "--metric", "metrics", multiple=True, help="A metric to estimate; repeatable [default: ndcg@10].")
@click.option("--compare", "comparisons", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A paired difference to estimate (run names); repeatable.")
@click.option("--planned", type=int, help="Planned comparisons for the Bonferroni threshold [default: the --compare "
                                          "pairs].")
@click.option("--exploratory", is_flag=True, help="The comparisons were not planned: reported, never established.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Family-wise error rate.")
@click.option("--level", type=float, default=0.95, show_default=True, help="Confidence level of the run means.")
@click.option("--interval", type=click.Choice(["t", "normal"]), default="t", show_default=True,
              help="t: Student's t quantile on (human queries - 1) df, for small slices; normal: ppi_py's interval.")
@click.option("--simulate", "draws", type=int, help="Validate on fully human-graded data: draw this many random "
              "slices and report the intervals' coverage and widths.")
@click.option("--slice-size", type=int, help="With --simulate: human-graded queries per simulated slice.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the simulated slices.")
@conflicting_grades_option
@evaluation_options
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@click.pass_context
def estimate(ctx, runs, llm_paths, human_paths, slice_path, metrics, comparisons, planned, exploratory, alpha, level,
             interval, draws, slice_size, seed, conflicting_grades, rel_level, gain, ties, missing, undefined,
             output_format):
    """Estimate each run's mean (and paired differences) from LLM grades on every query, corrected by human
    grades on a random slice of queries (PPI++ with ppi_py), beside the human slice alone and the LLM alone.

    First draw the slice with `evalset estimate select`, have humans grade its pool (push/pull), then run this
    with --slice. With --simulate R --slice-size N on fully human-graded data, check the intervals' coverage.
    """
    if ctx.invoked_subcommand is not None:
        return
    from evalset.contract import EvaluationContract
    from evalset.estimate import (
        check_coverage,
        estimate_runs,
        format_estimate,
        format_simulation,
        read_grades,
        read_slice,
        simulate,
    )
    from evalset.io.trec import read_runs
    from evalset.stats.family import ComparisonFamily
    from evalset.stats.ppi import ppi_py_module

    if not runs or not llm_paths or not human_paths:
        raise click.UsageError("give --runs, --llm and --human (see --help)")
    if (draws is None) == (slice_path is None):
        raise click.UsageError("give --slice (an estimate) or --simulate R --slice-size N (a validation)")
    ppi_py_module()  # a missing extra is said before any work
    contract = EvaluationContract.from_options(rel_level=rel_level, gain=gain, ties=ties, missing=missing,
                                               undefined=undefined)
    pairs = run_pairs(comparisons, "--compare")
    named = read_runs(runs)
    human = read_grades(human_paths, "human", conflicting_grades)
    llm = read_grades(llm_paths, "llm", conflicting_grades)
    if draws is not None:
        if slice_size is None:
            raise click.UsageError("--simulate needs --slice-size")
        result = simulate(named, human, llm, slice_size=slice_size, draws=draws, metric=(metrics or ("ndcg@10",))[0],
                          contract=contract, pairs=pairs or None, level=level, interval=interval, seed=seed)
        text = format_simulation(result)
    else:
        record = read_slice(slice_path)
        notes = check_coverage(human, llm, record.queries["query_id"].tolist(), record.slice, slice_path)
        family = ComparisonFamily.of(len(pairs), planned=planned)
        result = estimate_runs(named, human, llm, record, metrics=metrics or ("ndcg@10",), contract=contract,
                               pairs=pairs, family=family, exploratory=exploratory, alpha=alpha, level=level,
                               interval=interval, notes=notes)
        text = format_estimate(result)
    click.echo(json.dumps(result.to_dict(), indent=2) if output_format == "json" else text)


@estimate.command("select")
@click.argument("pool_dir", type=click.Path(file_okay=False))
@click.option("--size", type=int, help="Queries in a uniform slice.")
@click.option("--per-stratum", type=int, help="Queries per traffic stratum (needs --queries).")
@click.option("--fraction", type=float, help="Share of each stratum's queries, rounded up (needs --queries).")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False),
              help="queries.tsv of `evalset sample`: the strata and their traffic shares.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the draw.")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="The slice's pool folder (pool.tsv, tasks.jsonl, ... and slice.json).")
def select_command(pool_dir, size, per_stratum, fraction, queries_path, seed, output):
    """Draw, seeded, the queries of POOL_DIR that humans will grade in full, and write their pool folder (for
    `evalset push` or `evalset judge` as it is) with the slice record that `evalset estimate --slice` reads."""
    from pathlib import Path

    from evalset.estimate import select_from_pool, write_slice_pool
    from evalset.io.outputs import check_outputs
    from evalset.io.queries import read_queries
    from evalset.pooling.folder import POOL_FILES

    if sum(v is not None for v in (size, per_stratum, fraction)) != 1:
        raise click.UsageError("give one of --size, --per-stratum or --fraction")
    if Path(output).resolve() == Path(pool_dir).resolve():
        raise click.UsageError("the slice's folder must not be the pool folder it is cut from")
    check_outputs({"-o": [str(Path(output, name)) for name in (*POOL_FILES, "slice.json")]},
                  {"POOL_DIR": pool_dir, "--queries": queries_path})
    queries = read_queries(queries_path) if queries_path else None
    if queries is not None:
        queries.attrs["source"] = queries_path
    record = select_from_pool(pool_dir, queries=queries, seed=seed, size=size, per_stratum=per_stratum,
                              fraction=fraction)
    write_slice_pool(pool_dir, record, output)
    click.echo(f"{record.summary()}; wrote {output} (push it to Label Studio, then pass {output} to "
               "`evalset estimate --slice`)")
