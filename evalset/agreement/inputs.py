"""Reading the annotations for agreement: several labels tables and qrels files into one grades table, and the
check of every grade against the guideline's scale (refuse, clip or drop; never silent)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.annotations import annotator_name, grade_line, read_grades

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
    raise ValueError(f"out_of_scale must be error, clip or drop, got {out_of_scale!r}")


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
def load_grades(paths: Sequence[str], human: Sequence[str] = ()) -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    """Read labels tables and qrels files (see :func:`evalset.io.annotations.read_grades`) into one grades table.

    ``human`` holds annotator names or qrels paths of human annotators (a path not among ``paths`` is read
    too, first). Two qrels files with one name, a ``human`` entry that matches no annotator, or one annotator
    grading one pair differently in two files are refused. Returns the grades and per-annotator reading counts
    (``unjudged``: negative qrels grades left out; ``collapsed_duplicates``: exact repeats).
    """
    given = {os.path.realpath(p) for p in paths}
    extra = [h for h in human if os.path.isfile(h) and os.path.realpath(h) not in given]
    human = [*human, *(os.path.realpath(h) for h in human if os.path.isfile(h))]
    paths = [*dict.fromkeys(extra), *paths]
    frames, counts, named = [], {}, {}
    for path in paths:
        frame = read_grades(path, human)
        if not _first_is_labels(frame):
            name = annotator_name(path)
            if name in named:
                raise InputError(f"two inputs are named {name!r}: {named[name]} and {path}; rename one", path)
            named[name] = path
        for name in pd.unique(frame["annotator"]):
            entry = counts.setdefault(name, {"unjudged": 0, "collapsed_duplicates": 0})
            entry["unjudged"] += frame.attrs["unjudged"]
            entry["collapsed_duplicates"] += frame.attrs["collapsed_duplicates"]
        frames.append(frame)
    if not frames:
        raise InputError("no labels or qrels given")
    grades = pd.concat(frames, ignore_index=True)
    unknown = [h for h in human if h not in counts and not os.path.isfile(h)]
    if unknown:
        raise InputError(f"--human {unknown[0]!r} names no annotator (annotators: {', '.join(counts)})")
    key = ["query_id", "doc_id", "annotator"]
    repeated = grades.duplicated(key, keep=False)
    if repeated.any():
        grades = _collapse_across_files(grades, repeated, counts)
    return grades, counts


def _first_is_labels(frame: pd.DataFrame) -> bool:
    return bool(frame.attrs.get("labels_table", False))


def _collapse_across_files(grades: pd.DataFrame, repeated: pd.Series,
                           counts: dict[str, dict[str, int]]) -> pd.DataFrame:
    group = grades[repeated].groupby(["query_id", "doc_id", "annotator"], sort=False)
    conflicting = group["grade"].nunique()
    if (conflicting > 1).any():
        query_id, doc_id, annotator = conflicting[conflicting > 1].index[0]
        rows = grades[(grades["query_id"] == query_id) & (grades["doc_id"] == doc_id)
                      & (grades["annotator"] == annotator)]
        where = ", ".join(f"{r.file}:{grade_line(r.file, query_id, doc_id, r.grade, annotator)} grade {r.grade}"
                          for r in rows.itertuples())
        raise InputError(f"annotator {annotator} gives query {query_id} document {doc_id} two different grades "
                         f"({where})")
    duplicate = grades.duplicated(["query_id", "doc_id", "annotator"])
    for name, count in grades[duplicate].groupby("annotator").size().items():
        counts[name]["collapsed_duplicates"] += int(count)
    return grades[~duplicate].reset_index(drop=True)
