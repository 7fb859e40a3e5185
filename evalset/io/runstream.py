"""A TREC run read in blocks of whole queries, streaming: memory holds one block of text (and the rows of the
one query carried from a block into the next), never the whole run.

Conventions
-----------
- When a run is streamed: :func:`streams` says so for a file above :data:`STREAM_ABOVE_BYTES` on disk (above
  :data:`STREAM_ABOVE_COMPRESSED_BYTES` when compressed); below it, reading the file whole is faster (the whole-file
  parse uses both cores) and its memory is small anyway.
- Blocks are cut at query boundaries: the rows of the last query of each block of text are carried into the next,
  so that every block holds whole queries when the run is grouped by query (each query's lines together, as TREC
  runs are and as :func:`evalset.io.trec.write_run` writes them). A query id that reappears after another query
  raises :class:`RunNotGrouped`; the caller then reads the run whole (nothing has been reported yet).
- Parsing is :func:`evalset.io.trec.read_run`'s: a fast one-delimiter parse, and the line-by-line whitespace
  parse for the rest of the file from the first block that does not fit it (runs of spaces, mixed delimiters,
  blank lines, a bad value). The values are the same, and a malformed line is refused with its number in the
  file, as when the file is read whole. One difference: the check for shifted fields (a space inside a query id)
  compares a line's width with the usual width in its block of text rather than in the whole file.
- A compressed file that ends early (a truncated ``.gz``) is refused, naming the line after the last one read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from evalset.errors import InputError
from evalset.io.files import check_file, first_line, utf8_error
from evalset.io.trec import RUN_LAYOUT, _parse_options, _typed_columns, split_lines

STREAM_ABOVE_BYTES = 256 << 20
"""A run file larger than this on disk is streamed (about 7M lines of a usual run)."""

STREAM_ABOVE_COMPRESSED_BYTES = 64 << 20
"""A compressed (``.gz``, ``.bz2``) run file larger than this on disk is streamed."""

STREAM_BLOCK_BYTES = 1 << 26
"""Text read at a time when streaming (64 MiB, about 1.7M lines)."""

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
        return os.path.getsize(path) > limit
    except OSError:
        return False  # the whole-file reader names the problem


def _open(path: str, parse: pacsv.ParseOptions, names: list[str], include: list[str],
          numbers: dict[str, pa.DataType] | None, block_bytes: int) -> pacsv.CSVStreamingReader:
    return pacsv.open_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, block_size=block_bytes),
        parse_options=parse,
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.large_string()) | (numbers or {}),
            include_columns=include,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def _columns(qid, docid, rank, score) -> pa.Table:
    return pa.table({"qid": pc.cast(qid, pa.large_string()), "docid": pc.cast(docid, pa.large_string()),
                     "rank": rank, "score": score})


def _fits(table: pa.Table, delimiter: str) -> bool:
    """The fast parse's checks (see :func:`evalset.io.trec._fields_fast`): ids neither empty nor holding the other
    delimiter, no shifted line, finite scores."""
    other = " " if delimiter == "\t" else "\t"
    for name in ("qid", "docid"):
        column = table[name]
        if len(column) and (pc.min(pc.binary_length(column)).as_py() == 0
                            or pc.any(pc.match_substring(column, other)).as_py()):
            return False
    if pc.any(pc.equal(table["docid"], RUN_LAYOUT.shifted_marker)).as_py():
        return False
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


def _by_line(path: str, skip: int, block_bytes: int) -> Iterator[pa.Table]:
    """The line-by-line parse, from line ``skip + 1`` on, in blocks; errors name the line in the file."""
    try:
        reader = _open(path, _parse_options("\x1e", False), ["line"], ["line"], None, block_bytes)
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            return
        raise _read_error(path, exc, 0) from exc
    except OSError as exc:
        raise _read_error(path, exc, 0) from exc
    line = 1  # the number of the next line in the file
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except (pa.ArrowInvalid, OSError) as exc:
            raise _read_error(path, exc, line - 1) from exc
        lines = batch.column(0)
        if skip >= len(lines):
            skip -= len(lines)
            line += len(lines)
            continue
        lines, line, skip = lines.slice(skip), line + skip, 0
        table, typed = _typed_columns(split_lines(lines, RUN_LAYOUT, path, line), path, RUN_LAYOUT, _NUMBERS)
        line += len(lines)
        yield _columns(table["qid"], table["docid"], typed["rank"], typed["score"])


def _parsed_blocks(path: str, block_bytes: int) -> Iterator[pa.Table]:
    """``qid, docid, rank, score`` in blocks of lines, in file order: the fast parse while the blocks fit it, then
    the line-by-line parse for the rest (a row of the fast parse is a line: blank lines do not fit it)."""
    head = first_line(path)
    done = 0
    if head:
        delimiter = "\t" if "\t" in head else " "
        try:
            reader = _open(path, _parse_options(delimiter, False), list(RUN_LAYOUT.fields), list(RUN_LAYOUT.keep),
                           _NUMBERS, block_bytes)
            for batch in reader:
                table = pa.Table.from_batches([batch])
                if not _fits(table, delimiter):
                    break
                done += len(table)
                yield _columns(table["qid"], table["docid"], table["rank"], table["score"])
            else:
                return
        except (pa.ArrowInvalid, OSError):
            pass  # the line-by-line parse reads on from here, and names the line if it is bad
    yield from _by_line(path, done, block_bytes)


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
    return pa.table({"query_id": table["qid"], "doc_id": table["docid"], "rank": table["rank"],
                     "score": table["score"]}).to_pandas()


def run_blocks(path: str | os.PathLike, block_bytes: int = STREAM_BLOCK_BYTES) -> Iterator[pd.DataFrame]:
    """A run file (as :func:`evalset.io.trec.read_run` reads it) in blocks of whole queries, in file order.

    Raises :class:`RunNotGrouped` on reaching a query id that reappears after another query, and InputError
    (file and line) on a malformed line or a damaged file.
    """
    path = os.fspath(path)
    check_file(path)
    seen: set[str] = set()
    carry: pa.Table | None = None

    def check(heads: list[str]) -> None:
        for query_id in heads:
            if query_id in seen:
                raise RunNotGrouped(query_id)
            seen.add(query_id)

    for table in _parsed_blocks(path, block_bytes):
        if carry is not None:
            table = pa.concat_tables([carry, table])
        starts, heads = _query_heads(table["qid"])
        if not heads:
            continue
        if carry is not None and len(carry):  # the carried query continues: it was checked when first seen
            seen.discard(heads[0])
        check(heads)
        cut = int(starts[-1])
        carry = table.slice(cut)
        if cut:
            yield _as_run(table.slice(0, cut))
    if carry is not None and len(carry):
        yield _as_run(carry)


def first_query_ids(path: str | os.PathLike, count: int) -> list[str]:
    """The first ``count`` distinct query ids of a run file, in file order (for messages)."""
    found: dict[str, None] = {}
    for table in _parsed_blocks(os.fspath(path), STREAM_BLOCK_BYTES):
        found.update(dict.fromkeys(_query_heads(table["qid"])[1]))
        if len(found) >= count:
            break
    return list(found)[:count]
