"""TREC runs (``qid Q0 docid rank score tag``) and qrels (``qid 0 docid grade``), and folders of runs.

Parsing is columnar (pyarrow's CSV reader and compute kernels), never a Python loop over lines: a
10-million-line run parses in a few seconds. A file is read on a fast path that assumes one delimiter
(tab or space) throughout; a file that does not fit it (runs of spaces, mixed delimiters) or that has a bad
value is re-read line by line through pyarrow's whitespace splitter, which also gives exact line numbers
for errors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

import evalset.io.files as io_files
from evalset.errors import InputError, quoted
from evalset.io.files import TABLE_KINDS, atomic_path, check_file, file_contains, first_line, utf8_error
from evalset.io.irds import irds_qrels, is_irds
from evalset.io.jsonrun import read_json_run
from evalset.io.runframe import plain_value
from evalset.io.runtext import delimiters, parse_options, read_csv
from evalset.io.tablerun import read_table_run
from evalset.io.trecfields import (
    BEIR_QRELS_LAYOUT,
    COMMENT_LINES,
    QRELS_LAYOUT,
    RUN_LAYOUT,
    Layout,
    comment_lines,
    has_comment,
    split_lines,
)
from evalset.speed.keys import query_codes, repeated_pairs
from evalset.speed.memory import release_unused
from evalset.speed.strings import length_range

_KNOWN_SUFFIXES = {".gz", ".bz2", ".run", ".txt", ".tsv", ".trec", ".res", ".qrels", ".results", ".json", ".csv",
                   ".parquet", ".pq"}


def run_name(path: str | os.PathLike) -> str:
    """A run's name: its file name without the usual extensions (``bm25.run.gz`` -> ``bm25``)."""
    name = Path(path).name
    while True:
        stem, suffix = os.path.splitext(name)
        if suffix.lower() in _KNOWN_SUFFIXES and stem:
            name = stem
        else:
            return name


PARSE_BLOCK_BYTES = 1 << 20
"""The text arrow's CSV reader parses at a time, a block per task on every core (1 MiB): 16 MiB blocks held 150 MiB
more at the peak of reading 10M judgments, in the same time (2026-12-02). A file with a longer line is read again
in larger blocks (:func:`evalset.io.runtext.read_csv`)."""


def _read_csv(path: str, parse: pacsv.ParseOptions, names: list[str], include: list[str],
              numbers: dict[str, pa.DataType] | None = None, skip_rows: int = 0) -> pa.Table:
    return read_csv(
        path,
        pacsv.ReadOptions(column_names=names, block_size=PARSE_BLOCK_BYTES, skip_rows=skip_rows),
        parse_options=parse,
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.large_string()) | (numbers or {}),
            include_columns=include,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],  # a number spelled NA or null is not a number: the line-by-line parse names its line
        ),
        # the C library's allocator: what a whole file's parse frees goes back to the system (arrow's keeps about
        # 90 MiB of 10M judgments' parse in pages half used)
        memory_pool=pa.system_memory_pool(),
    )


def _fields_fast(path: str, layout: Layout, numbers: dict[str, pa.DataType]) -> pa.Table | None:
    """One-delimiter parse, numbers parsed by the reader; None when the file does not fit (the caller falls
    back to the line-by-line parse, which also names a bad line)."""
    head = first_line(path, comments=True)
    if not head:
        return None
    delimiter, other = delimiters(head)
    try:
        table = _read_csv(path, parse_options(delimiter, True), list(layout.fields),
                          list(layout.keep), numbers, skip_rows=1 if layout.header else 0)
    except pa.ArrowInvalid:
        return None
    # A stray space or tab leaves an empty or padded id: not this path's job (numbers are checked by casting).
    other_in_file = file_contains(path, other.encode())
    for name in ("qid", "docid"):
        column = table[name]
        if length_range(column)[0] == 0:
            return None
        if other_in_file is not False and pc.any(pc.match_substring(column, other)).as_py():
            return None
    if layout.shifted_marker and pc.any(pc.equal(table["docid"], layout.shifted_marker)).as_py():
        return None  # a shifted line: the line-by-line parse names it
    if file_contains(path, b"#") is not False and has_comment(table["qid"]):
        return None  # a comment line: the line-by-line parse skips and counts it
    return table


def _fields_by_line(path: str, layout: Layout) -> pa.Table:
    """Whitespace-split parse that keeps line numbers (``line_no``); raises InputError on a malformed line."""
    try:
        lines = _read_csv(path, parse_options("\x1e", False), ["line"], ["line"],
                          skip_rows=1 if layout.header else 0)["line"]
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            empty = {name: pa.array([], pa.string()) for name in layout.keep}
            return pa.table(empty | {"line_no": pa.array([], pa.int64())})
        raise utf8_error(path) or InputError(f"cannot parse: {exc}", path) from exc
    return split_lines(lines.combine_chunks(), layout, path, 2 if layout.header else 1)


