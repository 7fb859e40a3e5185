"""Benchmark ``evalset sample --engine spark`` against ``--engine duckdb`` on the same synthetic log.

The log is scripts/bench_sample.py's (Zipf-distributed, user ids and ISO timestamps; 10 million lines by
default, cached in ``.bench/``). Each engine runs in a fresh process (alternating, ``--repeat`` times): wall time
(Python's and, for Spark, the JVM's start included) and peak memory of the whole process tree (the sum of the
resident memory of the process and its children, the JVM included, sampled every 0.1 s). It checks that both
write the same ``queries.tsv``, and prints the date and the load average.

    python scripts/bench_sample_spark.py [--lines 10000000] [--repeat 1] [--master local[*]] [--cache .bench]

``--lines 100000`` runs in about a minute. On one 2-core machine Spark is expected to be much slower: the
point of the Spark engine is that it scales out over a cluster. ``--json PATH`` also writes the figures as one
record (``scripts/benchlib.py``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib
from bench_sample import REPO, full_log  # the same log, generated the same way

PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants (from /proc)."""
    parents: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * PAGE
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += parents.get(pid, [])
    return total


def timed(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS of the process tree in GiB, output) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=os.environ | {"PYTHONPATH": str(REPO)})
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            peak[0] = max(peak[0], tree_rss(child.pid))

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    output = child.stdout.read()
    code = child.wait()
    elapsed = time.perf_counter() - start
    done.set()
    watcher.join()
    if code != 0:
        sys.exit(f"failed: {' '.join(command)}\n{output}")
    return elapsed, peak[0] / 2**30, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--distinct", type=int, default=None, help="about how many distinct queries "
                        "(default: lines / 10)")
    parser.add_argument("--cache", type=Path, default=REPO / ".bench")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each engine; medians are compared")
    parser.add_argument("--master", default="local[*]", help="the Spark master (default local[*])")
    benchlib.add_option(parser)
    args = parser.parse_args()
    record = benchlib.recorder(args, "bench_sample_spark", benchlib.case(benchlib.changed(
        args, parser, ["lines", "distinct", "master"])))
    record.inputs(args.cache)
    args.distinct = args.distinct or max(args.lines // 10, 1)
    log = full_log(args)
    record.inputs(log)
    print(f"{dt.datetime.now().isoformat(timespec='minutes')}; {os.cpu_count()} cores; "
          f"{log.name}: {log.stat().st_size / 2**20:,.0f} MiB", flush=True)
    runs: dict[str, list[tuple[float, float, str]]] = {"duckdb": [], "spark": []}
    for _ in range(args.repeat):
        for engine in runs:  # alternate, so that both see the same machine load
            before = os.getloadavg()[0]
            extra = ["--spark-master", args.master] if engine == "spark" else []
            runs[engine].append(timed([sys.executable, "-m", "evalset", "sample",
                                       str(log), "-l", "user_id=user_id", "-l", "timestamp=timestamp", "--per-stratum",
                                       "10", "--seed", "1", "--engine", engine, *extra,
                                       "-o", str(args.cache / f"queries-{engine}.tsv")]))
            elapsed, gib, _ = runs[engine][-1]
            print(f"  {engine:<6} {elapsed:7.2f} s  peak {gib:.2f} GiB  (load average {before:.2f} before, "
                  f"{os.getloadavg()[0]:.2f} after)", flush=True)
    same = (args.cache / "queries-duckdb.tsv").read_bytes() == (args.cache / "queries-spark.tsv").read_bytes()
    print(f"same queries.tsv: {'yes' if same else 'NO'}")
    medians = {}
    for engine, measured in runs.items():
        medians[f"--engine {engine}"] = {"seconds": statistics.median(m[0] for m in measured),
                                         "peak_gib": max(m[1] for m in measured)}
        print(f"{engine:<6} median {medians[f'--engine {engine}']['seconds']:7.2f} s  "
              f"peak {medians[f'--engine {engine}']['peak_gib']:.2f} GiB")
    print("    " + "\n    ".join(runs["spark"][-1][2].strip().splitlines()))
    if not same:
        sys.exit(1)
    record.compare(medians, ["--engine spark"], {"seconds": ("wall time", "s"), "peak_gib": ("peak memory", "GiB")})
    record.write()


if __name__ == "__main__":
    main()
