"""Readers and writers for the tables the stages hand each other: TREC runs and qrels.

All input validation lives here. A reader either returns a clean DataFrame or raises
:class:`~evalset.errors.InputError` naming the file and line; writers never leave a half-written file.

Parsing is columnar (pyarrow's CSV reader and compute kernels), never a Python loop over lines: a
10-million-line run parses in a few seconds. A file is read on a fast path that assumes one delimiter
(tab or space) throughout; a file that does not fit it (runs of spaces, mixed delimiters) or that has a bad
value is re-read line by line through pyarrow's whitespace splitter, which also gives exact line numbers
for errors.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import gzip
import hashlib
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from evalset.errors import InputError

RUN_FIELDS = ("query_id", "q0", "doc_id", "rank", "score", "tag")
QRELS_FIELDS = ("query_id", "iteration", "doc_id", "grade")
_RUN_LAYOUT = "qid Q0 docid rank score tag"
_QRELS_LAYOUT = "qid 0 docid grade"
_KNOWN_SUFFIXES = {".gz", ".bz2", ".run", ".txt", ".tsv", ".trec", ".res", ".qrels", ".results"}
_BLOCK_SIZE = 1 << 24


def run_name(path: str | os.PathLike) -> str:
    """A run's name: its file name without the usual extensions (``bm25.run.gz`` -> ``bm25``)."""
    name = Path(path).name
    while True:
        stem, suffix = os.path.splitext(name)
        if suffix.lower() in _KNOWN_SUFFIXES and stem:
            name = stem
        else:
            return name


# --------------------------------------------------------------------------------------------------- parsing
def _open_text_head(path: str) -> str:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    return line
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", path) from exc
    return ""


