"""The ``evalset sample`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import force_option
from evalset.cli.ruled import ruled
from evalset.contract import SAMPLE_RULES


@click.command()
@click.argument("logs", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="queries.tsv to write (its manifest goes beside it).")
@click.option("--per-stratum", required=True, help="Queries per stratum: 50, or head=100,torso=50,tail=20.")
@ruled(SAMPLE_RULES, "fmt", "--format", "fmt", default=None,
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
@ruled(SAMPLE_RULES, "count_by", "--count-by", default="submissions",
       help="Traffic of a query: its submissions, or the distinct users who typed it.")
@click.option("--normalise", default="case,nfkc,space", show_default=True,
              help="Steps: case, nfkc, space, none.")
@click.option("--since", type=click.DateTime(), help="Keep submissions at or after this time.")
@click.option("--until", type=click.DateTime(), help="Keep submissions before this time.")
@click.option("--blocklist", multiple=True, type=click.Path(dir_okay=False), help="File of blocked terms.")
@click.option("--exclude", multiple=True, type=click.Path(dir_okay=False),
              help="File of queries to leave out (e.g. an earlier queries.tsv).")
@click.option("--strata", "strata_spec", help="Cut points, e.g. head:0.5,torso:0.8,tail (default: thirds).")
@ruled(SAMPLE_RULES, "seed", "--seed", default=0, help="Seed of the sample (numpy Generator).")
@ruled(SAMPLE_RULES, "holdout", "--holdout", default=0.0, help="Share of each stratum's sample marked test.")
@ruled(SAMPLE_RULES, "engine", "--engine", default="auto",
       help="In memory (pandas), out of core (DuckDB), by size (auto: one of these), or Spark SQL (spark: LOGS may "
            "be folders or globs of part files).")
@click.option("--memory-limit", default="1GB", show_default=True,
              help="DuckDB memory limit (it spills beyond).")
@click.option("--spark-master", help="Spark master URL (default local[*]; sc://HOST for Spark Connect, as "
                                     "SPARK_REMOTE).")
@force_option(folder=False)
def sample(logs, output, per_stratum, fmt, no_header, query_column, count_column, timestamp_column,
           timestamp_format, user_column, stratum_column, count_by, normalise, since, until, blocklist,
           exclude, strata_spec, seed, holdout, engine, memory_limit, spark_master, force) -> None:
    """Draw a stratified sample of queries from query LOGS into queries.tsv (+ queries.manifest.json)."""
    from evalset.io.digests import describe_files_in_background

    # the sha256 of the logs runs while the library loads (Spark's logs may be folders: hashed once expanded)
    described = None if engine == "spark" else describe_files_in_background(logs)

    from evalset import sampling
    from evalset.io.outputs import check_outputs
    from evalset.io.querylog import LogColumns

    check_outputs({"-o": output, "-o's manifest": sampling.manifest_path(output)},
                  {"LOGS": logs, "--blocklist": blocklist, "--exclude": exclude}, force=force)

    result = sampling.sample_log(
        logs, sampling.parse_per_stratum(per_stratum),
        columns=LogColumns(query_column, count_column, timestamp_column, user_column, stratum_column),
        fmt=fmt, header=not no_header, count_by=count_by,
        normalisation=sampling.Normalisation.parse(normalise),
        window=sampling.Window(since, until, timestamp_format),
        strata=sampling.Strata.parse(strata_spec) if strata_spec else sampling.Strata(),
        seed=seed, holdout=holdout, blocklists=blocklist, exclusions=exclude, engine=engine,
        memory_limit=memory_limit, spark_master=spark_master, described=described)
    written = sampling.write_sample(result, output)  # before printing: a closed stdout loses no file
    emit(result, written=written)
