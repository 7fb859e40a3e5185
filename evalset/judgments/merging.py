"""A frozen set's merge (``evalset freeze``, :mod:`evalset.sets`): the grades of several annotators as one grade per
(query, document), by a rule of :data:`evalset.judgments.registry.RULES` with ties left unresolved.

====================  ==========================================================================================
convention            rule
====================  ==========================================================================================
labels merged         human labels only, unless ``allow_llm``; the LLM labels left out are counted
``exclude``           annotators whose labels take no part (an unknown name is an error); counted per annotator
``priority``          the list of ``annotator-priority``, and only of it: each name an annotator whose grades are
                      merged (not excluded, not an LLM without ``allow_llm``); refused otherwise
a tie                 unresolved (tie policy ``unresolved``): the pair blocks the freeze until adjudicated
``max_gap``           a pair whose grades span more than it is unresolved under every rule
adjudication          an adjudicated grade always wins, resolved or not
crowd-kit's rules     never tie; the manifest records the library's version, the class, its parameters and the
                      EM iterations run (``details["aggregation"]``)
====================  ==========================================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.annotations import settle_repeats
from evalset.judgments.registry import merge_rule
from evalset.judgments.rules import PAIR, check_priority, pair_grades


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
    merge_rule(rule)  # an unknown rule is refused before the labels are looked at
    used = labels if allow_llm else labels[labels["kind"] == "human"]
    details: dict[str, Any] = {}
    if exclude:
        used, details["excluded_labels"] = _exclude(labels, used, exclude)
    used, _ = settle_repeats(used)
    kinds = labels.drop_duplicates("annotator").set_index("annotator")["kind"]
    why = {**{name: "an LLM annotator: its grades are merged only with --merge llm=yes"
              for name, kind in kinds.items() if kind != "human" and not allow_llm},
           **{name: "excluded by --merge exclude=NAMES" for name in exclude}}
    check_priority(rule, priority or (), used["annotator"], why)
    merged = pair_grades(used, rule, ties="unresolved", priority=priority or ())
    if merged.fit is not None:
        details = {"aggregation": merged.fit.record(), **details}
    stats = merged.table.copy()
    gap_too_large = (stats["high"] - stats["low"] > max_gap) if max_gap is not None else False
    stats["unresolved"] = stats["grade"].isna() | gap_too_large
    adjudicated = 0
    if adjudication is not None and len(adjudication):
        decided = adjudication.drop_duplicates(PAIR, keep="last").set_index(PAIR)
        common = stats.index.intersection(decided.index)
        stats.loc[common, "grade"] = decided.loc[common, "grade"]
        stats.loc[common, "unresolved"] = False
        adjudicated = len(common)
    unresolved = stats[stats["unresolved"]].reset_index()
    detail = used.merge(unresolved[PAIR], on=PAIR)
    qrels = stats[~stats["unresolved"]].reset_index()[[*PAIR, "grade"]]
    qrels["grade"] = qrels["grade"].astype(np.int64)
    return MergeResult(
        qrels=qrels,
        unresolved=detail[["query_id", "doc_id", "annotator", "kind", "grade"]],
        counts={"pairs": len(stats), "merged": len(qrels), "unresolved": len(unresolved),
                "adjudicated": adjudicated, "multiply_judged": int((stats["n"] > 1).sum()),
                "llm_labels_left_out": int(len(labels) - len(labels[labels["kind"] == "human"])) if not allow_llm
                else 0},
        details=details,
    )


def _exclude(labels: pd.DataFrame, used: pd.DataFrame, names: Sequence[str]) -> tuple[pd.DataFrame, dict[str, int]]:
    """``used`` without the labels of the annotators ``names`` (each must be an annotator of ``labels``), and the
    number of that annotator's labels kept out of the merge (all of them: an LLM's too without ``allow_llm``)."""
    known = set(labels["annotator"])
    unknown = sorted(set(names) - known)
    if unknown:
        raise InputError(f"--merge exclude=NAMES: no annotator named {', '.join(unknown)} in the labels "
                         f"(annotators: {', '.join(sorted(known))})")
    out = used["annotator"].isin(set(names))
    counts = {name: int((labels["annotator"] == name).sum()) for name in sorted(set(names))}
    kept = used[~out]
    if kept.empty:
        raise InputError(f"no labels left to merge once {', '.join(sorted(set(names)))} are excluded")
    return kept, counts
