"""The bar `--engine spark` shows on a terminal: Spark's tasks of each step, polled from its status tracker
(here a tracker of two stages, one half done; no Spark needed)."""

from __future__ import annotations

import collections
import io
import time

import pytest

from evalset.sampling import spark as spark_engine

StageInfo = collections.namedtuple("StageInfo", "numTasks numCompletedTasks")


class Tracker:
    def getActiveStageIds(self):
        return [1, 2]

    def getStageInfo(self, stage):
        return {1: StageInfo(4, 4), 2: StageInfo(6, 3)}[stage]


class Session:
    class sparkContext:
        @staticmethod
        def statusTracker():
            return Tracker()


@pytest.mark.slow
def test_the_bar_counts_the_tasks_of_the_stages_seen(monkeypatch):
    shown = io.StringIO()
    monkeypatch.setattr(spark_engine.sys, "stderr", shown)
    with spark_engine._progress(Session(), "grouping log rows", True):
        time.sleep(0.8)
    assert "spark: grouping log rows" in shown.getvalue()
    assert "7/10" in shown.getvalue()


@pytest.mark.slow
def test_no_bar_off_a_terminal_or_when_asked(monkeypatch):
    shown = io.StringIO()
    monkeypatch.setattr(spark_engine.sys, "stderr", shown)
    for enabled in (None, False):  # None: on a terminal only, and a StringIO is none
        with spark_engine._progress(Session(), "stratifying", enabled):
            time.sleep(0.4)
    assert shown.getvalue() == ""
