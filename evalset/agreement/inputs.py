"""Reading the annotations for agreement: several labels tables and qrels files into one grades table (checked
against the guideline's scale by :func:`evalset.judgments.scale.apply_scale`)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from evalset.errors import InputError
from evalset.io.annotations import GRADES_COLUMNS, is_labels_table, qrels_annotator
from evalset.judgments.reading import read_grades


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
