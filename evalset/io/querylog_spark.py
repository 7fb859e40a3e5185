"""Query logs read by Spark (``evalset sample --engine spark``): the paths (a file, a folder or glob of part
files as Spark writes them, a URL Spark reads), a Spark DataFrame of the standard columns, and Spark's errors
as :class:`InputError` naming the file. Spark reads bytes that are not UTF-8 as U+FFFD, silently: a log with
such bytes is refused with its file and line, as the other engines refuse it (:func:`refuse_replaced_bytes`).

The pyspark objects are passed in: this module imports no pyspark at load time.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence

from evalset.errors import InputError
from evalset.io.files import check_file, utf8_error
from evalset.io.querylog import (
    LOG_FIELDS,
    LogColumns,
    log_format,
    resolve_log_columns,
    sql_string,
    standard_columns,
)

_CANCELLED = "SPARK_JOB_CANCELLED"
"""The error class of a Spark job cancelled (by PySpark's SIGINT handler, on Ctrl-C)."""

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path: str) -> bool:
    """A path with a scheme (``s3a://``, ``hdfs://``, ``file://``): Spark reads it, evalset does not look."""
    return bool(_URL.match(path))


def _hidden(name: str) -> bool:
    """Spark (Hadoop) skips files and folders whose names start with ``_`` or ``.`` (``_SUCCESS``, ``.crc``)."""
    return name.startswith(("_", "."))


def expand_log_paths(paths: Sequence[str | os.PathLike]) -> list[str]:
    """The log files behind ``paths``, as Spark reads them: a file as it is, a folder as every file under it
    (part files; names starting with ``_`` or ``.`` skipped, as Spark does), a glob pattern as its matches, a
    URL unchanged. Sorted within each path; a path that names nothing is refused, naming it."""
    files = []
    for path in map(os.fspath, paths):
        if is_url(path):
            files.append(path)
        elif os.path.isdir(path):
            found = []
            for root, folders, names in os.walk(path):
                folders[:] = [folder for folder in folders if not _hidden(folder)]
                found += [os.path.join(root, name) for name in names if not _hidden(name)]
            found.sort()
            if not found:
                raise InputError("the folder holds no log file", path)
            files += found
        elif not os.path.exists(path) and glob.has_magic(path):
            found = sorted(p for p in glob.glob(path) if os.path.isfile(p) and not _hidden(os.path.basename(p)))
            if not found:
                raise InputError("no file matches this pattern", path)
            files += found
        else:
            check_file(path)
            files.append(path)
    return files


def _spark_path(path: str) -> str:
    """What Spark is given: a URL as it is, a local file as an absolute ``file:`` path (not the cluster's
    default file system)."""
    return path if is_url(path) else "file://" + os.path.abspath(path)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _read(spark, files: list[str], fmt: str, header: bool):
    """A Spark DataFrame over ``files`` (one format), every column as Spark reads it (text for TSV/CSV)."""
    targets = [_spark_path(f) for f in files]
    if fmt == "parquet":
        return spark.read.parquet(*targets)
    if fmt == "jsonl":
        return spark.read.option("mode", "FAILFAST").json(targets)
    options = {"sep": "\t" if fmt == "tsv" else ",", "header": str(header).lower(), "inferSchema": "false",
               "mode": "FAILFAST", "encoding": "UTF-8"}
    # TSV: no quoting at all (queries contain "), as the other engines read it; CSV: standard double quotes.
    options.update({"quote": ""} if fmt == "tsv" else {"quote": '"', "escape": '"'})
    return spark.read.options(**options).csv(targets)


def read_query_log_spark(spark, files: Sequence[str], columns: LogColumns | None = None, *,
                         fmt: str | None = None, header: bool = True, shown: str | None = None):
    """A Spark DataFrame of the standard columns (see ``LOG_FIELDS``: text as strings, ``""`` for empty or
    missing values, ``count`` as a long) over log ``files`` (:func:`expand_log_paths`), of any formats.

    Columns are resolved against the names Spark reads (for a headerless TSV/CSV, positions only; for JSON
    Lines, Spark's own column order). A missing column raises :class:`InputError` naming the first file of
    its format (``shown``, when given, is named instead: the folder the user gave).
    """
    columns = columns or LogColumns()
    by_format: dict[str, list[str]] = {}
    for path in files:
        by_format.setdefault(log_format(path, fmt), []).append(path)
    frames = []
    for log_fmt, group in by_format.items():
        where = shown or group[0]
        with spark_errors(group, where):
            frame = _read(spark, group, log_fmt, header)
            names = list(frame.columns)
        resolved = resolve_log_columns(names, columns, where, header or log_fmt in ("jsonl", "parquet"))
        picked = {field: _quoted(names[index]) for field, index in resolved.items()}
        frames.append(frame.selectExpr(*standard_columns(picked, "STRING")))
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union.select(*[field for field in LOG_FIELDS if field in union.columns])


