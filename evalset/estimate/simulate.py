"""The one simulation of every design's validation (``estimate validate``): ``R`` draws on fully graded data, each
estimated by the design's ``simulate_one`` (:func:`simulate`, the one loop), and for each column (a run's mean, a
paired difference) its bias, RMSE, coverage and width against the estimand the design can reach, each figure with
its Monte Carlo error (:class:`Tally`, the one harness). The designs' validations prepare their data and write their
tables: :mod:`evalset.estimate.slicevalidation`, :mod:`evalset.estimate.documents.validation`,
:mod:`evalset.estimate.documents.holevalidation`.

Conventions
-----------
- A draw gives each column an estimate and one interval or more, by name (``low``, ``high``), and any per-draw
  figure the design's table needs beside them (``extra``: its standard errors, its sample's size); the truth of a
  column is its value under the full grades (the design's estimand). :class:`Tally` keeps every draw: the figures
  are computed once, at the end, from the whole ``draws x columns`` arrays.
- An interval covers the truth when ``low - TOLERANCE <= truth <= high + TOLERANCE``: a truth equal to an end up to
  rounding is covered (a column whose every unit is known has an interval of width 0 on its truth).
- Per column, over the ``R`` draws (``e`` the error, estimate minus truth): ``bias`` = mean(e), its Monte Carlo
  error sd(e) / sqrt(R); ``rmse`` = sqrt(mean(e^2)), its error by the delta method sd(e^2) / (2 rmse sqrt(R));
  per interval, ``coverage`` c = the share of draws that cover, its error sqrt(c (1 - c) / R), and ``width`` = the
  mean of high - low, its error sd(width) / sqrt(R). The sds are over draws (ddof 0, the figures' own spread).
- Every design's validation is one :class:`Validation`: its summary per measure and kind (``table``), each column's
  figures (``columns``), its settings and caveats. What the summary sums over the columns, and the design's own
  figures beside (the query slice at the same budget, Kendall's tau, the share of holes drawn), are the design's;
  the figures are this module's, so that a coverage means one thing in every design.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalset.render import json_safe, number, records, text_table

TOLERANCE = 1e-9
"""An interval covers a truth equal to an end up to rounding (see the module's conventions)."""

Interval = tuple[np.ndarray, np.ndarray]
"""An interval of every column: its low ends and its high ends."""


@dataclass
class Tally:
    """The draws of one design on one measure: each column's truth, and per draw its estimate and intervals."""

    truth: np.ndarray
    labels: Sequence[str] = ()
    estimates: list[np.ndarray] = field(default_factory=list, repr=False)
    intervals: dict[str, list[Interval]] = field(default_factory=dict, repr=False)
    extras: dict[str, list[Any]] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, truth: np.ndarray, estimate: np.ndarray, intervals: Mapping[str, Interval],
           labels: Sequence[str] = ()) -> Tally:
        """The tally of draws given whole: ``estimate`` and each interval's ends ``draws x columns``."""
        ends = {name: list(zip(np.asarray(low, np.float64), np.asarray(high, np.float64), strict=True))
                for name, (low, high) in intervals.items()}
        return cls(np.asarray(truth, dtype=np.float64), labels, list(np.asarray(estimate, np.float64)), ends)

    def add(self, estimate: np.ndarray, intervals: Mapping[str, Interval],
            extra: Mapping[str, Any] | None = None) -> None:
        """One draw: each column's estimate, each named interval's ends, and the draw's ``extra`` figures."""
        self.estimates.append(np.asarray(estimate, dtype=np.float64))
        for name, (low, high) in intervals.items():
            self.intervals.setdefault(name, []).append((np.asarray(low, np.float64), np.asarray(high, np.float64)))
        for name, value in (extra or {}).items():
            self.extras.setdefault(name, []).append(value)

    @property
    def draws(self) -> int:
        return len(self.estimates)

    def estimate(self) -> np.ndarray:
        """The estimates, ``draws x columns``."""
        return np.vstack(self.estimates)

    def extra(self, name: str) -> np.ndarray:
        """The draws' extra figure ``name``, one row (or value) per draw."""
        return np.asarray(self.extras[name])

    def se_ratio(self, name: str) -> np.ndarray:
        """Per column the draws' mean of their extra standard error ``name`` over the estimates' spread across the
        draws (NaN where they do not spread): 1 when an interval's width is what the estimate moves by."""
        se = self.extra(name).mean(axis=0)
        spread = self.estimate().std(axis=0)
        return np.divide(se, spread, out=np.full(len(se), np.nan), where=spread > 0)

    def ends(self, name: str) -> Interval:
        """Interval ``name``'s low and high ends, each ``draws x columns``."""
        ends = self.intervals[name]
        return np.vstack([low for low, _ in ends]), np.vstack([high for _, high in ends])

    def figures(self) -> pd.DataFrame:
        """One row per column: truth, the estimate's mean and sd, bias, RMSE, and per interval its coverage and
        width, each figure beside its Monte Carlo error (``*_mc``)."""
        draws = self.draws
        if draws == 0:
            raise ValueError("no draw to tally")
        estimate = self.estimate()
        error = estimate - self.truth
        rmse = np.sqrt(np.mean(error ** 2, axis=0))
        root = np.sqrt(draws)
        spread = np.std(error ** 2, axis=0)
        columns = {"name": list(self.labels) or list(range(len(self.truth))), "truth": self.truth,
                   "estimate_mean": estimate.mean(axis=0), "estimate_sd": estimate.std(axis=0),
                   "bias": error.mean(axis=0), "bias_mc": error.std(axis=0) / root, "rmse": rmse,
                   "rmse_mc": np.divide(spread, 2 * rmse * root, out=np.zeros_like(rmse), where=rmse > 0)}
        for name in self.intervals:
            low, high = self.ends(name)
            coverage = ((low - TOLERANCE <= self.truth) & (self.truth <= high + TOLERANCE)).mean(axis=0)
            width = high - low
            columns |= {f"coverage_{name}": coverage, f"coverage_{name}_mc": coverage_error(coverage, draws),
                        f"width_{name}": width.mean(axis=0), f"width_{name}_mc": width.std(axis=0) / root}
        return pd.DataFrame(columns)


