"""Benchmark `evalset judge`: 2,000 real DL19 pairs against the test server with 200 ms latency per request.

The server (tests.support.openai_server) runs in its own process, so its CPU is not the client's; the client is the
library path the command uses (prompt, openai AsyncOpenAI client, strict parser, SQLite journal commit per
answer, fresh journal per run). For each concurrency it prints the throughput against the ideal
(concurrency / latency), the ratio, and the CPU each side spent per request (client: process_time; server:
/proc utime+stime), with the load average, since this machine is shared.

    PYTHONPATH=$PWD python scripts/bench_judge.py [--pairs 2000] [--latency 0.2] [--concurrency 1 8 32 64]
                                                  [--profile 32] [--json PATH]

``--json PATH`` also writes the figures as one record (``scripts/benchlib.py``).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "dl19"


def make_pool(pairs: int) -> tuple[str, int]:
    """The DL19 depth-10 pool of the 37 official runs, written as `evalset pool` writes it; returns the folder
    and the number of pairs the benchmark judges."""
    from evalset.io.poolfiles import read_tasks
    from evalset.pooling import PoolSpec, build_from_spec, write_pool

    folder = tempfile.mkdtemp(prefix="bench-judge-pool-")
    spec = PoolSpec(runs=(str(SHARED / "runs" / "official_top100"),), depth=10,
                    corpus=str(SHARED / "passages.jsonl.gz"),
                    queries=str(SHARED / "topics.tsv"))
    write_pool(build_from_spec(spec), folder)
    available = len(read_tasks(Path(folder) / "tasks.jsonl", limit=pairs))
    if available < pairs:
        sys.exit(f"the DL19 depth-10 pool has only {available} pairs")
    return folder, pairs


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, "-m", "tests.support.openai_server", "--latency", str(latency),
                               "--no-record-bodies"], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                              stdout=subprocess.PIPE, text=True)
    return server, server.stdout.readline().strip()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_once(pool: str, pairs: int, base_url: str, concurrency: int, profile: bool):
    """One `evalset judge` job, through the library call the command makes (`judge.job.judge_pool`), with a fresh
    journal: returns its stats, the client's CPU seconds, and the profiler."""
    from evalset.judge import JudgeSettings
    from evalset.judge.job import judge_pool

    settings = JudgeSettings(model="bench", base_url=base_url, concurrency=concurrency, timeout=30)
    with tempfile.TemporaryDirectory() as folder:
        profiler = cProfile.Profile() if profile else None
        cpu = time.process_time()
        if profiler:
            profiler.enable()
        result = judge_pool(pool, REPO / "guidelines" / "relevance-v2.md", Path(folder) / "labels.tsv", settings,
                            limit=pairs, progress=False)
        if profiler:
            profiler.disable()
        return result.stats, time.process_time() - cpu, profiler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--profile", type=int, help="profile the client at this concurrency (cProfile, top 25)")
    benchlib.add_option(parser)
    args = parser.parse_args()
    record = benchlib.recorder(args, "bench_judge", benchlib.case(benchlib.changed(
        args, parser, ["pairs", "latency", "concurrency"])))
    record.inputs(SHARED / "runs" / "official_top100", SHARED / "passages.jsonl.gz", SHARED / "topics.tsv",
                  REPO / "guidelines" / "relevance-v2.md")
    pool, pairs = make_pool(args.pairs)
    server, base_url = start_server(args.latency)
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}: {pairs:,} DL19 pairs, server latency {args.latency * 1000:.0f} ms, "
          f"{os.cpu_count()} CPUs, "
          f"load average before {os.getloadavg()[0]:.2f}")
    print(f"{'concurrency':>11} {'seconds':>8} {'req/s':>8} {'ideal':>8} {'ratio':>6} {'client ms/req':>14} "
          f"{'server ms/req':>14} {'retries':>7} {'failed':>6} {'load':>5}")
    profiles, failed = [], 0
    try:
        for concurrency in args.concurrency:
            server_cpu = cpu_seconds(server.pid)
            stats, client_cpu, profiler = run_once(pool, pairs, base_url, concurrency, concurrency == args.profile)
            server_cpu = cpu_seconds(server.pid) - server_cpu
            rate = stats.requests / stats.seconds
            ideal = concurrency / args.latency
            print(f"{concurrency:>11} {stats.seconds:>8.2f} {rate:>8.1f} {ideal:>8.1f} {rate / ideal:>6.1%} "
                  f"{client_cpu / stats.requests * 1000:>14.2f} {server_cpu / stats.requests * 1000:>14.2f} "
                  f"{stats.retries:>7} {stats.failed:>6} {os.getloadavg()[0]:>5.2f}", flush=True)
            failed += stats.failed + (pairs - stats.judged - stats.failed)
            record.add(f"concurrency {concurrency} wall time", stats.seconds, "s")
            record.add(f"concurrency {concurrency} throughput", rate, "req/s", "ideal", rate / ideal)
            record.add(f"concurrency {concurrency} ideal throughput", ideal, "req/s")
            record.add(f"concurrency {concurrency} client CPU per request", client_cpu / stats.requests * 1000, "ms")
            record.add(f"concurrency {concurrency} server CPU per request", server_cpu / stats.requests * 1000, "ms")
            record.sample_load()
            if profiler:
                profiles.append((concurrency, profiler))
    finally:
        server.kill()
    if failed:
        sys.exit(f"check FAILED: {failed} pair(s) were not judged")
    print(f"check: every one of the {pairs:,} pairs judged at each concurrency, none failed")
    record.write()
    for concurrency, profiler in profiles:
        stats = pstats.Stats(profiler, stream=sys.stdout)
        print(f"\nclient profile at concurrency {concurrency}, own time by package:")
        for package, seconds, share in own_time_by_package(stats):
            print(f"  {package:<28} {seconds:>7.2f} s {share:>6.1%}")
        print(f"\nclient profile at concurrency {concurrency} (top 25 by own time):")
        stats.sort_stats("tottime").print_stats(25)


def own_time_by_package(stats: pstats.Stats) -> list[tuple[str, float, float]]:
    """Own (not cumulative) time summed per package: where the client's CPU goes."""
    totals: dict[str, float] = {}
    for (filename, _, name), (_, _, own, _, _) in stats.stats.items():
        if "site-packages/" in filename:
            package = filename.split("site-packages/")[1].split("/")[0]
        elif "/evalset/" in filename:
            package = "evalset"
        elif filename == "~":
            package = {"<method 'poll' of 'select.epoll' objects>": "idle (epoll wait)",
                       "<method 'send' of '_socket.socket' objects>": "socket send (kernel)",
                       "<method 'execute' of 'sqlite3.Connection' objects>": "sqlite (journal commit)"}.get(
                name, "other builtins")
        else:
            package = "stdlib " + Path(filename).stem
            package = "stdlib asyncio" if "asyncio" in filename else package
        totals[package] = totals.get(package, 0.0) + own
    whole = sum(totals.values())
    ranked = sorted(totals.items(), key=lambda item: -item[1])
    return [(package, seconds, seconds / whole) for package, seconds in ranked[:14]]


if __name__ == "__main__":
    main()
