"""Query logs (TSV, CSV, JSON Lines, Parquet; plain or ``.gz``) read into one standard shape, in memory
(pyarrow) or as a DuckDB ``SELECT`` for out-of-core counting.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson

from evalset.contract import LOG_FORMATS
from evalset.errors import InputError
from evalset.io.files import BLOCK_SIZE, check_file, first_line, open_file, utf8_error
from evalset.params import check

# --- query logs -----------------------------------------------------------------------------------------
# A query log is read into one standard shape, whatever its format: the columns ``query`` (text, "" when
# empty), and when present ``count`` (int64, pre-aggregated logs), ``timestamp`` (text, parsed by the
# sampler), ``user_id`` and ``source`` (text; ``source`` is the log's own stratum column, e.g. agent/human).
LOG_FIELDS = ("query", "count", "timestamp", "user_id", "source")


_LOG_SUFFIXES = {
    ".tsv": "tsv", ".log": "tsv", ".txt": "tsv", ".csv": "csv",
    ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet",
}


@dataclasses.dataclass(frozen=True)
class LogColumns:
    """Which column of a query log holds what.

    Each field is a column name, or a 1-based column position written as digits (``"3"``); a headerless
    TSV/CSV takes positions only. ``None`` means the log has no such column. ``query`` is required.
    """

    query: str = "query"
    count: str | None = None
    timestamp: str | None = None
    user_id: str | None = None
    source: str | None = None

    def chosen(self) -> dict[str, str]:
        """Standard field name -> column spec, for the fields the log has."""
        return {field: spec for field in LOG_FIELDS if (spec := getattr(self, field)) is not None}


def log_format(path: str | os.PathLike, fmt: str | None = None) -> str:
    """A log's format: ``fmt`` if given, else from the suffix (``.gz`` skipped, ``.log`` is TSV)."""
    if fmt is not None:
        return check("the log format", fmt, LOG_FORMATS)
    name = os.fspath(path).lower()
    name = name.removesuffix(".gz")
    found = _LOG_SUFFIXES.get(os.path.splitext(name)[1])
    if found is None:
        raise InputError(f"cannot tell the format from the file name; give one of {', '.join(LOG_FORMATS)}",
                         os.fspath(path))
    return found


def _delimited_header(path: str, fmt: str) -> list[str]:
    """The first line's fields (column names, or just their number for a headerless file)."""
    head = first_line(path).rstrip("\r\n")
    if fmt == "tsv":
        return head.split("\t")
    return next(csv.reader([head]), [])


def resolve_log_columns(names: list[str], columns: LogColumns, path: str, header: bool) -> dict[str, int]:
    """Standard field -> 0-based column index, or InputError naming what is missing."""
    if not any(names):
        raise InputError("the log is empty: no header, no line", path)
    resolved = {}
    for field, spec in columns.chosen().items():
        if spec.isdigit():
            position = int(spec)
            if not 1 <= position <= len(names):
                raise InputError(f"{field} column {position} does not exist: the file has {len(names)} "
                                 f"column(s)", path, 1)
            resolved[field] = position - 1
        elif not header:
            raise InputError(f"a headerless file takes column positions (1-based), not names: "
                             f"{field} column {spec!r}", path)
        elif spec in names:
            resolved[field] = names.index(spec)
        else:
            raise InputError(f"no {field} column {spec!r}; the columns are {', '.join(map(repr, names))}",
                             path, 1)
    if "query" not in resolved:
        raise InputError("a query column is required", path)
    return resolved


def _first_malformed_line(path: str, fmt: str, width: int) -> tuple[int, int]:
    """(line number, field count) of the first line without ``width`` fields; only called after a failure."""
    with open_file(path, "rt", encoding="utf-8", errors="replace", newline="") as handle:
        lines = csv.reader(handle) if fmt == "csv" else (line.rstrip("\r\n").split("\t") for line in handle)
        for number, fields in enumerate(lines, start=1):
            if fields and fields != [""] and len(fields) != width:
                return number, len(fields)
    return 0, width


