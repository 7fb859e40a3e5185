"""How often do compare's intervals cover the true mean difference on DL19-sized samples? The reason for the default
rule of `evalset compare` (docs/compare.md, "The interval's role").

Each of the DL19 runs (official_top100, nDCG@10 on NIST's judgments) is paired with bm25base_p; a pair's 43
per-query differences stand for the population of queries, its mean for the true difference. Each draw resamples
43 queries with replacement (a new test collection of the same size), and the BCa and percentile bootstrap
intervals (compare's, `evalset.stats.resampling.bootstrap_interval`, 1,999 resamples) and the t interval are drawn
at 95%; the share of draws whose interval holds the true difference is each one's coverage. Then, on the pairs as
they are, how often the two rules part: the permutation test (9,999 sign flips) below 0.05 while the BCa interval
holds 0 (the default rule says not established, the books' rule established), and the other way round. Seeded, so
the figures are the same on every run.

Usage: python scripts/bca_coverage.py [--draws R] [--pairs N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import stats

from evalset.evaluation import Evaluation, per_query_values
from evalset.stats.resampling import bootstrap_interval, permutation_p_value

DL19 = Path(__file__).resolve().parents[2] / "shared" / "data" / "dl19"
LEVEL = 0.95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=300, help="resampled collections per pair")
    parser.add_argument("--pairs", type=int, default=36, help="runs paired with bm25base_p (the first, by name)")
    args = parser.parse_args()
    folder = DL19 / "runs" / "official_top100"
    names = ["bm25base_p", *sorted(p.name.removesuffix(".run.gz") for p in folder.glob("*.run.gz")
                                   if p.name != "bm25base_p.run.gz")[:args.pairs]]
    values = per_query_values(Evaluation.on_qrels(DL19 / "qrels.txt"), {n: folder / f"{n}.run.gz" for n in names},
                              ["ndcg@10"])
    base = values.column("bm25base_p", "ndcg@10")
    rng = np.random.default_rng(20191)
    covered = {"BCa": [], "percentile": [], "t": []}
    parted = {"p < 0.05, BCa holds 0": [], "p >= 0.05, BCa excludes 0": []}
    for name in names[1:]:
        population = (values.column(name, "ndcg@10") - base).dropna().to_numpy()
        truth, n = population.mean(), len(population)
        p = permutation_p_value(population, 9999, rng)
        low, high = bootstrap_interval(population, LEVEL, 9999, rng, "bca")
        holds = low <= 0 <= high
        if (p < 1 - LEVEL) == holds:  # the test says significant and the interval holds 0, or the other way
            parted["p < 0.05, BCa holds 0" if holds else "p >= 0.05, BCa excludes 0"].append(f"{name} (p = {p:.4g})")
        for _ in range(args.draws):
            sample = population[rng.integers(0, n, n)]
            for method, label in (("bca", "BCa"), ("percentile", "percentile")):
                low, high = bootstrap_interval(sample, LEVEL, 1999, rng, method)
                covered[label].append(low <= truth <= high)
            half = stats.t.ppf(0.5 + LEVEL / 2, n - 1) * sample.std(ddof=1) / np.sqrt(n)
            covered["t"].append(abs(sample.mean() - truth) <= half)
    draws = len(covered["BCa"])
    print(f"{len(names) - 1} pairs x {args.draws} resampled collections of {n} queries = {draws:,} intervals at "
          f"{LEVEL:.0%}")
    for label, hits in covered.items():
        share = float(np.mean(hits))
        error = np.sqrt(share * (1 - share) / draws)
        print(f"  {label:<11} covers {share:.1%} (Monte Carlo SE {error:.1%})")
    print(f"the two rules on the {len(names) - 1} pairs as they are (nDCG@10 against bm25base_p, alpha 0.05):")
    for case, pairs in parted.items():
        print(f"  {case}: {len(pairs)}" + (f" ({', '.join(pairs)})" if pairs else ""))


if __name__ == "__main__":
    main()
