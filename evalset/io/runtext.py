"""A TREC run file's text in pieces that end at a line end, each parsed by the one-delimiter parse, and read ahead on
a thread of its own. Imports no pandas, so that a command starts reading a big run before the library has loaded
(:func:`read_ahead`); :mod:`evalset.io.runstream` checks the pieces, cuts them into blocks of whole queries and
parses a piece line by line when it does not fit.

Conventions
-----------
- A plain file is read a piece at a time into one buffer, reused; a piece waiting to be taken holds no text
  (:class:`FileText`: read again when taken). It is read, never mapped into memory: a file cut short while it is
  read is an error naming it, not a bus error. A compressed file is decompressed a block at a time.
- A piece is parsed on one thread (the scorer has the other core); a number spelled ``NA`` or ``null`` is not a
  number (the piece then goes to the line-by-line parse, which names the line).
- The rank field is parsed only when asked (``rank``): scoring reads ranks only under the tie rule ``run``.
- :func:`read_ahead` holds at most :data:`READ_AHEAD_PIECES` parsed pieces (about 15 MiB each) while the command
  loads, then one once the command takes them; a file read ahead and then changed on disk is read again.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from evalset.errors import InputError
from evalset.io.files import TABLE_KINDS, check_file, content_kind, first_line
from evalset.io.trecfields import RUN_LAYOUT

STREAM_ABOVE_BYTES = 64 << 20
"""A run file larger than this on disk is streamed (about 1.7M lines of a usual run)."""

STREAM_ABOVE_COMPRESSED_BYTES = 16 << 20
"""A compressed (``.gz``, ``.bz2``) run file larger than this on disk is streamed (about 1.4M lines)."""

STREAM_BLOCK_BYTES = 1 << 24
"""Text read at a time when streaming (16 MiB, about 430,000 lines of a usual run): 32 MiB pieces took the same time
on 10M lines and held 65 MiB more on 100M, for 10% less time there (2026-12-02, ``evalset score``: peak 802-807
against 737-741 MiB; 22.0 against 24.5 s)."""

READ_AHEAD_PIECES = 2
"""Parsed pieces :func:`read_ahead` holds before the command takes them."""

COMPRESSED = (".gz", ".bz2")
_NUMBERS = {"rank": pa.int64(), "score": pa.float64()}


def streams(path: str | os.PathLike, above: int | None = None, compressed_above: int | None = None) -> bool:
    """Whether a run file is big enough to be streamed: larger than ``above`` bytes on disk (``compressed_above``
    when compressed; defaults :data:`STREAM_ABOVE_BYTES`, :data:`STREAM_ABOVE_COMPRESSED_BYTES`), and TREC lines
    (a JSON run or a run with named columns is read whole)."""
    path = os.fspath(path)
    compressed = path.endswith(COMPRESSED)
    limit = compressed_above if compressed else above
    if limit is None:
        limit = STREAM_ABOVE_COMPRESSED_BYTES if compressed else STREAM_ABOVE_BYTES
    try:
        return os.path.getsize(path) > limit and lines_file(path)
    except (OSError, InputError):
        return False  # the whole-file reader names the problem


def lines_file(path: str) -> bool:
    """Whether a run file is TREC lines (streamable), not a JSON run or a run with named columns (read whole)."""
    kind = content_kind(path)
    return kind != "json" and kind not in TABLE_KINDS


def delimiters(head: str) -> tuple[str, str]:
    """The one-delimiter parse's delimiter for a file whose first line is ``head`` (a tab if it holds one, else a
    space), and the other one, which no field may hold."""
    return ("\t", " ") if "\t" in head else (" ", "\t")


def parse_options(delimiter: str, ignore_empty_lines: bool) -> pacsv.ParseOptions:
    """Fields split at one delimiter, nothing quoted or escaped."""
    return pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False,
                              ignore_empty_lines=ignore_empty_lines)


def read_options(names: list[str], numbers: dict[str, pa.DataType] | None, include: list[str]):
    """Arrow's read and convert options for a piece of text: one thread, ids as strings, ``numbers`` typed."""
    return (pacsv.ReadOptions(column_names=names, block_size=1 << 22, use_threads=False),
            pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.large_string()) | (numbers or {}),
                                 include_columns=include, strings_can_be_null=False, quoted_strings_can_be_null=False,
                                 null_values=[]))


_LARGEST_BLOCK = (1 << 31) - 1  # arrow's block size is a 32-bit integer


def read_csv(source: str | pa.Buffer, read: pacsv.ReadOptions, **options) -> pa.Table:
    """arrow's ``read_csv`` of a file or a buffer; where a line is longer than the block (arrow: a "straddling
    object"), read again in blocks 16 times larger, up to 2 GiB."""
    while True:
        try:
            return pacsv.read_csv(pa.BufferReader(source) if isinstance(source, pa.Buffer) else source,
                                  read_options=read, **options)
        except pa.ArrowInvalid as exc:
            if "straddl" not in str(exc) or read.block_size >= _LARGEST_BLOCK:
                raise
            read.block_size = min(read.block_size * 16, _LARGEST_BLOCK)


