"""Reading the annotations for agreement: several labels tables and qrels files into one grades table, and the
check of every grade against the guideline's scale (refuse, clip or drop; never silent)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.annotations import GRADES_COLUMNS, grade_line, is_labels_table, qrels_annotator
from evalset.judgments.reading import read_grades

OutOfScale = Literal["error", "clip", "drop"]


# ------------------------------------------------------------------------------------------------ the scale
def apply_scale(grades: pd.DataFrame, scale: Sequence[int],
                out_of_scale: OutOfScale = "error") -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    """Check every grade against the scale.

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
        raise _off_scale_error(bad, scale, out_of_scale)
    kept = grades.copy()
    for name, count in kept[off].groupby("annotator", sort=False).size().items():
        counts[name]["clipped" if out_of_scale == "clip" else "dropped"] = int(count)
    if out_of_scale == "clip":
        kept["grade"] = np.clip(grade, scale[0], scale[-1])
        return kept, counts
    if out_of_scale == "drop":
        return kept[~off].reset_index(drop=True), counts
    raise InputError(f"out_of_scale must be error, clip or drop, got {out_of_scale!r}")


def _off_scale_error(bad: pd.DataFrame, scale: list[int], policy: str) -> InputError:
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
        message += "; --out-of-scale clip|drop keeps going and counts them"
    return InputError(message, path, line)



# ------------------------------------------------------------------------------------------------ the inputs
def load_grades(paths: Sequence[str], human: Sequence[str] = (), conflicting_grades: str = "refuse"
                ) -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    """Read labels tables and qrels files into one grades table (:data:`~evalset.io.annotations.GRADES_COLUMNS`).

    Read by :func:`evalset.judgments.read_grades` under ``conflicting_grades``, as ``freeze`` reads: a file
    holding no judgment refused, exact repeats collapsed, one annotator's different grades for one pair refused
    (naming both places) unless the rule says which stands. ``human`` holds annotator names or qrels paths of
    human annotators (a path not among ``paths`` is read too, first); other qrels files are LLM judges. Two qrels
    files with one name, or a ``human`` entry that matches no annotator, are refused. Returns the grades and
    per-annotator reading counts (``unjudged``: negative qrels grades left out; ``collapsed_duplicates``: exact
    repeats; with ``latest`` or ``first``, ``conflicting_grades_settled``).
    """
    given = {os.path.realpath(p) for p in paths}
    extra = [h for h in human if os.path.isfile(h) and os.path.realpath(h) not in given]
    human = [*human, *(os.path.realpath(h) for h in human if os.path.isfile(h))]
    paths = [*dict.fromkeys(extra), *paths]
    if not paths:
        raise InputError("no labels or qrels given")
    named: dict[str, str] = {}
    for path in paths:
        if not is_labels_table(path):
            name = qrels_annotator(path)
            if name in named:
                raise InputError(f"two inputs are named {name!r}: {named[name]} and {path}; rename one", path)
            named[name] = path
    reading = read_grades([(path, _qrels_kind(path, human)) for path in paths], conflicting_grades)
    annotators = list(reading.counts)  # every annotator read, in order of appearance
    unknown = [h for h in human if h not in annotators and not os.path.isfile(h)]
    if unknown:
        raise InputError(f"--human {unknown[0]!r} names no annotator (annotators: {', '.join(annotators)})")
    if conflicting_grades == "refuse":  # nothing can have been settled: the report keeps its shape
        for entry in reading.counts.values():
            del entry["conflicting_grades_settled"]
    return reading.judgments[list(GRADES_COLUMNS)], reading.counts


def _qrels_kind(path: str, human: Sequence[str]) -> str:
    return "human" if qrels_annotator(path) in human or path in human or os.path.realpath(path) in human else "llm"
