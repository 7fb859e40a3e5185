"""A pool folder's files: ``pool.tsv`` (blind judging pairs) and ``tasks.jsonl`` (what annotators see).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.files import (
    check_file,
    json_objects,
    newline_lines,
    read_tsv_with_header,
    refuse_blank,
    refuse_repeats,
)

# --- pool folders and labels (push / pull)
TASK_FIELDS = ("pair_id", "query_id", "doc_id", "query", "text")


def read_pool_pairs(path: str | os.PathLike) -> pd.DataFrame:
    """Read a pool's ``pool.tsv`` (``pair_id, query_id, doc_id, order``), sorted by ``order`` (int64).

    A missing column, a blank id, a non-integer order, or a repeated ``pair_id`` is refused with its line.
    """
    path = os.fspath(path)
    rows, line_numbers, columns = read_tsv_with_header(path, required=("pair_id", "query_id", "doc_id", "order"))
    frame = pd.DataFrame(rows, columns=columns, dtype=object)[["pair_id", "query_id", "doc_id", "order"]]
    refuse_blank(frame, ("pair_id", "query_id", "doc_id"), line_numbers, path)
    refuse_repeats(frame, ["pair_id"], line_numbers, path, "pair_id")
    order = pd.to_numeric(frame["order"], errors="coerce")
    bad = order.isna() | (order != order.round())
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"order must be an integer, found {frame['order'].iloc[row]!r}", path, line_numbers[row])
    frame = frame.astype(str).assign(order=order.to_numpy(dtype=np.int64))
    return frame.sort_values("order", kind="stable").reset_index(drop=True)


def pool_tsv_lines(path: str | os.PathLike, key: tuple[str, ...], keep: set[tuple[str, ...]]) -> list[str]:
    """The header and the lines of a pool TSV (``pool.tsv``, ``pool_sources.tsv``) whose ``key`` columns are in
    ``keep``, as they are, in file order (a subset of a pool written as the pool is)."""
    lines = newline_lines(path)
    columns = [lines[0].rstrip("\r\n").split("\t").index(name) for name in key] if lines else []
    kept = [line for line in lines[1:] if tuple(line.rstrip("\r\n").split("\t")[c] for c in columns) in keep]
    return [lines[0], *kept] if lines else []


def task_lines(path: str | os.PathLike, field: str, keep: set[str]) -> list[str]:
    """The lines of a ``tasks.jsonl`` whose ``field`` (``pair_id``, ``query_id``) is in ``keep``, as they are, in
    file (judging) order; a line that is not JSON is refused with its number."""
    kept = []
    for number, line in enumerate(newline_lines(path), 1):
        if not line.strip():
            continue
        try:
            task = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not a JSON object: {exc.msg}", os.fspath(path), number) from None
        if isinstance(task, dict) and str(task.get(field)) in keep:
            kept.append(line)
    return kept


def read_tasks(path: str | os.PathLike, limit: int | None = None) -> pd.DataFrame:
    """Read a pool's ``tasks.jsonl`` (one JSON object a line with :data:`TASK_FIELDS`), in file (judging) order.

    ``limit`` keeps the first N tasks. Every field is a string; a line that is not a JSON object, lacks a field,
    has an empty ``pair_id``, or repeats a ``pair_id`` is refused with its line.
    """
    path = os.fspath(path)
    check_file(path)
    if limit is not None and limit < 0:
        raise InputError(f"limit must be >= 0, got {limit}", path)
    records, line_numbers = [], []
    for number, record in json_objects(path):
        if limit is not None and len(records) >= limit:
            break
        missing = [name for name in TASK_FIELDS if record.get(name) is None]
        if missing:
            raise InputError(f"missing field(s) {', '.join(missing)}", path, number)
        if not str(record["pair_id"]).strip():
            raise InputError("empty pair_id", path, number)
        records.append({name: str(record[name]) for name in TASK_FIELDS})
        line_numbers.append(number)
    frame = pd.DataFrame(records, columns=list(TASK_FIELDS), dtype=object)
    refuse_repeats(frame, ["pair_id"], line_numbers, path, "pair_id")
    return frame.astype(str).reset_index(drop=True)
