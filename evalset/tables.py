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
import io
import json
import mmap
import os
import tempfile
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson

from evalset.errors import InputError
from evalset.keys import as_string_array, length_range, repeated_rows, string_keys


@dataclass(frozen=True)
class _Layout:
    """A whitespace-separated line format: its field names, the ones kept, and whether extra fields are allowed."""

    fields: tuple[str, ...]
    keep: tuple[str, ...]
    extra_fields: bool  # trec_eval ignores text after a run line's tag

    @property
    def text(self) -> str:
        return " ".join(self.fields)


RUN_LAYOUT = _Layout(("qid", "Q0", "docid", "rank", "score", "tag"), ("qid", "docid", "rank", "score"), True)
QRELS_LAYOUT = _Layout(("qid", "0", "docid", "grade"), ("qid", "docid", "grade"), False)
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


def _read_csv(path: str, parse: pacsv.ParseOptions, names: list[str], include: list[str],
              numbers: dict[str, pa.DataType] | None = None) -> pa.Table:
    return pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE),
        parse_options=parse,
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.large_string()) | (numbers or {}),
            include_columns=include,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def _parse_options(delimiter: str, ignore_empty_lines: bool) -> pacsv.ParseOptions:
    return pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False,
                              ignore_empty_lines=ignore_empty_lines)


def _fields_fast(path: str, layout: _Layout, numbers: dict[str, pa.DataType]) -> pa.Table | None:
    """One-delimiter parse, numbers parsed by the reader; None when the file does not fit (the caller falls
    back to the line-by-line parse, which also names a bad line)."""
    head = _open_text_head(path)
    if not head:
        return None
    try:
        table = _read_csv(path, _parse_options("\t" if "\t" in head else " ", True), list(layout.fields),
                          list(layout.keep), numbers)
    except pa.ArrowInvalid:
        return None
    # A stray space or tab leaves an empty or padded id: not this path's job (numbers are checked by casting).
    other = " " if "\t" in head else "\t"
    other_in_file = _file_contains(path, other.encode())
    for name in ("qid", "docid"):
        column = table[name]
        if length_range(column)[0] == 0:
            return None
        if other_in_file is not False and pc.any(pc.match_substring(column, other)).as_py():
            return None
    return table


def _file_contains(path: str, needle: bytes) -> bool | None:
    """Whether an uncompressed file contains ``needle`` anywhere (a memchr-speed scan); None if unknown."""
    if path.endswith(".gz"):
        return None
    with open(path, "rb") as handle:
        try:
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return mapped.find(needle) >= 0
        except ValueError:  # an empty file cannot be mapped
            return False


def _fields_by_line(path: str, layout: _Layout) -> pa.Table:
    """Whitespace-split parse that keeps line numbers (``line_no``); raises InputError on a malformed line."""
    try:
        lines = _read_csv(path, _parse_options("\x1e", False), ["line"], ["line"])["line"]
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            empty = {name: pa.array([], pa.string()) for name in layout.keep}
            return pa.table(empty | {"line_no": pa.array([], pa.int64())})
        raise InputError(f"cannot parse: {exc}", path) from exc
    lines = lines.combine_chunks()
    fields = pc.utf8_split_whitespace(lines)
    counts = pc.list_value_length(fields).to_numpy(zero_copy_only=False).copy()
    counts[pc.equal(pc.utf8_trim_whitespace(lines), "").to_numpy(zero_copy_only=False)] = 0  # blank lines
    width = len(layout.fields)
    allowed = counts >= width if layout.extra_fields else counts == width
    bad = np.flatnonzero(~allowed & (counts != 0))
    if bad.size:
        row = int(bad[0])
        raise InputError(f"expected {width} whitespace-separated fields `{layout.text}`, found {counts[row]}: "
                         f"{lines[row].as_py()!r}", path, row + 1)
    nonblank = np.flatnonzero(counts != 0)
    fields = fields.take(pa.array(nonblank))
    columns = {name: pc.list_element(fields, layout.fields.index(name)) for name in layout.keep}
    return pa.table(columns | {"line_no": pa.array(nonblank + 1)})


def _read_fields(path: str, layout: _Layout, numbers: dict[str, pa.DataType]) -> pa.Table:
    _check_file(path)
    try:
        table = _fields_fast(path, layout, numbers)
        return table if table is not None else _fields_by_line(path, layout)
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", path) from exc


