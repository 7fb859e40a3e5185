"""A pool folder and its files, read and written here only: ``pool.tsv`` (blind judging pairs),
``pool_sources.tsv`` (which run ranked which pair where), ``tasks.jsonl`` (what annotators see) and ``pool.json``
(the manifest: inputs, settings, counts).

- Every stage names a pool folder's files by :data:`POOL_FILES` (and its four names), reads the manifest with
  :func:`read_pool_manifest`, the tasks with :func:`read_tasks` (in judging order with the pairs:
  :func:`read_pairs_and_tasks`), and writes a pool folder with :func:`write_pool_folder`.
- A pool folder is written whole or not at all: built aside and renamed into place
  (:func:`~evalset.io.files.folder_built_aside`). The manifest is JSON indented by 2, non-ASCII characters kept,
  with a final newline; a table is a TSV with a header (``pool.tsv``, ``pool_sources.tsv``) or one JSON object a
  line (``tasks.jsonl``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalset.errors import InputError, quoted
from evalset.io.files import (
    check_file,
    folder_built_aside,
    json_objects,
    newline_lines,
    read_tsv_with_header,
    refuse_blank,
    refuse_repeats,
)

PAIRS_FILE = "pool.tsv"
SOURCES_FILE = "pool_sources.tsv"
TASKS_FILE = "tasks.jsonl"
MANIFEST_FILE = "pool.json"
POOL_FILES = (PAIRS_FILE, SOURCES_FILE, TASKS_FILE, MANIFEST_FILE)
"""The files of a pool folder, in the order :func:`write_pool_folder` writes them (``tasks.jsonl`` only with the
pool's tasks); a slice's or a sample's folder holds its record beside them."""

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
    if not os.path.exists(path) and os.path.isfile(os.path.join(os.path.dirname(path), "pool.tsv")):
        raise InputError("no such file: the pool was made without the texts (no --corpus): pool again with --corpus "
                         "and --queries for the tasks an annotator or a judge reads", path)
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


def read_pairs_and_tasks(folder: str | os.PathLike) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(pairs, tasks)`` of the pool folder ``folder``: its pairs (:func:`read_pool_pairs`) and its tasks
    (:func:`read_tasks`) in judging order (the ``order`` of ``pool.tsv``).

    A pair without a task (no text in the corpus) is allowed; a task whose pair is not in ``pool.tsv`` is refused.
    """
    folder = Path(folder)
    pairs = read_pool_pairs(folder / PAIRS_FILE)
    tasks_path = folder / TASKS_FILE
    tasks = read_tasks(tasks_path)
    order = tasks["pair_id"].map(dict(zip(pairs["pair_id"], pairs["order"], strict=True)))
    stray = order.isna()
    if stray.any():
        raise InputError(f"pair_id {tasks.loc[stray, 'pair_id'].iloc[0]} of {TASKS_FILE} is not in {PAIRS_FILE}",
                         str(tasks_path))
    return pairs, tasks.iloc[np.argsort(order.to_numpy(dtype=np.int64), kind="stable")].reset_index(drop=True)


def read_pool_manifest(folder: str | os.PathLike, *, missing_ok: bool = False) -> dict[str, Any]:
    """The manifest (``pool.json``) of the pool folder ``folder``, a JSON object.

    A folder without one is refused (with ``missing_ok``: an empty manifest), and so is a manifest that is not
    UTF-8 JSON or not an object, naming the file (and the line of a JSON error).
    """
    path = Path(folder) / MANIFEST_FILE
    if not path.exists():
        if missing_ok:
            return {}
        raise InputError(f"no such file: not a pool folder (evalset pool writes a {MANIFEST_FILE} in each)", str(path))
    check_file(str(path))
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", str(path), exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc}", str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", str(path)) from None
    if not isinstance(manifest, dict):
        raise InputError(f"expected a JSON object (the pool's manifest), found {quoted(manifest)}", str(path))
    return manifest


PoolContent = pd.DataFrame | list[str]
"""A pool file's content to write: a table, or lines kept as they are (a part of another pool's file)."""


def write_pool_folder(folder: str | os.PathLike, manifest: Mapping[str, Any], *, pairs: PoolContent,
                      sources: PoolContent, tasks: PoolContent | None = None,
                      records: Mapping[str, str] | None = None, replace: bool = False) -> list[str]:
    """Write the pool folder ``folder``: ``pool.tsv`` (``pairs``), ``pool_sources.tsv`` (``sources``),
    ``tasks.jsonl`` (``tasks``, when given), ``pool.json`` (``manifest``), then ``records`` (file name -> text: a
    slice's or a sample's record). Returns the paths written, in that order.

    A table is written as the module docstring says; lines (:func:`pool_tsv_lines`, :func:`task_lines`) as they
    are. The folder is built aside and renamed into place, so it is never half-written nor mixed with an earlier
    pool's files, even by Ctrl-C; an existing non-empty ``folder`` is refused unless ``replace``.
    """
    contents: dict[str, PoolContent] = {PAIRS_FILE: pairs, SOURCES_FILE: sources}
    if tasks is not None:
        contents[TASKS_FILE] = tasks
    contents[MANIFEST_FILE] = [json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"]
    texts = {name: [text] for name, text in (records or {}).items()}
    with folder_built_aside(folder, replace=replace) as aside:
        for name, content in {**contents, **texts}.items():
            path = str(aside / name)
            if not isinstance(content, pd.DataFrame):
                Path(path).write_text("".join(content), encoding="utf-8")
            elif name == TASKS_FILE:
                _write_task_records(content, path)
            else:
                _write_tsv(content, path)
    return [os.path.join(folder, name) for name in [*contents, *texts]]


def _write_task_records(frame: pd.DataFrame, path: str) -> None:
    """Write each row of ``frame`` as one JSON object a line."""
    with open(path, "w", encoding="utf-8") as handle:
        for record in frame.to_dict(orient="records"):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def _write_tsv(frame: pd.DataFrame, path: str) -> None:
    """Write a TSV with a header, as pandas would; through Arrow's writer, which is much faster on big pools
    (loaded here: a stage that only reads a pool does not load it)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = pa.table([column.cast(pa.large_string()) if pa.types.is_dictionary(column.type) else column
                      for column in table.columns], names=table.column_names)
    try:
        with open(path, "wb") as handle:  # Arrow quotes header names even when told not to quote
            handle.write(("\t".join(table.column_names) + "\n").encode())
            pacsv.write_csv(table, handle, pacsv.WriteOptions(include_header=False, delimiter="\t",
                                                              quoting_style="none"))
    except pa.ArrowInvalid:  # an id holding a quote character: let pandas quote it
        frame.to_csv(path, sep="\t", index=False, lineterminator="\n")
