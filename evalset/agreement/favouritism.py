"""Favouritism of an LLM judge, run by run: does it score some systems higher than the human grades do, beyond
the leniency it shows every system?

For the runs scored under both the human grades (a slice of the queries or all of them) and an LLM's, from the
per-query scores of each (queries x runs, as :func:`evalset.agreement.systems.per_query_scores` returns them).

Conventions
-----------
- **The queries** are those defined under both grades for every run (as
  :func:`~evalset.agreement.systems.ranking_agreement`: a query with no relevant document under either grades has
  no nDCG there), so every figure of every run averages the same ``n`` queries.
- **The gap** of run r: ``g_r = mean_q d_rq`` with ``d_rq = llm_rq - human_rq``, and its two-sided Student's t
  interval over the queries at ``level`` (:func:`evalset.stats.strata.t_intervals`; df ``n - 1``). A positive gap
  says the judge scores the run higher than the humans do: every lenient judge has one for most runs.
- **The excess** of run r removes that overall leniency: ``e_rq = d_rq - mean_r' d_r'q``, the run's gap on query q
  beyond the average run's gap on the same query, and ``e_r = mean_q e_rq = g_r - mean_r' g_r'``. Its t interval
  over the queries is at the Bonferroni level ``1 - alpha / R`` over the R runs
  (:func:`evalset.stats.family.bonferroni_threshold`), so that all R intervals hold their values together at
  ``1 - alpha`` or more. A run is **inflated** when its excess interval lies above 0 (the judge favours it beyond
  the other runs), **deflated** when it lies below 0, and unflagged otherwise.
- **t, not a bootstrap**: the excess intervals sit at a level such as 1 - 0.05/37 = 99.86%, whose tails a
  percentile bootstrap of a thousand resamples cannot resolve; the t interval needs no resamples and no seed.
- **Ranks** under either grades are :func:`evalset.stats.rankings.system_ranks` of the run means over the
  ``n`` queries (1 = best; equal means share the better rank).
- No query defined under both, a run one of the tables lacks, or fewer than 2 runs (an excess needs others to
  exceed): :class:`~evalset.errors.InputError`, never a quiet zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.params import PROBABILITY, check
from evalset.render import json_safe, number, text_table
from evalset.stats.family import bonferroni_threshold
from evalset.stats.rankings import system_ranks
from evalset.stats.strata import t_intervals

COLUMNS = ("run", "human_mean", "llm_mean", "gap", "gap_low", "gap_high", "excess", "excess_low", "excess_high",
           "flag", "rank_human", "rank_llm")
"""The figures of every run's row."""


@dataclass(frozen=True)
class Favouritism:
    """The favouritism of the judge ``llm_name`` against the grades ``human_name`` by ``measure``: one row per run
    (:data:`COLUMNS`, sorted by excess, largest first), over ``queries`` queries defined under both; the gaps'
    intervals at ``level``, the excesses' at ``1 - threshold`` (``threshold = alpha / runs``); ``scope`` says where
    in the header (e.g. ``on the human-graded slice``)."""

    human_name: str
    llm_name: str
    measure: str
    queries: int
    level: float
    alpha: float
    threshold: float
    rows: pd.DataFrame = field(repr=False)
    scope: str = ""

    @property
    def runs(self) -> int:
        return len(self.rows)

    def flagged(self, flag: str = "inflated") -> pd.DataFrame:
        """The rows flagged ``inflated`` (or ``deflated``), largest excess first (smallest, for deflated)."""
        rows = self.rows[self.rows["flag"] == flag]
        return rows if flag == "inflated" else rows.iloc[::-1]

    def verdicts(self) -> list[str]:
        """One line per flagged run (inflated first), or the line that no run stands out."""
        if self.queries < 2:
            return [f"{self.llm_name}: 1 query both define: no interval, so no run can stand out"]
        lines = [f"{self.llm_name} {verb} {row.run} ({_interval(row.excess, row.excess_low, row.excess_high)}) "
                 f"{where} the other runs"
                 for flag, verb, where in (("inflated", "inflates", "beyond"), ("deflated", "deflates", "below"))
                 for row in self.flagged(flag).itertuples()]
        return lines or [f"{self.llm_name}: no run stands out (every excess interval at "
                         f"{_percent(1 - self.threshold)} holds 0)"]

    def to_text(self) -> str:
        """The header, the table sorted by excess and the verdict line(s)."""
        header = [f"Favouritism of {self.llm_name} against {self.human_name}"
                  f"{' by ' + self.measure if self.measure else ''}"
                  f"{' ' + self.scope if self.scope else ''}: {self.runs} runs, "
                  f"{self.queries} queries both define",
                  f"gap = LLM mean - human mean [{_percent(self.level)} t interval over queries]; excess = the gap "
                  f"beyond the average run's [{_percent(1 - self.threshold)} t interval: Bonferroni "
                  f"{self.alpha:g}/{self.runs}]"]
        table = text_table([["run", "human", "llm", "gap", "excess", "flag", "rank human->llm"],
                            *([row.run, number(row.human_mean), number(row.llm_mean),
                               _interval(row.gap, row.gap_low, row.gap_high),
                               _interval(row.excess, row.excess_low, row.excess_high), row.flag or "-",
                               f"{row.rank_human}->{row.rank_llm}"] for row in self.rows.itertuples())],
                           right={1, 2})
        return "\n".join([*header, *table, *self.verdicts()])

    def to_dict(self) -> dict[str, Any]:
        """The settings, the rows (``flag`` null when unflagged) and the verdicts, JSON-ready."""
        rows = [{**row, "flag": row["flag"] or None} for row in self.rows.to_dict(orient="records")]
        return json_safe({"human": self.human_name, "llm": self.llm_name, "measure": self.measure, "scope": self.scope,
                          "queries": self.queries, "runs": self.runs, "level": self.level, "alpha": self.alpha,
                          "threshold": self.threshold, "excess_level": 1 - self.threshold,
                          "interval": "t over queries", "rows": rows, "verdicts": self.verdicts()})


