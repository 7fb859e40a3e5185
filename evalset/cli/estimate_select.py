"""The ``evalset estimate select`` commands, one for each thing drawn: ``slice`` (the queries humans grade in full),
``documents`` (a sample of a pool's pairs over every query) and ``holes`` (a sample of a frozen set's holes)."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import apply_options, force_option
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.estimate.spec import DOCUMENT_SAMPLE_RULES, HOLE_SIZING_RULES, SELECT_RULES
from evalset.params import check

SEE = "See docs/estimate.md and docs/reusability.md."


def budget_or_share(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int | None, float | None]:
    """``--budget``: an integer of judgments expected (``1000``) or a percentage of the pool's pairs (``10%``) ->
    (budget, fraction), each checked by the rule the library declares for it."""
    if value is None:
        return None, None
    text = value.strip()
    share = text.endswith("%")
    try:
        parsed = float(text[:-1]) / 100 if share else int(text)
    except ValueError:
        raise click.BadParameter(f"give a number of judgments (1000) or a percentage of the pool's pairs (10%), "
                                 f"got {value!r}") from None
    try:
        check("fraction" if share else "budget", parsed, DOCUMENT_SAMPLE_RULES["fraction" if share else "budget"])
    except InputError as exc:
        raise click.BadParameter(exc.message) from None
    return (None, parsed) if share else (parsed, None)


def drawn_into(what: str):
    """The options every draw shares: the pool drawn from, the seed, the folder written, --force and --format."""
    return lambda command: apply_options(command, [
        click.argument("pool_dir", type=click.Path(file_okay=False)),
        ruled(SELECT_RULES, "seed", "--seed", default=DEFAULT_SEED, help="Seed of the draw."),
        click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
                     help=f"The folder written: the drawn {what}' pool folder (pool.tsv, tasks.jsonl, ...) and the "
                          "draw's record."),
        force_option(), format_option()])


def guarded(pool_dir, output, force, records: tuple[str, ...], **inputs) -> None:
    from evalset.io.outputs import check_outputs
    from evalset.io.poolfiles import POOL_FILES

    check_outputs({}, {"POOL_DIR": pool_dir, **inputs}, folders={"-o": (output, (*POOL_FILES, *records))},
                  force=force)


def budget_option(required: bool):
    return click.option("--budget", callback=budget_or_share, required=required, metavar="B|P%",
                        help="B human judgments expected (an integer, below the pool's pairs) or P% of the pool's "
                             "pairs.")


@click.group("select", epilog=SEE)
def select_group():
    """Draw what humans will grade: a slice of whole queries, a sample of a pool's pairs, or of a set's holes."""


@select_group.command("slice", short_help="A slice of whole queries, graded in full by humans.",
                      epilog="\b\nExample:\n  evalset estimate select slice pool --size 10 --seed 3 -o slice")
@ruled(SELECT_RULES, "size", "--size", default=None,
       help="Queries in a uniform slice, fewer than all (no --queries with strata).")
@ruled(SELECT_RULES, "per_stratum", "--per-stratum", default=None, help="Queries per traffic stratum (with --queries).")
@ruled(SELECT_RULES, "fraction", "--fraction", default=None,
       help="Share of each stratum's queries, rounded up, at least 2 (with --queries).")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False),
              help="queries.tsv of `evalset sample`: the strata and their traffic shares.")
@drawn_into("queries")
def slice_command(size, per_stratum, fraction, queries_path, pool_dir, seed, output, force, output_format):
    """Draw, seeded, the queries of POOL_DIR that humans will grade in full (one of --size, --per-stratum,
    --fraction), and write their pool folder (for `evalset push` or `evalset judge` as it is) with the slice record
    that `evalset estimate run slice --slice` reads."""
    from evalset.estimate import select_slice_pool
    from evalset.io.slicerecord import RECORD_NAME

    guarded(pool_dir, output, force, (RECORD_NAME,), **{"--queries": queries_path})
    emit(select_slice_pool(pool_dir, output, queries_path=queries_path, seed=seed, size=size, per_stratum=per_stratum,
                           fraction=fraction, replace=force), output_format)


@select_group.command("documents", short_help="A sample of a pool's pairs over every query.",
                      epilog="\b\nExample:\n  evalset estimate select documents pool --budget 1000 --seed 3 -o sample")
@budget_option(required=True)
@drawn_into("pairs")
def documents_command(budget, pool_dir, seed, output, force, output_format):
    """Draw, seeded, a sample of POOL_DIR's pairs over every query, each with a known inclusion probability, and
    write the drawn pairs' pool folder with the sample's record (sample.tsv, sample.json) that `evalset estimate
    run documents --sample` and `evalset freeze --sample` read."""
    from evalset.estimate.documents.select import select_document_pool
    from evalset.io.samplerecord import RECORD_FILES

    guarded(pool_dir, output, force, RECORD_FILES)
    emit(select_document_pool(pool_dir, output, budget=budget[0], fraction=budget[1], seed=seed, replace=force),
         output_format)


@select_group.command("holes", short_help="A sample of a frozen set's holes.",
                      epilog="\b\nExample:\n  evalset estimate select holes holes --set sets/a/v1 --precision 0.01 "
                             "--runs new.run --llm l.qrels -o s")
@click.option("--set", "frozen_set", required=True, type=click.Path(file_okay=False),
              help="The frozen set whose holes POOL_DIR holds (`evalset holes --set SET ... -o POOL_DIR`): its "
                   "judged pairs count as certain, and the record names it.")
@budget_option(required=False)
@ruled(HOLE_SIZING_RULES, "precision", "--precision", default=None,
       help="Instead of --budget: each run's holes drawn so that the standard error of its mean (predicted from the "
            "LLM's calibration on the set) is at most this; needs --runs and --llm.")
@click.option("--runs", metavar="RUN", multiple=True, type=click.Path(),
              help="With --precision: the runs whose holes POOL_DIR holds (files or folders); repeatable.")
@click.option("--llm", "llm_paths", multiple=True, type=click.Path(dir_okay=False),
              help="With --precision: an LLM's grades of every pair of the set and of the holes (one judge a file).")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="With --precision: the measures each run is sized for [default: the set's headline].")
@drawn_into("holes")
def holes_command(frozen_set, budget, precision, runs, llm_paths, metrics, pool_dir, seed, output, force,
                  output_format):
    """Draw, seeded, a sample of a frozen set's holes (one of --budget, or --precision sized per run), and write
    the drawn pairs' pool folder with the sample's record, which `evalset freeze grow` adds to the set."""
    from evalset.estimate.documents.select import select_document_pool
    from evalset.io.samplerecord import RECORD_FILES

    guarded(pool_dir, output, force, RECORD_FILES, **{"--set": frozen_set, "--runs": runs, "--llm": llm_paths})
    emit(select_document_pool(pool_dir, output, budget=budget[0], fraction=budget[1], seed=seed, replace=force,
                              frozen_set=frozen_set, precision=precision, runs=runs, llm=llm_paths, measures=metrics),
         output_format)
