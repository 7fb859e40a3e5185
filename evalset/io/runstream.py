"""A TREC run read in blocks of whole queries, streaming: memory holds one block of text (and the rows of the
one query carried from a block into the next), never the whole run.

Conventions
-----------
- When a run is streamed: :func:`streams` says so for a file above :data:`STREAM_ABOVE_BYTES` on disk (above
  :data:`STREAM_ABOVE_COMPRESSED_BYTES` when compressed). Streamed, the text of a piece is parsed on one thread
  while the blocks before are scored on the other, and memory does not grow with the run; below about 1M lines
  there is nothing to overlap and both ways take the same time (2026-12-01, quiet machine: 1M lines 0.35 s either
  way, 3M lines 0.79 s streamed and 0.81 s whole, 10M lines 2.3-2.5 s streamed and 3.6-3.9 s whole).
- A plain file is mapped into memory a piece at a time, so its text is never copied and a piece's pages leave
  the process's memory with the piece; a compressed file is decompressed a block at a time.
- Blocks are cut at query boundaries: the rows of the last query of each block of text are carried into the next,
  so that every block holds whole queries when the run is grouped by query (each query's lines together, as TREC
  runs are and as :func:`evalset.io.trec.write_run` writes them). A query id that reappears after another query
  raises :class:`RunNotGrouped`; the caller then reads the run whole (nothing has been reported yet).
- Parsing is :func:`evalset.io.trec.read_run`'s: each piece of text by the fast one-delimiter parse if it fits
  it, else by the line-by-line whitespace parse (runs of spaces, mixed delimiters, blank lines, a bad value). The
  values are the same, and a malformed line is refused with its number in the file, as when the file is read
  whole. One difference: the check for shifted fields (a space inside a query id) compares a line's width with
  the usual width in its piece of text rather than in the whole file.
- A compressed file that ends early (a truncated ``.gz``) is refused, naming the line after the last one read.
- Comment lines (first non-blank character ``#``, trec_eval 10's) are skipped as the whole-file reader skips them:
  a piece of text holding one is parsed line by line, the other lines keeping their numbers.
- A JSON run or a run with named columns (TSV, CSV, Parquet) is never streamed: :func:`streams` says no, and
  :func:`query_blocks` and :func:`first_query_ids` read it whole, as :func:`evalset.io.trec.read_run` does.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from evalset.errors import InputError
from evalset.io.files import check_file, content_kind, first_line, utf8_error
from evalset.io.tablerun import TABLE_KINDS
from evalset.io.trec import _parse_options, _typed_columns, read_run, refuse_no_run_lines
from evalset.io.trecfields import RUN_LAYOUT, has_comment, split_lines

STREAM_ABOVE_BYTES = 64 << 20
"""A run file larger than this on disk is streamed (about 1.7M lines of a usual run)."""

STREAM_ABOVE_COMPRESSED_BYTES = 16 << 20
"""A compressed (``.gz``, ``.bz2``) run file larger than this on disk is streamed (about 1.4M lines)."""

STREAM_BLOCK_BYTES = 1 << 25
"""Text read at a time when streaming (32 MiB, about 850,000 lines of a usual run)."""

_NUMBERS = {"rank": pa.int64(), "score": pa.float64()}
_COMPRESSED = (".gz", ".bz2")


class RunNotGrouped(Exception):
    """The run's lines are not grouped by query: ``query_id`` reappears after another query."""

    def __init__(self, query_id: str):
        super().__init__(f"query {query_id} reappears after another query")
        self.query_id = query_id


def streams(path: str | os.PathLike) -> bool:
    """Whether a run file is big enough to be streamed (see the module's conventions)."""
    path = os.fspath(path)
    limit = STREAM_ABOVE_COMPRESSED_BYTES if path.endswith(_COMPRESSED) else STREAM_ABOVE_BYTES
    try:
        return os.path.getsize(path) > limit and _lines(path)  # a JSON or table run is read whole
    except (OSError, InputError):
        return False  # the whole-file reader names the problem


def _lines(path: str) -> bool:
    """Whether a run file is TREC lines (streamable), not a JSON run or a run with named columns (read whole)."""
    kind = content_kind(path)
    return kind != "json" and kind not in TABLE_KINDS


def _read_options(names: list[str], numbers: dict[str, pa.DataType] | None, include: list[str]):
    return (pacsv.ReadOptions(column_names=names, block_size=1 << 22, use_threads=False),
            pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.large_string()) | (numbers or {}),
                                 include_columns=include, strings_can_be_null=False, quoted_strings_can_be_null=False,
                                 null_values=[]))


