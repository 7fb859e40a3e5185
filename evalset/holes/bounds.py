"""What a frozen set does not know of each run scored on it: the holes of its top k and what they could cost.

Conventions
-----------
- A run's **holes** are the pairs of its top k the set does not judge (:func:`evalset.holes.find.graded_top_k`,
  the contract's tie rule, the judged queries of the split); k is the headline's cutoff
  (:func:`~evalset.holes.find.depth_of`: 10 for a measure without one). The score table counts them not
  relevant.
- What they could cost: the run's headline mean as judged, and with every one of its holes at the set's top grade
  (:func:`~evalset.holes.find.top_grade`, through the evaluation room): its full-judgment score lies between
  the two (for nDCG up to the ideal's shift, as ``evalset holes``'s fills). Traffic-weighted on a set that
  weights its strata, as the score table's headline.
- A run with holes is offered the way to its full-judgment score: a graded sample of its holes
  (``estimate select holes --set SET --precision``, :mod:`evalset.estimate.documents.holesizing`; docs/reusability.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalset.evaluation import Evaluation, PerQuery, per_query_values
from evalset.holes.find import depth_of, filled_qrels, graded_top_k, top_grade
from evalset.io.trec import expand_run_paths
from evalset.metrics import parse_measure
from evalset.metrics.ranking import strict_ties
from evalset.pooling import read_top_k
from evalset.render import number, text_table


@dataclass(frozen=True)
class RunBounds:
    """Per run (``run, pairs, holes, judged, filled``): its top-``depth`` pairs, the holes among them, its
    ``measure`` mean as judged and with every hole at ``grade``."""

    table: pd.DataFrame
    measure: str
    depth: int
    grade: int
    set_path: str

    def to_text(self) -> str:
        if not self.table["holes"].any():
            return f"holes: none; the set judges every pair of each run's top {self.depth}"
        rows = [[row.run, f"{row.holes:,} of {row.pairs:,}" + (f" ({row.holes / row.pairs:.1%})" if row.holes else ""),
                 number(row.judged), number(row.filled)] for row in self.table.itertuples()]
        lines = [f"holes: the pairs of each run's top {self.depth} the set does not judge (counted not relevant "
                 "above)", *text_table([["run", "holes", f"{self.measure} as judged",
                                         f"every hole grade {self.grade}"], *rows])]
        lines.append(f"a run's full-judgment score lies between the two; estimate it from a graded sample of its "
                     f"holes: evalset holes --set {self.set_path} BASELINE RUN -o DIR, then evalset estimate "
                     f"select holes DIR --set {self.set_path} --precision 0.01 --runs RUN --llm LLM -o SAMPLE "
                     "(docs/reusability.md)")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "depth": self.depth, "grade": self.grade,
                "runs": {row.run: {"pairs": int(row.pairs), "holes": int(row.holes), "judged": float(row.judged),
                                   "filled": float(row.filled)} for row in self.table.itertuples()}}


def run_bounds(evaluation: Evaluation, runs: Mapping[str, Any] | list, values: PerQuery) -> RunBounds:
    """The holes of every run of ``values`` (scored on a set, ``evaluation``) in its headline's top k (module
    docstring); ``runs`` as :func:`evalset.evaluation.per_query_values` took them."""
    measure = evaluation.headline
    depth = depth_of(parse_measure(measure), None)
    named = runs if isinstance(runs, Mapping) else expand_run_paths(runs)
    named = {name: named[name] for name in values.runs}
    ties = evaluation.contract.ties
    tops = {name: run if isinstance(run, pd.DataFrame) else read_top_k(os.fspath(run), depth, strict_ties(ties))
            for name, run in named.items()}
    top = graded_top_k(tops, evaluation.qrels, depth, ties)
    grade = top_grade(evaluation)
    weighted = evaluation.weighted
    rows = []
    for name, run in named.items():
        mine = top[top["system"] == name]
        holes = mine.loc[~mine["judged"], ["query_id", "doc_id"]]
        judged = _mean(values if measure in values.measures else per_query_values(evaluation, {name: run}, [measure]),
                       name, measure, weighted)
        filled = judged
        if len(holes):
            qrels = filled_qrels(evaluation.qrels, holes, np.ones(len(holes), dtype=bool), grade)
            filled = _mean(per_query_values(evaluation.with_qrels(qrels), {name: run}, [measure]), name, measure,
                           weighted)
        rows.append({"run": name, "pairs": len(mine), "holes": len(holes), "judged": judged, "filled": filled})
    return RunBounds(pd.DataFrame(rows), measure, depth, grade, os.fspath(evaluation.frozen.path))


def _mean(values: PerQuery, run: str, measure: str, weighted: bool) -> float:
    summary = values.summary(run, measure)
    return float(summary.weighted_mean if weighted else summary.mean)