def number_fields(rank: bool) -> dict[str, pa.DataType]:
    """The number fields parsed: the score, and the rank when asked."""
    return _NUMBERS if rank else {"score": _NUMBERS["score"]}


def _newline(window: Callable[[int, int], np.ndarray], begin: int, end: int, last: bool) -> int:
    """The place of the first (or last) newline byte between ``begin`` and ``end``, or -1; searched in windows
    (``window(lo, hi)``: those bytes) from that end."""
    size = 1 << 16
    for start in (range(end - size, begin - size, -size) if last else range(begin, end, size)):
        low = max(start, begin)
        found = np.flatnonzero(window(low, min(start + size, end)) == 10)
        if len(found):
            return low + int(found[-1] if last else found[0])
    return -1


def _changed(path: str) -> OSError:
    return OSError(f"the file is shorter than when it was read ({os.path.getsize(path)} bytes): it changed")


class FileText:
    """A piece of a plain file's text (``size`` bytes from ``start``), read when asked (:meth:`buffer`): a piece
    waiting to be taken holds no memory. The file is read, never mapped into memory: a file cut short while it is
    read is an OSError, where a mapped one would end the process (a bus error)."""

    __slots__ = ("path", "size", "start")

    def __init__(self, path: str, start: int, size: int):
        self.path, self.start, self.size = path, start, size

    def buffer(self, into: bytearray | None = None) -> pa.Buffer:
        """The text, read into ``into`` (reused from piece to piece: no new pages) when it is large enough."""
        view = memoryview(into if into is not None and len(into) >= self.size else bytearray(self.size))
        view, done = view[:self.size], 0
        with open(self.path, "rb", buffering=0) as file:
            while done < self.size:
                read = os.preadv(file.fileno(), [view[done:]], self.start + done)
                if not read:
                    raise _changed(self.path)
                done += read
        return pa.py_buffer(view)


Text = pa.Buffer | FileText


def text_buffer(text: Text) -> pa.Buffer:
    """The bytes of a piece of text."""
    return text.buffer() if isinstance(text, FileText) else text


def text_pieces(path: str, block_bytes: int) -> Iterator[Text]:
    """The file's text (decompressed) in pieces that end at a line end: a plain file's pieces are
    :class:`FileText` (read when taken); a compressed one is read a block at a time, each block cut after its
    first and its last newline, the piece of a line before the first joined to the rest of the block before (a
    short piece of its own)."""
    if not path.endswith(COMPRESSED) and os.path.isfile(path):
        with open(path, "rb", buffering=0) as file:
            def window(low: int, high: int) -> np.ndarray:
                data = os.pread(file.fileno(), high - low, low)
                if len(data) < high - low:
                    raise _changed(path)
                return np.frombuffer(data, dtype=np.uint8)

            size, start = os.fstat(file.fileno()).st_size, 0
            while start < size:
                stop = min(start + block_bytes, size)
                if stop < size:
                    last = _newline(window, start, stop, last=True)
                    if last >= 0:
                        stop = last + 1
                    else:  # a line longer than a block: to its end
                        first = _newline(window, stop, size, last=False)
                        stop = size if first < 0 else first + 1
                yield FileText(path, start, stop - start)
                start = stop
        return
    with pa.input_stream(path) as stream:  # compression from the file name, as the whole-file reader does
        rest = b""
        while True:
            buffer = stream.read_buffer(block_bytes)
            if buffer.size == 0:
                break
            data = np.frombuffer(buffer, dtype=np.uint8)

            def window(low: int, high: int, data=data) -> np.ndarray:
                return data[low:high]

            last = _newline(window, 0, len(data), last=True)
            if last < 0:
                rest += buffer.to_pybytes()
                continue
            first = _newline(window, 0, len(data), last=False)
            yield pa.py_buffer(rest + buffer.slice(0, first + 1).to_pybytes())
            if last > first:
                yield buffer.slice(first + 1, last - first)
            rest = buffer.slice(last + 1).to_pybytes()
        if rest:
            yield pa.py_buffer(rest)


def _fast_parse(text: pa.Buffer, delimiter: str, numbers: dict[str, pa.DataType]) -> pa.Table | None:
    """The one-delimiter parse of a piece (a row is a line: blank lines do not fit), None where it fails."""
    read, convert = read_options(list(RUN_LAYOUT.fields), numbers, ["qid", "docid", *numbers])
    try:
        return read_csv(text, read, parse_options=parse_options(delimiter, False), convert_options=convert)
    except pa.ArrowInvalid:
        return None


def holds(piece: pa.Buffer, byte: str) -> bool:
    """Whether a piece of text holds ``byte`` (a scan a MiB at a time)."""
    data, code = np.frombuffer(piece, dtype=np.uint8), ord(byte)
    return any((data[start:start + (1 << 20)] == code).any() for start in range(0, len(data), 1 << 20))