def refuse_replaced_bytes(table, files: Sequence[str], fmt: str | None = None) -> None:
    """Refuse, naming the file and line, a text log with bytes that are not UTF-8, which Spark read into ``table``
    (an Arrow table of its rows) as U+FFFD. Only when a text column of ``table`` holds U+FFFD are the local text
    files scanned (a U+FFFD written as valid UTF-8 is text like any other, and passes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not any(pc.any(pc.match_substring(table[name], "\ufffd")).as_py() for name in table.column_names
               if pa.types.is_string(table[name].type) or pa.types.is_large_string(table[name].type)):
        return
    for path in files:
        if not is_url(path) and log_format(path, fmt) in ("tsv", "csv", "jsonl"):
            error = utf8_error(path)
            if error is not None:
                raise error


class spark_errors:
    """A context in which Spark's errors about the input (a path it cannot read, a malformed record, a value
    that does not cast) become one-line :class:`InputError` naming the file: the one of ``files`` the message
    names, else ``shown``; a job cancelled by Ctrl-C is a ``KeyboardInterrupt``."""

    def __init__(self, files: Sequence[str], shown: str | None = None) -> None:
        self.files, self.shown = list(files), shown

    def __enter__(self) -> spark_errors:
        return self

    def __exit__(self, kind, exc, traceback) -> bool:
        if exc is None or not _is_spark_error(exc):
            return False
        if _CANCELLED in str(exc):  # Ctrl-C: PySpark's SIGINT handler cancelled the jobs; an interrupt, not bad input
            raise KeyboardInterrupt from None
        raise spark_input_error(exc, self.files, self.shown) from None


def _is_spark_error(exc: BaseException) -> bool:
    try:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException
    except ImportError:
        return False
    return isinstance(exc, PySparkException | Py4JJavaError)


def spark_input_error(exc: BaseException, files: Sequence[str], shown: str | None = None) -> InputError:
    """A one-line InputError from a Spark error: its first meaningful line (no Java stack, no SQLSTATE), the
    file it names among ``files`` (else ``shown``, else the only file)."""
    text = str(exc)
    java = getattr(exc, "java_exception", None)
    if java is not None:  # a Py4JJavaError: the message of the deepest cause says what was wrong
        cause, message = java, None
        while cause is not None:
            message = cause.getMessage() or message
            cause = cause.getCause()
        text = message or java.toString()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    message = lines[0] if lines else type(exc).__name__
    message = re.sub(r"\s*SQLSTATE: \w+\.?$", "", message)
    message = re.sub(r"file:(//)?", "", message)[:300]
    where = next((f for f in files if os.path.abspath(f) in text or f in text), None)
    if where is None:
        where = shown or (files[0] if len(files) == 1 else None)
    if where is not None:
        message = message.replace(os.path.abspath(where), "").replace(f" {where}", "").strip(" :.") or message
    return InputError(message, where)


# strptime directives and the java.time pattern letters Spark parses them with (fixed width)
_JAVA_PATTERN = {"Y": "yyyy", "y": "yy", "m": "MM", "d": "dd", "H": "HH", "M": "mm", "S": "ss", "f": "SSSSSS",
                 "b": "MMM", "B": "MMMM", "j": "DDD", "I": "hh", "p": "a", "%": "%"}


def java_time_pattern(strptime_format: str) -> str:
    """A strptime format as the java.time pattern Spark's ``to_timestamp`` takes: ``%y%m%d%H%M%S`` ->
    ``yyMMddHHmmss``, ``%Y-%m-%dT%H:%M:%S`` -> ``yyyy-MM-dd'T'HH:mm:ss``. A directive without an equivalent
    (``%z``, ``%a``, ``%U``, ...) is refused."""
    parts, literal, index = [], "", 0
    while index < len(strptime_format):
        char = strptime_format[index]
        if char == "%":
            directive = strptime_format[index + 1: index + 2]
            if directive not in _JAVA_PATTERN:
                raise InputError(f"-l timestamp_format: %{directive} cannot be parsed by Spark's to_timestamp; "
                                 f"the directives it takes: {', '.join('%' + d for d in _JAVA_PATTERN)}")
            if directive == "%":
                literal += "%"
            else:
                parts.append(_literal(literal) + _JAVA_PATTERN[directive])
                literal = ""
            index += 2
        else:
            literal += char
            index += 1
    return "".join(parts) + _literal(literal)


def _literal(text: str) -> str:
    """Text taken as it is in a java.time pattern: letters and quotes inside single quotes."""
    if not text:
        return ""
    if re.fullmatch(r"[^A-Za-z'\[\]{}#]*", text):
        return text
    return "'" + text.replace("'", "''") + "'"


def spark_timestamp_sql(timestamp_format: str | None) -> str:
    """Spark SQL parsing the ``timestamp`` column, NULL where it does not parse: ``try_to_timestamp`` with the
    format's java.time pattern, or by Spark's cast rules (ISO 8601) without one.

    ``%y`` means 1969-2068 to Python, while Spark's ``yy`` reads 2000-2099: a year from 2069 on is moved back
    a century, so that both engines put ``97`` in 1997."""
    if not timestamp_format:
        return "try_to_timestamp(timestamp)"
    parsed = f"try_to_timestamp(timestamp, {sql_string(java_time_pattern(timestamp_format))})"
    if "%y" in timestamp_format.replace("%%", ""):
        return f"CASE WHEN year({parsed}) >= 2069 THEN {parsed} - INTERVAL 100 YEARS ELSE {parsed} END"
    return parsed