def _read_delimited(path: str, fmt: str, columns: LogColumns, header: bool) -> pa.Table:
    names = _delimited_header(path, fmt)
    positions = [f"-l {field}={spec}" for field, spec in columns.chosen().items() if spec.isdigit()]
    if header and positions:  # a headerless file read with a header loses its first line as the columns' names
        raise InputError(f"{', '.join(positions)} is a column position, and the log is read with a header line "
                         f"(its first line would be the names: {', '.join(map(repr, names[:4]))}): give -l header=no "
                         "for a file without one, or name the column", path, 1)
    resolved = resolve_log_columns(names, columns, path, header)
    generated = [f"c{i}" for i in range(len(names))]
    parse = pacsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",",
                               quote_char=False if fmt == "tsv" else '"', double_quote=fmt == "csv")
    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=generated, skip_rows=1 if header else 0,
                                           block_size=BLOCK_SIZE),
            parse_options=parse,
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in generated},
                include_columns=[generated[i] for i in resolved.values()],
                strings_can_be_null=False, quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            return pa.table({field: pa.array([], pa.string()) for field in resolved})
        if "UTF8" in str(exc):
            raise utf8_error(path) or InputError(f"cannot parse: {str(exc).splitlines()[0][:200]}", path) from None
        line, found = _first_malformed_line(path, fmt, len(names))
        if line:
            raise InputError(f"expected {len(names)} fields (as on line 1), found {found}", path,
                             line) from None
        raise InputError(f"cannot parse: {str(exc).splitlines()[0][:200]}", path) from None
    return pa.table({field: table[generated[i]] for field, i in resolved.items()})


def _first_bad_json_line(path: str) -> InputError | None:
    """The InputError naming the first line of a JSON Lines file that is not a JSON object (error path only)."""
    import json

    with open_file(path, "rt", encoding="utf-8-sig", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                return InputError(f"not valid JSON: {exc.msg} (column {exc.colno}): {line.strip()[:80]!r}", path,
                                  number)
            if not isinstance(record, dict):
                return InputError(f"not a JSON object: {line.strip()[:80]!r}", path, number)
    return None


def _read_structured(path: str, fmt: str, columns: LogColumns) -> pa.Table:
    import pyarrow.parquet as pq  # 0.08 s to import: only for Parquet logs

    try:
        table = pajson.read_json(path) if fmt == "jsonl" else pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        if fmt == "jsonl":  # pyarrow's "row N" counts from 0 within a block: name the line ourselves
            found = utf8_error(path) or _first_bad_json_line(path)
            if found is not None:
                raise found from None
        raise InputError(f"cannot parse as {fmt}: {str(exc).splitlines()[0][:200]}", path) from None
    resolved = resolve_log_columns(table.column_names, columns, path, header=True)
    out = {}
    for field, index in resolved.items():
        values = table.column(index)
        if field != "count":
            values = pc.cast(values, pa.string()) if values.type != pa.string() else values
            values = pc.fill_null(values, "")
            try:
                values.validate(full=True)  # pyarrow's JSON reader lets invalid UTF-8 through
            except pa.ArrowInvalid:
                raise utf8_error(path) or InputError("not UTF-8 text", path) from None
        out[field] = values
    return pa.table(out)


def _log_counts(table: pa.Table, path: str, header: bool) -> pa.Table:
    """Cast a ``count`` column to int64, refusing a value that is not a non-negative integer."""
    if "count" not in table.column_names:
        return table
    raw = table["count"]
    text = pc.cast(raw, pa.string()) if raw.type != pa.string() else raw
    as_number = pd.to_numeric(pd.Series(text.to_numpy(zero_copy_only=False)), errors="coerce")
    bad = as_number.isna() | (as_number < 0) | (as_number != as_number.round())
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"count must be a non-negative integer, found {text[row].as_py()!r}", path,
                         row + 1 + int(header))
    return table.set_column(table.column_names.index("count"), "count",
                            pa.array(as_number.to_numpy(dtype=np.int64)))