def _numbers(rank: bool) -> dict[str, pa.DataType]:
    """The number fields parsed: the rank only when asked (see :func:`query_blocks`)."""
    return _NUMBERS if rank else {"score": _NUMBERS["score"]}


def _fits(table: pa.Table, delimiter: str, other_in_text: bool) -> bool:
    """The fast parse's checks (see :func:`evalset.io.trec._fields_fast`): ids neither empty nor holding the other
    delimiter (looked for only when the text holds it), no shifted line, finite scores."""
    other = " " if delimiter == "\t" else "\t"
    for name in ("qid", "docid"):
        column = table[name]
        if len(column) and (pc.min(pc.binary_length(column)).as_py() == 0
                            or (other_in_text and pc.any(pc.match_substring(column, other)).as_py())):
            return False
    if pc.any(pc.equal(table["docid"], RUN_LAYOUT.shifted_marker)).as_py() or has_comment(table["qid"]):
        return False  # a shifted line, a comment line: the line-by-line parse names it, skips it
    return len(table) == 0 or bool(pc.all(pc.is_finite(table["score"])).as_py())


def _read_error(path: str, exc: Exception, lines_read: int) -> InputError:
    if isinstance(exc, pa.ArrowInvalid) and "UTF8" in str(exc).upper().replace("-", ""):
        found = utf8_error(path)
        if found:
            return found
    if path.endswith(_COMPRESSED):
        return InputError(f"the compressed file ends early or is damaged after line {lines_read} ({exc}): a "
                          "truncated download or copy?", path, lines_read + 1)
    return InputError(f"cannot read after line {lines_read}: {exc}", path, lines_read + 1)


def _newline(data: np.ndarray, last: bool) -> int:
    """The place of the first (or last) newline byte in ``data``, or -1; searched in windows from that end."""
    window = 1 << 16
    for start in (range(len(data) - window, -window, -window) if last else range(0, len(data), window)):
        found = np.flatnonzero(data[max(start, 0):start + window] == 10)
        if len(found):
            return max(start, 0) + int(found[-1] if last else found[0])
    return -1


def _text_chunks(path: str, block_bytes: int) -> Iterator[pa.Buffer]:
    """The file's text (decompressed) in pieces that end at a line end, without copying it: a plain file is
    mapped into memory and sliced; a compressed one is read a block at a time, each block cut after its first
    and its last newline, the piece of a line before the first joined to the rest of the block before (a short
    piece of its own)."""
    if not path.endswith(_COMPRESSED) and os.path.isfile(path):
        size, start = os.path.getsize(path), 0
        while start < size:
            # mapped anew for each piece, so that a piece's pages leave memory with the piece
            with pa.memory_map(path) as mapped:
                text = mapped.read_buffer()
            data = np.frombuffer(text, dtype=np.uint8)
            stop = min(start + block_bytes, size)
            if stop < size:
                last = _newline(data[start:stop], last=True)
                if last >= 0:
                    stop = start + last + 1
                else:  # a line longer than a block: to its end
                    first = _newline(data[stop:], last=False)
                    stop = size if first < 0 else stop + first + 1
            piece = text.slice(start, stop - start)
            yield piece
            start = stop
        return
    with pa.input_stream(path) as stream:  # compression from the file name, as the whole-file reader does
        rest = b""
        while True:
            buffer = stream.read_buffer(block_bytes)
            if buffer.size == 0:
                break
            data = np.frombuffer(buffer, dtype=np.uint8)
            last = _newline(data, last=True)
            if last < 0:
                rest += buffer.to_pybytes()
                continue
            first = _newline(data, last=False)
            yield pa.py_buffer(rest + buffer.slice(0, first + 1).to_pybytes())
            if last > first:
                yield buffer.slice(first + 1, last - first)
            rest = buffer.slice(last + 1).to_pybytes()
        if rest:
            yield pa.py_buffer(rest)


