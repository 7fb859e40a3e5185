"""Aggregate the 33 LLM judges of LLMJudge (TREC DL 2023 subset) as a crowd and score each aggregate against the
NIST grades: unweighted and quadratic kappa of majority vote, median, Dawid-Skene, one-coin Dawid-Skene, MACE and
GLAD, beside the best and the median single judge. Uses the library only (evalset.agreement, evalset.judgments,
evalset.quality).

    python scripts/aggregate_llmjudge.py [--data ../shared/data/llmjudge] [--rules dawid-skene,mace,...]

The judges' out-of-scale grades (3 of 145,959) are dropped and counted, as ``evalset agreement --out-of-scale drop``
does. GLAD takes 8-20 minutes on the 145,956 labels (crowd-kit's M-step is a scipy optimisation); the others seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from evalset.agreement import apply_scale, load_grades
from evalset.contract import AGGREGATION_RULES
from evalset.io.trec import read_qrels
from evalset.judgments import aggregate, crowdkit_version, pair_grades
from evalset.quality import kappas
from evalset.render import number, text_table

SCALE = [0, 1, 2, 3]
REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "llmjudge"))
    parser.add_argument("--rules", default=",".join(AGGREGATION_RULES))
    options = parser.parse_args()
    root = Path(options.data)
    judges = sorted(str(p) for p in (root / "llm_submissions").glob("*.txt"))
    grades, _ = load_grades(judges)
    grades, counts = apply_scale(grades, SCALE, "drop")
    dropped = sum(entry.get("dropped", 0) for entry in counts.values())
    nist = read_qrels(root / "human" / "test_qrels.txt")
    nist = nist[nist["grade"] >= 0]
    print(f"{len(judges)} LLM judges, {len(grades)} labels ({dropped} out-of-scale dropped) over "
          f"{len(grades.groupby(['query_id', 'doc_id']))} pairs; NIST grades for {len(nist)} pairs; "
          f"crowd-kit {crowdkit_version()}")

    def scored(graded):
        both = nist.merge(graded, on=["query_id", "doc_id"], suffixes=("_nist", ""))
        return len(both), kappas(both["grade_nist"].to_numpy(), both["grade"].to_numpy(), SCALE)

    rows = []
    for rule in ("majority", "median"):
        voted = pair_grades(grades, rule, ties="low")
        pairs, figures = scored(voted.qrels())
        rows.append([rule, pairs, figures, f"ties settled low: {voted.tied}"])
    for rule in options.rules.split(","):
        started = time.perf_counter()
        result = aggregate(grades, rule)
        pairs, figures = scored(result.grades)
        rows.append([rule, pairs, figures, f"EM iterations: {result.iterations or '-'}"])
        print(f"{rule}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    single = []
    for name, own in grades.groupby("annotator", sort=True):
        pairs, figures = scored(own[["query_id", "doc_id", "grade"]])
        single.append((figures["kappa_quadratic"], name, pairs, figures))
    single.sort(key=lambda s: (-s[0], s[1]))
    best, middle = single[0], single[len(single) // 2]
    rows.append([f"best judge ({best[1]})", best[2], best[3], "by quadratic kappa"])
    rows.append([f"median judge ({middle[1]})", middle[2], middle[3], f"{len(single) // 2 + 1}th of {len(single)}"])
    table = [["aggregate", "pairs", "exact", "kappa", "kappa_quadratic", "note"]]
    table += [[name, pairs, number(f["exact"], 3), number(f["kappa"], 3), number(f["kappa_quadratic"], 3), note]
              for name, pairs, f, note in rows]
    print("\n".join(text_table(table, right={1, 2, 3, 4})))
    print(f"median over the {len(single)} judges: kappa {number(float(np.median([s[3]['kappa'] for s in single])), 3)}"
          f", kappa_quadratic {number(float(np.median([s[0] for s in single])), 3)}")


if __name__ == "__main__":
    main()
