#!/usr/bin/env python
"""Benchmark: the document-sampled design (issue 32) on TREC DL 2019, its must-show figures.

NIST's grades (``data/dl19/nist.qrels``, 9,260 pairs over 43 queries) are the humans and the pool; the 37
official runs (``data/dl19/runs``, all 666 pairs of them); as the control variate, Llama-3-70B alone, the three
recorded LLM judges together, and no LLM (Horvitz-Thompson). For each and each budget, ``--draws`` document
samples (:func:`evalset.estimate.documents.simulate.simulate_documents`, seed ``--seed``) for nDCG@10, P@10 and AP at
relevance level 2, the query-slice PPI++ design at the same human budget beside (with an LLM). It prints the
date, the load average, each configuration's table and wall time, and the issue's targets checked
("this set" coverage 0.93-0.99 of run means and paired differences; |bias| of run means <= 0.015; paired-difference
width <= 0.40x the query slice's; tau >= 0.88 at B = 1000).

    python scripts/bench_document_sample.py [--draws 200] [--budgets 1000,2150] [--judges all|70b|none|every]
        [--prior-power G] [--llm-weights W0,W1,W2,W3]

Two experiments on the design, not options of evalset: ``--prior-power G`` makes each run's weight of a pair in
the prior ``(1 / log2(rank + 1)) ** G`` (evalset's is :data:`evalset.estimate.documents.sample.PRIOR_POWER`; 1, the
issue's prototype; 0, the number of runs ranking it within the depth); ``--llm-weights`` multiplies a pair's
prior by the weight of the first judge's grade of it (more where the LLM is unsure), to measure how the prior's
shape trades the measures' targets.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "data" / "dl19"
JUDGES = {"70b": ["llama-3-70b.fourprompts"],
          "all": ["llama-3-70b.fourprompts", "llama-3-8b.baseline", "flan-t5-large.fourprompts"], "none": []}


def targets(table: pd.DataFrame, budget: float) -> list[str]:
    lines = []
    for row in table.itertuples():
        checks = [("this set coverage in [0.93, 0.99]", 0.93 <= row.coverage_set <= 0.99)]
        if row.kind == "means":
            checks.append(("|bias| <= 0.015", row.bias_max <= 0.015))
            if budget == 1000:
                checks.append(("tau >= 0.88", row.tau >= 0.88))
        elif row.width_ratio == row.width_ratio:
            checks.append(("width <= 0.40x the slice's", row.width_ratio <= 0.40))
        lines.append(f"  {row.measure} {row.kind}: " + "; ".join(f"{name} {'met' if ok else 'MISSED'}"
                                                                 for name, ok in checks))
    return lines


def ranking_stability(runs: dict, qrels: pd.DataFrame, contract: object, measures: list[str], seed: int,
                      spread: dict[str, float]) -> list[str]:
    """How stable the full judgments' own ranking of the runs is: Kendall's tau of the truth's ranking against
    itself on 1,000 bootstraps of the queries, the run pairs within 0.01 of each other, and the tau expected when
    every paired difference errs normally with the standard error of the measured mean "this set" width of the
    differences (what an estimator of that accuracy can reach: the mean over pairs of 1 - 2 Phi(-|gap| / se))."""
    import numpy as np
    from scipy.stats import norm

    from evalset.estimate.documents.estimate import prepare_pool
    from evalset.metrics.documents import document_terms
    from evalset.stats.rankings import kendall_tau

    pairs = qrels[["query_id", "doc_id"]].astype(str).reset_index(drop=True)
    pool = prepare_pool(pairs, None, runs, contract)
    grade = qrels["grade"].to_numpy(dtype=np.int64)
    full = pool.sample(np.ones(len(grade)), np.ones(len(grade), dtype=bool), grade, use_llm=False)
    rng = np.random.default_rng(seed)
    lines = []
    for text in measures:
        values = pool.estimate(document_terms(text, contract), full)[0]
        truth, queries = values.mean(axis=1), values.shape[1]
        boot = [kendall_tau(values[:, rng.integers(queries, size=queries)].mean(axis=1), truth)[0]
                for _ in range(1000)]
        gaps = np.abs(truth[:, None] - truth[None, :])[np.triu_indices(len(truth), 1)]
        line = (f"  {text}: the truth against a bootstrap of its queries: tau {np.mean(boot):.3f} (sd "
                f"{np.std(boot):.3f}); {int((gaps < 0.01).sum())} of {len(gaps)} run pairs within 0.01, "
                f"{int((gaps < 1e-12).sum())} tied")
        if text in spread:
            se = spread[text] / (2 * norm.ppf(0.975))
            line += f"; differences erring with se {se:.4f} leave tau {np.mean(1 - 2 * norm.cdf(-gaps / se)):.3f}"
        lines.append(line)
    return lines


def use_prior_shape(power: float, llm_weights: str | None) -> None:
    """Make the simulation's prior weigh a run's rank r of a pair by ``(1 / log2(r + 1)) ** power``, times the
    weight of the first judge's grade of the pair (``llm_weights``: comma-separated, one per grade from 0)."""
    import functools

    import numpy as np

    from evalset.estimate.documents import simulate as docsimulate
    from evalset.estimate.documents.sample import document_prior

    docsimulate.document_prior = functools.partial(document_prior, power=power)
    if llm_weights:
        weights, by_ranks = np.array([float(w) for w in llm_weights.split(",")]), docsimulate.pool_prior
        docsimulate.pool_prior = lambda pool, depth: by_ranks(pool, depth) * weights[pool.llm[:, 0]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--budgets", default="1000,2150")
    parser.add_argument("--judges", default="every", choices=[*JUDGES, "every"])
    parser.add_argument("--measures", default="ndcg@10,p@10,ap")
    parser.add_argument("--seed", type=int, default=20191)
    parser.add_argument("--no-slices", action="store_true", help="leave out the query-slice design")
    parser.add_argument("--prior-power", type=float, help="the prior's rank weights to this power [default: "
                        "evalset's, documents.sample.PRIOR_POWER]")
    parser.add_argument("--llm-weights", help="the prior times these weights of the first judge's grade 0,1,2,3")
    args = parser.parse_args()
    from evalset.estimate.documents.sample import PRIOR_POWER

    args.prior_power = PRIOR_POWER if args.prior_power is None else args.prior_power
    use_prior_shape(args.prior_power, args.llm_weights)

    from evalset.contract import EvaluationContract
    from evalset.estimate.documents.simulate import simulate_documents
    from evalset.io.trec import read_qrels, read_runs

    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M UTC}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.draws} draws; prior power {args.prior_power:g}"
          f"{f'; LLM weights {args.llm_weights}' if args.llm_weights else ''}")
    qrels = read_qrels(DATA / "nist.qrels")
    runs = read_runs([DATA / "runs"])
    contract = EvaluationContract(rel_level=2)
    total = time.perf_counter()
    for key in (JUDGES if args.judges == "every" else [args.judges]):
        names = JUDGES[key]
        llm = pd.concat([read_qrels(DATA / "llm_labels" / f"{n}.qrels").assign(judge=n) for n in names]) \
            if names else None
        for budget in (float(b) for b in args.budgets.split(",")):
            start = time.perf_counter()
            result = simulate_documents(runs, qrels, llm, budget=budget, draws=args.draws,
                                        measures=args.measures.split(","), contract=contract, seed=args.seed,
                                        compare_slices=not args.no_slices)
            print(f"\n== {key}, B = {budget:g} ({time.perf_counter() - start:.0f} s; mean sample "
                  f"{result.settings['mean_sample']:.0f})")
            print(result.to_text())
            means = result.table[result.table["kind"] == "means"]
            differences = result.table[result.table["kind"] == "differences"]
            print("tau over draws: " + "; ".join(f"{r.measure} {r.tau:.3f} (sd {r.tau_sd:.3f})"
                                                 for r in means.itertuples()))
            print("targets:")
            print("\n".join(targets(result.table, budget)))
            if budget == 1000:
                print("ranking stability:")
                print("\n".join(ranking_stability(runs, qrels, contract, args.measures.split(","), args.seed,
                                                   dict(zip(differences["measure"], differences["width_set"],
                                                            strict=True)))))
    print(f"\ntotal {time.perf_counter() - total:.0f} s")


if __name__ == "__main__":
    main()
