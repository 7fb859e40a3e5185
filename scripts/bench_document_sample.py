#!/usr/bin/env python
"""Benchmark: the document-sampled design (issue 32) on TREC DL 2019, its must-show figures.

NIST's grades (``data/dl19/nist.qrels``, 9,260 pairs over 43 queries) are the humans and the pool; the 37
official runs (``data/dl19/runs``, all 666 pairs of them); as the control variate, Llama-3-70B alone, the three
recorded LLM judges together, and no LLM (Horvitz-Thompson). For each and each budget, ``--draws`` document
samples for nDCG@10, P@10 and AP at relevance level 2, the query-slice PPI++ design at the same human budget beside
(with an LLM). The data are read, and the simulation run, by the command's own path
(:func:`evalset.estimate.make_estimate` of a :class:`~evalset.estimate.ValidateDocuments`: the same files, pair
order and judge names), so that a seed gives exactly the figures of ``evalset estimate validate documents
data/dl19/runs --resamples R --budget B --human data/dl19/nist.qrels --llm ... -c rel_level=2 --seed S``. It prints
the date, the load average, each configuration's table and wall time, the run means' "this set" standard error over
the spread of their estimates across the draws (median and range over runs), for each ``--pair`` the share of draws
whose "this set" interval of the difference excluded 0 and its least width, and the targets checked ("this set"
coverage 0.94-0.975 of run means and paired differences; |bias| of run means <= 0.015; paired-difference width <=
0.30x the query slice's and tau >= 0.88 at B = 1000).

    python scripts/bench_document_sample.py [--draws 200] [--budgets 1000,2150] [--judges all|70b|none|every]
        [--prior-power G] [--llm-weights W0,W1,W2,W3] [--run FILE ...] [--pair BASELINE,CANDIDATE ...]

``--run`` adds a run file to the 37 (the prior then counts it too), e.g. a near-identical copy of one of them.

Two experiments on the design, not options of evalset: ``--prior-power G`` makes each run's weight of a pair in
the prior ``(1 / log2(rank + 1)) ** G`` (evalset's is :data:`evalset.estimate.documents.sample.PRIOR_POWER`; 1, the
issue's prototype; 0, the number of runs ranking it within the depth); ``--llm-weights`` multiplies a pair's
prior by the weight of the first judge's grade of it (more where the LLM is unsure), to measure how the prior's
shape trades the measures' targets.

``--json PATH`` also writes each configuration's wall time as one record (``scripts/benchlib.py``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

import benchlib  # scripts/benchlib.py, beside this script
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "data" / "dl19"
JUDGES = {"70b": ["llama-3-70b.fourprompts"],
          "all": ["llama-3-70b.fourprompts", "llama-3-8b.baseline", "flan-t5-large.fourprompts"], "none": []}


def targets(result, budget: float) -> list[str]:
    lines = []
    this_set = result.table[result.table["interval"] == '"this set"']
    for row in this_set.merge(result.beside, on=["measure", "kind"]).itertuples():
        checks = [("this set coverage in [0.94, 0.975]", 0.94 <= row.coverage <= 0.975)]
        if row.kind == "means":
            checks.append(("|bias| <= 0.015", row.bias_max <= 0.015))
            if budget == 1000:
                checks.append(("tau >= 0.88", row.tau >= 0.88))
        elif row.width_ratio == row.width_ratio:
            checks.append(("width <= 0.30x the slice's", row.width_ratio <= 0.30 or budget != 1000))
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

    from evalset.estimate.documents import validation as docvalidation
    from evalset.estimate.documents.sample import document_prior

    docvalidation.document_prior = functools.partial(document_prior, power=power)
    if llm_weights:
        weights, by_ranks = np.array([float(w) for w in llm_weights.split(",")]), docvalidation.pool_prior
        docvalidation.pool_prior = lambda pool, depth: by_ranks(pool, depth) * weights[pool.llm[:, 0]]


def swapped_copy(name: str, folder: Path) -> Path:
    """A near-identical run: the run ``name`` with the documents at ranks 9 and 10 of its own ranking (evalset's
    order under the default tie rule, ``evalset.metrics.ranking.top_k``) exchanged in the first 5 of the pool's
    queries in sorted query-id order; every score and every other line kept. Written to ``folder``."""
    import gzip

    from evalset.io.trec import read_qrels, read_run
    from evalset.metrics.ranking import top_k

    queries = sorted(read_qrels(DATA / "nist.qrels")["query_id"].astype(str).unique())[:5]
    top = top_k(read_run(DATA / "runs" / f"{name}.run.gz"), 10)
    swap = {}
    for query in queries:
        ninth, tenth = top[top["query_id"] == query].set_index("rank").loc[[9, 10], "doc_id"]
        swap[(query, ninth)], swap[(query, tenth)] = tenth, ninth
    lines = []
    with gzip.open(DATA / "runs" / f"{name}.run.gz", "rt") as run:
        for line in run:
            query, q0, doc, rank, score, _ = line.split()
            lines.append("\t".join([query, q0, swap.get((query, doc), doc), rank, score, f"{name}_swapped"]))
    path = folder / f"{name}_swapped.run"
    path.write_text("\n".join(lines) + "\n")
    return path


def per_column(columns: pd.DataFrame, pairs: list[tuple[str, str]]) -> list[str]:
    """The nDCG standard error against the spread of its estimates (per run), and the near-identical ``pairs``'
    share of draws whose "this set" interval excluded 0 and least width."""
    lines = []
    for measure, rows in columns.groupby("measure", sort=False):
        ratio = rows.loc[rows["kind"] == "means", "se_ratio"]
        lines.append(f"  {measure}: run means' mean \"this set\" SE over the sd of the estimates: median "
                     f"{ratio.median():.2f}, range {ratio.min():.2f}-{ratio.max():.2f}")
        for baseline, candidate in pairs:
            found = rows[rows["name"].isin([f"{candidate} - {baseline}", f"{baseline} - {candidate}"])]
            for row in found.itertuples():
                lines.append(f"    {row.name}: truth {row.truth:+.5f}, 0 excluded in {row.excludes_zero:.3f} of "
                             f"the draws, least width {row.least_width:.5f}, coverage {row.coverage_set:.3f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--budgets", default="1000,2150")
    parser.add_argument("--judges", default="every", choices=[*JUDGES, "every"])
    parser.add_argument("--measures", default="ndcg@10,p@10,ap")
    parser.add_argument("--seed", type=int, default=20191)
    parser.add_argument("--prior-power", type=float, help="the prior's rank weights to this power [default: "
                        "evalset's, documents.sample.PRIOR_POWER]")
    parser.add_argument("--llm-weights", help="the prior times these weights of the first judge's grade 0,1,2,3")
    parser.add_argument("--run", action="append", default=[], help="a run file to add to the 37 (repeatable)")
    parser.add_argument("--swapped-copy", metavar="RUN", help="add RUN's near-identical copy (swapped_copy) and "
                        "print the pair's figures")
    parser.add_argument("--pair", action="append", default=["test1,TUA1-1"],
                        help="baseline,candidate: a pair whose excluded-0 rate and least width to print")
    benchlib.add_option(parser)
    args = parser.parse_args()
    record = benchlib.recorder(args, "bench_document_sample", benchlib.case(benchlib.changed(
        args, parser, ["draws", "budgets", "judges", "measures", "seed", "prior_power", "llm_weights", "run",
                       "swapped_copy", "pair"], {"run": "repeat", "pair": "repeat"})))
    record.inputs(DATA / "nist.qrels", DATA / "runs", *args.run,
                  *(DATA / "llm_labels" / f"{name}.qrels" for names in JUDGES.values() for name in names))
    from evalset.estimate.documents.sample import PRIOR_POWER

    args.prior_power = PRIOR_POWER if args.prior_power is None else args.prior_power
    use_prior_shape(args.prior_power, args.llm_weights)

    from evalset.contract import ContractOptions
    from evalset.estimate import ValidateDocuments, make_estimate, read_grades
    from evalset.io.trec import expand_run_paths, read_run

    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M UTC}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.draws} draws; prior power {args.prior_power:g}"
          f"{f'; LLM weights {args.llm_weights}' if args.llm_weights else ''}")
    # read as `evalset estimate validate documents` reads (evalset.estimate.make_estimate): the same
    # files, pair order and judge names, so that a seed gives the command's draws and figures
    import tempfile

    run_paths = [DATA / "runs", *args.run]
    if args.swapped_copy:
        run_paths.append(swapped_copy(args.swapped_copy, Path(tempfile.mkdtemp())))
        args.pair.append(f"{args.swapped_copy},{args.swapped_copy}_swapped")
    options = ContractOptions(rel_level=2)
    contract = options.applied_to()[0]
    pairs = [tuple(pair.split(",")) for pair in args.pair]
    total = time.perf_counter()
    for key in (JUDGES if args.judges == "every" else [args.judges]):
        names = JUDGES[key]
        for budget in (float(b) for b in args.budgets.split(",")):
            start = time.perf_counter()
            result = make_estimate(ValidateDocuments(
                runs=run_paths, human=[DATA / "nist.qrels"], llm=[DATA / "llm_labels" / f"{n}.qrels" for n in names],
                no_llm=not names, draws=args.draws, budget=budget, metrics=args.measures.split(","), options=options,
                seed=args.seed))
            seconds = time.perf_counter() - start
            record.add(f"judges {key}, B = {budget:g}: wall time", seconds, "s")
            print(f"\n== {key}, B = {budget:g} ({seconds:.0f} s; mean sample "
                  f"{result.settings['mean_sample']:.0f})")
            print(result.to_text())
            means = result.beside[result.beside["kind"] == "means"]
            differences = result.table[(result.table["kind"] == "differences")
                                       & (result.table["interval"] == '"this set"')]
            print("tau over draws: " + "; ".join(f"{r.measure} {r.tau:.3f} (sd {r.tau_sd:.3f})"
                                                 for r in means.itertuples()))
            print("per column:")
            print("\n".join(per_column(result.columns, pairs)))
            print("targets:")
            print("\n".join(targets(result, budget)))
            if budget == 1000:
                runs = {name: read_run(path) for name, path in expand_run_paths(run_paths).items()}
                qrels = read_grades([DATA / "nist.qrels"], "human").qrels
                print("ranking stability:")
                print("\n".join(ranking_stability(runs, qrels, contract, args.measures.split(","), args.seed,
                                                   dict(zip(differences["measure"], differences["width"],
                                                            strict=True)))))
    print(f"\ntotal {time.perf_counter() - total:.0f} s")
    record.add("total wall time", time.perf_counter() - total, "s")
    record.write()


if __name__ == "__main__":
    main()