def _read_csv(path: str, parse: pacsv.ParseOptions, names: list[str], include: list[str]) -> pa.Table:
    return pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE),
        parse_options=parse,
        convert_options=pacsv.ConvertOptions(
            column_types={name: pa.string() for name in names},
            include_columns=include,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def _fields_fast(path: str, names: tuple[str, ...], keep: list[str]) -> pa.Table | None:
    """One-delimiter parse; None when the file does not fit it (the caller falls back)."""
    head = _open_text_head(path)
    if not head:
        return None
    delimiter = "\t" if "\t" in head else " "
    parse = pacsv.ParseOptions(
        delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False, ignore_empty_lines=True
    )
    try:
        table = _read_csv(path, parse, list(names), keep)
    except pa.ArrowInvalid:
        return None
    for name in keep:  # a stray space or tab leaves an empty or padded field: not this path's job
        column = table[name]
        if pc.any(pc.equal(pc.utf8_length(column), 0)).as_py() or pc.any(
            pc.match_substring_regex(column, r"\s")
        ).as_py():
            return None
    return table


def _fields_by_line(path: str, names: tuple[str, ...], keep: list[str], layout: str) -> pa.Table:
    """Whitespace-split parse that keeps line numbers; raises InputError on a malformed line."""
    parse = pacsv.ParseOptions(
        delimiter="\x1e", quote_char=False, double_quote=False, escape_char=False, ignore_empty_lines=False
    )
    try:
        lines = _read_csv(path, parse, ["line"], ["line"])["line"]
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            return pa.table({name: pa.array([], pa.string()) for name in keep} | {"line_no": pa.array([], pa.int64())})
        raise InputError(f"cannot parse: {exc}", path) from exc
    lines = lines.combine_chunks()
    fields = pc.utf8_split_whitespace(lines)
    counts = pc.list_value_length(fields).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero((counts != len(names)) & (counts != 0))
    if bad.size:
        row = int(bad[0])
        raise InputError(
            f"expected {len(names)} whitespace-separated fields `{layout}`, found {counts[row]}: "
            f"{lines[row].as_py()!r}",
            path,
            row + 1,
        )
    nonblank = np.flatnonzero(counts != 0)
    flat = pc.list_flatten(fields.take(pa.array(nonblank))).to_numpy(zero_copy_only=False)
    columns = {
        name: pa.array(flat[names.index(name) :: len(names)], pa.string()) for name in keep
    }
    columns["line_no"] = pa.array(nonblank + 1)
    return pa.table(columns)


def _read_fields(path: str | os.PathLike, names: tuple[str, ...], keep: list[str], layout: str,
                 fast: bool) -> pa.Table:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError("no such file", path)
    if os.path.isdir(path):
        raise InputError("is a folder, not a file", path)
    try:
        table = _fields_fast(path, names, keep) if fast else None
        return table if table is not None else _fields_by_line(path, names, keep, layout)
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", path) from exc


def _first_bad(values: pa.ChunkedArray | pa.Array, convert) -> int:
    for row, value in enumerate(values.to_pylist()):
        try:
            convert(value)
        except ValueError:
            return row
    return -1


def _as_int(text: str) -> int:
    return int(text)


def _as_finite_float(text: str) -> float:
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(text)
    return value


def _cast_column(table: pa.Table, name: str, target: pa.DataType, convert, what: str,
                 path: str, layout: str, names: tuple[str, ...], keep: list[str]) -> pa.ChunkedArray:
    """Cast a string column; on failure name the line (re-reading by line if the fast path was used)."""
    try:
        values = pc.cast(table[name], target)
        if pa.types.is_floating(target) and not pc.all(pc.is_finite(values)).as_py():
            raise pa.ArrowInvalid("non-finite")
        return values
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if "line_no" not in table.column_names:
            table = _fields_by_line(path, names, keep, layout)
        row = _first_bad(table[name], convert)
        line = int(table["line_no"][row].as_py()) if row >= 0 else None
        value = table[name][row].as_py() if row >= 0 else "?"
        raise InputError(f"{what} must be {'an integer' if target == pa.int64() else 'a finite number'}, "
                         f"found {value!r}", path, line) from None


# ------------------------------------------------------------------------------------------------------ runs
def read_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC run (``qid Q0 docid rank score tag``, whitespace separated, plain or ``.gz``).

    Returns a DataFrame with columns ``query_id`` and ``doc_id`` (categorical), ``rank`` (int64) and
    ``score`` (float64), in file order. The rank column is kept as written; ordering for evaluation is done
    by :func:`evalset.metrics.ranking.order_run` under a declared tie rule.
    """
    path = os.fspath(path)
    keep = ["query_id", "doc_id", "rank", "score"]
    table = _read_fields(path, RUN_FIELDS, keep, _RUN_LAYOUT, fast=True)
    score = _cast_column(table, "score", pa.float64(), _as_finite_float, "score", path, _RUN_LAYOUT, RUN_FIELDS,
                         keep)
    rank = _cast_column(table, "rank", pa.int64(), _as_int, "rank", path, _RUN_LAYOUT, RUN_FIELDS, keep)
    frame = pa.table({
        "query_id": pc.dictionary_encode(table["query_id"]),
        "doc_id": pc.dictionary_encode(table["doc_id"]),
        "rank": rank,
        "score": score,
    }).unify_dictionaries().combine_chunks()
    return frame.to_pandas()


def run_from_frame(frame: pd.DataFrame, source: str = "<DataFrame>") -> pd.DataFrame:
    """Validate a run given as a DataFrame (``query_id, doc_id, score[, rank]``) and normalise it.

    Without a ``rank`` column, ranks are the row order within each query (1-based).
    """
    missing = [c for c in ("query_id", "doc_id", "score") if c not in frame.columns]
    if missing:
        raise InputError(f"run is missing column(s) {', '.join(missing)}", source)
    out = pd.DataFrame({
        "query_id": frame["query_id"].astype(str).astype("category"),
        "doc_id": frame["doc_id"].astype(str).astype("category"),
    })
    score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(score))
    if bad.size:
        raise InputError(f"score must be a finite number, found {frame['score'].iloc[bad[0]]!r} (row {bad[0]})",
                         source)
    if "rank" in frame.columns:
        rank = pd.to_numeric(frame["rank"], errors="coerce")
        if rank.isna().any() or (rank != rank.round()).any():
            row = int(np.flatnonzero((rank.isna() | (rank != rank.round())).to_numpy())[0])
            raise InputError(f"rank must be an integer, found {frame['rank'].iloc[row]!r} (row {row})", source)
        out["rank"] = rank.to_numpy(dtype=np.int64)
    else:
        out["rank"] = out.groupby("query_id", observed=True).cumcount().to_numpy(dtype=np.int64) + 1
    out["score"] = score
    return out.reset_index(drop=True)


def write_run(run: pd.DataFrame, path: str | os.PathLike, tag: str = "evalset") -> None:
    """Write a run in TREC format (atomically), in the frame's row order."""
    lines = pd.DataFrame({
        "query_id": run["query_id"].astype(str),
        "q0": "Q0",
        "doc_id": run["doc_id"].astype(str),
        "rank": run["rank"] if "rank" in run else run.groupby("query_id", observed=True).cumcount() + 1,
        "score": run["score"],
        "tag": tag,
    })
    with atomic_path(path) as tmp:
        lines.to_csv(tmp, sep=" ", header=False, index=False, float_format="%.17g",
                     compression="gzip" if str(path).endswith(".gz") else None)


# ----------------------------------------------------------------------------------------------------- qrels
def read_qrels(path: str | os.PathLike) -> pd.DataFrame:
    """Read TREC qrels (``qid iter docid grade``, whitespace separated, plain or ``.gz``).

    Returns ``query_id, doc_id, grade`` (strings and int64), sorted by query and document. A negative grade
    keeps trec_eval's meaning: the document was pooled but not judged (never relevant, not counted as
    judged). A non-integer grade, a malformed line, or one pair given two different grades is refused with the
    line(s); an exact repeat of a line is collapsed and counted in ``frame.attrs["collapsed_duplicates"]``.
    """
    path = os.fspath(path)
    keep = ["query_id", "doc_id", "grade"]
    table = _read_fields(path, QRELS_FIELDS, keep, _QRELS_LAYOUT, fast=False)
    grade = _cast_column(table, "grade", pa.int64(), _as_int, "grade", path, _QRELS_LAYOUT, QRELS_FIELDS, keep)
    frame = pd.DataFrame({
        "query_id": table["query_id"].to_numpy(),
        "doc_id": table["doc_id"].to_numpy(),
        "grade": grade.to_numpy(),
        "line_no": table["line_no"].to_numpy(),
    })
    return _check_qrels(frame, path)


def _check_qrels(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    frame = frame.astype({"query_id": str, "doc_id": str})
    repeated = frame.duplicated(["query_id", "doc_id"], keep=False)
    collapsed = 0
    if repeated.any():
        group = frame[repeated]
        conflicting = group.groupby(["query_id", "doc_id"], sort=False)["grade"].transform("nunique") > 1
        if conflicting.any():
            first = group[conflicting].iloc[0]
            same = group[(group["query_id"] == first["query_id"]) & (group["doc_id"] == first["doc_id"])]
            where = ", ".join(f"line {n}: grade {g}" for n, g in zip(same["line_no"], same["grade"], strict=True))
            raise InputError(
                f"query {first['query_id']} document {first['doc_id']} has two different grades ({where})",
                source, int(same["line_no"].iloc[1]),
            )
        collapsed = int(frame.duplicated(["query_id", "doc_id"]).sum())
        frame = frame.drop_duplicates(["query_id", "doc_id"])
    frame = frame.drop(columns="line_no").sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)
    frame.attrs["collapsed_duplicates"] = collapsed
    return frame


def qrels_from_frame(frame: pd.DataFrame, source: str = "<DataFrame>") -> pd.DataFrame:
    """Validate qrels given as a DataFrame (``query_id, doc_id, grade``) like :func:`read_qrels` does.

    Rows are numbered from 1 in error messages.
    """
    missing = [c for c in ("query_id", "doc_id", "grade") if c not in frame.columns]
    if missing:
        raise InputError(f"qrels are missing column(s) {', '.join(missing)}", source)
    grade = pd.to_numeric(frame["grade"], errors="coerce")
    bad = grade.isna() | (grade != grade.round())
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"grade must be an integer, found {frame['grade'].iloc[row]!r}", source, row + 1)
    out = pd.DataFrame({
        "query_id": frame["query_id"].to_numpy(),
        "doc_id": frame["doc_id"].to_numpy(),
        "grade": grade.to_numpy(dtype=np.int64),
        "line_no": np.arange(1, len(frame) + 1),
    })
    return _check_qrels(out, source)