KINDS = {"means": "run means", "differences": "paired differences"}
"""A validation's kinds of column and how its table names them."""
SUMMARY = ["measure", "kind", "interval", "columns", "coverage", "coverage_least", "least", "width", "bias_max",
           "rmse"]
"""The one summary's columns (:func:`summarize`)."""


def summarize(columns: pd.DataFrame, intervals: Mapping[str, str], estimates: Mapping[str, str] | None = None
              ) -> pd.DataFrame:
    """The one summary of every design's validation: per measure, kind and interval (``intervals``: each interval's
    name in the columns' figures, ``coverage_NAME``, to its name in the table) the columns with a coverage (a column
    never drawn has none), their mean coverage, the least (``coverage_least``) and its column (``least``, the first
    in the columns' order on a tie), their mean width, and over every column of the kind the largest |bias| and the
    mean RMSE of the estimate the interval is centred on (``estimates``: an interval's suffix of its estimate's
    figures, ``bias_human``; none, ``bias``)."""
    estimates = estimates or {}
    rows = []
    for (measure, kind), part in columns.groupby(["measure", "kind"], sort=False):
        for name, label in intervals.items():
            drawn = part.dropna(subset=[f"coverage_{name}"])
            least = drawn.loc[drawn[f"coverage_{name}"].idxmin()]
            own = estimates.get(name, "")
            rows.append({"measure": measure, "kind": kind, "interval": label, "columns": len(drawn),
                         "coverage": float(drawn[f"coverage_{name}"].mean()),
                         "coverage_least": float(least[f"coverage_{name}"]), "least": least["name"],
                         "width": float(drawn[f"width_{name}"].mean()),
                         "bias_max": float(part[f"bias{own}"].abs().max()), "rmse": float(part[f"rmse{own}"].mean())})
    return pd.DataFrame(rows, columns=SUMMARY)


