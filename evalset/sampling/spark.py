"""Steps 1 and 3 as Spark SQL over the log files (``--engine spark``): for logs that outgrow one machine.

The SQL is :mod:`~evalset.sampling.sql`'s (only the timestamp parsing is Spark's own: ``try_to_timestamp``);
step 2, the screening of the distinct raw texts, is the one implementation every engine shares, run here on
the driver. A local session (``local[*]``) by default, a cluster by ``master`` (``spark://``, ``yarn``, ...),
Spark Connect by an ``sc://`` URL or the ``SPARK_REMOTE`` environment variable. Spark's logs are kept quiet
(log level ERROR, the JVM's own output to a file); its progress is a bar on stderr, on a terminal only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import threading
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa

from evalset.errors import InputError, ServiceError
from evalset.io.querylog import LogColumns
from evalset.io.querylog_spark import read_query_log_spark, refuse_replaced_bytes, spark_errors, spark_timestamp_sql
from evalset.sampling.memory import check_log_columns
from evalset.sampling.options import Normalisation, QueryCounts, Screen, Strata, Window
from evalset.sampling.screening import screen_grouped_rows
from evalset.sampling.sql import counts_from_query_frequencies, group_rows_sql, query_frequencies_sql

INSTALL_HINT = "pip install 'evalset[spark]'"
# log4j2: only errors, on the JVM's stderr (which evalset sends to a file)
_LOG4J2 = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def _pyspark_sql():
    try:
        import pyspark.sql
    except ImportError:
        raise InputError(f"--engine spark needs PySpark, which is not installed: {INSTALL_HINT}") from None
    return pyspark.sql


def spark_session(master: str | None = None, config: Mapping[str, str] | None = None):
    """The Spark session evalset runs on: the active one (a notebook's, a test's) when no ``master`` is
    given, else a new one: Spark Connect for an ``sc://`` URL (or ``SPARK_REMOTE``), else ``master``
    (default ``local[*]``), with the UI off, UTC as the session time zone, Spark's logs quiet, and the
    settings ``config`` (e.g. ``spark.sql.warehouse.dir``)."""
    sql = _pyspark_sql()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support", category=FutureWarning)
        active = sql.SparkSession.getActiveSession()
        if active is not None and master is None:
            return active
        remote = master if master and master.startswith("sc://") else None
        if remote is None and master is None:
            remote = os.environ.get("SPARK_REMOTE")
        builder = sql.SparkSession.builder.appName("evalset sample").config("spark.sql.session.timeZone", "UTC")
        if remote:
            for key, value in (config or {}).items():
                builder = builder.config(key, value)
            try:
                return builder.remote(remote).getOrCreate()
            except Exception as exc:  # no server, or pyspark without its connect extra
                raise ServiceError(f"Spark Connect at {remote}: {str(exc).splitlines()[0][:300]}") from None
        return _local_or_cluster(builder, master or "local[*]", config or {})


def _local_or_cluster(builder, master: str, config: Mapping[str, str]):
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise ServiceError("Spark needs Java 17 or later and none was found (no java on PATH, no JAVA_HOME): "
                           "install one, e.g. bash scripts/install-java.sh")
    logs = tempfile.mkdtemp(prefix="evalset-spark-")
    log4j2 = os.path.join(logs, "log4j2.properties")
    with open(log4j2, "w", encoding="utf-8") as handle:
        handle.write(_LOG4J2)
    java_options = f"-Dlog4j2.configurationFile=file:{log4j2}"
    builder = builder.master(master).config("spark.ui.enabled", "false") \
        .config("spark.ui.showConsoleProgress", "false") \
        .config("spark.driver.extraJavaOptions", java_options).config("spark.executor.extraJavaOptions", java_options)
    if master.startswith("local"):
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1") \
            .config("spark.sql.shuffle.partitions", str(4 * (os.cpu_count() or 1)))
    for key, value in config.items():
        builder = builder.config(key, value)
    jvm_output = os.path.join(logs, "jvm.log")
    try:
        with _stderr_to(jvm_output):  # the JVM started now inherits it: its stderr stays in that file
            session = builder.getOrCreate()
    except Exception as exc:
        with open(jvm_output, encoding="utf-8", errors="replace") as handle:
            said = [line.strip() for line in handle if line.strip()]
        detail = said[-1] if said else str(exc).splitlines()[0]
        raise ServiceError(f"Spark ({master}) could not start: {detail[:300]} (JVM output in {jvm_output})") from None
    session.sparkContext.setLogLevel("ERROR")
    atexit.register(shutil.rmtree, logs, ignore_errors=True)  # kept only when Spark could not start (named above)
    return session


@contextlib.contextmanager
def _stderr_to(path: str) -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as target:
        os.dup2(target.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def _progress(spark, step: str, enabled: bool | None) -> Iterator[None]:
    """A bar of Spark's tasks (done of those of the stages seen so far) while ``step`` runs; ``enabled``
    None: on a terminal only, as evalset's other bars. Nothing on Spark Connect (no status tracker)."""
    from tqdm import tqdm

    try:
        tracker = spark.sparkContext.statusTracker()
    except Exception:  # Spark Connect
        tracker = None
    disable = True if tracker is None else (None if enabled is None else not enabled)
    bar = tqdm(total=0, unit="task", desc=f"spark: {step}", disable=disable, file=sys.stderr, leave=False)
    stop = threading.Event()
    stages: dict[int, tuple[int, int]] = {}

    def poll() -> None:
        with contextlib.suppress(Exception):  # a bar that cannot be drawn is no reason to fail the sample
            while not stop.wait(0.3):
                for stage in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(stage)
                    if info is not None:
                        stages[stage] = (info.numTasks, info.numCompletedTasks)
                bar.total = sum(total for total, _ in stages.values())
                bar.n = sum(done for _, done in stages.values())
                bar.refresh()

    watcher = threading.Thread(target=poll, daemon=True) if not bar.disable else None
    if watcher:
        watcher.start()
    try:
        yield
    finally:
        stop.set()
        if watcher:
            watcher.join()
        bar.close()


