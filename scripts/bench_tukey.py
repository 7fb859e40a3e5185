#!/usr/bin/env python
"""Benchmark: the randomised Tukey HSD of ``evalset compare --all`` against the plain per-permutation loop.

The input is the per-query nDCG@10 of the official TREC DL 2019 runs (``data/dl19/runs``, the first ``--runs`` in
name order; 37 by default) on the 43 judged queries (``data/dl19/nist.qrels``): the queries x runs matrix.
In one run of this script, on that same matrix:

``evalset``
    :func:`evalset.stats.multiple.max_statistic_p_values` over every pair with ``--permutations`` permutations
    (rows permuted within each query in vectorised chunks), then ``compare_many`` end to end from the run files
    (scoring, the test, the holes, the ANOVA, the letters), as ``evalset compare --all`` does.
``anchor``
    the same test written plainly, as Carterette (2012) describes it: one permutation at a time, each query's
    values shuffled with ``Generator.permutation``, the largest difference of means kept (its own generator).

It prints the date, the load average, each wall time, the ratio anchor / evalset, and the check: the two sets of
adjusted p-values agree within Monte Carlo error (|p - p_anchor| <= 4 sd of the difference + 1/permutations, for
every pair). ``--runs 8 --permutations 500`` finishes in a second (for CI).

    python scripts/bench_tukey.py [--runs 37] [--permutations 10000] [--json PATH]

``--json PATH`` also writes the figures as one record (``scripts/benchlib.py``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

import benchlib
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "data" / "dl19"
ANCHOR = "per-permutation loop"


def anchor(matrix: np.ndarray, permutations: int, seed: int) -> np.ndarray:
    """Carterette's randomised Tukey HSD, one permutation at a time (every pair's adjusted p, in all_pairs order)."""
    rng = np.random.default_rng(seed)
    runs = matrix.shape[1]
    means = matrix.mean(axis=0)
    largest = np.empty(permutations)
    for b in range(permutations):
        shuffled = np.array([row[rng.permutation(runs)] for row in matrix])
        m = shuffled.mean(axis=0)
        largest[b] = m.max() - m.min()
    observed = np.array([abs(means[i] - means[j]) for i in range(runs) for j in range(i + 1, runs)])
    return np.array([(1 + np.sum(largest >= d - 1e-12)) / (1 + permutations) for d in observed])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=37, help="The first RUNS of data/dl19/runs (name order).")
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20191)
    benchlib.add_option(parser)
    args = parser.parse_args()
    record = benchlib.recorder(args, "bench_tukey", benchlib.case(benchlib.changed(
        args, parser, ["runs", "permutations", "seed"])))

    from evalset.comparing import compare_many
    from evalset.evaluation import Evaluation, per_query_values
    from evalset.stats.multiple import all_pairs, max_statistic_p_values

    paths = sorted((DATA / "runs").glob("*.run.gz"))[:args.runs]
    record.inputs(DATA / "nist.qrels", *paths)
    evaluation = Evaluation.on_qrels(DATA / "nist.qrels")
    matrix = per_query_values(evaluation, paths, ["ndcg@10"]).values("ndcg@10").dropna().to_numpy()
    queries, runs = matrix.shape
    pairs = all_pairs(runs)
    print(f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"input: nDCG@10 of {runs} DL19 runs on {queries} queries ({len(pairs)} pairs), "
          f"{args.permutations:,} permutations")

    start = time.perf_counter()
    ours = max_statistic_p_values(matrix, pairs, args.permutations, np.random.default_rng(args.seed))
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    whole = compare_many(evaluation, paths, "ndcg@10", permutations=args.permutations, seed=args.seed)
    command = time.perf_counter() - start
    start = time.perf_counter()
    reference = anchor(matrix, args.permutations, args.seed + 1)
    anchor_seconds = time.perf_counter() - start

    print(f"evalset max_statistic_p_values   {seconds:8.4f} s")
    print(f"evalset compare_many (from files) {command:6.3f} s (must be < 10)")
    print(f"anchor (per-permutation loop)    {anchor_seconds:8.4f} s")
    print(f"ratio anchor / evalset: {anchor_seconds / seconds:.1f}x")
    record.add("evalset max_statistic_p_values wall time", seconds, "s", ANCHOR, seconds / anchor_seconds)
    record.add("evalset compare_many (from files) wall time", command, "s")
    record.add(f"{ANCHOR} wall time", anchor_seconds, "s")
    print(f"load average {os.getloadavg()[0]:.2f}")
    p = (ours + reference) / 2
    bound = 4 * np.sqrt(p * (1 - p) * 2 / (args.permutations + 1)) + 1 / args.permutations
    worst = float(np.max(np.abs(ours - reference)))
    same = np.abs(ours - reference) <= bound
    significant = int(np.sum(ours < 0.05)), int(np.sum(reference < 0.05))
    print(f"check: {int(same.sum())} of {len(pairs)} adjusted p-values within Monte Carlo error of the anchor "
          f"(largest difference {worst:.4f}); significant at 0.05: {significant[0]} (evalset), {significant[1]} "
          f"(anchor)")
    names = [path.name.removesuffix(".run.gz") for path in paths]
    by_mean = matrix[:, [names.index(name) for name in whole.runs]]  # compare_many's columns: by mean, best first
    again = max_statistic_p_values(by_mean, pairs, args.permutations, np.random.default_rng(args.seed))
    agrees = np.array_equal(whole.adjusted.to_numpy()[pairs[:, 0], pairs[:, 1]], again)
    print(f"check: compare_many's matrix {'EQUALS' if agrees else 'DIFFERS FROM'} max_statistic_p_values' on the "
          "runs by mean (same seed)")
    record.write()


if __name__ == "__main__":
    main()
