"""Files: existence checks, text lines of plain or gzipped files, tab-separated tables with a header,
inputs that can be read only once (stdin, pipes: copied once, :func:`local_file`), what a file is by its content
(:func:`content_kind`), and atomic writes (a temporary file beside the target, renamed into place only when the
write succeeded; a folder of several files built aside and renamed the same way; a disk that refuses the write is
a :class:`~evalset.errors.ServiceError` naming the target).

Text is read as ``utf-8-sig``: a UTF-8 byte order mark (as Excel and some editors write) is not part of the first
line, so it never shows in a column name or a first id. Every reader in :mod:`evalset.io` goes through these, so a
missing file, a folder, a non-UTF-8 line or a malformed line is refused the same way everywhere (InputError).
"""

from __future__ import annotations

import atexit
import contextlib
import csv
import errno
import gzip
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from evalset.errors import SHOWN_AS, InputError, ServiceError

if TYPE_CHECKING:
    import pandas as pd

BLOCK_SIZE = 1 << 24

STDIN = "-"
"""The input name that means stdin."""

_STDIN_NAMES = (STDIN, "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
_COPIES: dict[str, str] = {}  # an input read once, as given (stdin as "-") -> its copy on disk


# --------------------------------------------------------------------------------------------------- streams
def is_stream(path: str) -> bool:
    """Whether ``path`` can be read only once: ``-`` (stdin), a pipe or FIFO (``/dev/fd/63`` of a shell's process
    substitution ``<(zcat run.gz)``, ``/dev/stdin`` on a pipe), a terminal or a socket. A regular file, a folder or
    a missing path is not (a ``/dev/stdin`` redirected from a file is that file)."""
    if path == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def shown_name(path: str) -> str:
    """The name an error gives an input: ``<stdin>`` for ``-``, else the path as given."""
    return "<stdin>" if path == STDIN else path


def local_file(path: str) -> str:
    """A path that can be read more than once, for every reader (which read a file two or three times: a sniff of
    the first line, a fast parse, a line-by-line re-read for exact error lines).

    A regular file (anything that is not :func:`is_stream`) is returned as it is: one ``stat``, its reading is not
    changed. A stream is copied once, on its first use in the process, to a temporary file (``.gz`` when its first
    bytes are gzip's magic, so compressed data on a pipe is read as a ``.gz`` file), removed by
    :func:`remove_copies` (the CLI calls it at the end of every command) or at exit. Errors name the input as given
    (``<stdin>``, ``/dev/fd/63``), never the copy (:data:`evalset.errors.SHOWN_AS`). An empty stream is refused;
    so is stdin used twice (``--qrels - -``): it can be read once.
    """
    if not is_stream(path):
        return path
    key = STDIN if path in _STDIN_NAMES else path
    shown = shown_name(path)
    if key in _COPIES:
        if key == STDIN:
            raise InputError("stdin is read once: only one input can be `-` (or /dev/stdin)", shown)
        return _COPIES[key]
    folder = tempfile.mkdtemp(prefix="evalset-input-")
    try:
        source = sys.stdin.buffer if key == STDIN else open(path, "rb")  # noqa: SIM115 - closed below
        try:
            head = source.read(BLOCK_SIZE)
            if not head:
                raise InputError("empty input: nothing was read" + (" on stdin" if key == STDIN else ""), shown)
            copy = os.path.join(folder, "input.gz" if head.startswith(b"\x1f\x8b") else "input")
            with open(copy, "wb") as out:
                while head:
                    out.write(head)
                    head = source.read(BLOCK_SIZE)
        finally:
            if key != STDIN:
                source.close()
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise InputError(f"cannot read: {exc}", shown) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    _COPIES[key] = copy
    SHOWN_AS[copy] = shown
    return copy


def remove_copies() -> None:
    """Remove the copies :func:`local_file` made (a later use of stdin reads it again)."""
    for copy in _COPIES.values():
        SHOWN_AS.pop(copy, None)
        shutil.rmtree(os.path.dirname(copy), ignore_errors=True)
    _COPIES.clear()


atexit.register(remove_copies)


# --------------------------------------------------------------------------------------------------- parsing
def open_file(path: str, mode: str = "rt", **options) -> IO:
    """``open``, or ``gzip.open`` for a path ending in ``.gz``."""
    return (gzip.open if path.endswith(".gz") else open)(path, mode, **options)


def first_line(path: str, comments: bool = False) -> str:
    """The first non-blank line ('' if none); with ``comments``, the first that is not a comment line either (its
    first non-blank character ``#``: trec_eval 10's comments in runs and qrels)."""
    try:
        with open_file(path, "rt", encoding="utf-8-sig", errors="replace") as handle:  # -sig: drop a BOM
            for line in handle:
                if line.strip() and not (comments and line.lstrip().startswith("#")):
                    return line
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", path) from exc
    return ""


BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")
"""The header of a BEIR qrels file (``qrels/test.tsv``): tab separated, one judgment a line after it."""


RUN_COLUMNS = {"query_id": ("query_id", "qid"), "doc_id": ("doc_id", "docno", "docid"), "score": ("score",),
               "rank": ("rank",)}
"""The names a run's header may give its columns (case-insensitive): ir_measures' and pandas' ``query_id, doc_id,
score``, trec_eval's ``qid, docno``, ``docid``; ``rank`` is optional."""

PARQUET_MAGIC = b"PAR1"

TABLE_KINDS = ("run-table", "table", "queries-tsv", "parquet")
"""The kinds of :func:`content_kind` that are runs with named columns (:mod:`evalset.io.tablerun`), never TREC
lines."""


def header_fields(line: str) -> list[str]:
    """The fields of a header line, lower-cased and stripped: tab-separated if it holds a tab, else
    comma-separated; none for a line with neither (no table header)."""
    delimiter = "\t" if "\t" in line else "," if "," in line else None
    if delimiter is None:
        return []
    return [name.strip().strip('"').lower() for name in line.rstrip("\r\n").split(delimiter)]


def content_kind(path: str) -> str:
    """What a file is by its content: the one place inputs are told apart by content.

    ``"parquet"``: it starts with Parquet's magic bytes ``PAR1``. Else by its first non-blank line:
    ``"beir-qrels"``: its first field is ``query-id`` (BEIR's qrels header); ``"json"``: it starts with ``{`` or
    ``[`` (JSON Lines, BEIR's ``corpus.jsonl`` and ``queries.jsonl`` among them, or a JSON run); ``"run-table"``: a tab-
    or comma-separated header naming a query id, a document id and a score column (:data:`RUN_COLUMNS`: a run
    with named columns); ``"queries-tsv"``: its first field is ``query_id`` (a ``queries.tsv`` with its header);
    ``"table"``: another tab- or comma-separated header naming a query id column; ``"lines"``: anything else
    (TREC runs, qrels, topics); ``""`` for an empty file.
    """
    try:
        with open_file(path, "rb") as handle:
            if handle.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC:
                return "parquet"
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", path) from exc
    head = first_line(path).lstrip()
    if not head:
        return ""
    if head.startswith(("{", "[")):
        return "json"
    first = head.split("\t", 1)[0].strip()
    if first == BEIR_QRELS_HEADER[0]:
        return "beir-qrels"
    names = set(header_fields(head))
    named = {column for column, spellings in RUN_COLUMNS.items() if names & set(spellings)}
    if {"query_id", "doc_id", "score"} <= named:
        return "run-table"
    if first == "query_id":
        return "queries-tsv"
    return "table" if "query_id" in named and len(names) > 1 else "lines"


def utf8_error(path: str) -> InputError | None:
    """The InputError naming the first line of ``path`` that is not UTF-8, or None if every line is (for error
    messages only: a Python loop over lines, called after a fast reader failed)."""
    try:
        with open_file(path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError:
                    shown = line.rstrip(b"\r\n")[:80]
                    return InputError(f"not UTF-8 text (save the file as UTF-8): {shown!r}", path, number)
    except (OSError, EOFError):
        return None
    return None


SCAN_WINDOW_BYTES = 1 << 24
"""The text :func:`file_contains` holds at a time."""


def file_contains(path: str, needle: bytes) -> bool | None:
    """Whether an uncompressed file contains ``needle`` anywhere (a memchr-speed scan, :data:`SCAN_WINDOW_BYTES`
    at a time: a big file is not held whole); None if unknown."""
    if path.endswith(".gz"):
        return None
    overlap = len(needle) - 1  # a needle across two windows
    window = bytearray(SCAN_WINDOW_BYTES + overlap)
    view, kept = memoryview(window), 0
    with open(path, "rb") as handle:
        while count := handle.readinto(view[kept:]):
            end = kept + count
            if window.find(needle, 0, end) >= 0:
                return True
            kept = min(overlap, end)
            window[:kept] = window[end - kept:end]
    return False


# ----------------------------------------------------------------------------------------------------- files
@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds.

    A disk that refuses the write (a missing or read-only folder, a file where a folder should be, no space left)
    is a :class:`~evalset.errors.ServiceError` naming ``path``, whether it fails creating the folder or the
    temporary file, in the block's writes, or renaming; the temporary file is removed either way.
    """
    target = Path(path)
    with writing_to(path):
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(handle)
    try:
        with writing_to(path):
            yield tmp
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; the result should read like any other file
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def folder_built_aside(folder: str | os.PathLike, *, replace: bool = False) -> Iterator[Path]:
    """Yield a new folder beside ``folder`` to write into; rename it onto ``folder`` only if the block succeeds.

    A folder is never left mixed (new files beside old ones) nor half-written, even by Ctrl-C: the block writes
    into ``.NAME.build-PID-*`` beside ``folder``, removed if the block fails. An existing non-empty ``folder`` is
    refused (:class:`~evalset.errors.InputError`) unless ``replace``: then it is renamed aside, the build renamed
    into place, and the old folder removed (put back if the second rename fails). Builds and old folders left by
    a killed process are removed. A disk that refuses is a :class:`~evalset.errors.ServiceError` naming ``folder``.
    """
    target = Path(os.path.abspath(folder))
    with writing_to(folder):
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(target)
        build = Path(tempfile.mkdtemp(prefix=f".{target.name}.build-{os.getpid()}-", dir=target.parent))
    try:
        try:
            yield build
        except OSError as exc:  # a disk refusing the block's writes (pyarrow's errors name no file)
            if exc.errno not in DISK_REFUSALS and str(build) not in str(exc.filename):
                raise
            raise _write_refused(folder, exc) from exc
        with writing_to(folder):
            umask = os.umask(0)
            os.umask(umask)
            build.chmod(0o777 & ~umask)  # mkdtemp makes 0700; the result should read like any other folder
            if target.is_dir() and not any(target.iterdir()):
                target.rmdir()
            if not os.path.lexists(target):
                os.rename(build, target)
                return
            if not replace or not target.is_dir():
                raise InputError("exists and is not an empty folder (give --force to replace it)", str(folder))
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-{os.getpid()}-", dir=target.parent))
            os.rename(target, old / target.name)
            try:
                os.rename(build, target)
            except BaseException:
                os.rename(old / target.name, target)
                raise
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise


def _remove_stale(target: Path) -> None:
    """Remove the builds and old folders of ``target`` that a killed process left (its process is gone)."""
    for stale in [*target.parent.glob(f".{target.name}.build-*"), *target.parent.glob(f".{target.name}.old-*")]:
        pid = stale.name[len(target.name) + 1:].split("-")[1]
        if not (pid.isdigit() and (int(pid) == os.getpid() or Path(f"/proc/{pid}").exists())):
            shutil.rmtree(stale, ignore_errors=True)


def write_text(path: str | os.PathLike, text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_path`); return the path written."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    return os.fspath(path)


@contextlib.contextmanager
def writing_to(path: str | os.PathLike) -> Iterator[None]:
    """Turn an ``OSError`` in the block (making a folder, writing, renaming) into a
    :class:`~evalset.errors.ServiceError` naming ``path``: the disk refused the write."""
    try:
        yield
    except OSError as exc:
        raise _write_refused(path, exc) from exc


DISK_REFUSALS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO)  # whatever file (pyarrow names none)


def _write_refused(path: str | os.PathLike, exc: OSError) -> ServiceError:
    return ServiceError(f"cannot write {os.fspath(path)}: {exc}")


def check_file(path: str) -> None:
    """Refuse, naming the path, a file that does not exist, is a folder, or cannot be read."""
    if not os.path.exists(path):
        raise InputError("no such file", path)
    if os.path.isdir(path):
        raise InputError("is a folder, not a file", path)
    if not os.access(path, os.R_OK):
        raise InputError("cannot read: permission denied", path)


@contextlib.contextmanager
def text_lines(path: str) -> Iterator[Iterator[tuple[int, str]]]:
    """Yield ``(line_no, line)`` pairs (1-based, newline stripped) of a UTF-8 file, plain or ``.gz``."""
    check_file(path)
    try:
        with open_file(path, "rt", encoding="utf-8-sig", newline="") as handle:
            yield ((number, line.rstrip("\r\n")) for number, line in enumerate(handle, 1))
    except UnicodeDecodeError as exc:
        raise utf8_error(path) or InputError(f"not UTF-8 text: {exc}", path) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", path) from None


def newline_lines(path: str | os.PathLike) -> list[str]:
    """A UTF-8 file's lines, each with its ``\\n``, split at ``\\n`` only: a text field may hold U+2028 or U+0085
    (a passage's own line separators, written raw in JSON Lines), at which :meth:`str.splitlines` would split."""
    path = os.fspath(path)
    check_file(path)
    try:
        with open(path, encoding="utf-8", newline="\n") as handle:
            return handle.readlines()
    except UnicodeDecodeError as exc:
        raise utf8_error(path) or InputError(f"not UTF-8 text: {exc}", path) from None


def first_field(path: str) -> str:
    """The first tab-separated field of the first non-blank line ('' for an empty file)."""
    with text_lines(path) as lines:
        for _, line in lines:
            if line.strip():
                return line.split("\t", 1)[0].strip()
    return ""


def json_objects(path: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON Lines file; anything else is refused."""
    with text_lines(path) as lines:
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


def read_tsv_with_header(path: str, required: Iterable[str],
                         quoted: bool | None = True) -> tuple[list[list[str]], list[int], list[str]]:
    """The rows of a tab-separated file with a header naming ``required``, and each row's line number. ``quoted``:
    True, a field may be quoted as the csv module writes it; False, a quote is text like any other character; None,
    a line is split at every tab unless only the csv module's quoting gives it the header's width (a field with a
    tab, in a file pandas wrote)."""
    check_file(path)
    rows, line_numbers = [], []
    try:
        with open_file(path, "rt", encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE)
            header = [name.strip() for name in next(reader, [])]
            missing = [name for name in required if name not in header]
            if missing:
                raise InputError(f"missing column(s) {', '.join(missing)} in header {header}", path, 1)
            for row in reader:
                if not any(field.strip() for field in row):
                    continue
                if quoted is None and len(row) != len(header):
                    row = next(csv.reader(["\t".join(row)], delimiter="\t"))
                if len(row) != len(header):
                    raise InputError(f"expected {len(header)} tab-separated fields, found {len(row)}", path,
                                     reader.line_num)
                rows.append(row)
                line_numbers.append(reader.line_num)
    except UnicodeDecodeError as exc:
        raise utf8_error(path) or InputError(f"not UTF-8 text: {exc}", path) from None
    except csv.Error as exc:
        raise InputError(f"cannot parse: {exc}", path) from None
    except (OSError, EOFError) as exc:  # a corrupt .gz, an I/O error
        raise InputError(f"cannot read: {exc}", path) from None
    return rows, line_numbers, header


def refuse_blank(frame: pd.DataFrame, columns: Iterable[str], line_numbers: list[int], path: str) -> None:
    for column in columns:
        blank = frame[column].astype(str).str.strip() == ""
        if blank.any():
            row = int(np.flatnonzero(blank.to_numpy())[0])
            raise InputError(f"empty {column}", path, line_numbers[row])


def refuse_repeats(frame: pd.DataFrame, key: list[str], line_numbers: list[int], path: str,
                    what: str) -> None:
    repeated = frame.duplicated(key, keep=False).to_numpy()
    if repeated.any():
        rows = np.flatnonzero(repeated)
        first = frame.iloc[rows[0]][key].tolist()
        same = [row for row in rows if frame.iloc[row][key].tolist() == first]
        raise InputError(f"{what} {' '.join(map(str, first))} appears twice (lines {line_numbers[same[0]]} "
                         f"and {line_numbers[same[1]]})", path, line_numbers[same[1]])