def _read_fields(path: str, layout: Layout, numbers: dict[str, pa.DataType]) -> pa.Table:
    check_file(path)
    try:
        table = _fields_fast(path, layout, numbers)
        return table if table is not None else _fields_by_line(path, layout)
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", path) from exc


_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
# Python's int() and float() also take "1_000", " 1" and "١", which arrow's cast (and trec_eval) do not


def _as_integer(text: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise ValueError(text)
    return int(text)


def _as_finite_float(text: str) -> float:
    value = float(text) if _DECIMAL.fullmatch(text) else float("nan")
    if not np.isfinite(value):
        raise ValueError(text)
    return value


def _cast(values: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    """``values`` as numbers of ``target``: an integer may carry a ``+`` sign (C's ``atol`` reads it, arrow's cast
    does not); a float must be finite."""
    try:
        cast = pc.cast(values, target)
    except pa.ArrowInvalid:
        if not pa.types.is_integer(target):
            raise
        cast = pc.cast(pc.replace_substring_regex(values, r"^\+", ""), target)
    if pa.types.is_floating(target) and not pc.all(pc.is_finite(cast)).as_py():
        raise pa.ArrowInvalid("non-finite value")
    return cast


def _typed_columns(table: pa.Table, path: str, layout: Layout,
                   types: dict[str, pa.DataType]) -> tuple[pa.Table, dict[str, pa.ChunkedArray]]:
    """Cast string columns to int64/float64. A failure on the fast path re-reads by line (padded numbers
    parse there); a failure there names the first bad line."""
    try:
        return table, {name: _cast(table[name], target) for name, target in types.items()}
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if "line_no" not in table.column_names:
            return _typed_columns(_fields_by_line(path, layout), path, layout, types)
    for name, target in types.items():
        integer = pa.types.is_integer(target)
        convert = _as_integer if integer else _as_finite_float
        for row, value in enumerate(table[name].to_pylist()):
            try:
                convert(value)
            except ValueError:
                raise InputError(f"{name} must be {'an integer' if integer else 'a finite number'}, "
                                 f"found {quoted(value)}", path, int(table["line_no"][row].as_py())) from None
    raise InputError("cannot parse numbers", path)  # pragma: no cover - Python accepted what arrow refused


# ------------------------------------------------------------------------------------------------------ runs
def read_run(path: str | os.PathLike, rank: bool = True) -> pd.DataFrame:
    """Read a TREC run (``qid Q0 docid rank score tag``, whitespace separated, plain or ``.gz``; ``-`` or a pipe
    is read once, gzipped or not: :func:`evalset.io.files.local_file`), a JSON run (``{qid: {docid: score}}``:
    :mod:`evalset.io.jsonrun`) or a run with named columns (TSV, CSV, Parquet: :mod:`evalset.io.tablerun`), told
    by its content. Comment lines of a TREC run (first non-blank character ``#``, as trec_eval 10 reads them) are
    skipped and counted in ``frame.attrs["comment_lines"]``.

    Returns a DataFrame with columns ``query_id`` and ``doc_id`` (strings), ``rank`` (int64) and
    ``score`` (float64), in file order. The rank column is kept as written; ordering for evaluation is done
    by :func:`evalset.metrics.ranking.order_run` under a declared tie rule. ``rank=False``: a TREC run's rank
    field is neither parsed nor checked and the frame has no ``rank`` column (scoring reads ranks only under the tie
    rule ``run``; trec_eval never reads them).
    """
    path = io_files.local_file(os.fspath(path))
    check_file(path)
    kind = io_files.content_kind(path)
    if kind == "json" or kind in TABLE_KINDS:  # evalset.io.jsonrun, evalset.io.tablerun
        return read_json_run(path) if kind == "json" else read_table_run(path)
    numbers = {"rank": pa.int64(), "score": pa.float64()} if rank else {"score": pa.float64()}
    fields = _read_fields(path, RUN_LAYOUT, numbers)
    refuse_no_run_lines(len(fields), path)
    table, typed = _typed_columns(fields, path, RUN_LAYOUT, numbers)
    frame = pa.table({"query_id": table["qid"], "doc_id": table["docid"]} | typed).to_pandas()
    frame.attrs[COMMENT_LINES] = comment_lines(table)
    return frame


def refuse_no_run_lines(lines: int, source: str) -> None:
    """Refuse a run file with no line to score (empty, or blank lines only): every query would be missing."""
    if lines == 0:
        raise InputError(f"no run lines: the file is empty, blank or comments only (expected lines "
                         f"`{RUN_LAYOUT.text}`)", source)


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
def read_qrels(path: str | os.PathLike, *, every_line: bool = False) -> pd.DataFrame:
    """Read TREC qrels (``qid iter docid grade``, whitespace separated, plain or ``.gz``), or BEIR qrels (a
    ``query-id<TAB>corpus-id<TAB>score`` header, then ``qid docid grade`` lines), told apart by the first line;
    ``-`` or a pipe is read once (:func:`evalset.io.files.local_file`).

    Returns ``query_id, doc_id, grade`` (strings and int64) in file order. A negative grade keeps
    trec_eval's meaning: the document was pooled but not judged (never relevant, not counted as judged).
    A non-integer grade, a malformed line, or one pair given two different grades is refused with the
    line(s); an exact repeat of a line is collapsed and counted in ``frame.attrs["collapsed_duplicates"]``; comment
    lines (first non-blank character ``#``, as trec_eval 10 reads them) are skipped and counted in
    ``frame.attrs["comment_lines"]``.
    With ``every_line``, repeats are returned as read, for a caller that applies its own rule to them
    (:func:`evalset.io.annotations.settle_repeats`).

    ``irds:ID`` reads the qrels of an ir_datasets collection instead (:mod:`evalset.io.irds`).
    """
    if is_irds(path):
        given = irds_qrels(path)
        frame = qrels_from_frame(given, path)
        frame.attrs["irds"] = given.attrs["irds"]
        return frame
    path = io_files.local_file(os.fspath(path))
    numbers = {"grade": pa.int64()}
    layout = _qrels_layout(path)
    table, typed = _typed_columns(_read_fields(path, layout, numbers), path, layout, numbers)
    release_unused()  # the parse's buffers
    frame = pd.DataFrame({"query_id": table["qid"].to_pandas(), "doc_id": table["docid"].to_pandas(),
                          "grade": np.require(typed["grade"].to_numpy(), requirements="W")},
                         copy=False)  # the grades copied once (a frame the caller may change), not twice
    del typed
    table = table.drop_columns([name for name in numbers if name in table.column_names])  # the frame has them
    release_unused()  # the grades' column, copied into the frame
    refuse_no_judgments(frame["grade"].to_numpy(), path)
    frame.attrs[COMMENT_LINES] = comment_lines(table)
    if every_line:
        return frame
    if "line_no" not in table.column_names:  # the fast parse
        try:
            return _check_qrels(frame, path)
        except InputError:
            table = _fields_by_line(path, layout)  # re-read to name the lines of the conflict
    return _check_qrels(frame.assign(line_no=table["line_no"].to_numpy()), path)


def _qrels_layout(path: str) -> Layout:
    """TREC's qrels layout, or BEIR's (``query-id<TAB>corpus-id<TAB>score`` header) when the file starts so."""
    check_file(path)
    if io_files.content_kind(path) != "beir-qrels":
        return QRELS_LAYOUT
    header = tuple(first_line(path).split())
    if header != io_files.BEIR_QRELS_HEADER:
        raise InputError(f"a BEIR qrels header is `{' '.join(io_files.BEIR_QRELS_HEADER)}` (tab separated), found "
                         f"{' '.join(header)!r}", path, 1)
    return BEIR_QRELS_LAYOUT


def refuse_no_judgments(grade: np.ndarray, source: str) -> None:
    """Refuse qrels with nothing judged: no line at all, or only negative grades (pooled, not judged): every
    measure would be undefined or zero, which is never what was meant."""
    if len(grade) == 0:
        raise InputError("no judgments: the qrels are empty, blank or comments only (expected lines "
                         "`qid 0 docid grade`)", source)
    if not (grade >= 0).any():
        raise InputError(f"no judgments: all {len(grade)} qrels lines have a negative grade (pooled but not judged, "
                         "as trec_eval reads them)", source)


def _check_qrels(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Collapse exact repeats; refuse a pair with two grades (naming lines when ``line_no`` is given)."""
    repeated = repeated_pairs(query_codes(frame["query_id"])[1], frame["doc_id"])
    collapsed = int(repeated.sum())
    if collapsed:
        group = frame[frame.duplicated(["query_id", "doc_id"], keep=False)]  # rare: strings are fine here
        conflicting = group.groupby(["query_id", "doc_id"], sort=False)["grade"].transform("nunique") > 1
        if conflicting.any():
            first = group[conflicting].iloc[0]
            same = group[(group["query_id"] == first["query_id"]) & (group["doc_id"] == first["doc_id"])]
            lines = same["line_no"] if "line_no" in same else pd.Series([None] * len(same))
            where = ", ".join(f"line {n}: grade {g}" for n, g in zip(lines, same["grade"], strict=True))
            raise InputError(f"query {first['query_id']} document {first['doc_id']} has two different grades "
                             f"({where})", source, None if lines.iloc[1] is None else int(lines.iloc[1]))
        frame = frame[~repeated]
    comments = frame.attrs.get(COMMENT_LINES, 0)
    frame = frame.drop(columns="line_no", errors="ignore").reset_index(drop=True)
    frame.attrs |= {"collapsed_duplicates": collapsed, COMMENT_LINES: comments}
    release_unused()
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
        raise InputError(f"grade must be an integer, found {plain_value(frame['grade'].iloc[row])!r}", source, row + 1)
    out = pd.DataFrame({
        "query_id": frame["query_id"].to_numpy(),
        "doc_id": frame["doc_id"].to_numpy(),
        "grade": grade.to_numpy(dtype=np.int64),
        "line_no": np.arange(1, len(frame) + 1),
    })
    refuse_no_judgments(out["grade"].to_numpy(), source)
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


_GIVEN_NAME = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.+-]*)=(.+)")


def _given_name(given: str) -> tuple[str | None, str]:
    """``NAME=PATH`` -> (NAME, PATH) when ``given`` is no file itself; else (None, ``given``)."""
    match = _GIVEN_NAME.fullmatch(given)
    if match is None or os.path.exists(given):
        return None, given
    return match.group(1), match.group(2)


def expand_run_paths(paths: Iterable[str | os.PathLike]) -> dict[str, str]:
    """Map run names to files; a folder stands for the (non-hidden) files in it, in name order.

    A file named and also reached through its folder is one run, at its first place (``compare BASE FOLDER``
    compares the baseline with the other runs of its folder). Otherwise two runs with the same name (see
    :func:`run_name`), the same file named twice included, are refused, naming both: a pool or a comparison
    keyed by name would silently mix them up.

    A run read from stdin (``-``) or a pipe (``<(zcat run.gz)``) has no file name: a TREC run is named by the tag
    (sixth field) of its first line, any other (JSON, a table) or a line without a tag ``stdin``; it is copied once
    (:func:`evalset.io.files.local_file`) and the copy's path is returned for it. ``NAME=PATH`` names any one run
    (``bm25=<(zcat run.gz)``, ``a=runs/x.tsv``) when ``NAME=PATH`` is not itself a file.
    """
    files: list[tuple[str, bool, str | None]] = []  # (path, found in a folder, its name when not the file's)
    for given in map(os.fspath, paths):
        name, path = _given_name(given)
        if io_files.is_stream(path):
            copy = io_files.local_file(path)
            fields = first_line(copy, comments=True).split()
            tagged = len(fields) > 5 and io_files.content_kind(copy) == "lines"
            files.append((copy, False, name or (fields[5] if tagged else "stdin")))
        elif name is not None:
            if not os.path.isfile(path):
                raise InputError(f"{given}: NAME=PATH names one run file, and {path} is "
                                 f"{'a folder' if os.path.isdir(path) else 'no file'}", path)
            files.append((path, False, name))
        elif os.path.isdir(path):
            try:
                inside = sorted(entry for entry in os.listdir(path) if not entry.startswith("."))
            except OSError as exc:
                raise InputError(f"cannot read: {exc}", path) from None
            found = [os.path.join(path, entry) for entry in inside if os.path.isfile(os.path.join(path, entry))]
            if not found:
                raise InputError("a folder of runs with no run file in it", path)
            files.extend((file, True, None) for file in found)
        elif not os.path.exists(path):
            raise InputError("no such file", path)
        else:
            files.append((path, False, None))
    named: dict[str, str] = {}
    from_folder: dict[str, bool] = {}
    for path, in_folder, given_name in files:
        name = given_name or run_name(path)
        if name in named and (in_folder or from_folder[name]) and os.path.samefile(named[name], path):
            continue
        if name in named:
            raise InputError(f"two runs are named {name!r}: {named[name]} and {path}", path)
        named[name], from_folder[name] = path, in_folder
    if not named:
        raise InputError("no run files given")
    return named


def read_runs(paths: Iterable[str | os.PathLike]) -> dict[str, pd.DataFrame]:
    """Read runs given as files or folders of runs (see :func:`expand_run_paths`): run name -> run, in the
    order given (a folder's files in name order)."""
    return {name: read_run(path) for name, path in expand_run_paths(paths).items()}
