"""The holes behind a comparison: the unjudged documents of the two runs' top k, how far they could move the
per-query difference, and whether the verdict could flip (the pool folder that settles it: :mod:`evalset.holes.pool`).

Conventions
-----------
- The *holes* of a comparison are, per judged query, the unjudged documents (:mod:`evalset.holes.find`) in
  the baseline's or the candidate's top k. k is the metric's cutoff (``ndcg@10``: 10) unless a depth is given;
  a metric without cutoff (``ap``, ``ndcg``) needs the depth.
- A hole filled *relevant* gets the top grade: the largest grade of the set's scale on a set, the largest
  grade of the qrels otherwise. A hole filled *not relevant* gets grade 0 (judged not relevant: this differs
  from "unjudged" only for ``bpref`` and ``judged@k``).
- Six fills are scored, each through the evaluation room (:func:`evalset.evaluation.per_query_values` on the
  qrels with the holes added at their fill grade): ``none`` (every hole not relevant), ``all`` (every hole
  relevant), ``baseline`` (the holes of the baseline's top k relevant, the others not), ``candidate`` (the
  candidate's), ``baseline_only`` and ``candidate_only`` (only the holes in that run's top k and not in the
  other's). Per query, ``low`` and ``high`` are the smallest and largest difference (candidate minus
  baseline) over the six fills. A query's judgments touch only that query, so every combination of per-query
  choices is a fill: the mean difference ranges over ``[mean of low, mean of high]``. These are the extremes
  over those six fills, not a proof over every partial fill (making only some of one run's holes relevant can,
  for nDCG, move a difference slightly beyond them, through the ideal ranking).
- The means are over the queries the comparison counts (both values defined as judged, as ``compare`` does);
  traffic-weighted when the comparison's headline is (the weights given).
- The verdict at each end: the paired permutation test (:func:`evalset.stats.paired.permutation_p_value`, the
  comparison's sign flips and seed) of the per-query lows, and of the highs, at the comparison's threshold, read
  by :func:`evalset.stats.verdicts.outcome`: ``candidate better`` (p < threshold, mean > 0), ``candidate worse``
  (p < threshold, mean < 0), or ``no significant difference``. The verdict *could flip* when either end says
  something else than the judged difference does (by the same rule; an exploratory comparison is never
  *established*, but its ends are read by the same rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalset.evaluation import PerQuery, per_query_values
from evalset.holes.find import depth_of, filled_qrels, graded_top_k, top_grade
from evalset.metrics import parse_measure
from evalset.render import json_safe
from evalset.seeds import generator
from evalset.stats.paired import Comparison, permutation_p_value
from evalset.stats.verdicts import outcome

FILLS = ("none", "all", "baseline", "candidate", "baseline_only", "candidate_only")
"""The fills scored (see the module docstring)."""


@dataclass(frozen=True)
class ComparisonBounds:
    """The holes of one comparison and the range of its difference (see the module docstring).

    ``per_query``: ``query_id, holes, holes_baseline, holes_candidate, difference, low, high`` and one
    ``fill_<name>`` difference per fill, for every query the comparison counts, the most holes first.
    ``fills``: the mean difference under each fill alone.
    """

    baseline: str
    candidate: str
    metric: str
    depth: int
    top_grade: int
    per_query: pd.DataFrame
    fills: dict[str, float]
    mean_difference: float
    mean_low: float
    mean_high: float
    p_low: float
    p_high: float
    threshold: float
    outcome: str
    outcome_low: str
    outcome_high: str

    @property
    def could_flip(self) -> bool:
        return self.outcome_low != self.outcome or self.outcome_high != self.outcome

    @property
    def holes(self) -> int:
        return int(self.per_query["holes"].sum())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the figures, and every query's row."""
        scalars = {key: getattr(self, key) for key in ("baseline", "candidate", "metric", "depth", "top_grade",
                                                       "holes", "mean_difference", "mean_low", "mean_high", "p_low",
                                                       "p_high", "threshold", "outcome", "outcome_low",
                                                       "outcome_high", "could_flip")}
        return json_safe({**scalars, "queries_with_holes": int((self.per_query["holes"] > 0).sum()),
                          "fills": self.fills, "per_query": self.per_query.to_dict(orient="records")})