def _as_finite_float(text: str) -> float:
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(text)
    return value


def _cast(values: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    cast = pc.cast(values, target)
    if pa.types.is_floating(target) and not pc.all(pc.is_finite(cast)).as_py():
        raise pa.ArrowInvalid("non-finite value")
    return cast


def _typed_columns(table: pa.Table, path: str, layout: _Layout,
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
        convert = int if integer else _as_finite_float
        for row, value in enumerate(table[name].to_pylist()):
            try:
                convert(value)
            except ValueError:
                raise InputError(f"{name} must be {'an integer' if integer else 'a finite number'}, "
                                 f"found {value!r}", path, int(table["line_no"][row].as_py())) from None
    raise InputError("cannot parse numbers", path)  # pragma: no cover - Python accepted what arrow refused


# ------------------------------------------------------------------------------------------------------ runs
def read_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC run (``qid Q0 docid rank score tag``, whitespace separated, plain or ``.gz``).

    Returns a DataFrame with columns ``query_id`` and ``doc_id`` (strings), ``rank`` (int64) and
    ``score`` (float64), in file order. The rank column is kept as written; ordering for evaluation is done
    by :func:`evalset.metrics.ranking.order_run` under a declared tie rule.
    """
    path = os.fspath(path)
    numbers = {"rank": pa.int64(), "score": pa.float64()}
    table, typed = _typed_columns(_read_fields(path, RUN_LAYOUT, numbers), path, RUN_LAYOUT, numbers)
    frame = pa.table({"query_id": table["qid"], "doc_id": table["docid"], "rank": typed["rank"],
                      "score": typed["score"]})
    return frame.to_pandas()


def run_from_frame(frame: pd.DataFrame, source: str = "<DataFrame>") -> pd.DataFrame:
    """Validate a run given as a DataFrame (``query_id, doc_id, score[, rank]``) and normalise it.

    Without a ``rank`` column, ranks are the row order within each query (1-based).
    """
    missing = [c for c in ("query_id", "doc_id", "score") if c not in frame.columns]
    if missing:
        raise InputError(f"run is missing column(s) {', '.join(missing)}", source)
    out = pd.DataFrame({"query_id": frame["query_id"].astype(str), "doc_id": frame["doc_id"].astype(str)})
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
        out["rank"] = out.groupby("query_id").cumcount().to_numpy(dtype=np.int64) + 1
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

    Returns ``query_id, doc_id, grade`` (strings and int64) in file order. A negative grade keeps
    trec_eval's meaning: the document was pooled but not judged (never relevant, not counted as judged).
    A non-integer grade, a malformed line, or one pair given two different grades is refused with the
    line(s); an exact repeat of a line is collapsed and counted in ``frame.attrs["collapsed_duplicates"]``.
    """
    path = os.fspath(path)
    numbers = {"grade": pa.int64()}
    table, typed = _typed_columns(_read_fields(path, QRELS_LAYOUT, numbers), path, QRELS_LAYOUT, numbers)
    frame = pd.DataFrame({"query_id": table["qid"].to_pandas(), "doc_id": table["docid"].to_pandas(),
                          "grade": typed["grade"].to_numpy()})
    try:
        return _check_qrels(frame, path)
    except InputError:
        if "line_no" in table.column_names:
            raise
    table = _fields_by_line(path, QRELS_LAYOUT)  # re-read to name the lines of the conflict
    return _check_qrels(frame.assign(line_no=table["line_no"].to_numpy()), path)


def _check_qrels(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Collapse exact repeats; refuse a pair with two grades (naming lines when ``line_no`` is given)."""
    query_code = pc.dictionary_encode(as_string_array(frame["query_id"])).indices.to_numpy(zero_copy_only=False)
    (doc_key,) = string_keys(frame["doc_id"])
    repeated = repeated_rows(query_code, doc_key)
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
    frame = frame.drop(columns="line_no", errors="ignore").reset_index(drop=True)
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
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; the result should read like any other file
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# --- corpus, queries and labels
QUERIES_COLUMNS = ("query_id", "query", "stratum", "frequency", "stratum_share", "weight", "split")
LABELS_COLUMNS = ("query_id", "doc_id", "annotator", "kind", "grade", "source", "labeled_at", "comment")
LABEL_KINDS = ("human", "llm")
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


def _check_file(path: str) -> None:
    """Refuse, naming the path, a file that does not exist, is a folder, or cannot be read."""
    if not os.path.exists(path):
        raise InputError("no such file", path)
    if os.path.isdir(path):
        raise InputError("is a folder, not a file", path)
    if not os.access(path, os.R_OK):
        raise InputError("cannot read: permission denied", path)


@contextlib.contextmanager
def _text_lines(path: str) -> Iterator[Iterator[tuple[int, str]]]:
    """Yield ``(line_no, line)`` pairs (1-based, newline stripped) of a UTF-8 file, plain or ``.gz``."""
    _check_file(path)
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as handle:
            yield ((number, line.rstrip("\r\n")) for number, line in enumerate(handle, 1))
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc}", path) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", path) from None


def _first_field(path: str) -> str:
    """The first tab-separated field of the first non-blank line ('' for an empty file)."""
    with _text_lines(path) as lines:
        for _, line in lines:
            if line.strip():
                return line.split("\t", 1)[0].strip()
    return ""


def expand_run_paths(paths: Iterable[str | os.PathLike]) -> dict[str, str]:
    """Map run names to files; a folder stands for the (non-hidden) files in it, in name order.

    Two runs with the same name (see :func:`run_name`) are refused, naming both files: a pool or a
    comparison keyed by name would silently mix them up.
    """
    files: list[str] = []
    for path in map(os.fspath, paths):
        if os.path.isdir(path):
            inside = sorted(entry for entry in os.listdir(path) if not entry.startswith("."))
            files.extend(os.path.join(path, entry) for entry in inside
                         if os.path.isfile(os.path.join(path, entry)))
        elif not os.path.exists(path):
            raise InputError("no such file", path)
        else:
            files.append(path)
    named: dict[str, str] = {}
    for path in files:
        name = run_name(path)
        if name in named:
            raise InputError(f"two runs are named {name!r}: {named[name]} and {path}", path)
        named[name] = path
    if not named:
        raise InputError("no run files given")
    return named


def read_queries(path: str | os.PathLike) -> pd.DataFrame:
    """Read queries: a ``queries.tsv`` written by ``sample``, or a TREC topics file ``qid<TAB>query``.

    A file whose first field is ``query_id`` is a ``queries.tsv`` (a header, tab separated, quoted as
    pandas/csv write it, all columns kept as strings); anything else is a headerless topics file, split at
    the first tab. Returns a frame with ``query_id`` and ``query`` first, in file order, with each row's line
    number in ``frame.attrs["line_numbers"]`` (for error messages downstream). An empty query id
    or query text, a line with the wrong number of fields, or a repeated query id is refused with its line.
    """
    path = os.fspath(path)
    if _first_field(path) == "query_id":
        rows, line_numbers, columns = _read_tsv_with_header(path, required=("query_id", "query"))
        frame = pd.DataFrame(rows, columns=columns, dtype=object)
    else:
        rows, line_numbers = [], []
        with _text_lines(path) as lines:
            for number, line in lines:
                if not line.strip():
                    continue
                if "\t" not in line:
                    raise InputError(f"expected `qid<TAB>query`, found {line!r}", path, number)
                query_id, query = line.split("\t", 1)
                rows.append((query_id.strip(), query.strip()))
                line_numbers.append(number)
        frame = pd.DataFrame(rows, columns=["query_id", "query"], dtype=object)
    _refuse_blank(frame, ("query_id", "query"), line_numbers, path)
    _refuse_repeats(frame, ["query_id"], line_numbers, path, "query id")
    ordered = ["query_id", "query", *[c for c in frame.columns if c not in ("query_id", "query")]]
    frame = frame[ordered].astype(str).reset_index(drop=True)
    frame.attrs["line_numbers"] = line_numbers
    return frame


def read_corpus(path: str | os.PathLike, doc_ids: Collection[str] | None = None) -> pd.DataFrame:
    """Read document texts: JSON Lines ``{"doc_id", "text"[, "title", "url"]}`` or TSV ``doc_id<TAB>text``.

    The format follows the name (``.jsonl``/``.ndjson``/``.json`` or ``.tsv``/``.txt``, each optionally
    ``.gz``), else the first character (``{`` means JSON Lines). A TSV may start with a ``doc_id<TAB>text``
    header. Every line is validated (a line without ``doc_id`` or ``text`` is refused with its line number);
    only documents in ``doc_ids`` are kept when it is given, so a large corpus costs memory only for the
    documents needed. A document id given twice among the kept documents is refused.

    Returns ``doc_id, text`` (strings), plus ``title`` and ``url`` when a JSON corpus has them.
    """
    path = os.fspath(path)
    wanted = None if doc_ids is None else set(map(str, doc_ids))
    stem = path[:-3] if path.endswith(".gz") else path
    if stem.lower().endswith(_JSONL_SUFFIXES):
        is_json = True
    elif stem.lower().endswith((".tsv", ".txt")):
        is_json = False
    else:
        is_json = _first_field(path).startswith("{")
    records, line_numbers = (_corpus_jsonl if is_json else _corpus_tsv)(path, wanted)
    columns = ["doc_id", "text"] + [c for c in ("title", "url") if any(c in r for r in records)]
    frame = pd.DataFrame.from_records(records, columns=columns).astype(object)
    _refuse_repeats(frame, ["doc_id"], line_numbers, path, "document id")
    return frame.fillna("").astype(str).reset_index(drop=True)


def _json_objects(path: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON Lines file; anything else is refused."""
    with _text_lines(path) as lines:
        for number, line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not a JSON object: {exc.msg}", path, number) from None
            if not isinstance(record, dict):
                raise InputError(f"not a JSON object: {line[:80]!r}", path, number)
            yield number, record


def _corpus_jsonl(path: str, wanted: set[str] | None) -> tuple[list[dict], list[int]]:
    records, line_numbers = [], []
    for number, record in _json_objects(path):
        doc_id = record.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or not str(doc_id).strip():
            keys = ", ".join(sorted(record)) or "none"
            raise InputError(f"document has no doc_id (keys: {keys})", path, number)
        if not isinstance(record.get("text"), str):
            raise InputError(f"document {doc_id} has no text string", path, number)
        doc_id = str(doc_id).strip()
        if wanted is None or doc_id in wanted:
            kept = {key: record[key] for key in ("title", "url") if isinstance(record.get(key), str)}
            records.append({"doc_id": doc_id, "text": record["text"], **kept})
            line_numbers.append(number)
    return records, line_numbers


def _corpus_tsv(path: str, wanted: set[str] | None) -> tuple[list[dict], list[int]]:
    records, line_numbers = [], []
    with _text_lines(path) as lines:
        for number, line in lines:
            if not line.strip() or (number == 1 and line.startswith("doc_id\t")):
                continue
            doc_id, tab, text = line.partition("\t")
            if not tab or not doc_id.strip():
                raise InputError(f"expected `doc_id<TAB>text`, found {line[:80]!r}", path, number)
            doc_id = doc_id.strip()
            if wanted is None or doc_id in wanted:
                records.append({"doc_id": doc_id, "text": text})
                line_numbers.append(number)
    return records, line_numbers


def read_labels(path: str | os.PathLike) -> pd.DataFrame:
    """Read a labels table (TSV with a header; columns :data:`LABELS_COLUMNS`, one row per judgment).

    Returns the table with ``grade`` as int64 and every other column a string. A missing column, an empty
    query or document id, a ``kind`` other than human/llm, or a non-integer grade is refused with its line.
    Whether a grade is on the guideline's scale is the caller's check (the scale lives in the guideline).
    """
    path = os.fspath(path)
    rows, line_numbers, columns = _read_tsv_with_header(path, required=LABELS_COLUMNS)
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    _refuse_blank(frame, ("query_id", "doc_id"), line_numbers, path)
    bad_kind = ~frame["kind"].isin(LABEL_KINDS)
    if bad_kind.any():
        row = int(np.flatnonzero(bad_kind.to_numpy())[0])
        raise InputError(f"kind must be one of {', '.join(LABEL_KINDS)}, found {frame['kind'].iloc[row]!r}",
                         path, line_numbers[row])
    grade = pd.to_numeric(frame["grade"], errors="coerce")
    bad_grade = grade.isna() | (grade != grade.round())
    if bad_grade.any():
        row = int(np.flatnonzero(bad_grade.to_numpy())[0])
        raise InputError(f"grade must be an integer, found {frame['grade'].iloc[row]!r}", path,
                         line_numbers[row])
    frame = frame.astype(str)
    frame["grade"] = grade.to_numpy(dtype=np.int64)
    return frame.reset_index(drop=True)


def read_judged_pairs(path: str | os.PathLike) -> pd.DataFrame:
    """The pairs already judged, from TREC qrels or a labels table (told apart by a ``query_id`` header).

    Returns distinct ``query_id, doc_id`` rows. A qrels line with a negative grade is not a judgment
    (trec_eval: pooled but not judged), so it is not returned; in a labels table every row counts, human or
    LLM (filter the table first when only some kinds should count).
    """
    path = os.fspath(path)
    if _first_field(path) == "query_id":
        judged = read_labels(path)
    else:
        qrels = read_qrels(path)
        judged = qrels[qrels["grade"] >= 0]
    return judged[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True)


def _read_tsv_with_header(path: str, required: Iterable[str]) -> tuple[list[list[str]], list[int], list[str]]:
    _check_file(path)
    opener = gzip.open if path.endswith(".gz") else open
    rows, line_numbers = [], []
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t")
            header = [name.strip() for name in next(reader, [])]
            missing = [name for name in required if name not in header]
            if missing:
                raise InputError(f"missing column(s) {', '.join(missing)} in header {header}", path, 1)
            for row in reader:
                if not any(field.strip() for field in row):
                    continue
                if len(row) != len(header):
                    raise InputError(f"expected {len(header)} tab-separated fields, found {len(row)}", path,
                                     reader.line_num)
                rows.append(row)
                line_numbers.append(reader.line_num)
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc}", path) from None
    except csv.Error as exc:
        raise InputError(f"cannot parse: {exc}", path) from None
    return rows, line_numbers, header


def _refuse_blank(frame: pd.DataFrame, columns: Iterable[str], line_numbers: list[int], path: str) -> None:
    for column in columns:
        blank = frame[column].astype(str).str.strip() == ""
        if blank.any():
            row = int(np.flatnonzero(blank.to_numpy())[0])
            raise InputError(f"empty {column}", path, line_numbers[row])


def _refuse_repeats(frame: pd.DataFrame, key: list[str], line_numbers: list[int], path: str,
                    what: str) -> None:
    repeated = frame.duplicated(key, keep=False).to_numpy()
    if repeated.any():
        rows = np.flatnonzero(repeated)
        first = frame.iloc[rows[0]][key].tolist()
        same = [row for row in rows if frame.iloc[row][key].tolist() == first]
        raise InputError(f"{what} {' '.join(map(str, first))} appears twice (lines {line_numbers[same[0]]} "
                         f"and {line_numbers[same[1]]})", path, line_numbers[same[1]])


# --- labels from qrels
def labels_from_file(path: str | os.PathLike, kind: str = "human") -> pd.DataFrame:
    """A labels table from a labels TSV, or from TREC qrels as one annotator named by the file.

    Qrels rows become judgments by annotator ``run_name(path)`` of the given ``kind`` (source = the file
    name); a negative qrels grade (pooled, not judged) is not a judgment: such rows are left out and counted
    in ``frame.attrs["unjudged_rows"]``.
    """
    if kind not in LABEL_KINDS:
        raise ValueError(f"kind must be one of {', '.join(LABEL_KINDS)}, got {kind!r}")
    path = os.fspath(path)
    if _first_field(path) == "query_id":
        labels = read_labels(path)
        labels.attrs["unjudged_rows"] = 0
        return labels
    grades = read_grades(path, human={path} if kind == "human" else ())
    labels = grades[["query_id", "doc_id", "annotator", "kind", "grade"]].assign(
        source=Path(path).name, labeled_at="", comment="")
    labels.attrs["unjudged_rows"] = grades.attrs["unjudged"]
    return labels


def write_labels(labels: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a labels table (columns :data:`LABELS_COLUMNS`, in that order) as TSV with a header, atomically.

    Fields holding a tab, a newline or a quote are quoted as the csv module does, so :func:`read_labels`
    reads the file back unchanged.
    """
    missing = [c for c in LABELS_COLUMNS if c not in labels.columns]
    if missing:
        raise ValueError(f"labels are missing column(s) {', '.join(missing)}")
    with atomic_path(path) as tmp:
        labels[list(LABELS_COLUMNS)].to_csv(tmp, sep="\t", index=False, lineterminator="\n")


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
    import pyarrow.parquet as pq  # 0.08 s to import: only for Parquet logs

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
    _check_file(path)
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
    _check_file(path)
    fmt = log_format(path, fmt)
    if fmt in ("tsv", "csv"):
        names = _delimited_header(path, fmt)
        resolved = _resolve_columns(names, columns, path, header)
        typed = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(names)))
        quoting = "quote = '', escape = ''" if fmt == "tsv" else "quote = '\"', escape = '\"'"
        source = (f"read_csv({sql_string(path)}, delim = {sql_string(chr(9) if fmt == 'tsv' else ',')}, "
                  f"{quoting}, header = {str(header).lower()}, columns = {{{typed}}}, auto_detect = false)")
        picked = {field: f"c{index}" for field, index in resolved.items()}
    else:
        reader = "read_json" if fmt == "jsonl" else "read_parquet"
        options = ", format = 'newline_delimited'" if fmt == "jsonl" else ""
        names = _structured_names(path, fmt)
        resolved = _resolve_columns(names, columns, path, header=True)
        source = f"{reader}({sql_string(path)}{options})"
        picked = {field: '"' + names[index].replace('"', '""') + '"' for field, index in resolved.items()}
    selected = [
        f"CAST({expr} AS BIGINT) AS count" if field == "count"
        else f"COALESCE(CAST({expr} AS VARCHAR), '') AS {field}"
        for field, expr in picked.items()
    ]
    return f"SELECT {', '.join(selected)} FROM {source}"


def _structured_names(path: str, fmt: str) -> list[str]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

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
    _check_file(path)
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


def write_queries(queries: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``queries.tsv`` (atomically): the columns of ``QUERIES_COLUMNS``, tab separated, with a header.

    A field holding a quote (``"new york" hotels``) is quoted as the csv module does, so that
    :func:`read_queries` (and ``pandas.read_csv(sep="\\t")``) reads every query back unchanged.
    """
    with atomic_path(path) as tmp:
        queries.loc[:, list(QUERIES_COLUMNS)].to_csv(tmp, sep="\t", index=False, lineterminator="\n")


# --- agreement: the grades of several annotators, from labels tables or qrels files
GRADES_COLUMNS = ("query_id", "doc_id", "annotator", "kind", "grade", "file")


def annotator_name(path: str | os.PathLike) -> str:
    """The annotator a qrels file stands for: its file name without extensions (``llama.qrels`` -> ``llama``)."""
    return run_name(path)


def read_grades(path: str | os.PathLike, human: Collection[str] = ()) -> pd.DataFrame:
    """Read one annotation file: a labels table (first header field ``query_id``) or TREC qrels.

    Returns :data:`GRADES_COLUMNS` in file order: a labels table gives each row's annotator and kind; a qrels
    file is one annotator named by :func:`annotator_name`, of kind ``human`` when that name or the path is in
    ``human``, else ``llm``. ``file`` is ``path`` (for messages that name the file and line).

    A negative qrels grade means what it means to trec_eval (pooled, not judged): it is not a judgment, so
    the row is left out and counted in ``frame.attrs["unjudged"]``. An exact repeat of a judgment is collapsed
    and counted in ``frame.attrs["collapsed_duplicates"]``; one annotator giving one pair two different
    grades is refused, naming both lines. Whether a grade is on the scale is the caller's check.
    """
    path = os.fspath(path)
    _check_file(path)
    labels_table = _first_field(path) == "query_id"
    if labels_table:
        labels = read_labels(path)
        frame = labels[["query_id", "doc_id", "annotator", "kind", "grade"]].copy()
        blank = frame["annotator"].str.strip() == ""
        if blank.any():
            row = frame[blank].iloc[0]
            raise InputError("empty annotator", path, grade_line(path, row["query_id"], row["doc_id"], row["grade"]))
        unjudged = earlier = 0
    else:
        qrels = read_qrels(path)
        name = annotator_name(path)
        kind = "human" if name in human or path in human or os.path.realpath(path) in human else "llm"
        judged = qrels["grade"].to_numpy() >= 0
        unjudged = int((~judged).sum())
        earlier = int(qrels.attrs.get("collapsed_duplicates", 0))
        frame = qrels[judged].assign(annotator=name, kind=kind)[["query_id", "doc_id", "annotator", "kind", "grade"]]
    repeated = frame.duplicated(["query_id", "doc_id", "annotator"], keep=False)
    collapsed = int(frame.duplicated().sum()) if repeated.any() else 0
    if repeated.any():
        conflicting = frame[repeated].groupby(["query_id", "doc_id", "annotator"], sort=False)["grade"].nunique()
        if (conflicting > 1).any():
            query_id, doc_id, annotator = conflicting[conflicting > 1].index[0]
            same = frame[(frame["query_id"] == query_id) & (frame["doc_id"] == doc_id)
                         & (frame["annotator"] == annotator)]
            lines = [grade_line(path, query_id, doc_id, int(g), annotator) for g in same["grade"]]
            where = ", ".join(f"line {n}: grade {g}" for n, g in zip(lines, same["grade"], strict=True))
            raise InputError(f"annotator {annotator} gives query {query_id} document {doc_id} two different "
                             f"grades ({where})", path, lines[-1])
        frame = frame.drop_duplicates()
    frame = frame.assign(file=path).reset_index(drop=True)
    frame["grade"] = frame["grade"].astype(np.int64)
    frame.attrs = {"unjudged": unjudged, "collapsed_duplicates": collapsed + earlier, "labels_table": labels_table}
    return frame


def grade_line(path: str | os.PathLike, query_id: str, doc_id: str, grade: int,
               annotator: str | None = None) -> int | None:
    """The first line of ``path`` (labels table or qrels) that gives this grade to this pair, or None.

    Used for error messages only (a rescan of the file), so that readers can stay columnar.
    """
    path = os.fspath(path)
    if _first_field(path) == "query_id":
        rows, line_numbers, header = _read_tsv_with_header(path, required=LABELS_COLUMNS)
        at = {name: header.index(name) for name in ("query_id", "doc_id", "annotator", "grade")}
        for row, number in zip(rows, line_numbers, strict=True):
            if (row[at["query_id"]].strip() == query_id and row[at["doc_id"]].strip() == doc_id
                    and (annotator is None or row[at["annotator"]].strip() == annotator)
                    and _same_integer(row[at["grade"]], grade)):
                return number
        return None
    with _text_lines(path) as lines:
        for number, line in lines:
            fields = line.split()
            if len(fields) == 4 and fields[0] == query_id and fields[2] == doc_id and _same_integer(fields[3], grade):
                return number
    return None


def _same_integer(text: str, value: int) -> bool:
    try:
        return float(text) == value
    except ValueError:
        return False
# --- pool folders and labels (push / pull)
TASK_FIELDS = ("pair_id", "query_id", "doc_id", "query", "text")


def read_pool_pairs(path: str | os.PathLike) -> pd.DataFrame:
    """Read a pool's ``pool.tsv`` (``pair_id, query_id, doc_id, order``), sorted by ``order`` (int64).

    A missing column, a blank id, a non-integer order, or a repeated ``pair_id`` is refused with its line.
    """
    path = os.fspath(path)
    rows, line_numbers, columns = _read_tsv_with_header(path, required=("pair_id", "query_id", "doc_id", "order"))
    frame = pd.DataFrame(rows, columns=columns, dtype=object)[["pair_id", "query_id", "doc_id", "order"]]
    _refuse_blank(frame, ("pair_id", "query_id", "doc_id"), line_numbers, path)
    _refuse_repeats(frame, ["pair_id"], line_numbers, path, "pair_id")
    order = pd.to_numeric(frame["order"], errors="coerce")
    bad = order.isna() | (order != order.round())
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"order must be an integer, found {frame['order'].iloc[row]!r}", path, line_numbers[row])
    frame = frame.astype(str).assign(order=order.to_numpy(dtype=np.int64))
    return frame.sort_values("order", kind="stable").reset_index(drop=True)


def read_tasks(path: str | os.PathLike, limit: int | None = None) -> pd.DataFrame:
    """Read a pool's ``tasks.jsonl`` (one JSON object a line with :data:`TASK_FIELDS`), in file (judging) order.

    ``limit`` keeps the first N tasks. Every field is a string; a line that is not a JSON object, lacks a field,
    has an empty ``pair_id``, or repeats a ``pair_id`` is refused with its line.
    """
    path = os.fspath(path)
    _check_file(path)
    if limit is not None and limit < 0:
        raise InputError(f"limit must be >= 0, got {limit}", path)
    records, line_numbers = [], []
    for number, record in _json_objects(path):
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
    _refuse_repeats(frame, ["pair_id"], line_numbers, path, "pair_id")
    return frame.astype(str).reset_index(drop=True)
