"""The holes: the pairs of the runs' top k that the judgments do not grade, found, graded and filled. Every hole a
comparison, a score, a pool, a sample or a movement speaks of is found here.

Conventions
-----------
- A run's top k is :func:`evalset.pooling.collect_top_k`'s (the ranking of
  :func:`evalset.metrics.ranking.order_run` under the contract's tie rule; under ``ties=expected`` tied documents
  are ranked as ``trec`` ranks them), so a pool, a score and an explanation see the same ranking.
- A document is *judged* when the qrels give it a grade >= 0 for the query; a negative grade (pooled, not judged)
  or no qrels line makes it *unjudged*: a **hole**. A hole retrieved by several runs is one pair.
- Only the judged queries (those of the qrels) are read: a query without any judgment is not scored, so its
  documents are no holes.
- ``k`` is the depth given, else the measure's cutoff, else :data:`~evalset.contract.DEFAULT_HOLES_DEPTH`
  (:func:`depth_of`). A hole filled *relevant* gets :func:`top_grade`, one filled *not relevant* grade 0
  (:func:`filled_qrels`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_HOLES_DEPTH
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.metrics import Measure
from evalset.metrics.ranking import strict_ties
from evalset.params import POSITIVE_INT, check
from evalset.pooling import collect_top_k


def depth_of(measure: Measure, depth: int | None, what: str = "--depth") -> int:
    """The k of the top k (of judged@k, the holes, the movements): ``depth`` when given, else the measure's cutoff,
    else (a measure that reads the whole ranking: ``ap``, ``rr``, ``ndcg``)
    :data:`~evalset.contract.DEFAULT_HOLES_DEPTH`."""
    if depth is not None:
        return check(what, depth, POSITIVE_INT)
    return int(measure.cutoff or DEFAULT_HOLES_DEPTH)


def graded_top_k(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, depth: int,
                 ties: str = "trec") -> pd.DataFrame:
    """``query_id, doc_id, system, rank, grade, judged`` for every run's top ``depth`` on the judged queries.

    ``grade`` is the qrels grade (NaN when the pair has no qrels line); ``judged`` is ``grade >= 0``.
    """
    judged_queries = pd.unique(qrels["query_id"].astype(str))
    answered = set()
    for run in runs.values():
        answered.update(pd.unique(run["query_id"].astype(str)))
    wanted = [q for q in judged_queries if q in answered]
    if not wanted:
        raise InputError("the runs share no query with the judgments")
    top = collect_top_k(runs, depth, ties=strict_ties(ties), query_ids=wanted)
    top["system"] = top["system"].astype(str)
    grades = qrels.assign(query_id=qrels["query_id"].astype(str), doc_id=qrels["doc_id"].astype(str))
    grades = grades.drop_duplicates(["query_id", "doc_id"], keep="last")[["query_id", "doc_id", "grade"]]
    top = top.merge(grades, on=["query_id", "doc_id"], how="left", validate="many_to_one")
    return top.assign(judged=top["grade"].fillna(-1).to_numpy() >= 0)


def top_grade(evaluation: Evaluation) -> int:
    """The grade a hole filled relevant gets: the top of the set's scale, or the largest grade of the qrels."""
    scale = (evaluation.frozen.manifest.get("scale") or {}) if evaluation.frozen is not None else {}
    grade = max(int(g) for g in scale) if scale else int(evaluation.grades.max())
    if grade < 1:
        raise InputError("no grade above 0 in the judgments: a hole cannot be filled relevant", evaluation.source)
    return grade


def filled_qrels(qrels: pd.DataFrame, holes: pd.DataFrame, relevant: np.ndarray, grade: int) -> pd.DataFrame:
    """``qrels`` with the ``holes`` (``query_id, doc_id``) added: at ``grade`` where ``relevant``, else 0 (a
    hole's negative-grade line, if any, is replaced)."""
    keys = pd.MultiIndex.from_frame(holes[["query_id", "doc_id"]].astype(str))
    known = pd.MultiIndex.from_arrays([qrels["query_id"].astype(str), qrels["doc_id"].astype(str)])
    added = holes[["query_id", "doc_id"]].astype(str).assign(grade=np.where(relevant, grade, 0).astype(np.int64))
    kept = qrels[~known.isin(keys)][["query_id", "doc_id", "grade"]].astype({"query_id": str, "doc_id": str})
    return pd.concat([kept, added], ignore_index=True)