def write_qrels(qrels: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write qrels as ``qid 0 docid grade`` lines (atomically), sorted by query and document."""
    ordered = qrels.sort_values(["query_id", "doc_id"], kind="stable")
    lines = pd.DataFrame({
        "query_id": ordered["query_id"].astype(str),
        "iteration": "0",
        "doc_id": ordered["doc_id"].astype(str),
        "grade": ordered["grade"].astype(np.int64),
    })
    with atomic_path(path) as tmp:
        lines.to_csv(tmp, sep=" ", header=False, index=False,
                     compression="gzip" if str(path).endswith(".gz") else None)


# ----------------------------------------------------------------------------------------------------- files
@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# --- query logs -----------------------------------------------------------------------------------------
# A query log is read into one standard shape, whatever its format: the columns ``query`` (text, "" when
# empty), and when present ``count`` (int64, pre-aggregated logs), ``timestamp`` (text, parsed by the
# sampler), ``user_id`` and ``source`` (text; ``source`` is the log's own stratum column, e.g. agent/human).
LOG_FIELDS = ("query", "count", "timestamp", "user_id", "source")
LOG_FORMATS = ("tsv", "csv", "jsonl", "parquet")
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
        if fmt not in LOG_FORMATS:
            raise InputError(f"unknown log format {fmt!r}; expected one of {', '.join(LOG_FORMATS)}", None)
        return fmt
    name = os.fspath(path).lower()
    name = name.removesuffix(".gz")
    found = _LOG_SUFFIXES.get(os.path.splitext(name)[1])
    if found is None:
        raise InputError(f"cannot tell the format from the file name; give one of {', '.join(LOG_FORMATS)}",
                         os.fspath(path))
    return found


def _check_log_file(path: str) -> None:
    if not os.path.exists(path):
        raise InputError("no such file", path)
    if os.path.isdir(path):
        raise InputError("is a folder, not a file", path)
    if not os.access(path, os.R_OK):
        raise InputError("cannot read: permission denied", path)


def _delimited_header(path: str, fmt: str) -> list[str]:
    """The first line's fields (column names, or just their number for a headerless file)."""
    head = _open_text_head(path).rstrip("\r\n")
    if fmt == "tsv":
        return head.split("\t")
    return next(csv.reader([head]), [])


def _resolve_columns(names: list[str], columns: LogColumns, path: str, header: bool) -> dict[str, int]:
    """Standard field -> 0-based column index, or InputError naming what is missing."""
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
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as handle:
        lines = csv.reader(handle) if fmt == "csv" else (line.rstrip("\r\n").split("\t") for line in handle)
        for number, fields in enumerate(lines, start=1):
            if fields and fields != [""] and len(fields) != width:
                return number, len(fields)
    return 0, width


def _read_delimited(path: str, fmt: str, columns: LogColumns, header: bool) -> pa.Table:
    names = _delimited_header(path, fmt)
    resolved = _resolve_columns(names, columns, path, header)
    generated = [f"c{i}" for i in range(len(names))]
    parse = pacsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",",
                               quote_char=False if fmt == "tsv" else '"', double_quote=fmt == "csv")
    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=generated, skip_rows=1 if header else 0,
                                           block_size=_BLOCK_SIZE),
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
        line, found = _first_malformed_line(path, fmt, len(names))
        if line:
            raise InputError(f"expected {len(names)} fields (as on line 1), found {found}", path,
                             line) from None
        raise InputError(f"cannot parse: {str(exc).splitlines()[0][:200]}", path) from None
    return pa.table({field: table[generated[i]] for field, i in resolved.items()})


