"""Ctrl-C during the DuckDB engine's query ends the command as any interrupt does (KeyboardInterrupt), not with
DuckDB's own error and a traceback."""

import threading

import duckdb
import pytest

from evalset.sampling.sql import fetch_arrow

LONG_QUERY = "SELECT sum(i) FROM range(100000000000) t(i)"  # minutes of work: always running when interrupted


def test_an_interrupted_query_is_a_keyboard_interrupt():
    connection = duckdb.connect()
    relation = connection.sql(LONG_QUERY)
    threading.Timer(0.3, connection.interrupt).start()
    with pytest.raises(KeyboardInterrupt):
        fetch_arrow(relation)
