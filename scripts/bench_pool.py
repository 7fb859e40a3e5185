"""Benchmark `evalset pool`: 20 synthetic runs x 10,000 queries x depth 100 (the issue's size).

Writes synthetic TREC runs (100 documents per query, drawn from 300 candidates per query that the systems
rank with a shared relevance signal plus their own noise, so pools overlap as real ones do) to a temporary
folder, then pools them at depth 100 in a fresh child process, exactly as the command does (read every run,
top k, union, pair ids, judging order, write pool.tsv, pool_sources.tsv, pool.json). The child reports its
wall time per phase and its peak resident memory (ru_maxrss), so the figures exclude the data generation. Beside
it, each in a fresh process: the anchor, the same pool computed by DuckDB (each run's documents of a query ranked
by trec_eval's tie rule, score descending then document id descending; each run's top k; the distinct pairs with
their best rank and their sources), whose pairs are checked equal to evalset's (a sha256 of the sorted pairs,
taken after the timed query); and, as before, a bare DuckDB distinct count, which neither ranks nor breaks ties.

    python scripts/bench_pool.py [--runs 20] [--queries 10000] [--depth 100] [--candidates 300] [--json PATH]

``--json PATH`` also writes the figures as one record (``scripts/benchlib.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import benchlib
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

ANCHOR = "DuckDB pool query"
COUNT = "DuckDB distinct count"
COLUMNS = {"qid": "VARCHAR", "q0": "VARCHAR", "docid": "VARCHAR", "rank": "BIGINT", "score": "DOUBLE",
           "tag": "VARCHAR"}


def write_runs(folder: str, runs: int, queries: int, per_query: int, candidates: int, seed: int = 0) -> list[str]:
    """Write synthetic runs; returns their paths."""
    rng = np.random.default_rng(seed)
    relevance = rng.normal(size=(queries, candidates))
    query_ids = np.array([f"q{q:06d}" for q in range(queries)], dtype=object)
    paths = []
    for system in range(runs):
        scores = relevance + rng.normal(scale=1.0, size=relevance.shape)
        top = np.argpartition(-scores, per_query - 1, axis=1)[:, :per_query]
        top_scores = np.take_along_axis(scores, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        top, top_scores = np.take_along_axis(top, order, axis=1), np.take_along_axis(top_scores, order, axis=1)
        doc_numbers = (np.arange(queries)[:, None] * candidates + top).ravel()
        table = pa.table({
            "qid": pa.array(np.repeat(query_ids, per_query), pa.string()),
            "q0": pa.array(np.full(queries * per_query, "Q0", dtype=object), pa.string()),
            "docid": pa.array(doc_numbers.astype(str), pa.string()),
            "rank": pa.array(np.tile(np.arange(1, per_query + 1), queries)),
            "score": pa.array(np.round(top_scores.ravel(), 6)),
            "tag": pa.array(np.full(queries * per_query, f"sys{system:02d}", dtype=object), pa.string()),
        })
        path = os.path.join(folder, f"sys{system:02d}.run")
        pacsv.write_csv(table, path, pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
        paths.append(path)
    return paths


def distinct_pairs(paths: list[str], depth: int) -> dict:
    """The anchor and the check: a bare DuckDB count of the distinct (query, document) pairs among every run's first
    ``depth`` lines per query (the synthetic runs are written in rank order, so their rank field says it), in this
    child process, DuckDB's multi-threaded reader on every core; its wall time, CPU time and the count."""
    import duckdb

    started, cpu = time.perf_counter(), time.process_time()
    (count,) = duckdb.sql(
        f"SELECT count(*) FROM (SELECT DISTINCT qid, docid FROM read_csv({paths!r}, delim=' ', header=false, "
        f"columns={COLUMNS!r}) WHERE rank <= {depth})").fetchall()[0]
    return {"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu, "pairs": count,
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def pool_query(paths: list[str], depth: int) -> dict:
    """The fair anchor: the same pool in DuckDB (module docstring), built into a table in this child process on every
    core; its wall time, CPU time and peak memory, then (untimed) its pair count and the sha256 of its sorted pairs."""
    import hashlib

    import duckdb

    connection = duckdb.connect()
    started, cpu = time.perf_counter(), time.process_time()
    connection.execute(f"""
        CREATE TABLE pool AS
        WITH ranked AS (
            SELECT qid, docid, filename,
                   row_number() OVER (PARTITION BY filename, qid ORDER BY score DESC, docid DESC) AS place
            FROM read_csv({paths!r}, delim=' ', header=false, columns={COLUMNS!r}, filename=true))
        SELECT qid, docid, min(place) AS best_rank, string_agg(filename, ',' ORDER BY filename) AS sources
        FROM ranked WHERE place <= {depth} GROUP BY qid, docid""")
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    pairs = connection.execute("SELECT qid || chr(9) || docid FROM pool ORDER BY qid, docid").fetchall()
    digest = hashlib.sha256("".join(f"{pair}\n" for (pair,) in pairs).encode()).hexdigest()
    return {"seconds": seconds, "cpu": cpu, "pairs": len(pairs), "peak_rss_mib": peak, "sha256": digest}


def pairs_sha256(pairs) -> str:
    """The sha256 of ``query_id<TAB>doc_id`` lines of the pool's pairs, sorted as DuckDB sorts strings."""
    import hashlib

    lines = sorted(f"{query}\t{doc}" for query, doc in zip(pairs["query_id"], pairs["doc_id"], strict=True))
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode()).hexdigest()


