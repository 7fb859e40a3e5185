#!/usr/bin/env python
"""Benchmark: the CSV parsers a run reader could be built on, on the run's three columns evalset reads.

Each parser reads ``qid``, ``docid`` and ``score`` (typed: two strings and a double) of the main case's run of
``scripts/bench_scoring.py`` (10M lines, generated there once into ``--data``), in a fresh process of its own, whole
processes timed from start to exit (Python's start and the parser's import included), in turns, ``--repeat``
times; the medians of wall time, CPU (user + system of every thread) and peak resident memory:

- ``arrow pieces``: evalset's streamed reader's parse, pyarrow's CSV reader on 16 MiB pieces on one thread
  (:func:`evalset.io.runtext.parsed_pieces`, the other core free for the scorer);
- ``arrow whole``: pyarrow's CSV reader on the whole file on every core (the whole-file reader's parse);
- ``polars scan``: polars' lazy scan with projection, collected on every core (the issue's candidate);
- ``polars scan -> arrow``: the same, handed over as arrow columns (what the measure engine takes);
- ``polars pieces -> arrow``: polars' reader on the same 16 MiB pieces, one at a time, as arrow columns.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python scripts/bench_parsers.py [--data .bench] [--lines 10000000] [--repeat 3] [--json PATH]

``--json PATH`` also writes the figures as one record (``scripts/benchlib.py``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib
from bench_scoring import DEPTH, JUDGED, ROOT, build, load, whole_process

NAMES = '["qid", "q0", "docid", "rank", "score", "tag"]'
POLARS_TYPES = '{"qid": pl.String, "docid": pl.String, "score": pl.Float64}'
PIECES = f"""
def pieces(path, size={1 << 24}):
    with open(path, "rb") as handle:
        rest = b""
        while block := handle.read(size):
            block = rest + block
            end = block.rfind(b"\\n") + 1
            rest = block[end:]
            yield block[:end]
        if rest:
            yield rest
"""
PARSERS = {
    "arrow pieces": """
import sys
from evalset.io import runtext
print(sum(len(table) for _, table, _ in runtext.parsed_pieces(sys.argv[1], 1 << 24, rank=False)))
""",
    "arrow whole": f"""
import sys
import pyarrow as pa, pyarrow.csv as pacsv
names = {NAMES}
table = pacsv.read_csv(sys.argv[1], pacsv.ReadOptions(column_names=names),
                       pacsv.ParseOptions(delimiter=" ", quote_char=False),
                       pacsv.ConvertOptions(column_types={{"qid": pa.large_string(), "docid": pa.large_string(),
                                                           "score": pa.float64()}},
                                            include_columns=["qid", "docid", "score"]))
print(table.num_rows)
""",
    "polars scan": f"""
import sys
import polars as pl
frame = pl.scan_csv(sys.argv[1], separator=" ", has_header=False, new_columns={NAMES}, quote_char=None,
                    schema_overrides={POLARS_TYPES}).select("qid", "docid", "score").collect()
print(frame.height)
""",
    "polars scan -> arrow": f"""
import sys
import polars as pl
frame = pl.scan_csv(sys.argv[1], separator=" ", has_header=False, new_columns={NAMES}, quote_char=None,
                    schema_overrides={POLARS_TYPES}).select("qid", "docid", "score").collect()
print(frame.to_arrow().num_rows)
""",
    "polars pieces -> arrow": f"""
import sys
import polars as pl
{PIECES}
rows = 0
for piece in pieces(sys.argv[1]):
    frame = pl.read_csv(piece, separator=" ", has_header=False, new_columns={NAMES}, quote_char=None,
                        schema_overrides={POLARS_TYPES}).select("qid", "docid", "score")
    rows += frame.to_arrow().num_rows
print(rows)
""",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000, help="Lines of the run (1,000 a query).")
    parser.add_argument("--repeat", type=int, default=3, help="Runs per parser, in turns; the median is reported.")
    parser.add_argument("--data", type=Path, default=ROOT / ".bench", help="Where the run is generated (once).")
    benchlib.add_option(parser)
    args = parser.parse_args()
    record = benchlib.recorder(args, "bench_parsers", benchlib.case(benchlib.changed(args, parser, ["lines"])))
    record.inputs(args.data)
    queries = max(args.lines // DEPTH, 1)
    run_path, _ = build(args.data, queries, DEPTH, JUDGED)
    record.inputs(run_path)
    print(f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; {os.cpu_count()} cores; {load()}; "
          f"{run_path} ({run_path.stat().st_size / 2**20:.0f} MiB, {queries * DEPTH:,} lines), 3 of its 6 columns")
    found: dict[str, list[dict]] = {name: [] for name in PARSERS}
    for _ in range(args.repeat):
        for name, code in PARSERS.items():
            result = whole_process([sys.executable, "-c", code, str(run_path)])
            if result is None:
                sys.exit(f"{name}: failed")
            if int(result["stdout"].split()[-1]) != queries * DEPTH:
                sys.exit(f"{name}: read {result['stdout'].strip()} rows, not {queries * DEPTH:,}")
            found[name].append(result)
    base = statistics.median(r["cpu"] for r in found["arrow pieces"])
    print(f"{'parser':<24} {'wall s':>7} {'cpu s':>7} {'peak MiB':>9} {'cpu x':>6}   runs (wall s / cpu s)")
    medians = {}
    for name, runs in found.items():
        wall, cpu, peak = (statistics.median(r[key] for r in runs) for key in ("seconds", "cpu", "peak_mib"))
        medians[name] = {"seconds": wall, "cpu": cpu, "peak_mib": peak}
        each = ", ".join(f"{r['seconds']:.2f}/{r['cpu']:.2f}" for r in runs)
        print(f"{name:<24} {wall:>7.2f} {cpu:>7.2f} {peak:>9.0f} {cpu / base:>6.2f}   {each}")
    print(f"every parser read {queries * DEPTH:,} rows; cpu x: CPU against arrow pieces'; {load()}")
    record.compare(medians, ["arrow pieces"], benchlib.WALL_CPU_PEAK)  # evalset's parse against the others
    record.write()


if __name__ == "__main__":
    main()