def _read_structured(path: str, fmt: str, columns: LogColumns) -> pa.Table:
    try:
        table = pajson.read_json(path) if fmt == "jsonl" else pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"cannot parse as {fmt}: {str(exc).splitlines()[0][:200]}", path) from None
    resolved = _resolve_columns(table.column_names, columns, path, header=True)
    out = {}
    for field, index in resolved.items():
        values = table.column(index)
        if field != "count":
            values = pc.cast(values, pa.string()) if values.type != pa.string() else values
            values = pc.fill_null(values, "")
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
    _check_log_file(path)
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


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def query_log_sql(path: str | os.PathLike, columns: LogColumns | None = None, *, fmt: str | None = None,
                  header: bool = True) -> str:
    """A DuckDB ``SELECT`` that reads one query log into the standard columns, for out-of-core counting.

    The log is checked here as far as it can be without reading it all (the file, its format, the
    columns); text columns come out as VARCHAR with ``""`` for empty values, ``count`` as BIGINT.
    """
    path = os.fspath(path)
    columns = columns or LogColumns()
    _check_log_file(path)
    fmt = log_format(path, fmt)
    if fmt in ("tsv", "csv"):
        names = _delimited_header(path, fmt)
        resolved = _resolve_columns(names, columns, path, header)
        typed = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(names)))
        quoting = "quote = '', escape = ''" if fmt == "tsv" else "quote = '\"', escape = '\"'"
        source = (f"read_csv({_sql_text(path)}, delim = {_sql_text(chr(9) if fmt == 'tsv' else ',')}, "
                  f"{quoting}, header = {str(header).lower()}, columns = {{{typed}}}, auto_detect = false)")
        picked = {field: f"c{index}" for field, index in resolved.items()}
    else:
        reader = "read_json" if fmt == "jsonl" else "read_parquet"
        options = ", format = 'newline_delimited'" if fmt == "jsonl" else ""
        names = _structured_names(path, fmt)
        resolved = _resolve_columns(names, columns, path, header=True)
        source = f"{reader}({_sql_text(path)}{options})"
        picked = {field: '"' + names[index].replace('"', '""') + '"' for field, index in resolved.items()}
    selected = [
        f"CAST({expr} AS BIGINT) AS count" if field == "count"
        else f"COALESCE(CAST({expr} AS VARCHAR), '') AS {field}"
        for field, expr in picked.items()
    ]
    return f"SELECT {', '.join(selected)} FROM {source}"