def comparison_bounds(values: PerQuery, runs: Mapping[str, pd.DataFrame], result: Comparison,
                     depth: int | None = None, weights: pd.Series | None = None) -> ComparisonBounds:
    """The holes of ``result``, a comparison made by :func:`evalset.comparing.compare_runs` on ``runs`` from the
    per-query ``values``. ``weights`` (per query id, summing to 1) make the means and the tests at both ends
    traffic-weighted, as the comparison's headline is on a set weighted by traffic."""
    evaluation = values.evaluation
    measure = parse_measure(result.metric)
    k = depth_of(measure, depth)
    grade = top_grade(evaluation)
    pair = {result.baseline: runs[result.baseline], result.candidate: runs[result.candidate]}
    top = graded_top_k(pair, evaluation.qrels, k, evaluation.contract.ties)
    unjudged = top[~top["judged"]]
    holes = unjudged.groupby(["query_id", "doc_id"], sort=True)["system"].agg(
        in_baseline=lambda s: (s == result.baseline).any(), in_candidate=lambda s: (s == result.candidate).any())
    holes = holes.reset_index()
    in_b, in_c = holes["in_baseline"].to_numpy(bool), holes["in_candidate"].to_numpy(bool)
    masks = {"none": np.zeros(len(holes), bool), "all": np.ones(len(holes), bool), "baseline": in_b,
             "candidate": in_c, "baseline_only": in_b & ~in_c, "candidate_only": in_c & ~in_b}
    def differences(scored: PerQuery) -> pd.Series:
        candidate = scored.analysed(result.candidate, result.metric)
        return candidate - scored.analysed(result.baseline, result.metric).reindex(candidate.index)

    table = pd.DataFrame({"difference": differences(values).dropna()})
    for name in FILLS:
        filled = evaluation.with_qrels(filled_qrels(evaluation.qrels, holes, masks[name], grade))
        table[f"fill_{name}"] = differences(per_query_values(filled, pair, [result.metric])).reindex(table.index)
    fills = table[[f"fill_{name}" for name in FILLS]]
    table["low"], table["high"] = fills.min(axis=1), fills.max(axis=1)
    counts = pd.DataFrame({"holes": holes.groupby("query_id").size(),
                           "holes_baseline": holes.groupby("query_id")["in_baseline"].sum(),
                           "holes_candidate": holes.groupby("query_id")["in_candidate"].sum()}).astype(np.int64)
    table = table.join(counts).fillna({c: 0 for c in counts}).astype({c: np.int64 for c in counts})
    table = table.rename_axis("query_id").reset_index()
    table = table.sort_values(["holes", "query_id"], ascending=[False, True], kind="stable").reset_index(drop=True)
    table = table[["query_id", "holes", "holes_baseline", "holes_candidate", "difference", "low", "high",
                   *fills.columns]]
    rng_seed, flips, threshold = result.seed, result.permutations, result.threshold
    scale = (np.ones(len(table)) if weights is None
             else len(table) * weights.reindex(table["query_id"].astype(str)).to_numpy(np.float64))
    low, high = scale * table["low"].to_numpy(), scale * table["high"].to_numpy()
    p_low = permutation_p_value(low, flips, generator(rng_seed))
    p_high = permutation_p_value(high, flips, generator(rng_seed))
    mean_low, mean_high = float(low.mean()), float(high.mean())
    return ComparisonBounds(
        baseline=result.baseline, candidate=result.candidate, metric=result.metric, depth=k, top_grade=grade,
        per_query=table, fills={name: float((scale * table[f"fill_{name}"].to_numpy()).mean()) for name in FILLS},
        mean_difference=result.mean_difference, mean_low=mean_low, mean_high=mean_high, p_low=p_low, p_high=p_high,
        threshold=threshold, outcome=outcome(result.mean_difference, result.permutation_p, threshold),
        outcome_low=outcome(mean_low, p_low, threshold), outcome_high=outcome(mean_high, p_high, threshold))