def _fast(chunk: pa.Buffer, delimiter: str, numbers: dict[str, pa.DataType]) -> pa.Table | None:
    """The one-delimiter parse of a piece of text (a row is a line: blank lines do not fit), or None if the piece
    does not fit it."""
    read, convert = _read_options(list(RUN_LAYOUT.fields), numbers, ["qid", "docid", *numbers])
    try:
        table = pacsv.read_csv(pa.BufferReader(chunk), read_options=read,
                               parse_options=_parse_options(delimiter, False), convert_options=convert)
    except pa.ArrowInvalid:
        return None
    other = ord(" " if delimiter == "\t" else "\t")
    data = np.frombuffer(chunk, dtype=np.uint8)
    other_in_text = any((data[start:start + (1 << 20)] == other).any() for start in range(0, len(data), 1 << 20))
    return table if _fits(table, delimiter, other_in_text) else None


def _by_line(chunk: pa.Buffer, path: str, line: int, numbers: dict[str, pa.DataType]) -> tuple[pa.Table, int]:
    """The line-by-line parse of a piece of text whose first line is line ``line`` of the file (errors name the
    line in the file); the table and the number of lines in the piece."""
    read, convert = _read_options(["line"], None, ["line"])
    try:
        lines = pacsv.read_csv(pa.BufferReader(chunk), read_options=read, parse_options=_parse_options("\x1e", False),
                               convert_options=convert)["line"].combine_chunks()
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            return _no_lines(numbers), chunk.to_pybytes().count(b"\n")
        raise _read_error(path, exc, line - 1) from exc
    table = split_lines(lines, RUN_LAYOUT, path, line)
    if len(table) == 0:  # blank lines only
        return _no_lines(numbers), len(lines)
    table, typed = _typed_columns(table, path, RUN_LAYOUT, numbers)
    ids = {name: pc.cast(table[name], pa.large_string()) for name in ("qid", "docid")}
    return pa.table(ids | typed), len(lines)


