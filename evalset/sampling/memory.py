"""The in-memory engine (``--engine pandas``): steps 1 and 3 over a log held as an Arrow table, with the
screening of step 2 in between (:mod:`~evalset.sampling.screening`).

Also the rules of step 1 that the DuckDB engine shares: which columns a run needs (:func:`check_log_columns`)
and which it groups by (:func:`group_keys`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalset.contract import COUNT_BY
from evalset.errors import InputError
from evalset.params import check
from evalset.sampling.options import Normalisation, QueryCounts, Screen, Strata, Window
from evalset.sampling.screening import screen_grouped_rows
from evalset.sampling.strata import counts_from_frequencies, query_ids


def _parse_timestamps(text: pa.ChunkedArray | pa.Array, timestamp_format: str | None) -> np.ndarray:
    values = pd.Series(text.to_numpy(zero_copy_only=False), dtype=object)
    if timestamp_format is None:
        parsed = pd.to_datetime(values, format="ISO8601", errors="coerce")
    else:
        parsed = pd.to_datetime(values, format=timestamp_format, errors="coerce")
    return parsed.to_numpy(dtype="datetime64[us]")


def _row_status(table: pa.Table, count_by: str, window: Window) -> np.ndarray:
    """Per row: "" (kept) or the first of ``WINDOW_REASONS`` that applies."""
    status = np.full(table.num_rows, "", dtype=object)

    def mark(name: str, mask: np.ndarray) -> None:
        status[(status == "") & mask] = name

    if window.active:
        stamps = _parse_timestamps(table["timestamp"], window.timestamp_format)
        mark("unparsable_timestamp", np.isnat(stamps))
        outside = np.zeros(len(stamps), dtype=bool)
        if window.since is not None:
            outside |= stamps < np.datetime64(window.since, "us")
        if window.until is not None:
            outside |= stamps >= np.datetime64(window.until, "us")
        mark("outside_window", outside)
    if count_by == "users":
        mark("no_user_id", pc.equal(pc.utf8_trim_whitespace(table["user_id"]), "").to_numpy())
    if "source" in table.column_names:
        mark("no_source", pc.equal(pc.utf8_trim_whitespace(table["source"]), "").to_numpy())
    return status


def group_log_rows(log: pa.Table | pd.DataFrame, count_by: str = "submissions",
                   window: Window = Window()) -> pa.Table:
    """Step 1 in memory: group log rows by ``status, raw_query[, user_id][, source]`` with ``submissions``.

    ``status`` is "" for rows kept and the drop reason otherwise (the other key columns are then null).
    ``log`` has the standard columns of :func:`evalset.io.querylog.read_query_log_table`.
    """
    table = log if isinstance(log, pa.Table) else pa.Table.from_pandas(log, preserve_index=False)
    check_log_columns(table.column_names, count_by, window, "<log>")
    for name in ("query", "user_id", "source"):  # missing text is empty text, as the readers give it
        if name in table.column_names:
            text = pc.fill_null(pc.cast(table[name], pa.string()), "")
            table = table.set_column(table.column_names.index(name), name, text)
    status = _row_status(table, count_by, window)
    kept = status == ""
    keys = group_keys(table.column_names, count_by)
    columns = {"status": pa.array(status, pa.string())}
    for key in keys:
        values = table["query" if key == "raw_query" else key].combine_chunks()
        columns[key] = pc.if_else(pa.array(kept), values, pa.scalar(None, pa.string()))
    counts = table["count"] if "count" in table.column_names else pa.array(np.ones(table.num_rows, np.int64))
    columns["submissions"] = pc.cast(counts, pa.int64())
    grouped = pa.table(columns).group_by(["status", *keys]).aggregate([("submissions", "sum")])
    return grouped.rename_columns({"submissions_sum": "submissions"})


def group_keys(names: Sequence[str], count_by: str) -> list[str]:
    """Step 1's grouping columns for a log with the standard columns ``names``: ``raw_query``, then
    ``user_id`` when counting by users, then the log's own stratum column ``source`` when it has one."""
    return ["raw_query"] + [name for name in ("user_id", "source")
                            if name in names and (name == "source" or count_by == "users")]


def check_log_columns(names: Sequence[str], count_by: str, window: Window, source: str) -> None:
    """Refuse a run whose options need a column the log (standard columns ``names``) does not have."""
    if "query" not in names:
        raise InputError("the log has no query column", source)
    check("count_by", count_by, COUNT_BY)
    if count_by == "users" and "user_id" not in names:
        raise InputError("counting by users needs a user column (-l user_id=COLUMN)", source)
    if window.active and "timestamp" not in names:
        raise InputError("a time window (--since/--until) needs a timestamp column (-l timestamp=COLUMN)", source)


def _aggregate_in_memory(kept: pa.Table, count_by: str) -> pd.DataFrame:
    sources = ["source"] if "source" in kept.column_names else []
    if count_by == "users":
        pairs = kept.group_by([*sources, "query", "user_id"]).aggregate([])
        grouped = pairs.group_by([*sources, "query"]).aggregate([("user_id", "count")])
        grouped = grouped.rename_columns({"user_id_count": "frequency"})
    else:
        grouped = kept.group_by([*sources, "query"]).aggregate([("submissions", "sum")])
        grouped = grouped.rename_columns({"submissions_sum": "frequency"})
    frame = grouped.to_pandas()
    if not sources:
        frame["source"] = ""
    frame["query_id"] = query_ids(frame["query"].tolist(), frame["source"].tolist())
    frame["frequency"] = frame["frequency"].astype(np.int64)
    return frame.loc[:, ["query_id", "query", "source", "frequency"]]


def count_queries(log: pa.Table | pd.DataFrame, *, count_by: str = "submissions",
                  normalisation: Normalisation = Normalisation(), window: Window = Window(),
                  screen: Screen = Screen(), strata: Strata = Strata()) -> QueryCounts:
    """Count, screen and stratify the queries of a log held in memory (steps 1-3).

    Parameters
    ----------
    log : rows with a ``query`` column and optionally ``count``, ``timestamp``, ``user_id``, ``source``.
    count_by : ``"submissions"`` (each row, or its ``count``) or ``"users"`` (distinct users per query).
    """
    grouped = group_log_rows(log, count_by, window)
    kept, dropped = screen_grouped_rows(grouped, normalisation, screen)
    frequencies = _aggregate_in_memory(kept, count_by)
    rows_read = int(pc.sum(grouped["submissions"]).as_py() or 0)
    return counts_from_frequencies(frequencies, strata, dropped, rows_read, count_by)