def parsed_pieces(path: str, block_bytes: int,
                  rank: bool) -> Iterator[tuple[Text, pa.Table | None, str | None]]:
    """Each piece of the text, its one-delimiter parse (None where it fails, or when the file has no line to
    parse) and the other delimiter if the piece holds it (:func:`delimiters`: no field may hold it), else None;
    in file order. A plain file's pieces are read into one buffer, reused. A file that cannot be read raises from
    the iteration (OSError, ``pa.ArrowInvalid``, EOFError)."""
    head = first_line(path, comments=True)
    (delimiter, other), numbers = delimiters(head), number_fields(rank)
    into = bytearray(block_bytes)
    for piece in text_pieces(path, block_bytes):
        if isinstance(piece, FileText):
            into = into if len(into) >= piece.size else bytearray(piece.size)
            text, held = piece.buffer(into), into.find(other.encode(), 0, piece.size) >= 0
        else:
            text, held = piece, holds(piece, other)
        table = _fast_parse(text, delimiter, numbers) if head else None
        del text  # the parse holds none of the text: the buffer is free for the next piece
        yield piece, table, other if held else None


_END = object()


class ReadAhead:
    """``items``, produced on a thread of its own (parsing releases the GIL) from the moment this is made, at most
    ``depth`` items ahead of the caller; an exception is handed over and raised in the caller. The thread stops
    when the caller stops early: :meth:`close`, or this iterator dropped (the thread holds no reference to it), and
    at the latest when the process exits (an interrupted command: the thread must not be in arrow's code while the
    interpreter shuts down)."""

    def __init__(self, items: Iterator, depth: int = 1):
        self._pieces: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._producer = threading.Thread(target=_produce, args=(items, self._pieces, self._stop),
                                          name="evalset-run-reader", daemon=True)
        _PRODUCERS[self._producer] = self._stop
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

    def hold(self, depth: int) -> None:
        """From now on at most ``depth`` items ahead of the caller."""
        with self._pieces.mutex:  # put() reads maxsize under this lock
            self._pieces.maxsize = depth

    def close(self) -> None:
        self._done = True
        self._stop.set()
        self._producer.join()
        with contextlib.suppress(queue.Full):  # a caller waiting in another thread (a reader of this one) ends too
            self._pieces.put_nowait(_END)

    def __del__(self):
        stop = getattr(self, "_stop", None)  # an interrupt may land in __init__, before the stop exists
        if stop is not None:
            stop.set()


_PRODUCERS: weakref.WeakKeyDictionary[threading.Thread, threading.Event] = weakref.WeakKeyDictionary()
"""Each producer thread still known and its stop. The threads, not the readers: a reader dropped while its
thread is in a parse (an interrupt unwinding the caller) is gone, but its thread must still be stopped."""


@atexit.register
def _stop_readers() -> None:
    # Joined before the process exits: a thread still in arrow's code when the C library's exit handlers tear
    # arrow down aborts the process ("cannot create default memory pool") or crashes it.
    producers = list(_PRODUCERS.items())
    for _, stop in producers:
        stop.set()
    for producer, _ in producers:
        producer.join()


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


_READ_AHEAD: dict[tuple[str, int, bool], tuple[tuple[float, int], ReadAhead]] = {}


def _stamp(path: str) -> tuple[float, int]:
    status = os.stat(path)
    return status.st_mtime, status.st_size


def read_ahead(paths: Iterable[str | os.PathLike], block_bytes: int | None = None, rank: bool = True) -> None:
    """Start parsing the first of ``paths`` that :func:`streams`, on a thread of its own, while the command loads
    the library and reads its qrels: :func:`evalset.io.runstream.query_blocks` of that file (with the same
    ``block_bytes``, default :data:`STREAM_BLOCK_BYTES`, and ``rank``) continues from the pieces already parsed.
    A file that cannot be read is left to the reader to refuse."""
    block_bytes = block_bytes or STREAM_BLOCK_BYTES
    for path in map(os.fspath, paths):
        try:
            if streams(path) and (path, block_bytes, rank) not in _READ_AHEAD:
                check_file(path)
                reader = ReadAhead(parsed_pieces(path, block_bytes, rank), depth=READ_AHEAD_PIECES)
                _READ_AHEAD[path, block_bytes, rank] = _stamp(path), reader
                return
        except (OSError, InputError):
            continue


def pieces(path: str, block_bytes: int, rank: bool) -> Iterator[tuple[Text, pa.Table | None, str]]:
    """:func:`parsed_pieces` of the file: those :func:`read_ahead` has parsed, if it read this file (unchanged
    since), else parsed now."""
    started = _READ_AHEAD.pop((path, block_bytes, rank), None)
    if started is not None:
        if started[0] == _stamp(path):
            started[1].hold(1)  # the depth covered the command's loading; now it takes the pieces as they come
            return started[1]
        started[1].close()
    return parsed_pieces(path, block_bytes, rank)