@dataclass(frozen=True)
class Validation:
    """What every design's validation gives (``estimate validate slice|documents|holes``), in one shape.

    design
        ``slice``, ``documents`` or ``holes`` (:mod:`evalset.estimate.designs`).
    table
        The one summary (:func:`summarize`): per measure, kind (:data:`KINDS`) and interval, the coverage (mean and
        least, with its column), the mean width, the largest |bias| and the mean RMSE over the kind's columns.
    columns
        Each column's figures over the draws (a run's mean; a paired difference, for the hole sample each run's with
        the best run outside its group): ``measure, kind, name``, its truth, and :meth:`Tally.figures`' bias, RMSE,
        and per interval coverage and width, each with its Monte Carlo error, beside the design's own.
    beside
        The design's own figures per measure and kind (the query slice at the same budget, Kendall's tau, the
        share of holes drawn, ...), and ``said``, the lines its command prints them in after the table.
    heading, settings, caveats
        The lines saying what was drawn and against what truth; the settings; what was left out or should be known
        (said last; the JSON's ``notes``).
    """

    design: str
    heading: tuple[str, ...]
    table: pd.DataFrame
    columns: pd.DataFrame
    beside: pd.DataFrame
    said: tuple[str, ...]
    settings: dict[str, Any]
    caveats: list[str]

    def to_text(self) -> str:
        """What ``estimate validate ...`` prints: the heading, the one summary, the design's own lines, the
        caveats."""
        header = ["measure", "kind", "interval", "columns", "coverage", "least", "width", "max |bias|", "RMSE"]
        rows = [[row.measure, KINDS[row.kind], row.interval, row.columns, number(row.coverage, 3),
                 f"{number(row.coverage_least, 3)} {row.least}", number(row.width, 4), number(row.bias_max, 4),
                 number(row.rmse, 4)] for row in self.table.itertuples()]
        return "\n".join([*self.heading, *text_table([header, *rows]), *self.said, *self.caveats])

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``estimate validate ... --format json``: the design, its settings, the summary's rows
        (``table``), the design's own (``beside``), each column's (``columns``) and the notes."""
        return {"design": self.design, "settings": json_safe(self.settings), "table": records(self.table),
                "beside": records(self.beside), "columns": records(self.columns), "notes": self.caveats}


Drawn = tuple[np.ndarray, Mapping[str, Interval], Mapping[str, Any]]
"""A design's answer on one key (a measure, a kind) for one draw: every column's estimate, its intervals by name, and
its ``extra`` figures (may be empty), as :meth:`Tally.add` takes them."""


def simulate(simulate_one: Callable[[Any], Mapping[Hashable, Drawn]], draws: Iterable,
             truths: Mapping[Hashable, np.ndarray], progress: Callable[[Iterable], Iterable] = iter
             ) -> dict[Hashable, Tally]:
    """The one loop of every design's validation: each of ``draws`` (a seed, or a draw's number) estimated by the
    design's ``simulate_one``, its answer on each key of ``truths`` tallied against that key's truth; ``progress``
    wraps the draws. The design's ``simulate_one`` is its only random step, so the same draws give the same tallies."""
    tallies = {key: Tally(np.asarray(truth, dtype=np.float64)) for key, truth in truths.items()}
    for draw in progress(draws):
        for key, (estimate, intervals, extra) in simulate_one(draw).items():
            tallies[key].add(estimate, intervals, extra)
    return tallies


def coverage_error(coverage, draws: int):
    """The Monte Carlo error of a coverage over ``draws`` draws: sqrt(c (1 - c) / R), a number or a column each."""
    return np.sqrt(coverage * (1 - coverage) / draws)
