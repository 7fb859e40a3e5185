#!/usr/bin/env python
"""Benchmark: evalset against pytrec_eval (and ranx), end to end from the files, on synthetic TREC runs.

Three cases, in one run of this script (each tool in its own fresh subprocess, so that peak memory is its own):

``main``
    a run of ``--lines`` lines (default 10M: 10,000 queries x 1,000 documents) and graded qrels with 100 judged
    documents per query: parse both files with each tool's own readers, then nDCG@10, AP, P@10 and RR for every
    query; evalset as ``evalset score`` does it (:func:`evalset.metrics.evaluate_file`: read whole below the
    streaming threshold, streamed above it) and streamed (``evalset_streamed``). The median of ``--repeat`` runs
    per tool.
``big``
    ``--big-factor`` times more lines (default 100M lines, 100,000 queries, 10M judgments), scored by evalset
    streamed in blocks of whole queries; its wall time and peak memory against evalset's on the main case. The
    run is written as parts of whole queries and their concatenation; every query's value is then checked
    against the in-memory path (``evaluate(read_run(part))`` of each part, whole in memory) and the means to
    1e-12.
``many``
    ``--runs`` runs (default 37) of ``--lines / 10`` lines on the same queries, each scored against
    ``--qrels-sets`` qrels (default 3): evalset parses each run once and scores it against the qrels prepared
    once, runs side by side on both cores; pytrec_eval parses each run once and evaluates it with one evaluator
    per qrels.

``--cli``
    in the main case, the commands a user runs, each a whole process timed from its start to its exit (starting
    Python and every import included): ``evalset score --qrels Q RUN -m ndcg@10 -m ap -m p@10 -m rr --format json``
    against scripts that do the same with pytrec_eval, ranx and ir_measures (each tool's parsers and evaluator, the
    means printed; ``--cli-tools``) and against the floor, polars' own bare scan of the run's three columns and the
    qrels' three (nothing computed), in turns, ``--repeat`` times; wall, CPU (user + system of every thread) and
    peak resident memory of each process, the medians and their ratios, and the means each printed, compared; in
    the big case, ``evalset score`` on the big run, one process: its time against the main case's command (the
    median), its peak, its means against the library call's.

Inputs are generated once into ``--data`` (default ``.bench/``, git-ignored; the 100M-line case needs about 8 GB:
put it outside the repo, e.g. ``--data /work/scratch/bench20``). The clock starts after the imports (and ranx's
numba compilation). The script prints the date, the load average before and after each case, wall and CPU time,
peak resident memory, the ratios, and checks that the tools agree on the means. ``--lines 100000`` finishes in a
few seconds (for CI). ``--json PATH`` also writes the figures as one record (``scripts/benchlib.py``;
``scripts/benchmarks.py`` puts the records of ``docs/benchmarks/`` on ``docs/benchmarks.md``).

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python scripts/bench_scoring.py [--lines 10000000] [--repeat 3] [--cases main,big,many] [--cli]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MEASURES = {"ndcg@10": "ndcg_cut_10", "ap": "map", "p@10": "P_10", "rr": "recip_rank"}
RANX = {"ndcg@10": "ndcg@10", "ap": "map", "p@10": "precision@10", "rr": "mrr"}
DEPTH, JUDGED, CORPUS = 1000, 100, 2_000_000


def generate(queries: int, depth: int, judged: int, seed: int, first_query: int = 0):
    """A run (``queries`` x ``depth``, grouped by query, scores descending) and qrels (``judged`` per query: half
    from the run's top 100, half from outside the run), as arrow tables."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(first_query, first_query + queries), depth).astype(str)
    docs = rng.integers(0, CORPUS, size=(queries, depth))
    docs.sort(axis=1)  # unique per query after dropping repeats: shift repeats to fresh ids
    docs = (docs + np.arange(depth)) % (CORPUS + depth)
    rng.permuted(docs, axis=1, out=docs)
    scores = np.sort(rng.gamma(2.0, 3.0, size=(queries, depth)), axis=1)[:, ::-1]
    run = pa.table({"qid": pa.array(qid), "q0": pa.array(np.full(len(qid), "Q0")),
                    "docid": pa.array(np.char.add("D", docs.ravel().astype(str))),
                    "rank": pa.array(np.tile(np.arange(1, depth + 1), queries)),
                    "score": pa.array(np.round(scores.ravel(), 6)), "tag": pa.array(np.full(len(qid), "synthetic"))})
    top = min(100, depth)
    picked = np.stack([rng.choice(top, size=min(judged // 2, top), replace=False) for _ in range(queries)])
    inside = np.take_along_axis(docs, picked, axis=1)
    outside = np.sort(rng.integers(0, CORPUS, size=(queries, judged - picked.shape[1])), axis=1)
    outside = CORPUS + depth + outside + np.arange(outside.shape[1])  # distinct, and never in the run
    qdocs = np.concatenate([inside, outside], axis=1)
    grades = rng.choice(4, size=qdocs.shape, p=[0.55, 0.2, 0.17, 0.08])
    qrels = pa.table({"qid": pa.array(np.repeat(np.arange(first_query, first_query + queries), judged).astype(str)),
                      "iter": pa.array(np.full(qdocs.size, "0")),
                      "docid": pa.array(np.char.add("D", qdocs.ravel().astype(str))),
                      "grade": pa.array(grades.ravel())})
    return run, qrels


def write(table, path: Path, append: bool = False) -> None:
    import pyarrow.csv as pacsv

    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with open(path, "ab" if append else "wb") as handle:
        pacsv.write_csv(table, handle, options)


def build(folder: Path, queries: int, depth: int, judged: int, seed: int = 0) -> tuple[Path, Path]:
    """The main case's run and qrels (generated once)."""
    run_path, qrels_path = folder / f"run.{queries}x{depth}.txt", folder / f"qrels.{queries}x{judged}.txt"
    if not (run_path.exists() and qrels_path.exists()):
        folder.mkdir(parents=True, exist_ok=True)
        run, qrels = generate(queries, depth, judged, seed)
        write(run, run_path)
        write(qrels, qrels_path)
    return run_path, qrels_path


def build_big(folder: Path, parts: int, queries: int, depth: int, judged: int) -> tuple[Path, Path, list[Path]]:
    """``parts`` runs of ``queries`` distinct queries each (generated one at a time: bounded memory), their
    concatenation, and the qrels of all their queries."""
    folder = folder / f"big.{parts}x{queries}x{depth}"
    part_paths = [folder / f"part{k}.txt" for k in range(parts)]
    run_path, qrels_path, done = folder / "run.txt", folder / "qrels.txt", folder / "done"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        qrels_path.unlink(missing_ok=True)
        for k, part in enumerate(part_paths):
            run, qrels = generate(queries, depth, judged, seed=100 + k, first_query=k * queries)
            write(run, part)
            write(qrels, qrels_path, append=True)
        with open(run_path, "wb") as target:
            for part in part_paths:
                with open(part, "rb") as source:
                    shutil.copyfileobj(source, target, 1 << 24)
        done.touch()
    return run_path, qrels_path, part_paths


def build_many(folder: Path, runs: int, qrels_sets: int, queries: int, depth: int) -> tuple[list[Path], list[Path]]:
    """``runs`` runs on the same queries (each its own draw), and ``qrels_sets`` qrels, each from one run's draw."""
    folder = folder / f"many.{runs}x{queries}x{depth}"
    run_paths = [folder / f"run{k:02d}.txt" for k in range(runs)]
    qrels_paths = [folder / f"qrels{k}.txt" for k in range(qrels_sets)]
    if not (folder / "done").exists():
        folder.mkdir(parents=True, exist_ok=True)
        for k, path in enumerate(run_paths):
            run, qrels = generate(queries, depth, JUDGED, seed=1000 + k)
            write(run, path)
            if k < qrels_sets:
                write(qrels, qrels_paths[k])
        (folder / "done").touch()
    return run_paths, qrels_paths


# ------------------------------------------------------------------------------------------- in the children
def run_evalset(run_path: str, qrels_path: str, save: str = "") -> dict[str, float]:
    from evalset.io.trec import read_qrels
    from evalset.metrics import evaluate_file, prepare_qrels

    per_query = evaluate_file(run_path, prepare_qrels(read_qrels(qrels_path)), list(MEASURES))
    if save:
        per_query.to_pickle(save)
    return {m: float(per_query[m].mean()) for m in MEASURES}


def run_evalset_streamed(run_path: str, qrels_path: str, save: str = "") -> dict[str, float]:
    from evalset.io.trec import read_qrels
    from evalset.metrics import evaluate_file, prepare_qrels

    per_query = evaluate_file(run_path, prepare_qrels(read_qrels(qrels_path)), list(MEASURES), stream=True)
    if save:
        per_query.to_pickle(save)
    return {m: float(per_query[m].mean()) for m in MEASURES}


def run_pytrec_eval(run_path: str, qrels_path: str, save: str = "") -> dict[str, float]:
    import pytrec_eval

    with open(qrels_path) as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path) as handle:
        run = pytrec_eval.parse_run(handle)
    results = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(run)
    return {m: float(np.mean([values[name] for values in results.values()])) for m, name in MEASURES.items()}


def run_ranx(run_path: str, qrels_path: str, save: str = "") -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    qrels, run = Qrels.from_file(qrels_path, kind="trec"), Run.from_file(run_path, kind="trec")
    means = evaluate(qrels, run, list(RANX.values()))
    return {m: float(means[name]) for m, name in RANX.items()}


def many_evalset(runs: str, qrels: str, save: str = "") -> dict[str, float]:
    from evalset.io.trec import read_qrels, read_run
    from evalset.metrics import evaluate, prepare_qrels
    from evalset.speed.parallel import parallel_map

    prepared = [prepare_qrels(read_qrels(path)) for path in qrels.split(",")]

    def score(path: str) -> list[dict[str, float]]:  # one parse per run, then every qrels
        run = read_run(path)
        return [evaluate(run, p, list(MEASURES)).mean().to_dict() for p in prepared]

    means = parallel_map(score, runs.split(","))
    return {f"{m} q{k} {i}": value for i, per_run in enumerate(means) for k, row in enumerate(per_run)
            for m, value in row.items()}


def many_pytrec_eval(runs: str, qrels: str, save: str = "") -> dict[str, float]:
    import pytrec_eval

    evaluators = []
    for path in qrels.split(","):
        with open(path) as handle:
            evaluators.append(pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(handle), set(MEASURES.values())))
    found = {}
    for i, path in enumerate(runs.split(",")):
        with open(path) as handle:
            run = pytrec_eval.parse_run(handle)
        for k, evaluator in enumerate(evaluators):
            results = evaluator.evaluate(run)
            for m, name in MEASURES.items():
                found[f"{m} q{k} {i}"] = float(np.mean([values[name] for values in results.values()]))
    return found


def warm_up(tool: str) -> None:
    """Imports (and ranx's numba compilation) before the clock starts: the timing is the work on the files."""
    if tool.startswith(("evalset", "many_evalset")):
        import evalset.io.trec
        import evalset.metrics  # noqa: F401
    elif "pytrec_eval" in tool:
        import pytrec_eval  # noqa: F401
    else:
        from ranx import Qrels, Run, evaluate

        evaluate(Qrels({"q": {"d": 1}}), Run({"q": {"d": 1.0, "e": 0.5}}), list(RANX.values()))


TOOLS = {"evalset": run_evalset, "evalset_streamed": run_evalset_streamed, "pytrec_eval": run_pytrec_eval,
         "ranx": run_ranx, "many_evalset": many_evalset, "many_pytrec_eval": many_pytrec_eval}


def peak_memory_mib() -> float:
    """This process's peak resident memory: VmHWM, its own since exec (``ru_maxrss`` can carry the parent's peak
    across fork and exec on Linux), else ``ru_maxrss``."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(tool: str, run_path: str, qrels_path: str, save: str) -> None:
    warm_up(tool)
    start, cpu_start = time.perf_counter(), time.process_time()
    means = TOOLS[tool](run_path, qrels_path, save)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak_mib = peak_memory_mib()
    print(json.dumps({"tool": tool, "seconds": seconds, "cpu": cpu, "peak_mib": peak_mib, "means": means}))


# ------------------------------------------------------------------------------- the commands (--cli)
PYTREC_EVAL_COMMAND = f"""
import json, sys
import numpy as np
import pytrec_eval

with open(sys.argv[1]) as handle:
    qrels = pytrec_eval.parse_qrel(handle)
with open(sys.argv[2]) as handle:
    run = pytrec_eval.parse_run(handle)
results = pytrec_eval.RelevanceEvaluator(qrels, {set(MEASURES.values())!r}).evaluate(run)
print(json.dumps({{m: float(np.mean([values[name] for values in results.values()]))
                  for m, name in {MEASURES!r}.items()}}))
"""


IR_MEASURES = {"ndcg@10": "nDCG@10", "ap": "AP", "p@10": "P@10", "rr": "RR"}

RANX_COMMAND = f"""
import json, sys
from ranx import Qrels, Run, evaluate

qrels, run = Qrels.from_file(sys.argv[1], kind="trec"), Run.from_file(sys.argv[2], kind="trec")
means = evaluate(qrels, run, {list(RANX.values())!r})
print(json.dumps({{m: float(means[name]) for m, name in {RANX!r}.items()}}))
"""

IR_MEASURES_COMMAND = f"""
import json, sys
import ir_measures

wanted = {{m: ir_measures.parse_measure(name) for m, name in {IR_MEASURES!r}.items()}}
means = ir_measures.calc_aggregate(list(wanted.values()), ir_measures.read_trec_qrels(sys.argv[1]),
                                   ir_measures.read_trec_run(sys.argv[2]))
print(json.dumps({{m: float(means[measure]) for m, measure in wanted.items()}}))
"""

TRECTOOLS_COMMAND = """
import json, sys
from trectools import TrecEval, TrecQrel, TrecRun

tool = TrecEval(TrecRun(sys.argv[2]), TrecQrel(sys.argv[1]))
print(json.dumps({"ndcg@10": tool.get_ndcg(depth=10), "ap": tool.get_map(), "p@10": tool.get_precision(depth=10),
                  "rr": tool.get_reciprocal_rank()}))
"""
"""trectools' own readers and measures (its defaults: trec_eval's conventions, its runs' 1,000 documents a query)."""

FLOOR_COMMAND = """
import sys
import polars as pl

def columns(path, names, kept, types):
    return pl.scan_csv(path, separator=" ", has_header=False, new_columns=names, quote_char=None,
                       schema_overrides=types).select(kept).collect()

run = columns(sys.argv[2], ["qid", "q0", "docid", "rank", "score", "tag"], ["qid", "docid", "score"],
              {"qid": pl.String, "docid": pl.String, "score": pl.Float64})
qrels = columns(sys.argv[1], ["qid", "iter", "docid", "grade"], ["qid", "docid", "grade"],
                {"qid": pl.String, "docid": pl.String, "grade": pl.Int64})
print(run.height, qrels.height)
"""
"""The floor: polars' own bare scan of the run's three columns and the qrels' three, no measure computed."""

COMMANDS = {"pytrec_eval": PYTREC_EVAL_COMMAND, "ranx": RANX_COMMAND, "ir_measures": IR_MEASURES_COMMAND,
            "trectools": TRECTOOLS_COMMAND, "floor (polars scan)": FLOOR_COMMAND}


def evalset_command(run: str, qrels: str) -> list[str]:
    measures = [arg for m in MEASURES for arg in ("-m", m)]
    return [sys.executable, "-m", "evalset", "score", "--qrels", qrels, run, *measures, "--format", "json"]


LAUNCHER = """
import json, os, sys, time
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump({"seconds": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
               "peak_mib": usage.ru_maxrss / 1024, "code": os.waitstatus_to_exitcode(status)}, out)
"""


def whole_process(argv: list[str]) -> dict | None:
    """A command as a user waits for it: wall time from start to exit, CPU (user + system, all its threads) and
    peak resident memory (``ru_maxrss``) of that process alone (``wait4``), and its stdout. It is started by a
    small launcher: a process started from this one would count this one's memory in its peak (Linux carries a
    parent's high-water mark through fork and exec), and this one holds gigabytes after the big case's check."""
    with tempfile.NamedTemporaryFile(suffix=".json") as usage:
        process = subprocess.run([sys.executable, "-c", LAUNCHER, usage.name, *argv], capture_output=True, cwd=ROOT,
                                 check=False)
        found = json.loads(Path(usage.name).read_text() or "{}")
    if process.returncode != 0 or found.get("code") != 0:
        print(f"{argv[:4]}: failed\n{process.stderr.decode()[-2000:]}")
        return None
    return {"seconds": found["seconds"], "cpu": found["cpu"], "peak_mib": found["peak_mib"],
            "stdout": process.stdout.decode()}


def cli_case(args, run_path: Path, qrels_path: Path, record: benchlib.Recorder) -> dict | None:
    """``evalset score`` against the other tools' commands and the floor (polars' bare scan), whole processes in
    turns; medians and ratios; the command's medians."""
    print(f"\n== cli: the commands, whole processes (Python's start and imports included), {args.repeat} turns; "
          f"{load()}")
    wanted = {"pytrec_eval", "floor (polars scan)", *args.cli_tools.split(",")}
    others = [name for name in COMMANDS if name in wanted]
    commands = {"evalset score": evalset_command(str(run_path), str(qrels_path))} | {
        name: [sys.executable, "-c", COMMANDS[name], str(qrels_path), str(run_path)] for name in others}
    found: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, argv in commands.items():
            result = whole_process(argv)
            if result is None:
                return None
            found[name].append(result)
    median = {name: {key: statistics.median(r[key] for r in runs) for key in ("seconds", "cpu", "peak_mib")}
              for name, runs in found.items()}
    ours = median["evalset score"]
    print(f"{'command':<20} {'wall s':>7} {'cpu s':>7} {'peak MiB':>9} {'wall x':>7} {'cpu x':>6}   "
          f"runs (wall s / cpu s)")
    for name, runs in found.items():
        each = ", ".join(f"{r['seconds']:.2f}/{r['cpu']:.2f}" for r in runs)
        print(f"{name:<20} {median[name]['seconds']:>7.2f} {median[name]['cpu']:>7.2f} "
              f"{median[name]['peak_mib']:>9.0f} {median[name]['seconds'] / ours['seconds']:>7.2f} "
              f"{median[name]['cpu'] / ours['cpu']:>6.2f}   {each}")
    theirs, floor = median["pytrec_eval"], median["floor (polars scan)"]
    pairs = [p["seconds"] / e["seconds"] for e, p in zip(found["evalset score"], found["pytrec_eval"], strict=True)]
    print(f"evalset score is {theirs['seconds'] / ours['seconds']:.1f}x faster than pytrec_eval in wall time "
          f"(medians; per turn {', '.join(f'{r:.1f}x' for r in pairs)}; goal >= 8x), "
          f"{theirs['cpu'] / ours['cpu']:.1f}x less CPU (goal >= 5x), "
          f"{theirs['peak_mib'] / ours['peak_mib']:.1f}x less memory; "
          f"{ours['seconds'] / floor['seconds']:.2f}x the floor's wall time (goal <= 2x)")
    record.compare(median, ["evalset score"], benchlib.WALL_CPU_PEAK, prefix="cli: ")
    printed = json.loads(found["evalset score"][0]["stdout"])["runs"][run_path.name.rsplit(".", 1)[0]]
    for name in found:
        if name in ("evalset score", "floor (polars scan)"):
            continue
        reference = json.loads(found[name][0]["stdout"].strip().splitlines()[-1])
        worst = max(abs(printed[m]["mean"] - reference[m]) for m in MEASURES)
        print(f"the means evalset score and {name} printed: largest difference {worst:.1e} over {len(MEASURES)} means")
    print(load())
    return ours


def big_command(run_path: Path, qrels_path: Path, main: dict | None, saved: Path, record: benchlib.Recorder) -> None:
    """``evalset score`` on the big run, a whole process: its time against the main case's command, its peak, and
    the means it printed against the streamed library call's (``saved``: its per-query values)."""
    import pandas as pd

    print(f"\n== cli big: evalset score on {run_path.name}, a whole process; {load()}")
    result = whole_process(evalset_command(str(run_path), str(qrels_path)))
    if result is None:
        return
    ratio = f", {result['seconds'] / main['seconds']:.2f}x the main case's command (goal <= 10)" if main else ""
    print(f"evalset score: {result['seconds']:.2f} s wall, {result['cpu']:.2f} s CPU, peak "
          f"{result['peak_mib'] * 2**20 / 1e9:.2f} GB ({result['peak_mib']:.0f} MiB; goal < 0.8 GB){ratio}")
    for key, (label, unit) in benchlib.WALL_CPU_PEAK.items():
        anchor = main is not None and key == "seconds"  # the main case's command: 10x the lines, at most 10x the time
        record.add(f"cli big: evalset score {label}", result[key], unit, "cli: evalset score" if anchor else None,
                   result[key] / main[key] if anchor else None)
    printed = json.loads(result["stdout"])["runs"][run_path.name.rsplit(".", 1)[0]]
    streamed = pd.read_pickle(saved)
    worst = max(abs(printed[m]["mean"] - streamed[m].mean()) for m in MEASURES)
    print(f"the means it printed against the library call's: largest difference {worst:.1e} over {len(MEASURES)} means")
    print(load())


# --------------------------------------------------------------------------------------------- the parent
def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def timed(tool: str, run: str, qrels: str, save: str = "") -> dict | None:
    out = subprocess.run([sys.executable, __file__, "--child", tool, run, qrels, save], capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        print(f"{tool}: failed\n{out.stderr[-2000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(results: dict[str, dict], base: str, columns: list[str]) -> None:
    header = f"{'tool':<18} {'wall s':>8} {'cpu s':>7} {'peak MiB':>9} {'time x':>7} {'memory x':>9}  "
    print(header + "  ".join(columns))
    for tool, result in results.items():
        ratio_t, ratio_m = result["seconds"] / results[base]["seconds"], result["peak_mib"] / results[base]["peak_mib"]
        means = "  ".join(f"{result['means'][m]:.4f}" for m in columns)
        print(f"{tool:<18} {result['seconds']:>8.2f} {result['cpu']:>7.2f} {result['peak_mib']:>9.0f} {ratio_t:>7.2f} "
              f"{ratio_m:>9.2f}  {means}")
    for tool, result in results.items():
        if tool != base and set(result["means"]) == set(results[base]["means"]):  # the same input
            worst = max(abs(result["means"][m] - results[base]["means"][m]) for m in result["means"])
            print(f"largest difference of a mean, {tool} vs {base}: {worst:.2e} ({len(result['means'])} means)")


def main_case(args, data: Path, record: benchlib.Recorder) -> tuple[dict, dict | None]:
    """The tools' median results, and the command's medians (``--cli``)."""
    queries = max(args.lines // DEPTH, 1)
    run_path, qrels_path = build(data, queries, DEPTH, JUDGED)
    record.inputs(run_path, qrels_path)
    print(f"\n== main: {run_path} ({run_path.stat().st_size / 2**20:.0f} MiB, {queries * DEPTH:,} lines), "
          f"{qrels_path} ({queries * JUDGED:,} judgments); {load()}")
    runs: dict[str, list[dict]] = {}
    for _ in range(args.repeat):
        for tool in args.tools.split(","):
            result = timed(tool, str(run_path), str(qrels_path))
            if result:
                runs.setdefault(tool, []).append(result)
    results = {tool: sorted(found, key=lambda r: r["seconds"])[len(found) // 2] for tool, found in runs.items()}
    for tool, found in runs.items():
        seconds = ", ".join(f"{r['seconds']:.2f}" for r in found)
        print(f"{tool}: wall seconds of the {len(found)} runs: {seconds}")
    if "evalset" in results:
        table(results, "evalset", list(MEASURES))
    record.compare(results, ["evalset", "evalset_streamed"], benchlib.WALL_CPU_PEAK, prefix="main: ")
    print(load())
    record.sample_load()
    if args.cli:
        return results, cli_case(args, run_path, qrels_path, record)
    return results, None


def big_case(args, data: Path, main: dict[str, dict], command: dict | None, record: benchlib.Recorder) -> None:
    parts, queries = args.big_factor, max(args.lines // DEPTH, 1)
    run_path, qrels_path, part_paths = build_big(data, parts, queries, DEPTH, JUDGED)
    record.inputs(run_path, qrels_path, *part_paths)
    print(f"\n== big: {run_path} ({run_path.stat().st_size / 2**30:.2f} GiB, {parts * queries * DEPTH:,} lines), "
          f"{parts * queries * JUDGED:,} judgments; {load()}")
    saved = data / "big.per_query.pkl"
    result = timed("evalset_streamed", str(run_path), str(qrels_path), str(saved))
    if result is None:
        return
    results = {"evalset_streamed": result} | {f"{tool} (main)": found | {"means": {}} for tool, found in main.items()
                                              if tool.startswith("evalset")}
    table(results, "evalset_streamed", [])
    for tool, base in main.items():
        if tool.startswith("evalset"):
            print(f"big / main ({tool}): wall {result['seconds'] / base['seconds']:.2f}x for {parts}x the lines "
                  f"(goal <= 10), peak {result['peak_mib'] * 2**20 / 1e9:.2f} GB (goal < 0.8)")
    for key, (label, unit) in benchlib.WALL_CPU_PEAK.items():
        anchors = [tool for tool in main if tool.startswith("evalset")] if key == "seconds" else []
        for tool in anchors:
            record.add(f"big: evalset_streamed {label}", result[key], unit, f"main: {tool}",
                       result[key] / main[tool][key])
        if not anchors:
            record.add(f"big: evalset_streamed {label}", result[key], unit)
    print(load())
    record.sample_load()
    check_big(saved, part_paths, qrels_path)
    if args.cli:
        big_command(run_path, qrels_path, command, saved, record)


def check_big(saved: Path, part_paths: list[Path], qrels_path: Path) -> None:
    """Every query's streamed value against the in-memory path on its part (each part is whole queries)."""
    import pandas as pd

    from evalset.io.trec import read_qrels, read_run
    from evalset.metrics import evaluate, prepare_qrels

    streamed = pd.read_pickle(saved)
    prepared = prepare_qrels(read_qrels(qrels_path))
    pieces = []
    for part in part_paths:
        run = read_run(part)
        whole = evaluate(run, prepared, list(MEASURES))
        pieces.append(whole.loc[pd.unique(run["query_id"])])
    reference = pd.concat(pieces).loc[streamed.index]
    same = all(np.array_equal(streamed[m].to_numpy(), reference[m].to_numpy(), equal_nan=True) for m in MEASURES)
    worst = max(abs(streamed[m].mean() - reference[m].mean()) for m in MEASURES)
    print(f"check: {len(streamed):,} queries, every per-query value {'EQUAL' if same else 'DIFFERENT'} to the "
          f"in-memory path (read_run + evaluate of each part); largest difference of a mean {worst:.1e}")


def many_case(args, data: Path, record: benchlib.Recorder) -> None:
    queries = max(args.lines // DEPTH // 10, 1)
    run_paths, qrels_paths = build_many(data, args.runs, args.qrels_sets, queries, DEPTH)
    record.inputs(*run_paths, *qrels_paths)
    print(f"\n== many: {args.runs} runs x {queries * DEPTH:,} lines, each against {args.qrels_sets} qrels; {load()}")
    runs, qrels = ",".join(map(str, run_paths)), ",".join(map(str, qrels_paths))
    results = {}
    for tool in ("many_evalset", "many_pytrec_eval"):
        result = timed(tool, runs, qrels)
        if result:
            results[tool] = result
    if "many_evalset" in results:
        table(results, "many_evalset", [])
    record.compare(results, ["many_evalset"], benchlib.WALL_CPU_PEAK, prefix="many: ")
    print(load())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000, help="Lines of the main case's run (1,000 a query).")
    parser.add_argument("--cases", default="main,big,many")
    parser.add_argument("--tools", default="evalset,evalset_streamed,pytrec_eval", help="Main case (ranx too)")
    parser.add_argument("--repeat", type=int, default=3, help="Runs per tool, alternating; the median is reported.")
    parser.add_argument("--big-factor", type=int, default=10, help="The big case has this many times --lines.")
    parser.add_argument("--runs", type=int, default=37)
    parser.add_argument("--qrels-sets", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="Also time the commands as whole processes.")
    parser.add_argument("--cli-tools", default="pytrec_eval,ranx,ir_measures",
                        help="The other tools' commands beside evalset score and the floor (pytrec_eval always; "
                             "trectools too: about 90 s a turn on 10M lines).")
    parser.add_argument("--data", type=Path, default=ROOT / ".bench", help="Where the inputs are generated (once).")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    benchlib.add_option(parser)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    cases = args.cases.split(",")
    main_part = "main" if {"main", "big"} & set(cases) else None  # big extends main (its time against main's)
    many_part = "many" if "many" in cases else None
    record = benchlib.recorder(args, "bench_scoring", benchlib.case(
        "+".join(part for part in (main_part, many_part) if part),
        benchlib.changed(args, parser, ["lines", *(["big_factor"] if "big" in cases else []),
                                        *(["runs", "qrels_sets"] if many_part else [])])))
    record.inputs(args.data)
    print(f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; {os.cpu_count()} cores; {load()} at start")
    main_results, command = main_case(args, args.data, record) if "main" in cases else ({}, None)
    if "big" in cases:
        big_case(args, args.data, main_results, command, record)
    if "many" in cases:
        many_case(args, args.data, record)
    record.write()


if __name__ == "__main__":
    main()
