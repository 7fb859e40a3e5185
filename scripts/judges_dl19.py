"""Do the three recorded DL19 judges together beat the best single judge? Quadratic kappa with NIST's grades and
the width of PPI++ intervals, for each judge's raw grades, each judge calibrated alone, and the three as one
ensemble (``evalset judge ensemble``, ``estimate --ensemble``).

The kappas: every pair of the 43 queries, each query's prediction learnt on the other 42 (cross-fitted), with a
paired query-bootstrap interval of the change from the best single judge (``evalset judge recheck``). The widths:
``estimate --simulate DRAWS --size SIZE`` on the 37 official runs (nDCG@10), the calibration re-fitted on each
simulated slice's human grades.

    python scripts/judges_dl19.py [--draws 100] [--size 10] [--runs data/dl19/runs/official_top100]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from evalset.agreement.recheck import recheck
from evalset.estimate.slicevalidation import simulate_slices
from evalset.estimate.sources import read_grades
from evalset.io.trec import read_runs
from evalset.judgments.ensemble import ensemble_grades
from evalset.judgments.reading import read_grades as read_judgments
from evalset.render import text_table

ROOT = Path(__file__).resolve().parents[1]
NIST = ROOT / "data/dl19/nist.qrels"
JUDGES = {"flan-t5-large": "flan-t5-large.fourprompts", "llama-3-70b": "llama-3-70b.fourprompts",
          "llama-3-8b": "llama-3-8b.baseline"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--size", type=int, default=10)
    parser.add_argument("--runs", default=str(ROOT / "data/dl19/runs"))
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    paths = {name: str(ROOT / "data/dl19/llm_labels" / f"{stem}.qrels") for name, stem in JUDGES.items()}
    runs = read_runs([args.runs])
    human = read_grades([str(NIST)], "human")
    judgments = read_judgments([(path, "llm") for path in paths.values()], kind="llm").judgments
    humans = read_judgments([(str(NIST), "human")], kind="human").judgments
    scale = [0, 1, 2, 3]
    labels = {}
    for name, stem in JUDGES.items():
        labels[name] = judgments[judgments["annotator"] == stem].assign(annotator=name)
        calibrated = ensemble_grades(judgments[judgments["annotator"] == stem], humans, scale)
        labels[f"{name} calibrated"] = calibrated.labels().assign(annotator=f"{name} calibrated")
    labels["ensemble of 3"] = ensemble_grades(judgments, humans, scale).labels().assign(annotator="ensemble of 3")
    started, widths = time.monotonic(), {}
    for name in labels:
        judges = [paths[name.split()[0]]] if name.split()[0] in JUDGES else list(paths.values())
        result = simulate_slices(runs, human, read_grades(judges, "llm"), slice_size=args.slice_size, draws=args.draws,
                                 metrics=["ndcg@10"], ensemble=name not in JUDGES)
        widths[name] = result.table[result.table["interval"] == "PPI++ (t)"].set_index("kind")[["width", "coverage"]]
    base = max(JUDGES, key=lambda name: _kappa(labels[name], humans))
    table = [["judge", "quadratic kappa", f"vs {base}: change [95%]", "PPI width: means (coverage)",
              "differences (coverage)"]]
    for name in labels:
        change = recheck(pd.concat([humans.assign(source="nist"), labels[base].assign(source=base),
                                    labels[name].assign(source=name)]), resamples=args.resamples) \
            if name != base else None
        quadratic = change.figures[1] if change else None
        kappa = _kappa(labels[name], humans)
        means, differences = widths[name].loc["means"], widths[name].loc["differences"]
        table.append([name, f"{kappa:.3f}",
                      f"{quadratic.difference:+.3f} [{quadratic.low:+.3f}, {quadratic.high:+.3f}]" if quadratic else "",
                      f"{means['width']:.3f} ({means['coverage']:.3f})",
                      f"{differences['width']:.3f} ({differences['coverage']:.3f})"])
    print(f"DL19: {len(runs)} runs, nDCG@10, {args.draws} simulated slices of {args.slice_size} of 43 queries; "
          f"kappa intervals: {args.resamples} query resamples")
    print("\n".join(text_table(table)))
    print(f"({time.monotonic() - started:.0f} s)")


def _kappa(labels: pd.DataFrame, humans: pd.DataFrame) -> float:
    from sklearn.metrics import cohen_kappa_score

    both = labels.merge(humans, on=["query_id", "doc_id"], suffixes=("", "_human"))
    return float(cohen_kappa_score(both["grade_human"], both["grade"], weights="quadratic"))


if __name__ == "__main__":
    main()