def _no_lines(numbers: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({"qid": pa.array([], pa.large_string()), "docid": pa.array([], pa.large_string())}
                    | {name: pa.array([], kind) for name, kind in numbers.items()})


def _parsed(path: str, block_bytes: int, rank: bool = True) -> Iterator[pa.Table]:
    """``qid, docid[, rank], score`` in pieces of lines, in file order: each piece by the fast parse if it fits,
    else by the line-by-line parse."""
    numbers = _numbers(rank)
    head = first_line(path, comments=True)
    delimiter = "\t" if "\t" in head else " "
    line = 1  # the number in the file of the piece's first line
    chunks = _text_chunks(path, block_bytes)
    while True:
        try:
            chunk = next(chunks, None)
        except (OSError, pa.ArrowInvalid, EOFError) as exc:
            raise _read_error(path, exc, line - 1) from exc
        if chunk is None:
            return
        buffer = chunk
        table = _fast(buffer, delimiter, numbers) if head else None
        if table is not None:
            line += len(table)
        else:
            table, count = _by_line(buffer, path, line, numbers)
            line += count
        yield table


_END = object()


class _Ahead:
    """``items``, produced on a thread of its own (parsing releases the GIL) from the moment this is made, at most
    ``depth`` items ahead of the caller; an exception is handed over and raised in the caller. The thread stops
    when the caller stops early: :meth:`close`, or this iterator dropped (the thread holds no reference to it)."""

    def __init__(self, items: Iterator, depth: int = 1):
        self._pieces: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._producer = threading.Thread(target=_produce, args=(items, self._pieces, self._stop),
                                          name="evalset-run-reader", daemon=True)
        self._producer.start()

    def __iter__(self) -> Iterator:
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        item = self._pieces.get()
        if item is _END or isinstance(item, BaseException):
            self.close()
            if item is _END:
                raise StopIteration
            raise item
        return item

    def close(self) -> None:
        self._done = True
        self._stop.set()
        self._producer.join()

    def __del__(self):
        self._stop.set()


def _produce(items: Iterator, pieces: queue.Queue, stop: threading.Event) -> None:
    def hand_over(item) -> bool:
        while not stop.is_set():
            try:
                pieces.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    try:
        for item in items:
            if not hand_over(item):
                return
        hand_over(_END)
    except BaseException as exc:  # handed to the caller, who raises it
        hand_over(exc)


_READING: dict[tuple[str, int, bool], tuple[tuple[float, int], _Ahead]] = {}


def _stamp(path: str) -> tuple[float, int]:
    status = os.stat(path)
    return status.st_mtime, status.st_size


def start_reading(paths, block_bytes: int | None = None, rank: bool = True) -> None:
    """Start reading the first of ``paths`` that :func:`streams`, on the reader thread, while the caller does other
    work (a command reads its qrels meanwhile): :func:`query_blocks` of that file (with the same ``block_bytes``
    and ``rank``) then continues from the blocks already parsed. A file that cannot be read is left to
    :func:`query_blocks` to refuse. ``block_bytes``: default :data:`STREAM_BLOCK_BYTES`."""
    block_bytes = block_bytes or STREAM_BLOCK_BYTES
    for path in map(os.fspath, paths):
        try:
            if streams(path) and (path, block_bytes, rank) not in _READING:
                check_file(path)
                reader = _Ahead(_query_blocks(path, block_bytes, rank), depth=3)
                _READING[path, block_bytes, rank] = _stamp(path), reader
                return
        except (OSError, InputError):
            continue


def _query_heads(qid: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Where each run of equal query ids starts, and its id."""
    if len(qid) == 0:
        return np.zeros(0, dtype=np.int64), []
    column = qid.combine_chunks() if isinstance(qid, pa.ChunkedArray) else qid
    differ = pc.not_equal(column.slice(1), column.slice(0, len(column) - 1)).to_numpy(zero_copy_only=False)
    starts = np.r_[0, np.flatnonzero(differ) + 1]
    return starts, column.take(pa.array(starts)).to_pylist()


def _as_run(table: pa.Table) -> pd.DataFrame:
    """The block as :func:`evalset.io.trec.read_run` returns a run."""
    rank = {"rank": table["rank"]} if "rank" in table.column_names else {}
    return pa.table({"query_id": table["qid"], "doc_id": table["docid"]} | rank | {"score": table["score"]}).to_pandas()


def _query_blocks(path: str, block_bytes: int, rank: bool = True) -> Iterator[tuple[list[str], pd.DataFrame]]:
    seen: set[str] = set()
    carry: pa.Table | None = None  # the rows of the last query of the piece before (never empty)

    def check(heads: list[str]) -> None:
        for query_id in heads:
            if query_id in seen:
                raise RunNotGrouped(query_id)
            seen.add(query_id)

    for table in _parsed(path, block_bytes, rank):
        if carry is not None:
            table = pa.concat_tables([carry, table])
        starts, heads = _query_heads(table["qid"])
        if not heads:
            continue
        if carry is not None:  # the carried query continues: it was checked when first seen
            seen.discard(heads[0])
        check(heads)
        cut = int(starts[-1])
        carry = table.slice(cut)
        if cut:
            yield heads[:-1], _as_run(table.slice(0, cut))
    if carry is not None:
        yield [carry["qid"][0].as_py()], _as_run(carry)
    refuse_no_run_lines(len(seen), path)


def query_blocks(path: str | os.PathLike, block_bytes: int = STREAM_BLOCK_BYTES,
                 rank: bool = True) -> Iterator[tuple[list[str], pd.DataFrame]]:
    """A run file (as :func:`evalset.io.trec.read_run` reads it) in blocks of whole queries, in file order: each
    block's distinct query ids, in order, and its rows. Read, parsed and cut on a thread of its own, one block
    ahead of the caller. ``rank=False``: the rank field is neither parsed nor checked and the blocks have no
    ``rank`` column (scoring reads it only under the tie rule ``run``; trec_eval never reads it), which saves
    about a fifth of the parse.

    Raises :class:`RunNotGrouped` on reaching a query id that reappears after another query, and InputError
    (file and line) on a malformed line or a damaged file. A JSON run or a run with named columns is never
    streamed: it is read whole, one block.
    """
    path = os.fspath(path)
    check_file(path)
    started = _READING.pop((path, block_bytes, rank), None)
    if started is not None:
        if started[0] == _stamp(path):  # the file read ahead (start_reading), unchanged since
            return started[1]
        started[1].close()
    if not _lines(path):
        run = read_run(path)
        return iter([(list(pd.unique(run["query_id"])), run)])
    return _Ahead(_query_blocks(path, block_bytes, rank))


def first_query_ids(path: str | os.PathLike, count: int) -> list[str]:
    """The first ``count`` distinct query ids of a run file, in file order (for messages)."""
    if not _lines(os.fspath(path)):  # a JSON or table run: read whole, as evalset.io.trec.read_run reads it
        return list(pd.unique(read_run(path)["query_id"]))[:count]
    found: dict[str, None] = {}
    for table in _parsed(os.fspath(path), STREAM_BLOCK_BYTES):
        found.update(dict.fromkeys(_query_heads(table["qid"])[1]))
        if len(found) >= count:
            break
    return list(found)[:count]
