"""The runs' top k graded, each document judged or a hole, and the holes filled: what judged@k's depth, the holes
of a comparison or a score, movements and a sample of a set's holes are read from.

Conventions
-----------
- A run's top k is :func:`evalset.pooling.collect_top_k`'s (the ranking of
  :func:`evalset.metrics.ranking.order_run` under the contract's tie rule; under ``ties=expected`` tied documents
  are ranked as ``trec`` ranks them), so a pool, a score and an explanation see the same ranking.
- A document is *judged* when the qrels give it a grade >= 0 for the query; a negative grade (pooled, not judged)
  or no qrels line makes it *unjudged* (a hole).
- Only the judged queries (those of the qrels) are read: a query without any judgment is not scored, so its
  documents are no holes of a comparison.
"""

from __future__ import annotations

from collections.abc import Mapping

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
