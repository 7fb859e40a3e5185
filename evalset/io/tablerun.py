"""Runs with named columns: a TSV or CSV file whose first line is a header, or a Parquet file, told from a TREC run
by its content (:func:`evalset.io.files.content_kind`: a header naming the columns; Parquet's magic bytes ``PAR1``,
whatever the file's name).

Conventions
-----------
- The columns are found by name, case-insensitively (:data:`evalset.io.files.RUN_COLUMNS`): a query id
  (``query_id`` or ``qid``), a document id (``doc_id``, ``docno`` or ``docid``), ``score``, and optionally
  ``rank``; other columns are ignored. This is the shape ir_measures' and pandas' ``to_csv(index=False)`` /
  ``to_parquet`` write. A header without a document id or a score column is refused, naming the columns found.
- A text table is tab-separated when its header holds a tab, else comma-separated; fields may be quoted as pandas
  quotes them; blank lines are skipped. Ids are strings as written (a Parquet file's numbers are written out).
- Validation is :func:`evalset.io.runframe.run_from_frame`'s (finite scores, integer ranks; no rank: the row order
  within each query): a bad value is named by its line in the file (the header is line 1), or in a Parquet file
  by its row (0-based). An empty or missing id is refused the same way.
- Rows come out in file order, like :func:`evalset.io.trec.read_run`'s; the whole file is read (a table run is
  never streamed: :func:`evalset.io.runstream.streams`).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from evalset.errors import InputError
from evalset.io.files import BLOCK_SIZE, RUN_COLUMNS, first_line, open_file, utf8_error
from evalset.io.runframe import run_from_frame


def read_table_run(path: str | os.PathLike) -> pd.DataFrame:
    """The run in the TSV, CSV or Parquet file at ``path`` as ``query_id, doc_id, rank, score`` (module
    docstring)."""
    path = os.fspath(path)
    with open_file(path, "rb") as handle:
        parquet = handle.read(4) == b"PAR1"
    frame, line_of = _parquet(path) if parquet else _text(path)
    if len(frame) == 0:
        raise InputError("no run lines: the file holds a header and no row", path)
    for column in ("query_id", "doc_id"):
        empty = frame[column].isna() | (frame[column].astype(str).str.strip() == "")
        if empty.any():
            row = int(np.flatnonzero(empty.to_numpy())[0])
            raise InputError(f"empty {column}" + ("" if line_of else f" (row {row})"), path,
                             line_of(row) if line_of else None)
    return run_from_frame(frame, path, line_of)


def _columns(names: list[str], path: str, line: int | None) -> dict[str, int]:
    """Which of ``names`` (as written) holds each run column, by its place; refused when one is missing or named
    twice."""
    lowered = [name.strip().lower() for name in names]
    found: dict[str, int] = {}
    for column, spellings in RUN_COLUMNS.items():
        places = [place for place, name in enumerate(lowered) if name in spellings]
        if len(places) > 1:
            raise InputError(f"two {column} columns in the run's header: {', '.join(names[p] for p in places)}",
                             path, line)
        if places:
            found[column] = places[0]
    missing = [column for column in ("query_id", "doc_id", "score") if column not in found]
    if missing:
        raise InputError(f"a run's header names a query id (query_id or qid), a document id (doc_id, docno or docid) "
                         f"and a score column; no {' or '.join(missing)} column among the columns found: "
                         f"{', '.join(names)}", path, line)
    return found


def _parquet(path: str) -> tuple[pd.DataFrame, None]:
    try:
        names = pq.read_schema(path).names
        found = _columns(names, path, None)
        table = pq.read_table(path, columns=[names[place] for place in found.values()])
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read the Parquet file: {exc}", path) from None
    return pd.DataFrame({column: table.column(names[place]).to_pandas() for column, place in found.items()}), None


def _text(path: str) -> tuple[pd.DataFrame, Callable[[int], int]]:
    head = first_line(path)
    delimiter = "\t" if "\t" in head else ","
    names = next(csv.reader([head.rstrip("\r\n")], delimiter=delimiter))
    header_line = _header_line(path)
    found = _columns(names, path, header_line)
    columns = {column: names[place] for column, place in found.items()}
    parse = pacsv.ParseOptions(delimiter=delimiter)
    numbers = {columns["score"]: pa.float64()} | ({columns["rank"]: pa.int64()} if "rank" in columns else {})
    for types in (numbers, {}):  # numbers parsed by the reader; a bad one: read as text, named by its line
        convert = pacsv.ConvertOptions(
            column_types=dict.fromkeys(columns.values(), pa.large_string()) | types,
            include_columns=list(columns.values()), strings_can_be_null=False, quoted_strings_can_be_null=False)
        try:
            table = pacsv.read_csv(path, read_options=pacsv.ReadOptions(block_size=BLOCK_SIZE),
                                   parse_options=parse, convert_options=convert)
            break
        except pa.ArrowInvalid as exc:
            if not types or "conversion error" not in str(exc).lower():
                raise utf8_error(path) or _bad_row(path, delimiter, len(names), exc) from None
    frame = pd.DataFrame({column: table[name].to_pandas() for column, name in columns.items()})
    return frame, _line_of(path, header_line)


def _header_line(path: str) -> int:
    """The header's line number: the first non-blank line."""
    with open_file(path, "rt", encoding="utf-8-sig", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                return number
    return 1


def _line_of(path: str, header_line: int) -> Callable[[int], int]:
    """The line number of a data row (0-based), for an error message: the row-th non-blank line after the header
    (a quoted field holding a newline is not counted as one)."""

    def line_of(row: int) -> int:
        with open_file(path, "rt", encoding="utf-8-sig", errors="replace") as handle:
            seen = -1
            for number, line in enumerate(handle, 1):
                if number > header_line and line.strip():
                    seen += 1
                    if seen == row:
                        return number
        return header_line + row + 1  # pragma: no cover - the row was read from the file

    return line_of


def _bad_row(path: str, delimiter: str, width: int, exc: Exception) -> InputError:
    """The first line whose field count is not the header's, or the reader's own message."""
    with open_file(path, "rt", encoding="utf-8-sig", errors="replace", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        for row in reader:
            if any(field.strip() for field in row) and len(row) != width:
                return InputError(f"expected {width} {'tab' if delimiter == chr(9) else 'comma'}-separated fields as "
                                  f"in the header, found {len(row)}: {delimiter.join(row)[:80]!r}", path,
                                  reader.line_num)
    return InputError(f"cannot parse: {exc}", path)
