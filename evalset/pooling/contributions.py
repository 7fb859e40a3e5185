"""The depth-k pool of the runs that made a set, what each run (or group) alone contributed to it, and the qrels
without those contributions.

Conventions
-----------
- The pool is the union of every run's top ``depth`` per judged query (a query with at least one qrels line),
  taken as :func:`evalset.pooling.topk.collect_top_k` takes it: the order of
  :func:`evalset.metrics.ranking.order_run` under the contract's tie rule, a repeated document once. A run with
  fewer than ``depth`` documents on a query contributes what it has (and a note says so).
- A pair ``(query, document)`` is a *unique contribution* of an owner (a run, or a group of runs) when it is in
  the top ``depth`` of the owner's runs and of no other run.
- The reduced qrels of an owner are the qrels without any line of its unique contributions; every other line
  stays (judgments outside the depth-k pool included).
- The runs given are the pool. A run whose top ``depth`` is more than :data:`POOL_RUN_MAX_HOLES` unjudged under
  the full qrels cannot have been pooled at that depth: it is refused (it is already a new run). A depth larger
  than every ranking of a run is refused too (that run cannot have been pooled to that depth).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from evalset.errors import InputError
from evalset.metrics.ranking import TieRule, strict_ties
from evalset.pooling.topk import collect_top_k

POOL_RUN_MAX_HOLES = 0.05
"""The largest share of unjudged pairs in a run's top k for it to count as one of the runs that made the pool
(real pools leave a few holes: TREC DL 2019 leaves 0.2% of one run's top 10 unjudged)."""


@dataclass(frozen=True)
class PoolOfRuns:
    """The top ``depth`` of every run on the judged queries (``query_id, doc_id, system, rank``) and the notes
    its checks made (short runs, holes)."""

    depth: int
    top: pd.DataFrame
    query_ids: list[str]
    runs: list[str]
    notes: list[str] = field(default_factory=list)


def _pairs(frame: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])


def _short_runs(top: pd.DataFrame, runs: list[str], query_ids: list[str], depth: int) -> list[str]:
    """Refuse a depth larger than every ranking of a run; note the runs shorter than the depth on some queries."""
    counts = (top.groupby(["system", "query_id"], observed=True).size().unstack(fill_value=0)
              .reindex(index=runs, columns=query_ids, fill_value=0))
    longest = counts.max(axis=1)
    too_deep = [name for name in runs if longest[name] < depth]
    if too_deep:
        shown = ", ".join(f"{name} (at most {longest[name]})" for name in too_deep[:5])
        raise InputError(f"depth {depth} is larger than every ranking of {len(too_deep)} run(s) on the judged queries: "
                         f"{shown}{', ...' if len(too_deep) > 5 else ''}: such a run cannot have been pooled to "
                         "that depth; give the depth the pool was made with")
    short = (counts < depth).sum(axis=1)
    short = short[short > 0]
    if short.empty:
        return []
    shown = ", ".join(f"{name} ({count} quer{'y' if count == 1 else 'ies'})" for name, count in short.head(5).items())
    return [f"note: {len(short)} run(s) have fewer than {depth} documents on some of the {len(query_ids)} judged "
            f"queries: {shown}{', ...' if len(short) > 5 else ''}; they contribute what they have"]


