#!/usr/bin/env python
"""Benchmark: evalset against pytrec_eval and ranx, end to end from the files, on one synthetic input.

Builds (or reuses, in .bench/) a TREC run of 10,000 queries x 1,000 documents (10M lines) and graded qrels
with 100 judged documents per query, then, in one run of this script, times each tool in its own fresh
subprocess (so that peak memory is each tool's own): parse the run and qrels files with the tool's own
readers, then compute nDCG@10, AP, P@10 and RR for every query. The clock starts after the imports (and
ranx's numba compilation): it times the work on the files. Peak memory covers the whole process. It prints
wall and CPU time, peak resident memory, the ratios to evalset, and checks that the tools agree on the means.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python scripts/bench_scoring.py [--queries 10000 --depth 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MEASURES = {"ndcg@10": "ndcg_cut_10", "ap": "map", "p@10": "P_10", "rr": "recip_rank"}
RANX = {"ndcg@10": "ndcg@10", "ap": "map", "p@10": "precision@10", "rr": "mrr"}


def build(folder: Path, queries: int, depth: int, judged: int, seed: int = 0) -> tuple[Path, Path]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    run_path, qrels_path = folder / f"run.{queries}x{depth}.txt", folder / f"qrels.{queries}x{judged}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    corpus = 2_000_000
    qid = np.repeat(np.arange(queries), depth)
    docs = rng.integers(0, corpus, size=(queries, depth))
    docs.sort(axis=1)  # unique per query after dropping repeats: shift repeats to fresh ids
    docs = (docs + np.arange(depth)) % (corpus + depth)
    rng.permuted(docs, axis=1, out=docs)
    scores = np.sort(rng.gamma(2.0, 3.0, size=(queries, depth)), axis=1)[:, ::-1]
    table = pa.table({
        "qid": pa.array(qid.astype(str)),
        "q0": pa.array(np.full(queries * depth, "Q0")),
        "docid": pa.array(np.char.add("D", docs.ravel().astype(str))),
        "rank": pa.array(np.tile(np.arange(1, depth + 1), queries)),
        "score": pa.array(np.round(scores.ravel(), 6)),
        "tag": pa.array(np.full(queries * depth, "synthetic")),
    })
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(table, run_path, options)
    # judged: half from the run's top 100 (biased to the top), half from outside the run
    picked = np.stack([rng.choice(100, size=judged // 2, replace=False) for _ in range(queries)])
    inside = np.take_along_axis(docs, picked, axis=1)
    outside = np.sort(rng.integers(0, corpus, size=(queries, judged - judged // 2)), axis=1)
    outside = corpus + depth + outside + np.arange(outside.shape[1])  # distinct, and never in the run
    qdocs = np.concatenate([inside, outside], axis=1)
    grades = rng.choice(4, size=qdocs.shape, p=[0.55, 0.2, 0.17, 0.08])
    qrels = pa.table({
        "qid": pa.array(np.repeat(np.arange(queries), judged).astype(str)),
        "iter": pa.array(np.full(queries * judged, "0")),
        "docid": pa.array(np.char.add("D", qdocs.ravel().astype(str))),
        "grade": pa.array(grades.ravel()),
    })
    pacsv.write_csv(qrels, qrels_path, options)
    return run_path, qrels_path


def run_evalset(run_path: str, qrels_path: str) -> dict[str, float]:
    from evalset.io.trec import read_qrels, read_run
    from evalset.metrics import evaluate

    per_query = evaluate(read_run(run_path), read_qrels(qrels_path), list(MEASURES))
    return {m: float(per_query[m].mean()) for m in MEASURES}


def run_pytrec_eval(run_path: str, qrels_path: str) -> dict[str, float]:
    import pytrec_eval

    with open(qrels_path) as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path) as handle:
        run = pytrec_eval.parse_run(handle)
    results = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(run)
    return {m: float(np.mean([values[name] for values in results.values()])) for m, name in MEASURES.items()}


def run_ranx(run_path: str, qrels_path: str) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    means = evaluate(qrels, run, list(RANX.values()))
    return {m: float(means[name]) for m, name in RANX.items()}


def warm_up(tool: str) -> None:
    """Imports (and ranx's numba compilation) before the clock starts: the timing is the work on the files."""
    if tool == "evalset":
        import evalset.io.trec
        import evalset.metrics  # noqa: F401
    elif tool == "pytrec_eval":
        import pytrec_eval  # noqa: F401
    else:
        from ranx import Qrels, Run, evaluate

        evaluate(Qrels({"q": {"d": 1}}), Run({"q": {"d": 1.0, "e": 0.5}}), list(RANX.values()))


TOOLS = {"evalset": run_evalset, "pytrec_eval": run_pytrec_eval, "ranx": run_ranx}


def child(tool: str, run_path: str, qrels_path: str) -> None:
    warm_up(tool)
    start, cpu_start = time.perf_counter(), time.process_time()
    means = TOOLS[tool](run_path, qrels_path)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"tool": tool, "seconds": seconds, "cpu": cpu, "peak_mib": peak_mib, "means": means}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--judged", type=int, default=100)
    parser.add_argument("--tools", default="evalset,pytrec_eval,ranx")
    parser.add_argument("--repeat", type=int, default=3, help="Runs per tool, alternating; the median is reported.")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    run_path, qrels_path = build(ROOT / ".bench", args.queries, args.depth, args.judged)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    print(f"input: {run_path} ({run_path.stat().st_size / 2**20:.0f} MiB, {args.queries * args.depth:,} lines), "
          f"{qrels_path} ({args.queries * args.judged:,} judgments)")
    runs: dict[str, list[dict]] = {}
    for _ in range(args.repeat):
        for tool in args.tools.split(","):
            out = subprocess.run([sys.executable, __file__, "--child", tool, str(run_path), str(qrels_path)],
                                 capture_output=True, text=True, check=False)
            if out.returncode != 0:
                print(f"{tool}: failed\n{out.stderr[-2000:]}")
                continue
            runs.setdefault(tool, []).append(json.loads(out.stdout.strip().splitlines()[-1]))
    results = {tool: sorted(found, key=lambda r: r["seconds"])[len(found) // 2] for tool, found in runs.items()}
    for tool, found in runs.items():
        seconds = ", ".join(f"{r['seconds']:.2f}" for r in found)
        print(f"{tool}: wall seconds of the {len(found)} runs: {seconds} (median reported)")
    base = results.get("evalset")
    print(f"\n{'tool':<12} {'wall s':>8} {'cpu s':>7} {'peak MiB':>9} {'time x':>7} {'memory x':>9}  "
          + "  ".join(MEASURES))
    for tool, result in results.items():
        ratio_t = result["seconds"] / base["seconds"] if base else float("nan")
        ratio_m = result["peak_mib"] / base["peak_mib"] if base else float("nan")
        means = "  ".join(f"{result['means'][m]:.4f}" for m in MEASURES)
        figures = (f"{result['seconds']:>8.2f} {result['cpu']:>7.2f} {result['peak_mib']:>9.0f} {ratio_t:>7.2f} "
                   f"{ratio_m:>9.2f}")
        print(f"{tool:<12} {figures}  {means}")
    if base:
        for tool, result in results.items():
            worst = max(abs(result["means"][m] - base["means"][m]) for m in MEASURES)
            print(f"largest difference of a mean, {tool} vs evalset: {worst:.2e}")


if __name__ == "__main__":
    main()
