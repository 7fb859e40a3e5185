"""Benchmark ``evalset sample``: against the floor (a bare DuckDB ``GROUP BY query`` count over the same file),
and, with ``--crossover``, its two engines against each other on logs of several sizes and formats.

Generates (once, cached in ``.bench/``, git-ignored) a Zipf-distributed synthetic query log of 10 million
lines with about a million distinct queries, user ids and timestamps. Every command runs in a fresh
subprocess; the script prints wall time (starting Python included), peak resident memory (the child's
``ru_maxrss``) and the ratio.

    python scripts/bench_sample.py [--lines 10000000] [--repeat 3] [--cache .bench] [--other-engine]
    python scripts/bench_sample.py --crossover [--repeat 3] [--sizes 10000,100000,...] [--formats-at 300000,...]

The default mode times ``evalset sample`` as a user runs it (``--engine auto``). ``--crossover`` times
``--engine pandas`` and ``--engine duckdb`` (and checks that they write the same ``queries.tsv``) on the real
Excite log, on the first N lines of the synthetic log (the same log over a shorter period) as TSV, and on some
of those as gzipped TSV and as Parquet; it prints a table and the log size from which DuckDB is the faster
engine (6 minutes with ``--repeat 5`` on the 2-core machine, more under load). ``--json PATH`` also writes the
figures as one record (``scripts/benchlib.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import benchlib
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

REPO = Path(__file__).resolve().parents[1]
EXCITE = REPO / "data" / "querylog" / "excite-small.log"
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


def full_log(args: argparse.Namespace) -> Path:
    """The synthetic log of ``--lines`` lines (generated in a child, so that its memory does not count in the
    timed children's peak RSS), read once so that every timed run starts from a warm page cache."""
    log = args.cache / f"zipf-{args.lines}.tsv"
    if not log.exists():
        seconds, *_ = timed([sys.executable, __file__, "--generate-only", "--lines", str(args.lines),
                             "--distinct", str(args.distinct), "--cache", str(args.cache)])
        print(f"generated {log} ({log.stat().st_size / 2**20:,.0f} MiB) in {seconds:.1f} s", flush=True)
    _warm(log)
    return log


def _warm(path: Path) -> None:
    with open(path, "rb") as handle:
        while handle.read(1 << 24):
            pass


FLOOR = """
import duckdb, sys
duckdb.sql("SET enable_progress_bar = false")
rows = duckdb.sql(f\"\"\"SELECT query, count(*) AS n FROM read_csv('{sys.argv[1]}', delim = '\\t',
    quote = '', escape = '', header = true,
    columns = {{'user_id': 'VARCHAR', 'timestamp': 'VARCHAR', 'query': 'VARCHAR'}},
    auto_detect = false) GROUP BY query\"\"\").to_arrow_table().num_rows
print(rows, "distinct raw queries")
"""


def evalset_sample(log: Path, output: Path, *options: str) -> list[str]:
    """The command; ``--force``: each run replaces the sample the run before wrote (the script's own file)."""
    return [sys.executable, "-m", "evalset", "sample", str(log), *options, "-o", str(output), "--force"]


SYNTHETIC_COLUMNS = ("-l", "user_id=user_id", "-l", "timestamp=timestamp", "--per-stratum", "10", "--seed", "1")
EXCITE_COLUMNS = ("-l", "header=no", "-l", "query=3", "-l", "user_id=1", "-l", "timestamp=2", "-l",
                  "timestamp_format=%y%m%d%H%M%S", "--per-stratum", "20", "--holdout", "0.2", "--seed", "7")


FLOOR_NAME = "DuckDB GROUP BY query"
GIB = {"seconds": ("wall time", "s"), "cpu": ("CPU time", "s"), "peak_gib": ("peak memory", "GiB")}


def against_the_floor(args: argparse.Namespace, record: benchlib.Recorder) -> None:
    """``evalset sample`` with its default engine against a bare DuckDB count, alternating, medians."""
    log = full_log(args)
    record.inputs(log)
    command = evalset_sample(log, args.cache / "queries-default.tsv", *SYNTHETIC_COLUMNS)
    floors, samples = [], []
    for _ in range(args.repeat):  # alternate, so that both see the same machine load
        floors.append(timed([sys.executable, "-c", FLOOR, str(log)]))
        samples.append(timed(command))
    engine = samples[-1][2].split("(", 1)[1].split(")", 1)[0]  # "read N submissions (engine); ..."
    floor_s, sample_s = (statistics.median(run[0] for run in runs) for runs in (floors, samples))
    floor_gib, sample_gib = (max(run[1] for run in runs) for runs in (floors, samples))
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}; load average {_load()}; "
          f"{log.name}: {log.stat().st_size / 2**20:,.0f} MiB")
    print(f"duckdb GROUP BY query  : median {floor_s:6.2f} s of {_times(floors)}  peak {floor_gib:.2f} GiB  "
          f"({floors[0][2].strip()})")
    print(f"evalset sample ({engine}): median {sample_s:6.2f} s of {_times(samples)}  peak {sample_gib:.2f} GiB"
          "  (default engine: auto)")
    print(f"ratio {sample_s / floor_s:.2f}x the floor (per run: "
          f"{', '.join(f'{s[0] / f[0]:.2f}x' for f, s in zip(floors, samples, strict=True))})")
    floor_cpu, sample_cpu = (statistics.median(run[3] for run in runs) for runs in (floors, samples))
    print(f"CPU time (user + system, all threads): floor {floor_cpu:.2f} s, evalset sample {sample_cpu:.2f} s, "
          f"ratio {sample_cpu / floor_cpu:.2f}x")
    print("    " + "\n    ".join(samples[-1][2].strip().splitlines()))
    record.compare({"evalset sample": {"seconds": sample_s, "cpu": sample_cpu, "peak_gib": sample_gib},
                    FLOOR_NAME: {"seconds": floor_s, "cpu": floor_cpu, "peak_gib": floor_gib}},
                   ["evalset sample"], GIB)
    if args.other_engine:
        other = "duckdb" if engine == "pandas" else "pandas"
        other_output = args.cache / f"queries-{other}.tsv"
        seconds, gib, *_ = timed([*evalset_sample(log, other_output, *SYNTHETIC_COLUMNS), "--engine", other])
        print(f"evalset sample ({other}): {seconds:6.2f} s  peak {gib:.2f} GiB")
        record.add(f"evalset sample --engine {other} wall time", seconds, "s")
        record.add(f"evalset sample --engine {other} peak memory", gib, "GiB")
        if other_output.read_bytes() != (args.cache / "queries-default.tsv").read_bytes():
            sys.exit(f"check FAILED: --engine {other} and --engine {engine} wrote different queries.tsv")
        print(f"check: --engine {other} and --engine {engine} write the same queries.tsv")


