"""Qrels and runs held in Python, in the shapes ir_measures' and pytrec_eval's users hold them, as the validated
frames the engine scores: the one conversion door of the library's Python inputs.

Conventions
-----------
- Qrels (:func:`qrels_frame`): a DataFrame ``query_id, doc_id, grade`` (evalset's) or ``query_id, doc_id,
  relevance[, iteration]`` (ir_measures'); a mapping ``{query_id: {doc_id: grade}}`` (pytrec_eval's); or an
  iterable of records with the attributes ``query_id, doc_id, relevance`` (ir_measures' ``Qrel`` namedtuples).
  An ``iteration`` (a subtopic) is ignored, as :func:`evalset.io.trec.read_qrels` ignores a qrels line's second
  field. Validated by :func:`evalset.io.trec.qrels_from_frame`: integer grades, a pair given two grades refused,
  exact repeats collapsed, qrels with nothing judged refused.
- Runs (:func:`run_frame`): a DataFrame ``query_id, doc_id, score[, rank]`` (evalset's and ir_measures'); a mapping
  ``{query_id: {doc_id: score}}`` (pytrec_eval's, ranx's: a document's rank is its place in its query's mapping);
  or an iterable of records with ``query_id, doc_id, score`` (ir_measures' ``ScoredDoc``). Validated by
  :func:`evalset.io.runframe.run_from_frame`: finite scores, integer ranks (no rank: the row order within each query).
- A DataFrame may name its columns as PyTerrier does (``qid, docno, score[, rank]``; qrels ``qid, docno, label``):
  the names are read as evalset's when evalset's are absent (a result frame's other columns, ``docid``,
  ``query``, are not read). A polars DataFrame is taken as its pandas copy (``to_pandas()``).
- Ids become strings: a numeric key ``19335`` is the query ``"19335"``, as it is read from a file.
- Qrels and a run already as :func:`evalset.io.trec.read_qrels` and :func:`evalset.io.trec.read_run` return them
  (string ids, int64 grades; int64 ranks and finite float64 scores) are passed on as they are, nothing converted
  (qrels: their three columns; the engine scores such qrels even when empty).
- A bad input is one :class:`~evalset.errors.InputError` naming ``source`` and the cause (and the row for a bad
  value).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame

QrelsLike = pd.DataFrame | Mapping[object, Mapping[object, int]] | Iterable[object]
"""Qrels held in Python (module docstring)."""

RunLike = pd.DataFrame | Mapping[object, Mapping[object, float]] | Iterable[object]
"""A run held in Python (module docstring)."""


def qrels_frame(qrels: QrelsLike, source: str = "<qrels>") -> pd.DataFrame:
    """``qrels`` (any shape of the module docstring) as validated ``query_id, doc_id, grade``."""
    if isinstance(qrels, pd.DataFrame) and _normal(qrels, {"grade": np.int64}):
        return qrels[["query_id", "doc_id", "grade"]].reset_index(drop=True)
    frame = _frame(qrels, "relevance", source, "grade")
    if "grade" not in frame.columns and "relevance" in frame.columns:
        frame = frame.rename(columns={"relevance": "grade"})
    return qrels_from_frame(_string_ids(frame, source), source)


def run_frame(run: RunLike, source: str = "<run>", rank: bool = True) -> pd.DataFrame:
    """``run`` (any shape of the module docstring) as validated ``query_id, doc_id, rank, score``; ``rank=False``:
    a frame as the readers return it without its rank column (a streamed block scored under a tie rule that does
    not read ranks: :func:`evalset.io.runstream.query_blocks`) is taken as it is."""
    if isinstance(run, pd.DataFrame):
        numbers = {"rank": np.int64, "score": np.float64} if rank or "rank" in run else {"score": np.float64}
        if _normal(run, numbers):
            return run
    return run_from_frame(_string_ids(_frame(run, "score", source), source), source)


def is_frame(data: object) -> bool:
    """Whether ``data`` is a pandas or a polars DataFrame (a polars frame is read as its pandas copy)."""
    return isinstance(data, pd.DataFrame) or (type(data).__module__.split(".")[0] == "polars"
                                              and hasattr(data, "to_pandas"))


_PYTERRIER = {"qid": "query_id", "docno": "doc_id", "label": "grade"}
"""PyTerrier's column names -> evalset's (module docstring)."""


def _frame(data: object, value: str, source: str, alias: str | None = None) -> pd.DataFrame:
    """A DataFrame as it is (PyTerrier's names read as evalset's, a polars frame as pandas'); a mapping of mappings
    or an iterable of records as ``query_id, doc_id, VALUE``."""
    if is_frame(data) and not isinstance(data, pd.DataFrame):
        data = data.to_pandas()
    if isinstance(data, pd.DataFrame):
        renamed = {theirs: ours for theirs, ours in _PYTERRIER.items()
                   if theirs in data.columns and ours not in data.columns and (ours != "grade" or alias == "grade")}
        return data.rename(columns=renamed) if renamed else data
    if isinstance(data, Mapping):
        query_ids: list[object] = []
        doc_ids: list[object] = []
        values: list[object] = []
        for query_id, documents in data.items():
            if not isinstance(documents, Mapping):
                raise InputError(f"query {query_id}: expected {{doc_id: {value}}} for each query, found "
                                 f"{type(documents).__name__}", source)
            query_ids.extend([query_id] * len(documents))
            doc_ids.extend(documents)
            values.extend(documents.values())
        return pd.DataFrame({"query_id": query_ids, "doc_id": doc_ids, value: values})
    if isinstance(data, str | bytes) or not isinstance(data, Iterable):
        raise InputError(f"expected a DataFrame, {{query_id: {{doc_id: {value}}}}} or records with query_id, doc_id "
                         f"and {value}, found {type(data).__name__}", source)
    records = list(data)
    fields = ("query_id", "doc_id", value)
    for row, record in enumerate(records):
        names = [name for name in fields if not hasattr(record, name)]
        if names and not (alias and hasattr(record, alias) and names == [value]):
            raise InputError(f"record {row} has no {', '.join(names)} (expected records with query_id, doc_id and "
                             f"{value}, like ir_measures' namedtuples), found {record!r}"[:300], source)
    if not records:
        return pd.DataFrame({name: [] for name in fields})
    value = value if hasattr(records[0], value) else alias or value
    return pd.DataFrame({name: [getattr(record, name) for record in records] for name in (*fields[:2], value)})


def _string_ids(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """``query_id`` and ``doc_id`` as strings (a missing column is left for the validation to name)."""
    ids = {column: frame[column].astype(str) for column in ("query_id", "doc_id") if column in frame.columns}
    return frame.assign(**ids)


def _normal(frame: pd.DataFrame, numbers: dict[str, type]) -> bool:
    """Whether ``frame`` has string ids and the ``numbers`` columns of those types (finite, for floats), as the
    readers return them (nothing to convert)."""
    if not {"query_id", "doc_id", *numbers} <= set(frame.columns):
        return False
    if not all(isinstance(frame[column].dtype, pd.StringDtype) for column in ("query_id", "doc_id")):
        return False
    if any(frame[column].dtype != kind for column, kind in numbers.items()):
        return False
    return all(np.isfinite(frame[column].to_numpy()).all() for column, kind in numbers.items() if kind == np.float64)