def measure(run_folder: str, depth: int, output: str) -> dict:
    """Pool the runs as `evalset pool` does; returns phase times and peak memory of this process."""
    from evalset import pooling

    started, cpu = time.perf_counter(), time.process_time()
    build = pooling.build_from_spec(pooling.PoolSpec(runs=(run_folder,), depth=depth, seed=1))
    built = time.perf_counter()
    pooling.write_pool(build, output)
    written = time.perf_counter()
    return {
        "build_s": round(built - started, 2),
        "write_s": round(written - built, 2),
        "total_s": round(written - started, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "source_rows": int(build.pool.systems["contributed"].sum()),
        "pairs": len(build.pool.pairs),
        "queries": len(build.pool.pairs_per_query),
        "sha256": pairs_sha256(build.pool.pairs),  # after the timing: the check, not the work
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--candidates", type=int, default=300)
    parser.add_argument("--measure", nargs=2, metavar=("RUN_FOLDER", "OUTPUT"), help=argparse.SUPPRESS)
    parser.add_argument("--count", nargs="+", metavar="RUN", help=argparse.SUPPRESS)
    parser.add_argument("--query", nargs="+", metavar="RUN", help=argparse.SUPPRESS)
    benchlib.add_option(parser)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], args.depth, args.measure[1])))
        return
    if args.count:
        print(json.dumps(distinct_pairs(args.count, args.depth)))
        return
    if args.query:
        print(json.dumps(pool_query(args.query, args.depth)))
        return
    record = benchlib.recorder(args, "bench_pool", benchlib.case(benchlib.changed(
        args, parser, ["runs", "queries", "depth", "candidates"])))
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench_pool.") as scratch:
        run_folder = os.path.join(scratch, "runs")
        os.mkdir(run_folder)
        started = time.perf_counter()
        paths = write_runs(run_folder, args.runs, args.queries, args.depth, args.candidates)
        record.inputs(run_folder, *paths)
        size = sum(os.path.getsize(p) for p in paths)
        print(f"generated {args.runs} runs x {args.queries:,} queries x {args.depth} documents "
              f"({size / 2**20:,.0f} MiB of TREC run text) in {time.perf_counter() - started:.1f} s")
        figures = child([__file__, "--depth", str(args.depth), "--measure", run_folder, os.path.join(scratch, "pool")])
        anchor = child([__file__, "--depth", str(args.depth), "--query", *paths])
        count = child([__file__, "--depth", str(args.depth), "--count", *paths])
    print(f"pool at depth {args.depth}: {figures['source_rows']:,} top-k rows -> {figures['pairs']:,} pairs over "
          f"{figures['queries']:,} queries")
    print(f"time: {figures['total_s']:.1f} s, {figures['cpu_s']:.1f} s CPU (read, rank and pool "
          f"{figures['build_s']:.1f} s, write {figures['write_s']:.1f} s); peak memory {figures['peak_rss_mib']:,} MiB "
          f"(RSS); load average {os.getloadavg()[0]:.2f}")
    print(f"the anchor, the same pool in DuckDB (ranked by trec_eval's tie rule, each run's top {args.depth}, the "
          f"distinct pairs with their best rank and sources) in its own process: {anchor['seconds']:.1f} s, "
          f"{anchor['cpu']:.1f} s CPU, {anchor['peak_rss_mib']:,} MiB: evalset pool takes "
          f"{figures['total_s'] / anchor['seconds']:.2f}x its wall time (goal <= 1.5x) and "
          f"{figures['peak_rss_mib'] / anchor['peak_rss_mib']:.2f}x its memory (goal <= 1.0x)")
    print(f"beside it, a bare DuckDB distinct count (no ranking, no ties): {count['seconds']:.1f} s, "
          f"{count['cpu']:.1f} s CPU, {count['peak_rss_mib']:,} MiB: evalset pool takes "
          f"{figures['total_s'] / count['seconds']:.1f}x")
    if (figures["pairs"], figures["sha256"]) != (anchor["pairs"], anchor["sha256"]) or count["pairs"] != figures[
            "pairs"]:
        sys.exit(f"check FAILED: the pool has {figures['pairs']:,} pairs, DuckDB's pool query {anchor['pairs']:,} "
                 f"(sha256 {'equal' if figures['sha256'] == anchor['sha256'] else 'different'}), its distinct count "
                 f"{count['pairs']:,}")
    print(f"check: {anchor['pairs']:,} pairs, the same pairs as DuckDB's pool query (sha256 of the sorted pairs) and "
          f"as many as its distinct count")
    record.add("evalset pool wall time", figures["total_s"], "s", ANCHOR, figures["total_s"] / anchor["seconds"])
    record.add("evalset pool CPU time", figures["cpu_s"], "s", ANCHOR, figures["cpu_s"] / anchor["cpu"])
    record.add("evalset pool peak memory", figures["peak_rss_mib"], "MiB", ANCHOR,
               figures["peak_rss_mib"] / anchor["peak_rss_mib"])
    record.add("evalset pool wall time against the count", figures["total_s"], "s", COUNT,
               figures["total_s"] / count["seconds"])
    record.add("evalset pool read, rank and pool", figures["build_s"], "s")
    record.add("evalset pool write", figures["write_s"], "s")
    record.add(f"{ANCHOR} wall time", anchor["seconds"], "s")
    record.add(f"{ANCHOR} CPU time", anchor["cpu"], "s")
    record.add(f"{ANCHOR} peak memory", anchor["peak_rss_mib"], "MiB")
    record.add(f"{COUNT} wall time", count["seconds"], "s")
    record.add(f"{COUNT} peak memory", count["peak_rss_mib"], "MiB")
    record.write()


def child(argv: list[str]) -> dict:
    """A fresh process of this script (its figures are its own): the JSON line it prints last."""
    done = subprocess.run([sys.executable, *argv], check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
