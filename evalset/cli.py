"""The ``evalset`` command line: one short function per command, parsing and printing only."""

from __future__ import annotations

import sys

import click

from evalset import __version__
from evalset.errors import InputError


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
              show_default=True)
@click.option("--normalise", default="case,nfkc,space", show_default=True,
              help="Steps: case, nfkc, space, none.")
@click.option("--since", type=click.DateTime(), help="Keep submissions at or after this time.")
@click.option("--until", type=click.DateTime(), help="Keep submissions before this time.")
@click.option("--blocklist", multiple=True, type=click.Path(dir_okay=False), help="File of blocked terms.")
@click.option("--exclude", multiple=True, type=click.Path(dir_okay=False),
              help="File of queries to leave out (e.g. an earlier queries.tsv).")
@click.option("--strata", "strata_spec", help="Cut points, e.g. head:0.5,torso:0.8,tail (default: thirds).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--holdout", type=float, default=0.0, show_default=True,
              help="Share of each stratum's sample marked test.")
@click.option("--engine", type=click.Choice(["auto", "pandas", "duckdb"]), default="auto",
              show_default=True)
@click.option("--memory-limit", default="1GB", show_default=True,
              help="DuckDB memory limit (it spills beyond).")
def sample(logs, output, per_stratum, fmt, no_header, query_column, count_column, timestamp_column,
           timestamp_format, user_column, stratum_column, count_by, normalise, since, until, blocklist,
           exclude, strata_spec, seed, holdout, engine, memory_limit) -> None:
    """Draw a stratified sample of queries from query LOGS into queries.tsv (+ queries.manifest.json)."""
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
        memory_limit=memory_limit)
    written = sampling.write_sample(result, output)
    click.echo("\n".join(sampling.report_lines(result, written)))