def _percent(level: float) -> str:
    return f"{100 * level:.4g}%"


def _interval(value: float, low: float, high: float) -> str:
    return f"{number(value, 3, sign=True)} [{number(low, 2)}, {number(high, 2)}]"


def favouritism(human: pd.DataFrame, llm: pd.DataFrame, *, level: float = 0.95, alpha: float = 0.05,
                human_name: str = "human", llm_name: str = "llm", measure: str = "", scope: str = "") -> Favouritism:
    """The favouritism of the judge whose per-query scores are ``llm`` against ``human`` (both queries x runs;
    module docstring for the figures and their intervals)."""
    check("level", level, PROBABILITY)
    check("alpha", alpha, PROBABILITY)
    names = list(human.columns)
    missing = [name for name in names if name not in llm.columns] + \
        [name for name in llm.columns if name not in human.columns]
    if missing:
        raise InputError(f"favouritism needs the same runs under both grades: {missing[0]} is scored under one only")
    if len(names) < 2:
        raise InputError(f"favouritism needs at least 2 runs (an excess is over the other runs), got {len(names)}")
    defined_human = human.notna().all(axis=1)
    defined_llm = llm[names].notna().all(axis=1)
    common = sorted(set(defined_human[defined_human].index) & set(defined_llm[defined_llm].index))
    if not common:
        raise InputError(f"favouritism of {llm_name} against {human_name}: no query is defined under both grades")
    h = human.loc[common, names].to_numpy(dtype=np.float64)
    m = llm.loc[common, names].to_numpy(dtype=np.float64)
    d = m - h
    threshold = bonferroni_threshold(alpha, len(names))
    gap, gap_low, gap_high = t_intervals(d, level)
    excess, excess_low, excess_high = t_intervals(d - d.mean(axis=1, keepdims=True), 1 - threshold)
    mean_h, mean_m = h.mean(axis=0), m.mean(axis=0)
    flag = np.where(excess_low > 0, "inflated", np.where(excess_high < 0, "deflated", ""))
    rows = pd.DataFrame({"run": names, "human_mean": mean_h, "llm_mean": mean_m, "gap": gap, "gap_low": gap_low,
                         "gap_high": gap_high, "excess": excess, "excess_low": excess_low,
                         "excess_high": excess_high, "flag": flag, "rank_human": system_ranks(mean_h),
                         "rank_llm": system_ranks(mean_m)})
    rows = rows.sort_values(["excess", "run"], ascending=[False, True], kind="stable").reset_index(drop=True)
    return Favouritism(human_name, llm_name, measure, len(common), level, alpha, threshold, rows[list(COLUMNS)],
                       scope)


def favouritism_pairs(scores: Mapping[str, pd.DataFrame], kinds: Mapping[str, str], *, level: float = 0.95,
                      alpha: float = 0.05, measure: str = "") -> tuple[list[Favouritism], list[str]]:
    """The favouritism of every LLM annotator against every human one (``kinds``: name -> ``human`` or ``llm``),
    from each annotator's per-query ``scores``, humans and LLMs in the order of ``scores``; a pair with no
    figures (no query in common, fewer than 2 runs) is a note instead."""
    humans = [name for name in scores if kinds.get(name) == "human"]
    llms = [name for name in scores if kinds.get(name) == "llm"]
    results, notes = [], []
    for human in humans:
        for llm in llms:
            try:
                results.append(favouritism(scores[human], scores[llm], level=level, alpha=alpha, human_name=human,
                                           llm_name=llm, measure=measure))
            except InputError as error:
                notes.append(f"favouritism of {llm} against {human}: no figures: {error.message}")
    return results, notes
