"""A TREC run read in blocks of whole queries, streaming: memory holds one block of text (and the rows of the
one query carried from a block into the next), never the whole run.

Conventions
-----------
- When a run is streamed: :func:`streams` says so for a file above :data:`STREAM_ABOVE_BYTES` on disk (above
  :data:`STREAM_ABOVE_COMPRESSED_BYTES` when compressed). Streamed, the text of a piece is parsed on one thread
  while the blocks before are scored on the other, and memory does not grow with the run; below about 1M lines
  there is nothing to overlap and both ways take the same time (2026-12-01, quiet machine: 1M lines 0.35 s either
  way, 3M lines 0.79 s streamed and 0.81 s whole, 10M lines 2.3-2.5 s streamed and 3.6-3.9 s whole).
- The text is read in pieces and each piece parsed by :mod:`evalset.io.runtext` (which a command may start before
  the library loads: :func:`evalset.io.runtext.read_ahead`); here the pieces are checked and cut into blocks.
- The rank field is read only with ``rank=True`` (scoring asks for it only under the tie rule ``run``; trec_eval
  never reads it): otherwise a rank that is not an integer is not an error.
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
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalset.errors import InputError
from evalset.io import runtext
from evalset.io.files import check_file, utf8_error
from evalset.io.runtext import COMPRESSED, STREAM_ABOVE_BYTES, STREAM_ABOVE_COMPRESSED_BYTES, STREAM_BLOCK_BYTES
from evalset.io.trec import _typed_columns, read_run, refuse_no_run_lines
from evalset.io.trecfields import RUN_LAYOUT, has_comment, split_lines

__all__ = [
    "STREAM_ABOVE_BYTES",
    "STREAM_ABOVE_COMPRESSED_BYTES",
    "STREAM_BLOCK_BYTES",
    "RunNotGrouped",
    "first_query_ids",
    "query_blocks",
    "streams",
]


class RunNotGrouped(Exception):
    """The run's lines are not grouped by query: ``query_id`` reappears after another query."""

    def __init__(self, query_id: str):
        super().__init__(f"query {query_id} reappears after another query")
        self.query_id = query_id


def streams(path: str | os.PathLike) -> bool:
    """Whether a run file is big enough to be streamed (see the module's conventions)."""
    return runtext.streams(path, STREAM_ABOVE_BYTES, STREAM_ABOVE_COMPRESSED_BYTES)


def _fits(table: pa.Table, other: str | None) -> bool:
    """The fast parse's checks (see :func:`evalset.io.trec._fields_fast`): ids neither empty nor holding the other
    delimiter (``other``: given when the text holds it), no shifted line, finite scores."""
    for name in ("qid", "docid"):
        column = table[name]
        if len(column) and (pc.min(pc.binary_length(column)).as_py() == 0
                            or (other and pc.any(pc.match_substring(column, other)).as_py())):
            return False
    if pc.any(pc.equal(table["docid"], RUN_LAYOUT.shifted_marker)).as_py() or has_comment(table["qid"]):
        return False  # a shifted line, a comment line: the line-by-line parse names it, skips it
    return len(table) == 0 or bool(pc.all(pc.is_finite(table["score"])).as_py())


def _read_error(path: str, exc: Exception, lines_read: int) -> InputError:
    if isinstance(exc, pa.ArrowInvalid) and "UTF8" in str(exc).upper().replace("-", ""):
        found = utf8_error(path)
        if found:
            return found
    if path.endswith(COMPRESSED):
        return InputError(f"the compressed file ends early or is damaged after line {lines_read} ({exc}): a "
                          "truncated download or copy?", path, lines_read + 1)
    return InputError(f"cannot read after line {lines_read}: {exc}", path, lines_read + 1)


def _by_line(chunk: pa.Buffer, path: str, line: int, numbers: dict[str, pa.DataType]) -> tuple[pa.Table, int]:
    """The line-by-line parse of a piece of text whose first line is line ``line`` of the file (errors name the
    line in the file); the table and the number of lines in the piece."""
    read, convert = runtext.read_options(["line"], None, ["line"])
    try:
        lines = runtext.read_csv(chunk, read, convert_options=convert,
                                 parse_options=runtext.parse_options("\x1e", False))["line"].combine_chunks()
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


def _parsed(pieces: Iterator, path: str, rank: bool) -> Iterator[pa.Table]:
    """``qid, docid[, rank], score`` in pieces of lines, in file order (``pieces``: those of
    :func:`evalset.io.runtext.pieces`): each piece by the fast parse if it fits, else by the line-by-line parse."""
    numbers = runtext.number_fields(rank)
    line = 1  # the number in the file of the piece's first line
    while True:
        try:
            piece = next(pieces, None)
        except (OSError, pa.ArrowInvalid, EOFError) as exc:
            raise _read_error(path, exc, line - 1) from exc
        if piece is None:
            return
        chunk, table, other = piece
        del piece
        if table is not None and _fits(table, other):
            line += len(table)
        else:
            table, count = _by_line(runtext.text_buffer(chunk), path, line, numbers)
            line += count
        yield table


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


def _query_blocks(pieces: Iterator, path: str, rank: bool) -> Iterator[tuple[list[str], pd.DataFrame]]:
    seen: set[str] = set()
    carry: pa.Table | None = None  # the rows of the last query of the piece before (never empty)

    def check(heads: list[str]) -> None:
        for query_id in heads:
            if query_id in seen:
                raise RunNotGrouped(query_id)
            seen.add(query_id)

    for table in _parsed(pieces, path, rank):
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
    ahead of the caller (pieces read ahead by :func:`evalset.io.runtext.read_ahead`: parsed there, cut here).
    ``rank=False``: the rank field is neither parsed nor checked and the blocks have no ``rank`` column (scoring
    reads it only under the tie rule ``run``; trec_eval never reads it), which saves about a fifth of the parse.

    Raises :class:`RunNotGrouped` on reaching a query id that reappears after another query, and InputError
    (file and line) on a malformed line or a damaged file. A JSON run or a run with named columns is never
    streamed: it is read whole, one block.
    """
    path = os.fspath(path)
    check_file(path)
    if not runtext.lines_file(path):
        run = read_run(path)
        return iter([(list(pd.unique(run["query_id"])), run)])
    pieces = runtext.pieces(path, block_bytes, rank)
    blocks = _query_blocks(pieces, path, rank)
    # pieces read ahead come from a thread already: the blocks are cut on the caller's, which has time while the
    # next piece is parsed, and no third piece is held in between
    return blocks if isinstance(pieces, runtext.ReadAhead) else runtext.ReadAhead(blocks)


def first_query_ids(path: str | os.PathLike, count: int) -> list[str]:
    """The first ``count`` distinct query ids of a run file, in file order (for messages)."""
    if not runtext.lines_file(os.fspath(path)):  # a JSON or table run: read whole, as evalset.io.trec.read_run reads it
        return list(pd.unique(read_run(path)["query_id"]))[:count]
    found: dict[str, None] = {}
    path = os.fspath(path)
    for table in _parsed(runtext.parsed_pieces(path, STREAM_BLOCK_BYTES, rank=False), path, rank=False):
        found.update(dict.fromkeys(_query_heads(table["qid"])[1]))
        if len(found) >= count:
            break
    return list(found)[:count]