def _to_arrow(frame) -> pa.Table:
    """A Spark DataFrame's rows as an Arrow table, text as ``string`` (Spark may send ``large_string``)."""
    table = frame.toArrow()
    fields = [pa.field(f.name, pa.string()) if pa.types.is_large_string(f.type) else f for f in table.schema]
    return table.cast(pa.schema(fields))


def count_queries_spark(paths: Sequence[str], columns: LogColumns | None = None, *, fmt: str | None = None,
                        header: bool = True, count_by: str = "submissions",
                        normalisation: Normalisation = Normalisation(), window: Window = Window(),
                        screen: Screen = Screen(), strata: Strata = Strata(), master: str | None = None,
                        shown: str | None = None, progress: bool | None = None) -> QueryCounts:
    """:func:`count_queries` with steps 1 and 3 as Spark SQL over the log ``paths`` (files, as
    :func:`~evalset.io.querylog_spark.expand_log_paths` gives them, or URLs), with the same result.

    ``master``: see :func:`spark_session`. ``shown``: the path errors name when no file is named (the folder
    the user gave). Spark's errors about the input are :class:`InputError` naming the file.
    """
    columns = columns or LogColumns()
    names = [field for field in ("query", "count", "timestamp", "user_id", "source")
             if getattr(columns, field) is not None]
    check_log_columns(names, count_by, window, shown or paths[0])
    spark = spark_session(master)
    view = f"evalset_{uuid.uuid4().hex}"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support", category=FutureWarning)
        read_query_log_spark(spark, paths, columns, fmt=fmt, header=header, shown=shown) \
            .createOrReplaceTempView(f"{view}_log")
        try:
            sql = group_rows_sql(f"SELECT * FROM {view}_log", names, count_by, window,
                                 spark_timestamp_sql(window.timestamp_format))
            with spark_errors(paths, shown), _progress(spark, "grouping log rows", progress):
                grouped = _to_arrow(spark.sql(sql))
            refuse_replaced_bytes(grouped, paths, fmt)
            kept, dropped = screen_grouped_rows(grouped, normalisation, screen)
            spark.createDataFrame(kept).createOrReplaceTempView(f"{view}_kept")
            with spark_errors(paths, shown), _progress(spark, "counting queries", progress):
                queries = _to_arrow(spark.sql(query_frequencies_sql(f"{view}_kept", "source" in names, count_by)))
        finally:
            for table in (f"{view}_log", f"{view}_kept"):
                spark.catalog.dropTempView(table)
    return counts_from_query_frequencies(queries, grouped, dropped, "source" in names, count_by, strata)