def read_query_log_table(path: str | os.PathLike, columns: LogColumns | None = None, *,
                         fmt: str | None = None, header: bool = True) -> pa.Table:
    """Read one query log into the standard columns (see ``LOG_FIELDS``) as a pyarrow Table.

    Parameters
    ----------
    path : TSV, CSV, JSON Lines or Parquet file, plain or ``.gz``. TSV is read without quoting (a query may
        contain ``"``); CSV with standard double quotes.
    columns : where the fields are; default a ``query`` column only.
    fmt : ``tsv``, ``csv``, ``jsonl`` or ``parquet``; default from the file name.
    header : whether a TSV/CSV file starts with a header line (ignored for JSONL/Parquet).

    Empty and missing text values are read as ``""``. A missing column, a malformed line, or a count that
    is not a non-negative integer raises :class:`InputError` naming the file (and the line when known).
    """
    path = os.fspath(path)
    columns = columns or LogColumns()
    check_file(path)
    fmt = log_format(path, fmt)
    try:
        if fmt in ("tsv", "csv"):
            table = _read_delimited(path, fmt, columns, header)
        else:
            table = _read_structured(path, fmt, columns)
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc.reason}", path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", path) from exc
    return _log_counts(table, path, header and fmt in ("tsv", "csv"))


def read_query_log(path: str | os.PathLike, columns: LogColumns | None = None, *, fmt: str | None = None,
                   header: bool = True) -> pd.DataFrame:
    """Read one query log into a DataFrame with the standard columns; see :func:`read_query_log_table`."""
    return read_query_log_table(path, columns, fmt=fmt, header=header).to_pandas()


def sql_string(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def query_log_sql(path: str | os.PathLike, columns: LogColumns | None = None, *, fmt: str | None = None,
                  header: bool = True) -> str:
    """A DuckDB ``SELECT`` that reads one query log into the standard columns, for out-of-core counting.

    The log is checked here as far as it can be without reading it all (the file, its format, the
    columns); text columns come out as VARCHAR with ``""`` for empty values, ``count`` as BIGINT.
    """
    path = os.fspath(path)
    columns = columns or LogColumns()
    check_file(path)
    fmt = log_format(path, fmt)
    if fmt in ("tsv", "csv"):
        names = _delimited_header(path, fmt)
        resolved = resolve_log_columns(names, columns, path, header)
        typed = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(names)))
        quoting = "quote = '', escape = ''" if fmt == "tsv" else "quote = '\"', escape = '\"'"
        source = (f"read_csv({sql_string(path)}, delim = {sql_string(chr(9) if fmt == 'tsv' else ',')}, "
                  f"{quoting}, header = {str(header).lower()}, columns = {{{typed}}}, auto_detect = false)")
        picked = {field: f"c{index}" for field, index in resolved.items()}
    else:
        reader = "read_json" if fmt == "jsonl" else "read_parquet"
        options = ", format = 'newline_delimited'" if fmt == "jsonl" else ""
        names = _structured_names(path, fmt)
        resolved = resolve_log_columns(names, columns, path, header=True)
        source = f"{reader}({sql_string(path)}{options})"
        picked = {field: '"' + names[index].replace('"', '""') + '"' for field, index in resolved.items()}
    return f"SELECT {', '.join(standard_columns(picked))} FROM {source}"


def standard_columns(picked: dict[str, str], text_type: str = "VARCHAR") -> list[str]:
    """SQL select expressions of the standard columns from ``picked`` (field -> quoted source column): text as
    ``text_type`` with ``""`` for missing values, ``count`` as BIGINT. DuckDB's and Spark's reader share them."""
    return [f"CAST({expr} AS BIGINT) AS count" if field == "count"
            else f"COALESCE(CAST({expr} AS {text_type}), '') AS {field}" for field, expr in picked.items()]


def _structured_names(path: str, fmt: str) -> list[str]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"cannot parse as parquet: {str(exc).splitlines()[0][:200]}", path) from None
    try:
        return pajson.read_json(io.BytesIO(first_line(path).encode("utf-8"))).column_names
    except pa.ArrowInvalid as exc:
        raise InputError(f"cannot parse as jsonl: {str(exc).splitlines()[0][:200]}", path, 1) from None


def log_text_bytes(path: str | os.PathLike) -> int:
    """A log file's size, uncompressed for a ``.gz`` file: the gzip trailer holds it modulo 4 GiB, so never less
    than the compressed size is taken."""
    size = os.path.getsize(path)
    if not os.fspath(path).lower().endswith(".gz") or size < 18:  # 18: the smallest gzip file
        return size
    with open(path, "rb") as handle:
        handle.seek(-4, os.SEEK_END)
        return max(size, int.from_bytes(handle.read(4), "little"))
