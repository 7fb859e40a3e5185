"""Merging the grades of several annotators into one grade per (query, document): the rules of
``evalset freeze`` (:mod:`evalset.sets`).

``median``
    the median grade; an even number of grades whose two middle grades differ is a tie (unresolved).
``majority``
    the most frequent grade; two grades equally frequent is a tie (unresolved).
``annotator-priority``
    the grade of the first annotator in the priority list who graded the pair (then the others in name order).
``dawid-skene``, ``one-coin``, ``mace``, ``glad``
    crowd-kit's models fitted on all the merged labels (:mod:`evalset.quality.aggregation`): never a tie; the
    manifest records the library's version, the class, its parameters and the EM iterations run.

``exclude`` names annotators whose labels take no part in the merge (an unknown name is an error); the labels
left out are counted per annotator.

A pair whose grades span more than ``max_gap`` is unresolved under every rule; adjudicated grades always win.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import AGGREGATION_RULES, MERGE_RULES
from evalset.errors import InputError
from evalset.io.annotations import settle_repeats


@dataclass(frozen=True)
class MergeResult:
    """Merged grades (``query_id, doc_id, grade``), the unresolved pairs, and counts for the manifest."""

    qrels: pd.DataFrame
    unresolved: pd.DataFrame
    counts: dict[str, int]
    details: dict[str, Any] = field(default_factory=dict)  # only what a rule or option adds (aggregation, excluded)


def merge_grades(labels: pd.DataFrame, rule: str = "median", *, allow_llm: bool = False, max_gap: int | None = 2,
                 priority: list[str] | None = None, adjudication: pd.DataFrame | None = None,
                 exclude: Sequence[str] = ()) -> MergeResult:
    """Merge the judgments of several annotators into one grade per pair (see the module docstring).

    ``labels`` hold one judgment per annotator and pair (:func:`~evalset.io.annotations.settle_repeats`): an
    exact repeat is collapsed and one annotator's different grades for one pair are refused here.
    """
    if rule not in MERGE_RULES:
        raise InputError(f"merge rule must be one of {', '.join(MERGE_RULES)}, got {rule!r}")
    used = labels if allow_llm else labels[labels["kind"] == "human"]
    details: dict[str, Any] = {}
    if exclude:
        used, details["excluded_labels"] = _exclude(labels, used, exclude)
    used, _ = settle_repeats(used)
    grouped = used.groupby(["query_id", "doc_id"], sort=True)["grade"]
    stats = pd.DataFrame({"n": grouped.size(), "low": grouped.min(), "high": grouped.max()})
    if rule == "median":
        lower = grouped.quantile(0.5, interpolation="lower")
        upper = grouped.quantile(0.5, interpolation="higher")
        stats["grade"], stats["tie"] = lower, lower != upper
    elif rule == "majority":
        counts = used.groupby(["query_id", "doc_id", "grade"]).size().rename("votes").reset_index()
        counts = counts.sort_values(["query_id", "doc_id", "votes", "grade"], ascending=[True, True, False, True])
        best = counts.groupby(["query_id", "doc_id"]).head(2)
        top = best.groupby(["query_id", "doc_id"])
        stats["grade"] = top["grade"].first()
        stats["tie"] = top["votes"].apply(lambda v: len(v) > 1 and v.iloc[0] == v.iloc[1])
    elif rule in AGGREGATION_RULES:
        from evalset.quality.aggregation import aggregate

        result = aggregate(used, rule)
        stats["grade"] = result.grades.set_index(["query_id", "doc_id"])["grade"]
        stats["tie"] = False
        details = {"aggregation": result.record(), **details}
    else:
        order = {name: i for i, name in enumerate(priority or [])}
        ranked = used.assign(rank=used["annotator"].map(lambda a: (order.get(a, len(order)), a)))
        first = ranked.sort_values("rank", kind="stable").groupby(["query_id", "doc_id"]).head(1)
        stats["grade"] = first.set_index(["query_id", "doc_id"])["grade"]
        stats["tie"] = False
    gap_too_large = (stats["high"] - stats["low"] > max_gap) if max_gap is not None else False
    stats["unresolved"] = stats["tie"] | gap_too_large
    adjudicated = 0
    if adjudication is not None and len(adjudication):
        decided = adjudication.drop_duplicates(["query_id", "doc_id"], keep="last").set_index(["query_id", "doc_id"])
        common = stats.index.intersection(decided.index)
        stats.loc[common, "grade"] = decided.loc[common, "grade"]
        stats.loc[common, "unresolved"] = False
        adjudicated = len(common)
    unresolved = stats[stats["unresolved"]].reset_index()
    detail = used.merge(unresolved[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    merged = stats[~stats["unresolved"]].reset_index()[["query_id", "doc_id", "grade"]]
    merged["grade"] = merged["grade"].astype(np.int64)
    return MergeResult(
        qrels=merged,
        unresolved=detail[["query_id", "doc_id", "annotator", "kind", "grade"]],
        counts={"pairs": len(stats), "merged": len(merged), "unresolved": len(unresolved),
                "adjudicated": adjudicated, "multiply_judged": int((stats["n"] > 1).sum()),
                "llm_labels_left_out": int(len(labels) - len(labels[labels["kind"] == "human"])) if not allow_llm
                else 0},
        details=details,
    )


def _exclude(labels: pd.DataFrame, used: pd.DataFrame, names: Sequence[str]) -> tuple[pd.DataFrame, dict[str, int]]:
    """``used`` without the labels of the annotators ``names`` (each must be an annotator of ``labels``), and the
    number of labels left out per annotator (of those the merge would have used)."""
    known = set(labels["annotator"])
    unknown = sorted(set(names) - known)
    if unknown:
        raise InputError(f"--exclude-annotator: no annotator named {', '.join(unknown)} in the labels "
                         f"(annotators: {', '.join(sorted(known))})")
    out = used["annotator"].isin(set(names))
    counts = {name: int((used["annotator"] == name).sum()) for name in sorted(set(names))}
    kept = used[~out]
    if kept.empty:
        raise InputError(f"no labels left to merge once {', '.join(sorted(set(names)))} are excluded")
    return kept, counts
