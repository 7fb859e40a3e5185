"""The ``evalset sample`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import force_option
from evalset.cli.ruled import format_option, ruled
from evalset.cli.settings_option import settings_option
from evalset.contract import DEFAULT_SEED
from evalset.sampling.spec import SAMPLE_RULES, LogLayout

LOG_SETTINGS = {
    "format": "tsv, csv, jsonl or parquet (none: from the file name; .log is TSV)",
    "header": "the first line names the columns (no: give each column as its 1-based position)",
    "query": "the query column", "count": "the count column of a pre-aggregated log",
    "timestamp": "the timestamp column", "timestamp_format": "strptime format of the timestamps (none: ISO 8601)",
    "user_id": "the user id column", "source": "the log's own stratum column (e.g. agent/human)",
}


@click.command()
@click.argument("logs", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="queries.tsv to write (its manifest goes beside it).")
@click.option("--per-stratum", required=True, help="Queries per stratum: 50, or head=100,torso=50,tail=20.")
@settings_option(LogLayout, LOG_SETTINGS, "-l", "--log", "layout", help="The logs' layout")
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
@ruled(SAMPLE_RULES, "seed", "--seed", default=DEFAULT_SEED, help="Seed of the sample (numpy Generator).")
@ruled(SAMPLE_RULES, "holdout", "--holdout", default=0.0, help="Share of each stratum's sample marked test.")
@ruled(SAMPLE_RULES, "engine", "--engine", default="auto",
       help="In memory (pandas), out of core (DuckDB), by size (auto: one of these), or Spark SQL (spark: LOGS may "
            "be folders or globs of part files).")
@click.option("--memory-limit", default="1GB", show_default=True,
              help="DuckDB memory limit (it spills beyond).")
@click.option("--spark-master", help="Spark master URL (default local[*]; sc://HOST for Spark Connect, as "
                                     "SPARK_REMOTE).")
@format_option()
@force_option(folder=False)
def sample(logs, output, per_stratum, layout, count_by, normalise, since, until, blocklist, exclude, strata_spec, seed,
           holdout, engine, memory_limit, spark_master, output_format, force) -> None:
    """Draw a stratified sample of queries from query LOGS into queries.tsv (+ queries.manifest.json)."""
    from evalset.io.digests import describe_files_in_background

    # the sha256 of the logs runs while the library loads (Spark's logs may be folders: hashed once expanded)
    described = None if engine == "spark" else describe_files_in_background(logs)

    from evalset import sampling
    from evalset.io.outputs import check_outputs

    check_outputs({"-o": output, "-o's manifest": sampling.manifest_path(output)},
                  {"LOGS": logs, "--blocklist": blocklist, "--exclude": exclude}, force=force)

    result = sampling.sample_log(
        logs, sampling.parse_per_stratum(per_stratum),
        layout=sampling.LogLayout(**layout), count_by=count_by,
        normalisation=sampling.Normalisation.parse(normalise), since=since, until=until,
        strata=sampling.Strata.parse(strata_spec) if strata_spec else sampling.Strata(),
        seed=seed, holdout=holdout, blocklists=blocklist, exclusions=exclude, engine=engine,
        memory_limit=memory_limit, spark_master=spark_master, described=described)
    written = sampling.write_sample(result, output)  # before printing: a closed stdout loses no file
    emit(result, output_format, written=written)
