"""A frozen set and a new system: the holes of its top k (the pairs the set never judged), a seeded sample of them
for humans to grade, and the system's full-judgment score estimated from the set's judgments, the sample's grades
and an LLM's grades of every hole (the document design, :mod:`evalset.estimate.documents`, with the set's pairs
known).

Conventions
-----------
- A run's **holes** are the pairs of its top k (:func:`evalset.comparing.graded_top_k`: the contract's tie rule;
  its judged queries only) that the set does not judge: no grade, or a negative one (pooled, not judged). ``k``
  is the depth given (the measure's cutoff, usually). A hole retrieved by several runs is one pair.
- The **design**: every judged pair of the set is in the sample for certain (``pi`` 1, its grade the set's); each
  hole is drawn by a seeded Poisson draw (:func:`evalset.estimate.documents.sample.poisson_sample`, the uniforms
  in the holes' order: query, then document id) with one inclusion probability, ``fraction`` or ``budget`` /
  holes. Its estimate is the document design's (:func:`evalset.estimate.documents.estimate.estimate_documents`):
  the LLM's grades of every pair calibrated on the sampled pairs of the other queries (the set's own judgments,
  paid for already, and the graded holes), the difference estimator per query, "this set" and "new queries"
  intervals; without an LLM, Horvitz-Thompson's.
- Unbiased where the measure is a sum over a query's documents (P@k, DCG@k): the expectation over every draw is
  the score under full judgments (``tests/estimate/test_holes.py`` enumerates every draw of a small set). nDCG's
  ideal is estimated too, so its estimate is a ratio's, unbiased to first order.
- Bad input is an :class:`~evalset.errors.InputError`: a run without a judged query, no hole in any run (nothing
  to judge), a budget of every hole or more (judge them all), a human grade for an undrawn hole or a pair outside
  the pool, a drawn hole without one, an LLM grade missing for a pair of the pool (the document design's checks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalset.comparing.topk import graded_top_k
from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED, DOCUMENT_SAMPLE_RULES, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.estimate import DocumentEstimate, estimate_documents
from evalset.estimate.documents.sample import poisson_sample
from evalset.params import POSITIVE_INT, check, validate_params


@dataclass(frozen=True)
class Holes:
    """The set's judged pairs (``query_id, doc_id, grade``, grades >= 0), the runs' holes (``query_id, doc_id,
    runs``: the runs that retrieve the pair in their top ``depth``, comma-separated) and per run its top-k pairs,
    holes and the queries holding them (``run, pairs, holes, queries``)."""

    judged: pd.DataFrame
    holes: pd.DataFrame
    per_run: pd.DataFrame
    depth: int

    def to_text(self) -> str:
        lines = [f"holes: the pairs of each run's top {self.depth} the set does not judge"]
        for row in self.per_run.itertuples():
            share = row.holes / row.pairs if row.pairs else 0.0
            lines.append(f"  {row.run}: {row.holes:,} of {row.pairs:,} pairs ({share:.1%}) in {row.queries} "
                         f"{'query' if row.queries == 1 else 'queries'}")
        return "\n".join(lines)


def find_holes(qrels: pd.DataFrame, runs: Mapping[str, pd.DataFrame], depth: int, ties: str = "trec") -> Holes:
    """The holes of ``runs``' top ``depth`` against the judgments ``qrels`` (``query_id, doc_id, grade``)."""
    depth = check("depth", depth, POSITIVE_INT)
    top = graded_top_k(runs, qrels, depth, ties)
    judged = qrels.assign(query_id=qrels["query_id"].astype(str), doc_id=qrels["doc_id"].astype(str))
    judged = judged[judged["grade"] >= 0].drop_duplicates(["query_id", "doc_id"], keep="last")
    open_ = top[~top["judged"]]
    holes = (open_.groupby(["query_id", "doc_id"], sort=True)["system"]
             .agg(lambda names: ",".join(sorted(set(names)))).rename("runs").reset_index())
    per_run = pd.DataFrame({
        "run": list(runs),
        "pairs": [int((top["system"] == name).sum()) for name in runs],
        "holes": [int((open_["system"] == name).sum()) for name in runs],
        "queries": [int(open_.loc[open_["system"] == name, "query_id"].nunique()) for name in runs]})
    if holes.empty:
        raise InputError(f"no run has a hole in its top {depth}: every pair is judged, nothing to sample; score the "
                         "runs on the set as it is")
    return Holes(judged[["query_id", "doc_id", "grade"]].reset_index(drop=True), holes, per_run, depth)


@validate_params(DOCUMENT_SAMPLE_RULES)
def draw_holes(holes: Holes, *, fraction: float | None = None, budget: int | None = None,
               seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """The design's pairs (module docstring): ``query_id, doc_id, pi, sampled, hole``, the judged pairs first
    (``pi`` 1, sampled) then every hole with its inclusion probability and draw."""
    if (budget is None) == (fraction is None):
        raise InputError("give one of a budget (expected human judgments of holes) or a fraction of the holes")
    count = len(holes.holes)
    if budget is not None and budget >= count:
        raise InputError(f"a budget of {budget:,} judgments for {count:,} holes: judge them all (the holes' pool) "
                         "rather than a sample")
    pi = fraction if fraction is not None else budget / count
    drawn = poisson_sample(np.full(count, pi), seed)
    judged = holes.judged[["query_id", "doc_id"]].assign(pi=1.0, sampled=True, hole=False)
    open_ = holes.holes[["query_id", "doc_id"]].assign(pi=pi, sampled=drawn, hole=True)
    return pd.concat([judged, open_], ignore_index=True)


def estimate_holes(holes: Holes, pairs: pd.DataFrame, hole_grades: pd.DataFrame, llm: pd.DataFrame | None,
                   runs: Mapping[str, pd.DataFrame], *, measures: Sequence[str] = (DEFAULT_METRIC,),
                   contract: EvaluationContract | None = None,
                   comparisons: Sequence[tuple[str, str]] | None = None, level: float = 0.95) -> DocumentEstimate:
    """The runs' full-judgment means and paired differences from the set's judgments, the drawn holes' human
    grades (``hole_grades``: ``query_id, doc_id, grade`` of exactly the drawn holes) and the LLM's grades of every
    pair of the design (``llm``: ``query_id, doc_id, judge, grade``; ``None``: Horvitz-Thompson's estimator)."""
    human = pd.concat([holes.judged, hole_grades[["query_id", "doc_id", "grade"]].astype({"query_id": str,
                                                                                          "doc_id": str})],
                      ignore_index=True)
    human.attrs["source"] = hole_grades.attrs.get("source", "the holes' grades")
    return estimate_documents(pairs, human, llm, runs, measures=measures, contract=contract,
                              comparisons=comparisons, level=level)