# ------------------------------------------------------------------------------------- engine crossover
@dataclasses.dataclass
class Case:
    """One log to time both engines on."""

    name: str
    path: Path
    lines: int
    options: tuple[str, ...]


def crossover_cases(args: argparse.Namespace) -> list[Case]:
    """The Excite log(s), prefixes of the synthetic log as TSV, and some prefixes as .tsv.gz and Parquet."""
    cases = [Case(path.name, path, _line_count(path), EXCITE_COLUMNS) for path in args.excite if path.exists()]
    for lines in sorted(args.sizes):
        cases.append(Case(f"synthetic {lines:,} TSV", _synthetic(args, lines), lines, SYNTHETIC_COLUMNS))
    for suffix, name in ((".gz", "TSV.gz"), (".parquet", "Parquet")):
        for lines in args.formats_at:
            path = _synthetic(args, lines)
            path = path.with_name(path.name + suffix if suffix == ".gz" else path.stem + suffix)
            cases.append(Case(f"synthetic {lines:,} {name}", path, lines, SYNTHETIC_COLUMNS))
    return cases


def _synthetic(args: argparse.Namespace, lines: int) -> Path:
    """The synthetic TSV log of ``--lines`` lines, or its first ``lines`` lines (the same log over a shorter
    period)."""
    if lines > args.lines:
        sys.exit(f"--sizes and --formats-at are prefixes of the --lines log: at most {args.lines:,} lines")
    return args.cache / (f"zipf-{args.lines}.tsv" if lines == args.lines else f"zipf-{args.lines}-head-{lines}.tsv")


def prepare_crossover_logs(args: argparse.Namespace) -> None:
    """Write the missing logs of :func:`crossover_cases` from the full synthetic log (run in a child: the
    timed children inherit the parent's peak RSS as their own starting point)."""
    full = _synthetic(args, args.lines)
    for lines in {*args.sizes, *args.formats_at}:
        path = _synthetic(args, lines)
        if not path.exists():  # the header and the first lines: a shorter period of the same log
            with open(full, "rb") as source, open(path.with_suffix(".tmp"), "wb") as target:
                target.writelines(itertools.islice(source, lines + 1))
            path.with_suffix(".tmp").rename(path)
    for case in crossover_cases(args):
        if case.path.exists():
            continue
        tmp = case.path.with_name(case.path.name + ".tmp")
        tsv = _synthetic(args, case.lines)
        if case.path.name.endswith(".gz"):
            with open(tsv, "rb") as source, gzip.open(tmp, "wb", compresslevel=6) as target:
                shutil.copyfileobj(source, target, 1 << 20)
        else:
            import pyarrow.parquet as pq

            table = pacsv.read_csv(tsv, parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
                                   convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(
                                       ["user_id", "timestamp", "query"], pa.string())))
            pq.write_table(table, tmp)
        tmp.rename(case.path)


def _line_count(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))


