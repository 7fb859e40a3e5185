"""A grade scale applied to judgments read from files: every grade checked against the scale (refuse, clip or drop;
never silent), a refusal naming the file and the line of the first grade off it. Used by every stage that reads
grades against a scale (agreement, judge ensemble, judge recheck)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.annotations import grade_line

OutOfScale = Literal["error", "clip", "drop"]


# ------------------------------------------------------------------------------------------------ the scale
OUT_OF_SCALE_REMEDY = "--out-of-scale clip|drop keeps going and counts them"
SCALE_REMEDY = "give the scale the grades are on (--guideline: a guideline, or a bare scale such as 0,1,2)"
"""The advice of a command without --out-of-scale (judge ensemble, judge recheck)."""


def apply_scale(grades: pd.DataFrame, scale: Sequence[int], out_of_scale: OutOfScale = "error",
                remedy: str = OUT_OF_SCALE_REMEDY) -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    """Check every grade against the scale (``grades`` with ``file``, :data:`~evalset.io.annotations.GRADES_COLUMNS`);
    ``remedy``: what the refusal advises (a command without ``--out-of-scale`` says what it offers).

    ``error`` (default) refuses the first grade off the scale with its file and line (and names the first such
    line of every other file); ``clip`` moves a grade beyond an end of the scale to that end; ``drop`` leaves
    the judgment out. Nothing is silent: returns the kept grades and, per annotator, ``{"clipped", "dropped"}``.
    A grade between two points of a scale with a gap (e.g. 2 on 0, 1, 3) cannot be clipped and is refused.
    """
    scale = sorted(scale)
    grade = grades["grade"].to_numpy()
    off = ~np.isin(grade, scale)
    counts = {name: {"clipped": 0, "dropped": 0} for name in pd.unique(grades["annotator"])}
    if not off.any():
        return grades, counts
    inside_gap = off & (grade > scale[0]) & (grade < scale[-1])
    if out_of_scale == "error" or (out_of_scale == "clip" and inside_gap.any()):
        bad = grades[inside_gap] if out_of_scale == "clip" else grades[off]
        raise _off_scale_error(bad, scale, out_of_scale, remedy)
    kept = grades.copy()
    for name, count in kept[off].groupby("annotator", sort=False).size().items():
        counts[name]["clipped" if out_of_scale == "clip" else "dropped"] = int(count)
    if out_of_scale == "clip":
        kept["grade"] = np.clip(grade, scale[0], scale[-1])
        return kept, counts
    if out_of_scale == "drop":
        return kept[~off].reset_index(drop=True), counts
    raise InputError(f"out_of_scale must be error, clip or drop, got {out_of_scale!r}")


def _off_scale_error(bad: pd.DataFrame, scale: list[int], policy: str, remedy: str) -> InputError:
    places = []
    for path, rows in bad.groupby("file", sort=False):
        row = rows.iloc[0]
        line = grade_line(path, row["query_id"], row["doc_id"], int(row["grade"]), row["annotator"])
        places.append((path, line, int(row["grade"]), len(rows)))
    path, line, grade, count = places[0]
    scale_text = ", ".join(map(str, scale))
    message = (f"grade {grade} is not on the scale ({scale_text})"
               + (f"; {count} such grades in this file" if count > 1 else ""))
    if len(places) > 1:
        message += "; also " + ", ".join(f"{p}:{n} (grade {g}{f', {c} in all' if c > 1 else ''})"
                                         for p, n, g, c in places[1:])
    if policy == "clip":
        message += "; it falls inside the scale, so it cannot be clipped (drop it with --out-of-scale drop)"
    else:
        message += f"; {remedy}"
    return InputError(message, path, line)
