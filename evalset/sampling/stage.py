"""The whole stage: choose the engine, count, screen, stratify, draw; the manifest and the files.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as dt
import json
import os
from collections.abc import Mapping, Sequence

import pandas as pd
import pyarrow as pa

from evalset import __version__
from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.io.digests import describe_file, describe_files_in_background
from evalset.io.files import atomic_path
from evalset.io.queries import read_query_list, write_queries
from evalset.io.querylog import LogColumns, log_text_bytes, read_query_log_table
from evalset.io.querylog_spark import expand_log_paths, is_url
from evalset.params import check, validate_params
from evalset.sampling.draw import check_per_stratum, sample_queries
from evalset.sampling.memory import count_queries
from evalset.sampling.options import Normalisation, QueryCounts, SampleResult, Screen, Strata, Window
from evalset.sampling.spark import count_queries_spark
from evalset.sampling.spec import SAMPLE_RULES, LogLayout
from evalset.sampling.sql import count_queries_duckdb

# The measured crossover of the two engines (see choose_engine), in bytes of log text.
DUCKDB_ABOVE_BYTES = 10 * 2**20


def choose_engine(paths: Sequence[str | os.PathLike], engine: str = "auto",
                  duckdb_above_bytes: int = DUCKDB_ABOVE_BYTES) -> str:
    """``pandas`` (in memory), ``duckdb`` (out of core) or ``spark`` as asked, or for ``auto`` the faster of the
    first two (``auto`` never starts Spark): DuckDB when
    the logs together hold more than ``duckdb_above_bytes`` (10 MiB) of text, counting a ``.gz`` file by its
    uncompressed size (:func:`log_text_bytes`) and a Parquet file by its size on disk.

    Measured by ``scripts/bench_sample.py --crossover`` (fresh processes, 2 cores, 2026-11-30): up to 5 MiB
    the in-memory engine is 0.1-0.2 s faster (DuckDB's import and start; the Excite log: 0.83 s against
    0.94 s); from 15 MiB on DuckDB is faster (1.08x at 15 MiB, 1.2-1.7x at 50-500 MiB, gzipped and Parquet
    alike) and needs less memory (0.68 against 1.88 GiB at 502 MiB).
    """
    check("engine", engine, SAMPLE_RULES["engine"])
    if engine != "auto":
        return engine
    size = sum(log_text_bytes(p) for p in paths if os.path.isfile(p))
    return "duckdb" if size > duckdb_above_bytes else "pandas"



@validate_params(SAMPLE_RULES)
def sample_log(paths: Sequence[str | os.PathLike], per_stratum: int | Mapping[str, int], *,
               layout: LogLayout = LogLayout(), count_by: str = "submissions",
               normalisation: Normalisation = Normalisation(), since: dt.datetime | None = None,
               until: dt.datetime | None = None, strata: Strata = Strata(), seed: int = DEFAULT_SEED,
               holdout: float = 0.0,
               blocklists: Sequence[str | os.PathLike] = (), exclusions: Sequence[str | os.PathLike] = (),
               engine: str = "auto", memory_limit: str = "1GB", spark_master: str | None = None,
               described: concurrent.futures.Future | None = None) -> SampleResult:
    """The ``evalset sample`` stage: read the logs, count, screen, stratify, sample, and describe it all.

    ``since <= timestamp < until`` is the time window kept (naive datetimes, as written in the log, read by the
    layout's ``timestamp_format``). ``blocklists`` are files of terms (one a line); ``exclusions`` files of
    queries to leave out (one a line, or the ``query`` column of an earlier ``queries.tsv``). ``described``: the logs'
    :func:`~evalset.io.digests.describe_files_in_background`, when the caller started hashing them earlier.
    ``engine="spark"`` (never chosen by ``auto``) also takes folders and glob patterns of part files, and URLs
    (described in the manifest without size or sha256); ``spark_master`` as
    :func:`~evalset.sampling.spark.spark_session`. Nothing is written; see :func:`write_sample`.
    """
    if not paths:
        raise InputError("no query log given")
    check_per_stratum(per_stratum)
    paths = [os.fspath(p) for p in paths]
    screen = Screen(tuple(t for f in blocklists for t in read_query_list(f)),
                    tuple(q for f in exclusions for q in read_query_list(f)))
    engine = choose_engine(paths, engine)
    files = paths
    if engine == "spark":
        files = expand_log_paths(paths)
    local = [f for f in files if not is_url(f)]
    described = described or describe_files_in_background(local)  # sha256 of the logs while counting
    window = Window(since, until, layout.timestamp_format)
    columns = LogColumns(layout.query, layout.count, layout.timestamp, layout.user_id, layout.source)
    fmt, header = layout.format, layout.header == "yes"
    options = dict(count_by=count_by, normalisation=normalisation, window=window, screen=screen,
                   strata=strata)
    if engine == "spark":
        counts = count_queries_spark(files, columns, fmt=fmt, header=header, master=spark_master,
                                     shown=paths[0] if len(paths) == 1 else None, **options)
    elif engine == "duckdb":
        counts = count_queries_duckdb(paths, columns, fmt=fmt, header=header, memory_limit=memory_limit,
                                      **options)
    else:
        tables = [read_query_log_table(p, columns, fmt=fmt, header=header) for p in paths]
        counts = count_queries(pa.concat_tables(tables, promote_options="permissive"), **options)
    _refuse_nothing_kept(counts, paths)
    queries = sample_queries(counts, per_stratum, seed=seed, holdout=holdout)
    hashed = iter(described.result())
    inputs = [{"path": f, "bytes": None, "sha256": None} if is_url(f) else next(hashed) for f in files]
    manifest = build_manifest(counts, queries, inputs=inputs,
                              blocklists=[describe_file(p) for p in blocklists],
                              exclusions=[describe_file(p) for p in exclusions],
                              seed=seed, holdout=holdout, per_stratum=per_stratum, window=window,
                              normalisation=normalisation, columns=columns, engine=engine)
    return SampleResult(queries, counts, manifest)


def _refuse_nothing_kept(counts: QueryCounts, paths: Sequence[str]) -> None:
    """An empty log, or one whose every row was dropped, is refused with the cause (the counts by reason),
    not with the symptom (a stratum with 0 queries)."""
    if len(counts.frequency):
        return
    where = paths[0] if len(paths) == 1 else None
    if counts.rows_read == 0:
        raise InputError("the query log has no row: nothing to sample", where)
    reasons = ", ".join(f"{reason} {n:,}" for reason, n in counts.dropped.items() if n) or "none"
    raise InputError(f"no query left to sample: all {counts.rows_read:,} submissions read were dropped ({reasons})",
                     where)


def build_manifest(counts: QueryCounts, queries: pd.DataFrame, *, inputs: list[dict],
                   blocklists: list[dict], exclusions: list[dict], seed: int, holdout: float,
                   per_stratum: int | Mapping[str, int], window: Window,
                   normalisation: Normalisation, columns: LogColumns, engine: str) -> dict:
    """The ``queries.manifest.json`` content: inputs with sha256, options, cut points, strata, drops.

    ``inputs``, ``blocklists`` and ``exclusions`` are :func:`describe_file` entries. It holds counts only,
    never a query that was dropped, and no clock time (same inputs, same bytes).
    """
    sampled = queries.groupby("stratum").size().to_dict()
    tested = queries[queries["split"] == "test"].groupby("stratum").size().to_dict()
    strata = [{
        "stratum": row.stratum, "distinct_queries": row.distinct_queries, "traffic": row.traffic,
        "traffic_share": row.traffic_share, "sampled": int(sampled.get(row.stratum, 0)),
        "test": int(tested.get(row.stratum, 0)),
        "weight": row.traffic_share / sampled[row.stratum] if sampled.get(row.stratum) else None,
    } for row in counts.summary.itertuples()]
    kept = counts.rows_read - sum(counts.dropped.values())
    return {
        "evalset_version": __version__,
        "stage": "sample",
        "inputs": inputs,
        "blocklists": blocklists,
        "exclusions": exclusions,
        "columns": dataclasses.asdict(columns),
        "engine": engine,
        "count_by": counts.count_by,
        "normalisation": dataclasses.asdict(normalisation),
        "window": {"since": _iso(window.since), "until": _iso(window.until),
                   "timestamp_format": window.timestamp_format},
        "seed": seed,
        "holdout": holdout,
        "per_stratum": per_stratum if isinstance(per_stratum, int) else dict(per_stratum),
        "cut_points": dict(zip(counts.strata.names, [*counts.strata.cuts, 1.0], strict=True)),
        "boundary_rule": "frequency descending, then query_id ascending; a query belongs to the first "
                         "stratum whose cut point is above the traffic share of the queries before it",
        "submissions": {"read": counts.rows_read, "kept": kept, "dropped": counts.dropped},
        "distinct_queries": len(counts.frequency),
        "strata": strata,
    }


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def manifest_path(queries_path: str | os.PathLike) -> str:
    """``queries.tsv`` -> ``queries.manifest.json`` (beside it)."""
    queries_path = os.fspath(queries_path)
    stem = queries_path[: -len(".tsv")] if queries_path.endswith(".tsv") else queries_path
    return stem + ".manifest.json"


def write_sample(result: SampleResult, queries_path: str | os.PathLike) -> tuple[str, str]:
    """Write ``queries.tsv`` and its manifest; both appear together or, on failure, neither does."""
    target = manifest_path(queries_path)
    with atomic_path(target) as manifest_tmp, atomic_path(queries_path) as queries_tmp:
        write_queries(result.queries, queries_tmp)
        with open(manifest_tmp, "w", encoding="utf-8") as handle:
            json.dump(result.manifest, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    return os.fspath(queries_path), target

