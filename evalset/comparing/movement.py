"""Why each query moved between a baseline and a candidate: its change classified by what happened in the top k.

Conventions
-----------
- The top k is :mod:`evalset.comparing.topk`'s: k is the metric's cutoff unless a depth is given (a metric
  without cutoff needs one). A document is *relevant* when it adds to the metric: grade > 0 for nDCG (its gain),
  grade >= ``rel_level`` for the other measures.
- A query *changed* when the candidate's value differs from the baseline's by more than :data:`TOLERANCE`
  (both defined; a query undefined for either is counted apart, as ``compare`` leaves it out).
- Classes of a query, each counted in documents: ``lost`` (a relevant document in the baseline's top k, not in
  the candidate's), ``rescued`` (the reverse), ``promoted`` / ``demoted`` (a relevant document in both top k, at
  a better / worse rank in the candidate), ``unjudged_entered`` (an unjudged document in the candidate's top k
  and not in the baseline's: it counts as not relevant, so it can push a relevant one out), ``tie_artefact``
  (the difference vanishes, within :data:`TOLERANCE`, when both runs are scored with ``ties=expected``: the
  change comes from how tied scores were broken; not assessed when the contract already is ``expected``), and
  ``other`` (a change none of these explains).
- A query can be in several classes: counts are queries per class, and they add up to more than the queries
  that changed. A query whose value did not change but whose relevant documents moved (lost, rescued,
  promoted or demoted) is *cancelled*: movements whose effects summed to zero, shown apart, never "no change".
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalset.comparing.topk import depth_of, graded_top_k
from evalset.evaluation import PerQuery, per_query_values
from evalset.metrics import parse_measure
from evalset.render import json_safe, number
from evalset.stats.paired import Comparison

TOLERANCE = 1e-9
"""A per-query difference within this of zero is no change (floating-point sums of the same terms)."""
RELEVANT_MOVES = ("lost", "rescued", "promoted", "demoted")
MOVEMENT_CLASSES = (*RELEVANT_MOVES, "unjudged_entered", "tie_artefact", "other")
CLASS_TEXT = {
    "lost": "relevant lost from the top {k}",
    "rescued": "relevant rescued into the top {k}",
    "promoted": "relevant promoted within it",
    "demoted": "relevant demoted within it",
    "unjudged_entered": "unjudged entered the top {k}",
    "tie_artefact": "tie artefact (0 under ties=expected)",
    "other": "other",
}


@dataclass(frozen=True)
class QueryMovements:
    """The classes of every query of one comparison (see the module docstring).

    ``per_query``: ``query_id, baseline, candidate, difference, changed`` and, per class of
    :data:`MOVEMENT_CLASSES`, its number of documents (``tie_artefact`` and ``other``: 1 or 0), one row per
    query defined for both runs, in query id order. ``undefined`` counts the queries left out.
    """

    baseline: str
    candidate: str
    metric: str
    depth: int
    ties_assessed: bool
    per_query: pd.DataFrame
    undefined: int

    @property
    def changed(self) -> pd.DataFrame:
        return self.per_query[self.per_query["changed"]]

    @property
    def cancelled(self) -> pd.DataFrame:
        """Queries whose value did not change although relevant documents moved."""
        unchanged = self.per_query[~self.per_query["changed"]]
        return unchanged[(unchanged[list(RELEVANT_MOVES)] > 0).any(axis=1)]

    def queries(self, name: str) -> list[str]:
        """The changed queries of class ``name``, in query id order."""
        return self.changed.loc[self.changed[name] > 0, "query_id"].tolist()

    def counts(self) -> dict[str, int]:
        """Changed queries per class (a query can be in several)."""
        return {name: int((self.changed[name] > 0).sum()) for name in MOVEMENT_CLASSES}

    def to_text(self) -> str:
        """Counts per class with the queries of each class (and their differences), then the cancelled ones."""
        return _text(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: counts, the queries of each class, the cancelled queries, every query's row."""
        classes = {name: {"queries": self.counts()[name], "documents": int(self.changed[name].sum()),
                          "query_ids": self.queries(name)} for name in MOVEMENT_CLASSES}
        for name in ("tie_artefact", "other"):
            del classes[name]["documents"]
        return json_safe({
            "depth": self.depth, "changed": len(self.changed), "unchanged": int((~self.per_query["changed"]).sum()),
            "undefined": self.undefined, "ties_assessed": self.ties_assessed, "classes": classes,
            "cancelled": self.cancelled[["query_id", *RELEVANT_MOVES]].to_dict(orient="records"),
            "per_query": self.per_query.to_dict(orient="records"),
        })