def crossover(args: argparse.Namespace, record: benchlib.Recorder) -> None:
    """Both engines on every case, alternating, medians; the table and the crossover."""
    record.inputs(full_log(args))
    cases = crossover_cases(args)
    record.inputs(*(case.path for case in cases))
    if not all(case.path.exists() for case in cases):
        timed([sys.executable, __file__, *sys.argv[1:], "--prepare-only"])
    for case in cases:
        _warm(case.path)
    print(f"load average before {_load()}; {args.repeat} runs of each engine per log, alternating; wall s: median"
          " (range); CPU s: user + system, median; peak: the largest ru_maxrss", flush=True)
    header = (f"{'log':<28} {'lines':>10} {'MiB':>6}  {'pandas wall s':>17} {'duckdb wall s':>17} "
              f"{'pandas/duckdb':>13}  {'CPU s pandas duckdb':>19}  {'peak GiB pandas duckdb':>22}")
    print(header + "\n" + "-" * len(header), flush=True)
    ratios = []
    for case in cases:
        runs = {"pandas": [], "duckdb": []}
        for _ in range(args.repeat):
            for engine, times in runs.items():
                output = args.cache / f"queries-{engine}.tsv"
                times.append(timed(evalset_sample(case.path, output, *case.options, "--engine", engine)))
            if not _same_bytes(args.cache / "queries-pandas.tsv", args.cache / "queries-duckdb.tsv"):
                sys.exit(f"the engines wrote different queries.tsv for {case.path}")
        wall, cpu, peak = ({engine: pick(times) for engine, times in runs.items()} for pick in (
            lambda times: statistics.median(run[0] for run in times),
            lambda times: statistics.median(run[3] for run in times),
            lambda times: max(run[1] for run in times)))
        ratios.append((case, wall["pandas"] / wall["duckdb"]))
        record.compare({f"--engine {engine}": {"seconds": wall[engine], "cpu": cpu[engine], "peak_gib": peak[engine]}
                        for engine in runs}, ["--engine pandas"], GIB, prefix=f"{case.name}: ")
        print(f"{case.name:<28} {case.lines:>10,} {case.path.stat().st_size / 2**20:>6,.1f}  "
              f"{_spread(runs['pandas']):>17} {_spread(runs['duckdb']):>17} {ratios[-1][1]:>12.2f}x  "
              f"{cpu['pandas']:>9.2f} {cpu['duckdb']:>9.2f}  {peak['pandas']:>11.2f} {peak['duckdb']:>10.2f}",
              flush=True)
    print(f"load average after {_load()}")
    print(crossover_line([(case.name, case.path.stat().st_size, ratio) for case, ratio in ratios
                          if case.path.suffix in (".tsv", ".log")]))


def crossover_line(measured: list[tuple[str, int, float]]) -> str:
    """Where DuckDB becomes the faster engine among plain-text logs (name, bytes, pandas / duckdb wall)."""
    measured = sorted(measured, key=lambda item: item[1])
    first = next((i for i in range(len(measured)) if all(ratio > 1 for *_, ratio in measured[i:])), None)
    if first is None:
        return "crossover: pandas is faster on the largest log measured"
    name, size, _ = measured[first]
    if first == 0:
        return f"crossover: duckdb is faster on every log measured, from {name} ({size / 2**20:,.1f} MiB) up"
    below, below_size, _ = measured[first - 1]
    return (f"crossover: duckdb is faster from {name} ({size / 2**20:,.1f} MiB) up; pandas on {below} "
            f"({below_size / 2**20:,.1f} MiB)")


def _same_bytes(first: Path, second: Path) -> bool:
    return first.read_bytes() == second.read_bytes()


def _spread(runs) -> str:
    times = [run[0] for run in runs]
    return f"{statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f})"


def _times(runs) -> str:
    return "/".join(f"{run[0]:.2f}" for run in runs)


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _numbers(text: str) -> list[int]:
    return [int(n) for n in text.split(",") if n.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--distinct", type=int, default=1_000_000, help="about how many distinct queries")
    parser.add_argument("--cache", type=Path, default=REPO / ".bench")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; medians are compared")
    parser.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--other-engine", action="store_true",
                        help="also time the engine auto did not take, and check that it writes the same sample")
    parser.add_argument("--crossover", action="store_true", help="time both engines on logs of several sizes")
    parser.add_argument("--sizes", type=_numbers,
                        default=[10_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000],
                        help="--crossover: synthetic log sizes in lines (prefixes of the --lines log)")
    parser.add_argument("--formats-at", type=_numbers, default=[300_000, 1_000_000, 3_000_000],
                        help="--crossover: sizes in lines of the gzipped TSV and Parquet logs (none: \"\")")
    parser.add_argument("--excite", type=Path, action="append", default=None,
                        help=f"--crossover: real Excite-format logs (default: {EXCITE.relative_to(REPO)})")
    benchlib.add_option(parser)
    args = parser.parse_args()
    sizes = ["lines", "distinct", *(["sizes", "formats_at", "excite"] if args.crossover else [])]
    case = benchlib.case("crossover" if args.crossover else None, benchlib.changed(
        args, parser, sizes, {"sizes": ",", "formats_at": ",", "excite": "repeat"}))
    args.excite = args.excite or [EXCITE]
    if args.generate_only:
        synthetic_log(args.cache / f"zipf-{args.lines}.tsv", args.lines, args.distinct)
        return
    if args.prepare_only:
        prepare_crossover_logs(args)
        return
    record = benchlib.recorder(args, "bench_sample", case)
    record.inputs(args.cache)
    if args.crossover:
        crossover(args, record)
    else:
        against_the_floor(args, record)
    record.write()


if __name__ == "__main__":
    main()
