"""Why each query moved between a baseline and a candidate: its change classified by what happened in the top k.

Conventions
-----------
- The top k is :mod:`evalset.holes.find`'s: k is the metric's cutoff unless a depth is given (a metric
  without cutoff needs one). A document is *relevant* when it adds to the metric: grade > 0 for a measure of gains
  (nDCG, DCG, ERR, RBP), grade >= the measure's relevance level for the others
  (:meth:`evalset.metrics.Measure.lowest_adding_grade`).
- A query *changed* when the candidate's value differs from the baseline's by more than ``epsilon`` (default
  :data:`TOLERANCE`; both defined; a query undefined for either is counted apart, as ``compare`` leaves it out).
- Classes of a query, each counted in documents: ``lost`` (a relevant document in the baseline's top k, not in
  the candidate's), ``rescued`` (the reverse), ``promoted`` / ``demoted`` (a relevant document in both top k, at
  a better / worse rank in the candidate), ``unjudged_entered`` (an unjudged document in the candidate's top k
  and not in the baseline's: it counts as not relevant, so it can push a relevant one out), ``tie_artefact``
  (the difference vanishes, within ``epsilon``, when both runs are scored with ``ties=expected``: the
  change comes from how tied scores were broken; not assessed when the contract already is ``expected``), and
  ``other`` (a change none of these explains).
- A query can be in several classes: counts are queries per class, and they add up to more than the queries
  that changed. A query whose value did not change but whose relevant documents moved (lost, rescued,
  promoted or demoted) is *cancelled*: movements whose effects summed to zero, shown apart, never "no change".
- The documents that moved are listed one by one with their class, their grade and their rank in each run's top
  k (1-based, under the contract's tie rule as :func:`evalset.holes.find.graded_top_k` ranks them; *out*
  when not in that run's top k): ``lost: doc D rank 4 -> out (grade 2)``. The text shows the ``top`` changed
  queries with the largest |difference| (and as many cancelled ones), every one by default; ``to_dict`` keeps
  every query and every document.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import NO_CHANGE
from evalset.evaluation import PerQuery, per_query_values
from evalset.holes.find import depth_of, graded_top_k
from evalset.io.queries import read_queries
from evalset.metrics import parse_measure
from evalset.params import NON_NEGATIVE_INT, Interval, check
from evalset.render import json_safe, number
from evalset.stats.paired import Comparison

TOLERANCE = NO_CHANGE
"""The default ``epsilon``: :data:`evalset.contract.NO_CHANGE`, as compare counts its ties."""
NON_NEGATIVE = Interval(float, 0)
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
DOCUMENT_COLUMNS = ("query_id", "doc_id", "move", "rank_baseline", "rank_candidate", "grade")


@dataclass(frozen=True)
class QueryMovements:
    """The classes of every query of one comparison and the documents that moved (see the module docstring).

    ``per_query``: ``query_id, baseline, candidate, difference, changed`` and, per class of
    :data:`MOVEMENT_CLASSES`, its number of documents (``tie_artefact`` and ``other``: 1 or 0), one row per
    query defined for both runs, in query id order. ``documents``: :data:`DOCUMENT_COLUMNS`, one row per document
    that moved (``move`` a class of :data:`RELEVANT_MOVES` or ``unjudged_entered``; a rank is NaN when the
    document is out of that run's top k; ``grade`` NaN when unjudged), in the order the text lists them.
    ``undefined`` counts the queries left out; ``texts`` maps query ids to their texts (when given); ``epsilon``
    is the threshold of "changed"; ``top`` is how many queries the text shows (None: every one).
    """

    baseline: str
    candidate: str
    metric: str
    depth: int
    ties_assessed: bool
    per_query: pd.DataFrame
    undefined: int
    documents: pd.DataFrame | None = None
    texts: Mapping[str, str] | None = None
    epsilon: float = TOLERANCE
    top: int | None = None

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
        """Counts per class, then each changed query (the largest |difference| first, ``top`` of them) with the
        documents that moved, then the cancelled ones."""
        return _text(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: counts, the queries of each class, the cancelled queries, every query's row with the
        documents that moved (and its text when given)."""
        classes = {name: {"queries": self.counts()[name], "documents": int(self.changed[name].sum()),
                          "query_ids": self.queries(name)} for name in MOVEMENT_CLASSES}
        for name in ("tie_artefact", "other"):
            del classes[name]["documents"]
        documents = _document_records(self.documents)
        per_query = []
        for row in self.per_query.to_dict(orient="records"):
            text = {} if self.texts is None else {"query": self.texts.get(row["query_id"])}
            per_query.append(row | text | {"documents": documents.get(row["query_id"], [])})
        return json_safe({
            "depth": self.depth, "epsilon": self.epsilon, "changed": len(self.changed),
            "unchanged": int((~self.per_query["changed"]).sum()), "undefined": self.undefined,
            "ties_assessed": self.ties_assessed, "classes": classes,
            "cancelled": self.cancelled[["query_id", *RELEVANT_MOVES]].to_dict(orient="records"),
            "per_query": per_query,
        })


def _whole(value: Any) -> int | None:
    return None if pd.isna(value) else int(value)


def _document_records(documents: pd.DataFrame | None) -> dict[str, list[dict[str, Any]]]:
    """Per query id, its documents that moved: ``doc_id, move, rank_baseline, rank_candidate, grade`` (a rank
    None when out of that run's top k, the grade None when unjudged)."""
    records: dict[str, list[dict[str, Any]]] = {}
    for row in () if documents is None else documents.itertuples():
        records.setdefault(row.query_id, []).append({
            "doc_id": row.doc_id, "move": row.move, "rank_baseline": _whole(row.rank_baseline),
            "rank_candidate": _whole(row.rank_candidate), "grade": _whole(row.grade)})
    return records


def _documents_moved(top: pd.DataFrame, baseline: str, candidate: str,
                     relevant: pd.Series) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per query, the number of documents of each class that is read from the two top k; and those documents
    (:data:`DOCUMENT_COLUMNS`), by query id, class, then rank (the baseline's, else the candidate's)."""
    top = top.assign(relevant=relevant)
    b = top[top["system"] == baseline].set_index(["query_id", "doc_id"])
    c = top[top["system"] == candidate].set_index(["query_id", "doc_id"])
    columns = ["rank", "relevant", "judged", "grade"]
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
    grade = pd.Series(np.where(in_b, both["grade_b"], both["grade_c"]), index=both.index).where(judged)
    details = both.assign(rank_baseline=both["rank_b"], rank_candidate=both["rank_c"], grade=grade)
    parts = [details[moved[name].to_numpy()].assign(move=name, order=order)
             for order, name in enumerate(moved.columns)]
    documents = pd.concat(parts).reset_index() if len(both) else pd.DataFrame(columns=[*DOCUMENT_COLUMNS, "order"])
    documents["first_rank"] = documents["rank_baseline"].fillna(documents["rank_candidate"])
    documents = documents.sort_values(["query_id", "order", "first_rank", "doc_id"], kind="mergesort")
    return (moved.groupby(level="query_id").sum().astype(np.int64),
            documents[list(DOCUMENT_COLUMNS)].reset_index(drop=True))


def _texts(queries: str | os.PathLike | pd.DataFrame, wanted: pd.Index) -> dict[str, str]:
    frame = queries if isinstance(queries, pd.DataFrame) else read_queries(queries)
    texts = dict(zip(frame["query_id"].astype(str), frame["query"].astype(str), strict=True))
    return {q: texts[q] for q in wanted if q in texts}


def query_movements(values: PerQuery, runs: Mapping[str, pd.DataFrame], result: Comparison,
                    depth: int | None = None, *, queries: str | os.PathLike | pd.DataFrame | None = None,
                    epsilon: float = TOLERANCE, top: int | None = None) -> QueryMovements:
    """Classify each query of ``result``, a comparison made by :func:`evalset.comparing.compare_runs` on ``runs``
    from the per-query ``values``, and list the documents that moved.

    ``queries`` (a ``queries.tsv`` or topics file, or a frame of :func:`evalset.io.queries.read_queries`) gives
    the query texts shown; ``epsilon`` (>= 0) is the largest difference that is no change; ``top`` (>= 0) is how
    many changed queries the text shows (None: every one).
    """
    epsilon = check("--epsilon", epsilon, NON_NEGATIVE)
    top = None if top is None else check("--top", top, NON_NEGATIVE_INT)
    evaluation = values.evaluation
    measure = parse_measure(result.metric)
    k = depth_of(measure, depth)
    contract = evaluation.contract
    pair = {result.baseline: runs[result.baseline], result.candidate: runs[result.candidate]}

    def both(scored: PerQuery) -> pd.DataFrame:
        return pd.DataFrame({"baseline": scored.analysed(result.baseline, result.metric),
                             "candidate": scored.analysed(result.candidate, result.metric)})

    scored = both(values)
    defined = scored.dropna()
    table = defined.assign(difference=defined["candidate"] - defined["baseline"])
    table["changed"] = table["difference"].abs() > epsilon
    top_k = graded_top_k(pair, evaluation.qrels, k, contract.ties)
    threshold = measure.lowest_adding_grade(contract)
    moved, documents = _documents_moved(top_k, result.baseline, result.candidate,
                                        top_k["grade"].fillna(-1) >= threshold)
    table = table.join(moved).fillna({name: 0 for name in moved}).astype({name: np.int64 for name in moved})
    ties_assessed = contract.ties != "expected"
    if ties_assessed:
        expected = both(per_query_values(evaluation.with_contract(ties="expected"), pair, [result.metric]))
        expected = expected.reindex(table.index)
        vanishes = (expected["candidate"] - expected["baseline"]).abs() <= epsilon
        table["tie_artefact"] = (table["changed"] & vanishes).astype(np.int64)
    else:
        table["tie_artefact"] = 0
    explained = (table[[*RELEVANT_MOVES, "unjudged_entered", "tie_artefact"]] > 0).any(axis=1)
    table["other"] = (table["changed"] & ~explained).astype(np.int64)
    table = table.rename_axis("query_id").reset_index()
    documents = documents[documents["query_id"].isin(table["query_id"])].reset_index(drop=True)
    texts = None if queries is None else _texts(queries, pd.Index(table["query_id"]))
    return QueryMovements(result.baseline, result.candidate, result.metric, k, ties_assessed,
                          table[["query_id", "baseline", "candidate", "difference", "changed", *MOVEMENT_CLASSES]],
                          len(scored) - len(defined), documents, texts, epsilon, top)


# ------------------------------------------------------------------------------------------------ printing
def _rank(rank: float) -> str:
    return "out" if pd.isna(rank) else str(int(rank))


def _detail(m: QueryMovements, queries: pd.DataFrame, what: str) -> list[str]:
    """Each of the first ``m.top`` of ``queries`` (the largest |difference| first) with its documents moved."""
    queries = queries.assign(size=queries["difference"].abs()).sort_values(
        ["size", "query_id"], ascending=[False, True], kind="mergesort")
    shown = queries if m.top is None else queries.head(m.top)
    documents = m.documents if m.documents is not None else pd.DataFrame(columns=list(DOCUMENT_COLUMNS))
    by_query = dict(tuple(documents.groupby("query_id", sort=False)))
    lines = []
    for row in shown.itertuples():
        text = (m.texts or {}).get(row.query_id)
        lines.append(f"    {row.query_id} ({number(row.difference, sign=True)}, {number(row.baseline)} -> "
                     f"{number(row.candidate)})" + (f": {text}" if text else ""))
        for doc in by_query.get(row.query_id, documents.iloc[:0]).itertuples():
            before = "out" if pd.isna(doc.rank_baseline) else f"rank {_rank(doc.rank_baseline)}"
            grade = "" if pd.isna(doc.grade) else f" (grade {int(doc.grade)})"
            lines.append(f"      {doc.move.replace('_', ' ')}: doc {doc.doc_id} {before} -> {_rank(doc.rank_candidate)}"
                         f"{grade}")
        if row.tie_artefact:
            lines.append("      tie artefact: the difference is 0 under ties=expected")
        if row.other:
            lines.append(f"      other: no document moved in the top {m.depth} explains it")
    if len(shown) < len(queries):
        lines.append(f"    ... {len(queries) - len(shown)} more {what} (all in --format json)")
    return lines


def _text(movements: QueryMovements) -> str:
    m, k = movements, movements.depth
    changed = m.changed
    within = "" if m.epsilon == TOLERANCE else f" by more than epsilon {m.epsilon:g}"
    up, down = int((changed["difference"] > 0).sum()), int((changed["difference"] < 0).sum())
    lines = [f"why queries moved: {m.candidate} vs {m.baseline} on {m.metric}, top {k}",
             f"  {len(changed)} of {len(m.per_query)} queries changed{within} ({up} up, {down} down: compare's wins "
             "and losses at this epsilon), "
             f"{len(m.per_query) - len(changed)} unchanged" + (f", {m.undefined} undefined left out" if m.undefined
                                                                else ""),
             "  (a query can be in several classes: the counts add up to more than the queries that changed)"]
    for name, count in m.counts().items():
        label = CLASS_TEXT[name].format(k=k)
        if name == "tie_artefact" and not m.ties_assessed:
            lines.append(f"  {label:38}  not assessed: the contract's tie rule is already expected")
            continue
        documents = "" if name in ("tie_artefact", "other") else f" ({int(changed[name].sum())} documents)"
        lines.append(f"  {label:38}{count:4} queries{documents}")
    if len(changed):
        lines.append("  the queries that changed, the largest |difference| first:")
        lines += _detail(m, changed, "moved queries")
    cancelled = m.cancelled
    lines.append(f"  movements that cancelled (value unchanged, relevant documents moved): {len(cancelled)} queries")
    lines += _detail(m, cancelled, "cancelled queries")
    return "\n".join(lines)