def _documents_moved(top: pd.DataFrame, baseline: str, candidate: str, relevant: pd.Series) -> pd.DataFrame:
    """Per query, the documents of each class that is read from the two top k."""
    top = top.assign(relevant=relevant)
    b = top[top["system"] == baseline].set_index(["query_id", "doc_id"])
    c = top[top["system"] == candidate].set_index(["query_id", "doc_id"])
    columns = ["rank", "relevant", "judged"]
    both = b[columns].add_suffix("_b").join(c[columns].add_suffix("_c"), how="outer")
    in_b, in_c = both["rank_b"].notna(), both["rank_c"].notna()
    relevant = np.where(in_b, both["relevant_b"], both["relevant_c"]).astype(bool)
    judged = np.where(in_b, both["judged_b"], both["judged_c"]).astype(bool)
    moved = pd.DataFrame({
        "lost": relevant & in_b & ~in_c,
        "rescued": relevant & in_c & ~in_b,
        "promoted": relevant & in_b & in_c & (both["rank_c"] < both["rank_b"]),
        "demoted": relevant & in_b & in_c & (both["rank_c"] > both["rank_b"]),
        "unjudged_entered": ~judged & in_c & ~in_b,
    }, index=both.index)
    return moved.groupby(level="query_id").sum().astype(np.int64)


def query_movements(values: PerQuery, runs: Mapping[str, pd.DataFrame], result: Comparison,
                    depth: int | None = None) -> QueryMovements:
    """Classify each query of ``result``, a comparison made by :func:`evalset.comparing.compare_runs` on ``runs``
    from the per-query ``values``."""
    evaluation = values.evaluation
    measure = parse_measure(result.metric)
    k = depth_of(measure, depth)
    contract = evaluation.contract
    pair = {result.baseline: runs[result.baseline], result.candidate: runs[result.candidate]}

    def both(scored: PerQuery) -> pd.DataFrame:
        return pd.DataFrame({"baseline": scored.column(result.baseline, result.metric),
                             "candidate": scored.column(result.candidate, result.metric)})

    scored = both(values)
    defined = scored.dropna()
    table = defined.assign(difference=defined["candidate"] - defined["baseline"])
    table["changed"] = table["difference"].abs() > TOLERANCE
    top = graded_top_k(pair, evaluation.qrels, k, contract.ties)
    threshold = 1 if measure.name == "ndcg" else contract.rel_level
    moved = _documents_moved(top, result.baseline, result.candidate, top["grade"].fillna(-1) >= threshold)
    table = table.join(moved).fillna({name: 0 for name in moved}).astype({name: np.int64 for name in moved})
    ties_assessed = contract.ties != "expected"
    if ties_assessed:
        expected = both(per_query_values(evaluation.with_contract(ties="expected"), pair, [result.metric]))
        expected = expected.reindex(table.index)
        vanishes = (expected["candidate"] - expected["baseline"]).abs() <= TOLERANCE
        table["tie_artefact"] = (table["changed"] & vanishes).astype(np.int64)
    else:
        table["tie_artefact"] = 0
    explained = (table[[*RELEVANT_MOVES, "unjudged_entered", "tie_artefact"]] > 0).any(axis=1)
    table["other"] = (table["changed"] & ~explained).astype(np.int64)
    table = table.rename_axis("query_id").reset_index()
    return QueryMovements(result.baseline, result.candidate, result.metric, k, ties_assessed,
                          table[["query_id", "baseline", "candidate", "difference", "changed", *MOVEMENT_CLASSES]],
                          len(scored) - len(defined))


def _listed(queries: pd.DataFrame, indent: str) -> list[str]:
    items = [f"{row.query_id} ({number(row.difference, sign=True)})" for row in queries.itertuples()]
    return textwrap.wrap(", ".join(items), 116, initial_indent=indent, subsequent_indent=indent)


def _text(movements: QueryMovements) -> str:
    m, k = movements, movements.depth
    changed = m.changed
    lines = [f"why queries moved: {m.candidate} vs {m.baseline} on {m.metric}, top {k}",
             f"  {len(changed)} of {len(m.per_query)} queries changed, {len(m.per_query) - len(changed)} unchanged"
             + (f", {m.undefined} undefined left out" if m.undefined else ""),
             "  (a query can be in several classes: the counts add up to more than the queries that changed)"]
    for name, count in m.counts().items():
        label = CLASS_TEXT[name].format(k=k)
        if name == "tie_artefact" and not m.ties_assessed:
            lines.append(f"  {label:38}  not assessed: the contract's tie rule is already expected")
            continue
        documents = "" if name in ("tie_artefact", "other") else f" ({int(changed[name].sum())} documents)"
        lines.append(f"  {label:38}{count:4} queries{documents}")
        lines += _listed(changed[changed[name] > 0], "      ")
    cancelled = m.cancelled
    lines.append(f"  movements that cancelled (value unchanged, relevant documents moved): {len(cancelled)} queries")
    for row in cancelled.itertuples():
        said = ", ".join(f"{name} {getattr(row, name)}" for name in RELEVANT_MOVES if getattr(row, name))
        lines.append(f"      {row.query_id}: {said}")
    return "\n".join(lines)
