"""Benchmark ``evalset sample`` against the floor: a bare DuckDB ``GROUP BY query`` count over the same file.

Generates (once, cached in ``.bench/``) a Zipf-distributed synthetic query log of 10 million lines with about
a million distinct queries, user ids and timestamps, then runs both in fresh subprocesses and prints wall
time, peak resident memory (the child's ``ru_maxrss``) and the ratio. Both times include starting Python.

    python scripts/bench_sample.py [--lines 10000000] [--repeat 3] [--cache .bench] [--also-pandas]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

REPO = Path(__file__).resolve().parents[1]
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "ve", "zo", "pa", "si", "do", "gu", "fe", "ri", "mo", "lan",
             "ter", "son", "bel", "cor", "dis", "pro", "tra", "vin"]


def synthetic_log(path: Path, lines: int, distinct_target: int, seed: int = 7) -> None:
    """A TSV ``user_id, timestamp, query`` whose query ranks follow Zipf (s = 1.05) over 3x the target."""
    rng = np.random.default_rng(seed)
    support = 3 * distinct_target
    vocabulary = _vocabulary(rng, support)
    weights = 1.0 / np.arange(1, len(vocabulary) + 1) ** 1.05
    cumulative = np.cumsum(weights / weights.sum())
    ranks = np.minimum(np.searchsorted(cumulative, rng.random(lines)), len(vocabulary) - 1)
    queries = pc.take(vocabulary, pa.array(ranks))
    shouted = rng.random(lines) < 0.03  # raw variants that normalise to the same query
    queries = pc.if_else(pa.array(shouted), pc.utf8_upper(queries), queries)
    user_numbers = pc.cast(pa.array(rng.integers(0, lines // 8, lines)), pa.string())
    users = pc.binary_join_element_wise("u", user_numbers, "")
    seconds = np.sort(rng.integers(0, 30 * 86400, lines)) + np.datetime64("2026-01-01T00:00:00", "s")
    stamps = pc.strftime(pa.array(seconds), "%Y-%m-%dT%H:%M:%S")
    table = pa.table({"user_id": users, "timestamp": stamps, "query": queries})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        handle.write(b"user_id\ttimestamp\tquery\n")
        pacsv.write_csv(table, handle, pacsv.WriteOptions(delimiter="\t", quoting_style="none",
                                                          include_header=False))
    tmp.rename(path)


def _vocabulary(rng: np.random.Generator, size: int) -> pa.Array:
    """``size`` distinct queries of 1-4 pseudo-words; about 8% carry a number (a year, a model)."""
    words = sorted({"".join(rng.choice(SYLLABLES, n)) for n in rng.integers(2, 5, 60_000)})
    lengths = rng.choice([1, 2, 3, 4], size, p=[0.2, 0.4, 0.3, 0.1])
    picks = rng.integers(0, len(words), (size, 4))
    numbers = np.where(rng.random(size) < 0.08, rng.integers(1, 3000, size), 0)
    texts = {}
    for i in range(size):
        text = " ".join(words[j] for j in picks[i, : lengths[i]])
        texts.setdefault(f"{text} {numbers[i]}" if numbers[i] else text, None)
    return pa.array(rng.permutation(np.array(list(texts), dtype=object)), pa.string())


def timed(command: list[str]) -> tuple[float, float, str, float]:
    """(wall seconds, peak RSS in GiB, stdout, CPU seconds user + system) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=os.environ | {"PYTHONPATH": str(REPO)})
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}\n{output}")
    return elapsed, usage.ru_maxrss / 2**20, output, usage.ru_utime + usage.ru_stime


FLOOR = """
import duckdb, sys
duckdb.sql("SET enable_progress_bar = false")
rows = duckdb.sql(f\"\"\"SELECT query, count(*) AS n FROM read_csv('{sys.argv[1]}', delim = '\\t',
    quote = '', escape = '', header = true,
    columns = {{'user_id': 'VARCHAR', 'timestamp': 'VARCHAR', 'query': 'VARCHAR'}},
    auto_detect = false) GROUP BY query\"\"\").to_arrow_table().num_rows
print(rows, "distinct raw queries")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--distinct", type=int, default=1_000_000, help="about how many distinct queries")
    parser.add_argument("--cache", type=Path, default=REPO / ".bench")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; medians are compared")
    parser.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--also-pandas", action="store_true", help="also time the in-memory engine")
    args = parser.parse_args()
    log = args.cache / f"zipf-{args.lines}.tsv"
    if args.generate_only:
        synthetic_log(log, args.lines, args.distinct)
        return
    if not log.exists():  # in a child, so that its memory does not count in the timed children's peak RSS
        seconds, *_ = timed([sys.executable, __file__, "--generate-only", "--lines", str(args.lines),
                               "--distinct", str(args.distinct), "--cache", str(args.cache)])
        print(f"generated {log} ({log.stat().st_size / 2**20:,.0f} MiB) in {seconds:.1f} s")
    with open(log, "rb") as handle:  # both runs start from a warm page cache
        while handle.read(1 << 24):
            pass
    command = [sys.executable, "-c", "from evalset.cli import main; main()", "sample", str(log),
               "--user", "user_id", "--timestamp", "timestamp", "--per-stratum", "10", "--seed", "1",
               "--engine", "duckdb", "-o", str(args.cache / "queries-duckdb.tsv")]
    floors, samples = [], []
    for _ in range(args.repeat):  # alternate, so that both see the same machine load
        floors.append(timed([sys.executable, "-c", FLOOR, str(log)]))
        samples.append(timed(command))
    floor_s, sample_s = (statistics.median(run[0] for run in runs) for runs in (floors, samples))
    floor_gib, sample_gib = (max(run[1] for run in runs) for runs in (floors, samples))
    print(f"duckdb GROUP BY query  : median {floor_s:6.2f} s of {_times(floors)}  "
          f"peak {floor_gib:.2f} GiB  "
          f"({floors[0][2].strip()})")
    print(f"evalset sample (duckdb): median {sample_s:6.2f} s of {_times(samples)}  "
          f"peak {sample_gib:.2f} GiB")
    print(f"ratio {sample_s / floor_s:.2f}x the floor (per run: "
          f"{', '.join(f'{s[0] / f[0]:.2f}x' for f, s in zip(floors, samples, strict=True))})")
    floor_cpu, sample_cpu = (statistics.median(run[3] for run in runs) for runs in (floors, samples))
    print(f"CPU time (user + system, all threads): floor {floor_cpu:.2f} s, "
          f"evalset sample {sample_cpu:.2f} s, "
          f"ratio {sample_cpu / floor_cpu:.2f}x")
    print("    " + "\n    ".join(samples[-1][2].strip().splitlines()))
    if args.also_pandas:
        command[command.index("duckdb")] = "pandas"
        seconds, gib, *_ = timed(command)
        print(f"evalset sample (pandas): {seconds:6.2f} s  peak {gib:.2f} GiB")


def _times(runs) -> str:
    return "/".join(f"{run[0]:.2f}" for run in runs)

if __name__ == "__main__":
    main()