@dataclass(frozen=True)
class Holes:
    """The set's judged pairs (``query_id, doc_id, grade, top``: ``top`` whether a run retrieves it in its top
    ``depth``), the runs' holes (``query_id, doc_id, runs``: the runs that retrieve the pair in their top
    ``depth``, comma-separated) and per run its top-k pairs, holes and the queries holding them (``run, pairs,
    holes, queries``)."""

    judged: pd.DataFrame
    holes: pd.DataFrame
    per_run: pd.DataFrame
    depth: int

    @property
    def pairs(self) -> pd.DataFrame:
        """``query_id, doc_id`` of a design's pairs: the set's judged pairs, then the holes."""
        return pd.concat([self.judged[["query_id", "doc_id"]], self.holes[["query_id", "doc_id"]]], ignore_index=True)

    def to_text(self) -> str:
        lines = [f"holes: the pairs of each run's top {self.depth} the set does not judge"]
        for row in self.per_run.itertuples():
            share = row.holes / row.pairs if row.pairs else 0.0
            lines.append(f"  {row.run}: {row.holes:,} of {row.pairs:,} pairs ({share:.1%}) in {row.queries} "
                         f"{'query' if row.queries == 1 else 'queries'}")
        return "\n".join(lines)


def judged_pairs(qrels: pd.DataFrame) -> pd.DataFrame:
    """``query_id, doc_id, grade`` (ids as text) of the pairs ``qrels`` judge: a grade >= 0, the last of repeats."""
    judged = qrels.assign(query_id=qrels["query_id"].astype(str), doc_id=qrels["doc_id"].astype(str))
    judged = judged[judged["grade"] >= 0].drop_duplicates(["query_id", "doc_id"], keep="last")
    return judged[["query_id", "doc_id", "grade"]].reset_index(drop=True)


def refuse_judged(pairs: pd.DataFrame, judged: pd.DataFrame, what: str, advice: str, source: str) -> None:
    """Refuse ``pairs`` (``what``: "pool", "sample") holding a pair of ``judged``: not the set's holes."""
    known = pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]].astype(str)).isin(
        pd.MultiIndex.from_frame(judged[["query_id", "doc_id"]]))
    if known.any():
        first = pairs.iloc[int(np.flatnonzero(known)[0])]
        raise InputError(f"the {what} holds {int(known.sum()):,} pairs the set judges ({first['query_id']} "
                         f"{first['doc_id']} first): not a {what} of its holes{advice}", source)


def find_holes(qrels: pd.DataFrame, runs: Mapping[str, pd.DataFrame], depth: int, ties: str = "trec", *,
               empty_ok: bool = False) -> Holes:
    """The holes of ``runs``' top ``depth`` against the judgments ``qrels`` (``query_id, doc_id, grade``); with
    ``empty_ok``, runs without a hole give holes without a row (a simulation's run judged in full), not a refusal."""
    depth = check("depth", depth, POSITIVE_INT)
    top = graded_top_k(runs, qrels, depth, ties)
    open_ = top[~top["judged"]]
    holes = (open_.groupby(["query_id", "doc_id"], sort=True)["system"]
             .agg(lambda names: ",".join(sorted(set(names)))).rename("runs").reset_index())
    per_run = pd.DataFrame({
        "run": list(runs),
        "pairs": [int((top["system"] == name).sum()) for name in runs],
        "holes": [int((open_["system"] == name).sum()) for name in runs],
        "queries": [int(open_.loc[open_["system"] == name, "query_id"].nunique()) for name in runs]})
    if holes.empty and not empty_ok:
        raise InputError(f"no run has a hole in its top {depth}: every pair is judged, nothing to sample; score the "
                         "runs on the set as it is")
    judged = judged_pairs(qrels)
    shallow = pd.MultiIndex.from_frame(top.loc[top["judged"], ["query_id", "doc_id"]].astype(str))
    judged["top"] = pd.MultiIndex.from_frame(judged[["query_id", "doc_id"]]).isin(shallow)
    return Holes(judged, holes, per_run, depth)


def holes_outside(holes: Holes, pairs: pd.DataFrame) -> str:
    """The runs whose holes ``pairs`` (``query_id, doc_id``: a pool, a sample's) lack, each with its count of them
    (``"name (count), ..."``), or ``""`` when every hole is there."""
    pooled = pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]].astype(str))
    outside = holes.holes[~pd.MultiIndex.from_frame(holes.holes[["query_id", "doc_id"]]).isin(pooled)]
    lacking = outside["runs"].str.split(",").explode().value_counts().sort_index()
    return ", ".join(f"{name} ({count:,})" for name, count in lacking.items())
