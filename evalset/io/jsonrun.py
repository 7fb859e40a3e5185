"""Runs as JSON, told from a TREC run by its content (:func:`evalset.io.files.content_kind`: the file starts with
``{`` or ``[``), in the shapes users write:

- ``{query_id: {doc_id: score}}``, the shape ranx and pytrec_eval use;
- records, a list of objects (pandas' ``to_json(orient="records")``) or one object a line (JSON Lines,
  ``orient="records", lines=True``), each with a query id, a document id and a score under the names a run table's
  header may use (:data:`evalset.io.files.RUN_COLUMNS`: ``query_id`` or ``qid``, ``doc_id``, ``docno`` or
  ``docid``, ``score``, optionally ``rank``; any case).

Conventions
-----------
- Ids are strings as written (a number as its digits); a score must be a finite number (a boolean is not one).
- ``rank`` is a document's place within its query as written (1-based), or a record's ``rank`` field. Ranking for
  evaluation follows the contract's tie rule (:func:`evalset.metrics.ranking.order_run`): under the default,
  trec_eval's, the scores decide and the written order does not matter; ``ties=run`` keeps the written order.
- A query or a document given twice in one object is refused (a JSON object keeps only its last value: a run would
  lose documents silently); a repeated document in records is a repeated run line, counted once by the engine.
- A query with no document is no row, as in a TREC run; a file with no document at all is refused. A refusal names
  the file and, where the parser knows it, the line (JSON Lines: the record's line; otherwise the record's place).
- Rows come out in file order, like :func:`evalset.io.trec.read_run`'s; the whole file is read (a JSON run is never
  streamed).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import pandas as pd

from evalset.errors import InputError
from evalset.io.files import RUN_COLUMNS, open_file


def read_json_run(path: str | os.PathLike) -> pd.DataFrame:
    """The run in the JSON file at ``path`` as ``query_id, doc_id, rank, score`` (module docstring)."""
    path = os.fspath(path)
    try:
        with open_file(path, "rt", encoding="utf-8-sig") as handle:
            text = handle.read()
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text (save the file as UTF-8)", path) from None
    try:
        document = json.loads(text, object_pairs_hook=_refuse_repeated_keys)
        records = [(None, document)] if _is_record(document) else None
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise InputError(f"not a JSON run: {exc.msg}", path, exc.lineno) from None
        records = list(_json_lines(text, path))
    except _RepeatedKey as exc:
        raise InputError(f"{exc.key!r} is given twice in one JSON object, which keeps only the last: give each query "
                         "(and each document of a query) once", path) from None
    if records is None and isinstance(document, list):
        records = [(None, record) for record in document]
    if records is not None:
        rows = _from_records(records, path)
    elif isinstance(document, dict):
        rows = _from_mapping(document, path)
    else:
        raise InputError(f"a JSON run is an object {{query_id: {{doc_id: score}}}} or a list of records, found "
                         f"{type(document).__name__}", path)
    if not rows[0]:
        raise InputError("no run lines: the JSON run holds no document", path)
    query_ids, doc_ids, ranks, scores = rows
    return pd.DataFrame({"query_id": pd.Series(query_ids, dtype="str"), "doc_id": pd.Series(doc_ids, dtype="str"),
                         "rank": pd.Series(ranks, dtype="int64"), "score": pd.Series(scores, dtype="float64")})


Rows = tuple[list[str], list[str], list[int], list[float]]


class _RepeatedKey(Exception):
    def __init__(self, key: str):
        self.key = key


def _refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _RepeatedKey(key)
        seen[key] = value
    return seen


def _json_lines(text: str, path: str):
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                record = json.loads(line, object_pairs_hook=_refuse_repeated_keys)
            except (json.JSONDecodeError, _RepeatedKey) as exc:
                cause = exc.msg if isinstance(exc, json.JSONDecodeError) else f"{exc.key!r} given twice"
                raise InputError(f"not a JSON Lines run: {cause}", path, number) from None
            yield number, record


def _columns(record: dict[str, Any]) -> dict[str, str]:
    """Run column -> the record's key for it (:data:`RUN_COLUMNS`, any case)."""
    keys = {key.lower(): key for key in record}
    return {column: keys[name] for column, names in RUN_COLUMNS.items() for name in names if name in keys}


def _is_record(document: Any) -> bool:
    return isinstance(document, dict) and {"query_id", "doc_id", "score"} <= set(_columns(document))


def _score(value: Any, where: str, path: str, line: int | None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{where}: score must be a finite number, found {value!r}", path, line)
    return float(value)


def _from_mapping(document: dict[str, Any], path: str) -> Rows:
    rows: Rows = ([], [], [], [])
    for query_id, documents in document.items():
        if not isinstance(documents, dict):
            raise InputError(f"query {query_id}: a JSON run maps each query to {{doc_id: score}}, found "
                             f"{type(documents).__name__}", path)
        for rank, (doc_id, score) in enumerate(documents.items(), 1):
            for values, value in zip(rows, (str(query_id), str(doc_id), rank,
                                            _score(score, f"query {query_id}, document {doc_id}", path, None)),
                                     strict=True):
                values.append(value)
    return rows


def _from_records(records: list[tuple[int | None, Any]], path: str) -> Rows:
    rows: Rows = ([], [], [], [])
    written: dict[str, int] = {}
    for place, (line, record) in enumerate(records, 1):
        where = f"record {place}" if line is None else "record"
        if not isinstance(record, dict):
            raise InputError(f"{where}: a record is an object with a query id, a document id and a score, found "
                             f"{type(record).__name__}", path, line)
        columns = _columns(record)
        lacking = [column for column in ("query_id", "doc_id", "score") if column not in columns]
        if lacking:
            raise InputError(f"{where}: no {' or '.join(RUN_COLUMNS[lacking[0]])} field (a record needs a query id, "
                             "a document id and a score)", path, line)
        query_id, doc_id = (_identifier(record[columns[c]], c, where, path, line) for c in ("query_id", "doc_id"))
        written[query_id] = written.get(query_id, 0) + 1
        rank = record[columns["rank"]] if "rank" in columns else written[query_id]
        if isinstance(rank, bool) or not isinstance(rank, int):
            raise InputError(f"{where}: rank must be an integer, found {rank!r}", path, line)
        for values, value in zip(rows, (query_id, doc_id, rank, _score(record[columns["score"]], where, path, line)),
                                 strict=True):
            values.append(value)
    return rows


def _identifier(value: Any, column: str, where: str, path: str, line: int | None) -> str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"{where}: {column} must be a string or an integer, found {value!r}", path, line)
