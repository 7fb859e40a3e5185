"""The holes behind a comparison: the unjudged documents of the two runs' top k, how far they could move the
per-query difference, whether the verdict could flip, and the pool folder that settles it.

Conventions
-----------
- The *holes* of a comparison are, per judged query, the unjudged documents (:mod:`evalset.pooling.graded`) in
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
- The pool folder holds the holes of every run compared (baseline and candidates) at depth k, built by
  :func:`evalset.pooling.build_pool` with the judged pairs excluded (judge-the-holes) and written by
  :func:`evalset.pooling.write_pool`; ``pool.json`` also records the comparisons it settles.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.evaluation import Evaluation, PerQuery, per_query_values
from evalset.io.corpus import read_corpus
from evalset.io.queries import read_queries
from evalset.metrics import parse_measure
from evalset.metrics.ranking import strict_ties
from evalset.pooling import PoolBuild, PoolSpec, attach_texts, build_pool, pool_manifest
from evalset.pooling.graded import depth_of, filled_qrels, graded_top_k, top_grade
from evalset.render import json_safe, number, text_table
from evalset.seeds import generator
from evalset.stats.paired import Comparison, permutation_p_value
from evalset.stats.verdicts import outcome

FILLS = ("none", "all", "baseline", "candidate", "baseline_only", "candidate_only")
"""The fills scored (see the module docstring)."""


@dataclass(frozen=True)
class ComparisonHoles:
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


def comparison_holes(values: PerQuery, runs: Mapping[str, pd.DataFrame], result: Comparison,
                     depth: int | None = None, weights: pd.Series | None = None) -> ComparisonHoles:
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
    return ComparisonHoles(
        baseline=result.baseline, candidate=result.candidate, metric=result.metric, depth=k, top_grade=grade,
        per_query=table, fills={name: float((scale * table[f"fill_{name}"].to_numpy()).mean()) for name in FILLS},
        mean_difference=result.mean_difference, mean_low=mean_low, mean_high=mean_high, p_low=p_low, p_high=p_high,
        threshold=threshold, outcome=outcome(result.mean_difference, result.permutation_p, threshold),
        outcome_low=outcome(mean_low, p_low, threshold), outcome_high=outcome(mean_high, p_high, threshold))


# ------------------------------------------------------------------------------------------------ the pool
@dataclass(frozen=True)
class HolesPool:
    """The pool folder of the holes (``build`` is :func:`evalset.pooling.write_pool`'s input), or no pool when
    every document of the top k is judged (``build`` None)."""

    build: PoolBuild | None
    depth: int
    folder: str
    set_path: str | None = None  # the frozen set compared on: a sample of its holes can be judged instead

    @property
    def pairs(self) -> int:
        return 0 if self.build is None else len(self.build.pool.pairs)

    @property
    def queries(self) -> int:
        return 0 if self.build is None else int((self.build.pool.pairs_per_query > 0).sum())

    def to_dict(self) -> dict[str, Any]:
        return {"folder": self.folder, "depth": self.depth, "pairs": self.pairs, "queries": self.queries}


def holes_pool(evaluation: Evaluation, runs: Mapping[str, pd.DataFrame], run_files: Mapping[str, str],
               comparisons: Sequence[ComparisonHoles], folder: str | os.PathLike, *, queries: str | None = None,
               corpus: str | None = None, seed: int = DEFAULT_SEED) -> HolesPool:
    """The pool of the holes of every run compared at the comparisons' depth (writes nothing).

    ``run_files`` maps each run's name to its file (recorded in ``pool.json`` with its sha256). With
    ``queries`` and ``corpus`` (both or neither) the tasks for ``tasks.jsonl`` are attached; a pooled query
    without a text in ``queries`` is refused.
    """
    if (queries is None) != (corpus is None):
        raise InputError("tasks.jsonl needs both the query texts and the document texts: give --queries and "
                         "--corpus together")
    depths = {c.depth for c in comparisons}
    if len(depths) != 1:
        raise InputError(f"the comparisons read different depths ({sorted(depths)}): give one depth")
    depth = depths.pop()
    wanted = set(map(str, evaluation.qrels["query_id"]))
    answered = [q for q in pd.unique(pd.concat([run["query_id"].astype(str) for run in runs.values()]))
                if q in wanted]
    pool = build_pool(runs, depth, ties=strict_ties(evaluation.contract.ties), query_ids=sorted(answered),
                      judged=evaluation.qrels, seed=seed)
    if pool.pairs.empty:
        return HolesPool(None, depth, os.fspath(folder))
    tasks = missing = None
    texts = read_queries(queries) if queries is not None else None
    if texts is not None:
        without = sorted(set(pool.pairs["query_id"]) - set(texts["query_id"].astype(str)))
        if without:
            raise InputError(f"{len(without)} query id(s) with holes have no text here: {', '.join(without[:5])}",
                             queries)
        tasks, missing = attach_texts(pool.pairs, read_corpus(corpus, doc_ids=pool.pairs["doc_id"].unique()), texts)
    spec = PoolSpec(runs=tuple(run_files.values()), depth=depth, ties=pool.ties, seed=seed, queries=queries,
                    exclude_judged=evaluation.qrels_file, corpus=corpus)
    manifest = pool_manifest(pool, spec, run_files, missing)
    manifest["settles"] = [{key: value for key, value in c.to_dict().items() if key != "per_query"}
                           for c in comparisons]
    frozen = os.fspath(evaluation.frozen.path) if evaluation.frozen is not None else None
    return HolesPool(PoolBuild(pool, manifest, tasks, missing), depth, os.fspath(folder), frozen)


# ------------------------------------------------------------------------------------------------ printing
def format_holes(comparisons: Sequence[ComparisonHoles], pool: HolesPool | None = None, shown: int = 10) -> str:
    """Each comparison's holes, range and verdict at both ends, its ``shown`` queries with the most holes, and
    what to judge to settle the comparisons."""
    lines = []
    for c in comparisons:
        table = c.per_query
        with_holes = table[table["holes"] > 0]
        lines += [f"holes of {c.candidate} vs {c.baseline} in the top {c.depth} ({c.metric}; a hole filled relevant "
                  f"gets grade {c.top_grade})",
                  f"  holes             {c.holes} unjudged documents in {len(with_holes)} of {len(table)} queries "
                  f"(baseline's top {c.depth}: {int(table['holes_baseline'].sum())}, "
                  f"candidate's: {int(table['holes_candidate'].sum())})",
                  f"  mean difference   {number(c.mean_difference, sign=True)} as judged; "
                  f"[{number(c.mean_low, sign=True)}, {number(c.mean_high, sign=True)}] over fills of the holes",
                  f"  verdict           as judged: {c.outcome}",
                  f"  at the low end    {c.outcome_low} (p = {c.p_low:.4g})",
                  f"  at the high end   {c.outcome_high} (p = {c.p_high:.4g})",
                  "  could flip        " + ("YES: judge the holes before trusting this verdict" if c.could_flip
                                            else "no: no fill of the holes changes the verdict")]
        if len(with_holes):
            rows = [["query", "holes", "baseline", "candidate", "difference", "low", "high"]]
            rows += [[r.query_id, r.holes, r.holes_baseline, r.holes_candidate, number(r.difference, sign=True),
                      number(r.low, sign=True), number(r.high, sign=True)] for r in with_holes.head(shown).itertuples()]
            lines += ["  " + line for line in text_table(rows, right=(1, 2, 3))]
            if len(with_holes) > shown:
                lines.append(f"  ... {len(with_holes) - shown} more queries with holes (all in --format json)")
        lines.append("")
    if pool is not None:
        these = "this comparison" if len(comparisons) == 1 else f"these {len(comparisons)} comparisons"
        if pool.build is None:
            lines.append(f"no holes: every document in the top {pool.depth} is judged; {these} cannot move, "
                         "no pool written")
        else:
            counted = {query for c in comparisons for query in c.per_query.loc[c.per_query["holes"] > 0, "query_id"]}
            per_query = pool.build.pool.pairs_per_query
            outside = per_query[~per_query.index.astype(str).isin({str(q) for q in counted}) & (per_query > 0)]
            aside = (f", {int(outside.sum())} of them in {len(outside)} quer{'y' if len(outside) == 1 else 'ies'} no "
                     "comparison counts (undefined there: no relevant document), judged all the same"
                     if len(outside) else "")
            lines.append(f"judge these {pool.pairs} documents ({pool.queries} queries) to settle {these}{aside}")
            if pool.set_path is not None:
                lines.append(f"or a sample of them, sized for each run, the runs' full-judgment scores estimated: "
                             f"evalset estimate select holes {pool.folder} --set {pool.set_path} --precision 0.01 "
                             "--runs RUN... --llm LLM -o SAMPLE (docs/reusability.md)")
    return "\n".join(lines).rstrip("\n")