def _structured_names(path: str, fmt: str) -> list[str]:
    if fmt == "parquet":
        try:
            return list(pq.read_schema(path).names)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"cannot parse as parquet: {str(exc).splitlines()[0][:200]}", path) from None
    try:
        return pajson.read_json(io.BytesIO(_open_text_head(path).encode("utf-8"))).column_names
    except pa.ArrowInvalid as exc:
        raise InputError(f"cannot parse as jsonl: {str(exc).splitlines()[0][:200]}", path, 1) from None


def read_query_list(path: str | os.PathLike) -> list[str]:
    """Queries listed in a file: the ``query`` column of a TSV with a header (e.g. an earlier
    ``queries.tsv``), otherwise one query per line. Blank lines and lines starting with ``#`` are skipped."""
    path = os.fspath(path)
    _check_log_file(path)
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            lines = [line.rstrip("\r\n") for line in handle]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path) from None
    if lines and "\t" in lines[0] and "query" in lines[0].split("\t"):
        position = lines[0].split("\t").index("query")
        return [fields[position] for line in lines[1:] if len(fields := line.split("\t")) > position]
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


QUERIES_FIELDS = ("query_id", "query", "stratum", "frequency", "stratum_share", "weight", "split")


def write_queries(queries: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``queries.tsv`` (atomically): the columns of ``QUERIES_FIELDS``, tab separated, no quoting.

    A query never contains a tab or a line break (the sampler turns them into spaces), so the file needs no
    quoting; read it with :func:`read_queries` or ``pandas.read_csv(sep="\\t", quoting=csv.QUOTE_NONE)``.
    """
    with atomic_path(path) as tmp:
        queries.loc[:, list(QUERIES_FIELDS)].to_csv(tmp, sep="\t", index=False, quoting=csv.QUOTE_NONE,
                                                    lineterminator="\n", escapechar=None)


def read_queries(path: str | os.PathLike) -> pd.DataFrame:
    """Read a ``queries.tsv`` written by :func:`write_queries` (or by hand with the same columns)."""
    path = os.fspath(path)
    _check_log_file(path)
    frame = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, dtype={"query_id": str, "query": str},
                        keep_default_na=False)
    missing = [c for c in ("query_id", "query") if c not in frame.columns]
    if missing:
        raise InputError(f"queries file is missing column(s) {', '.join(missing)}", path, 1)
    return frame


def sha256_file(path: str | os.PathLike) -> str:
    """The sha256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 22):
                digest.update(chunk)
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", os.fspath(path)) from exc
    return digest.hexdigest()