def _holes(top: pd.DataFrame, qrels: pd.DataFrame, runs: list[str], depth: int) -> list[str]:
    """Refuse a run whose top k is mostly unjudged (not one of the pool's runs); note the holes of the others."""
    judged = _pairs(top).isin(_pairs(qrels[qrels["grade"] >= 0]))
    per_run = pd.DataFrame({"system": top["system"].astype(str), "hole": ~judged})
    holes = per_run.groupby("system")["hole"].agg(["sum", "size"]).reindex(runs)
    share = holes["sum"] / holes["size"]
    outside = share[share > POOL_RUN_MAX_HOLES].sort_values(ascending=False)
    if not outside.empty:
        shown = ", ".join(f"{name} ({share[name]:.1%} of its top {depth} unjudged)" for name in outside.index[:5])
        raise InputError(f"{len(outside)} run(s) were not among the runs that made the pool at depth {depth}: "
                         f"{shown}{', ...' if len(outside) > 5 else ''} (a pool run has at most "
                         f"{POOL_RUN_MAX_HOLES:.0%}); such a run is already a new run: score it with `evalset score` "
                         "(judged@k shows its holes), and give reusability only the pool's runs and depth")
    with_holes = share[share > 0]
    if with_holes.empty:
        return []
    return [f"note: {len(with_holes)} of the {len(runs)} run(s) have unjudged documents in their top {depth} under the "
            f"full qrels (at most {with_holes.max():.1%} of one run's top {depth}): they count as not relevant "
            "in both scores"]


def pool_of_runs(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, depth: int,
                 ties: TieRule = "trec") -> PoolOfRuns:
    """The depth-k pool of ``runs`` (name -> run) on the queries of ``qrels``, after the checks above; ranked under
    ``strict_ties(ties)`` (the pool of ``ties="expected"`` is trec's)."""
    if len(runs) < 2:
        raise InputError(f"reusability needs the runs that made the pool, at least 2; got {len(runs)}: leaving the "
                         "only run out would remove every pooled judgment")
    query_ids = sorted(pd.unique(qrels["query_id"].astype(str)))
    top = collect_top_k(runs, depth, ties=strict_ties(ties), query_ids=query_ids)
    names = list(runs)
    notes = _short_runs(top, names, query_ids, depth) + _holes(top, qrels, names, depth)
    return PoolOfRuns(depth, top, query_ids, names, notes)


def unique_contributions(top: pd.DataFrame, owner_of: Mapping[str, str] | None = None) -> pd.DataFrame:
    """``query_id, doc_id, owner``: the pairs of the pool in the top k of exactly one owner (``owner_of`` maps a
    run to its group; default: every run is its own owner), sorted."""
    system = top["system"].astype(str)
    owner = system if owner_of is None else system.map(dict(owner_of))
    owned = pd.DataFrame({"query_id": top["query_id"].astype(str), "doc_id": top["doc_id"].astype(str),
                          "owner": owner}).drop_duplicates()
    owners = owned.groupby(["query_id", "doc_id"])["owner"].transform("size")
    return owned[owners == 1].sort_values(["owner", "query_id", "doc_id"]).reset_index(drop=True)


def without_pairs(qrels: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """``qrels`` without the lines of ``pairs`` (``query_id, doc_id``); every other line stays, in order."""
    return qrels[~_pairs(qrels).isin(_pairs(pairs))].reset_index(drop=True)


def reduced_qrels(qrels: pd.DataFrame, unique: pd.DataFrame, owners: Iterable[str]) -> dict[str, pd.DataFrame]:
    """Owner -> the qrels without its unique contributions (``unique`` from :func:`unique_contributions`)."""
    by_owner = dict(iter(unique.groupby("owner", sort=False)))
    empty = unique.iloc[:0]
    return {owner: without_pairs(qrels, by_owner.get(owner, empty)) for owner in owners}


def contribution_counts(qrels: pd.DataFrame, unique: pd.DataFrame, owners: Iterable[str],
                        rel_level: int) -> pd.DataFrame:
    """Per owner: ``unique`` pairs, ``unique_judged`` (grade >= 0) and ``unique_relevant`` (grade >= rel_level)."""
    grades = qrels.assign(query_id=qrels["query_id"].astype(str), doc_id=qrels["doc_id"].astype(str))
    joined = unique.merge(grades[["query_id", "doc_id", "grade"]], on=["query_id", "doc_id"], how="left")
    counts = joined.assign(judged=joined["grade"] >= 0, relevant=joined["grade"] >= rel_level).groupby("owner").agg(
        unique=("doc_id", "size"), unique_judged=("judged", "sum"), unique_relevant=("relevant", "sum"))
    return counts.reindex(list(owners), fill_value=0).astype(int)
