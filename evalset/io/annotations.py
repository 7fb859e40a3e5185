"""Annotations: labels tables (one row per judgment), and TREC qrels read as the judgments of one annotator.

A labels table is told from qrels by its header (first field ``query_id``), in one place:
:func:`is_labels_table`.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.files import atomic_path, check_file, first_field, read_tsv_with_header, refuse_blank, text_lines
from evalset.io.trec import read_qrels, run_name

LABELS_COLUMNS = ("query_id", "doc_id", "annotator", "kind", "grade", "source", "labeled_at", "comment")


LABEL_KINDS = ("human", "llm")


def read_labels(path: str | os.PathLike) -> pd.DataFrame:
    """Read a labels table (TSV with a header; columns :data:`LABELS_COLUMNS`, one row per judgment).

    Returns the table with ``grade`` as int64 and every other column a string. A missing column, an empty
    query or document id, a ``kind`` other than human/llm, or a non-integer grade is refused with its line.
    Whether a grade is on the guideline's scale is the caller's check (the scale lives in the guideline).
    """
    path = os.fspath(path)
    rows, line_numbers, columns = read_tsv_with_header(path, required=LABELS_COLUMNS)
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    refuse_blank(frame, ("query_id", "doc_id"), line_numbers, path)
    bad_kind = ~frame["kind"].isin(LABEL_KINDS)
    if bad_kind.any():
        row = int(np.flatnonzero(bad_kind.to_numpy())[0])
        raise InputError(f"kind must be one of {', '.join(LABEL_KINDS)}, found {frame['kind'].iloc[row]!r}",
                         path, line_numbers[row])
    grade = pd.to_numeric(frame["grade"], errors="coerce")
    bad_grade = grade.isna() | (grade != grade.round())
    if bad_grade.any():
        row = int(np.flatnonzero(bad_grade.to_numpy())[0])
        raise InputError(f"grade must be an integer, found {frame['grade'].iloc[row]!r}", path,
                         line_numbers[row])
    frame = frame.astype(str)
    frame["grade"] = grade.to_numpy(dtype=np.int64)
    return frame.reset_index(drop=True)


def read_judged_pairs(path: str | os.PathLike) -> pd.DataFrame:
    """The pairs already judged, from TREC qrels or a labels table (told apart by a ``query_id`` header).

    Returns distinct ``query_id, doc_id`` rows. A qrels line with a negative grade is not a judgment
    (trec_eval: pooled but not judged), so it is not returned; in a labels table every row counts, human or
    LLM (filter the table first when only some kinds should count).
    """
    path = os.fspath(path)
    if first_field(path) == "query_id":
        judged = read_labels(path)
    else:
        qrels = read_qrels(path)
        judged = qrels[qrels["grade"] >= 0]
    return judged[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True)


# --- labels from qrels
def labels_from_file(path: str | os.PathLike, kind: str = "human") -> pd.DataFrame:
    """A labels table from a labels TSV, or from TREC qrels as one annotator named by the file.

    Qrels rows become judgments by annotator ``run_name(path)`` of the given ``kind`` (source = the file
    name); a negative qrels grade (pooled, not judged) is not a judgment: such rows are left out and counted
    in ``frame.attrs["unjudged_rows"]``.
    """
    if kind not in LABEL_KINDS:
        raise InputError(f"kind must be one of {', '.join(LABEL_KINDS)}, got {kind!r}")
    path = os.fspath(path)
    if first_field(path) == "query_id":
        labels = read_labels(path)
        labels.attrs["unjudged_rows"] = 0
        return labels
    grades = read_grades(path, human={path} if kind == "human" else ())
    labels = grades[["query_id", "doc_id", "annotator", "kind", "grade"]].assign(
        source=Path(path).name, labeled_at="", comment="")
    labels.attrs["unjudged_rows"] = grades.attrs["unjudged"]
    return labels


def write_labels(labels: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a labels table (columns :data:`LABELS_COLUMNS`, in that order) as TSV with a header, atomically.

    Fields holding a tab, a newline or a quote are quoted as the csv module does, so :func:`read_labels`
    reads the file back unchanged.
    """
    missing = [c for c in LABELS_COLUMNS if c not in labels.columns]
    if missing:
        raise InputError(f"labels are missing column(s) {', '.join(missing)}")
    with atomic_path(path) as tmp:
        labels[list(LABELS_COLUMNS)].to_csv(tmp, sep="\t", index=False, lineterminator="\n")


# --- agreement: the grades of several annotators, from labels tables or qrels files
GRADES_COLUMNS = ("query_id", "doc_id", "annotator", "kind", "grade", "file")


def annotator_name(path: str | os.PathLike) -> str:
    """The annotator a qrels file stands for: its file name without extensions (``llama.qrels`` -> ``llama``)."""
    return run_name(path)


def read_grades(path: str | os.PathLike, human: Collection[str] = ()) -> pd.DataFrame:
    """Read one annotation file: a labels table (first header field ``query_id``) or TREC qrels.

    Returns :data:`GRADES_COLUMNS` in file order: a labels table gives each row's annotator and kind; a qrels
    file is one annotator named by :func:`annotator_name`, of kind ``human`` when that name or the path is in
    ``human``, else ``llm``. ``file`` is ``path`` (for messages that name the file and line).

    A negative qrels grade means what it means to trec_eval (pooled, not judged): it is not a judgment, so
    the row is left out and counted in ``frame.attrs["unjudged"]``. An exact repeat of a judgment is collapsed
    and counted in ``frame.attrs["collapsed_duplicates"]``; one annotator giving one pair two different
    grades is refused, naming both lines. Whether a grade is on the scale is the caller's check.
    """
    path = os.fspath(path)
    check_file(path)
    labels_table = first_field(path) == "query_id"
    if labels_table:
        labels = read_labels(path)
        frame = labels[["query_id", "doc_id", "annotator", "kind", "grade"]].copy()
        blank = frame["annotator"].str.strip() == ""
        if blank.any():
            row = frame[blank].iloc[0]
            raise InputError("empty annotator", path, grade_line(path, row["query_id"], row["doc_id"], row["grade"]))
        unjudged = earlier = 0
    else:
        qrels = read_qrels(path)
        name = annotator_name(path)
        kind = "human" if name in human or path in human or os.path.realpath(path) in human else "llm"
        judged = qrels["grade"].to_numpy() >= 0
        unjudged = int((~judged).sum())
        earlier = int(qrels.attrs.get("collapsed_duplicates", 0))
        frame = qrels[judged].assign(annotator=name, kind=kind)[["query_id", "doc_id", "annotator", "kind", "grade"]]
    repeated = frame.duplicated(["query_id", "doc_id", "annotator"], keep=False)
    collapsed = int(frame.duplicated().sum()) if repeated.any() else 0
    if repeated.any():
        conflicting = frame[repeated].groupby(["query_id", "doc_id", "annotator"], sort=False)["grade"].nunique()
        if (conflicting > 1).any():
            query_id, doc_id, annotator = conflicting[conflicting > 1].index[0]
            same = frame[(frame["query_id"] == query_id) & (frame["doc_id"] == doc_id)
                         & (frame["annotator"] == annotator)]
            lines = [grade_line(path, query_id, doc_id, int(g), annotator) for g in same["grade"]]
            where = ", ".join(f"line {n}: grade {g}" for n, g in zip(lines, same["grade"], strict=True))
            raise InputError(f"annotator {annotator} gives query {query_id} document {doc_id} two different "
                             f"grades ({where})", path, lines[-1])
        frame = frame.drop_duplicates()
    frame = frame.assign(file=path).reset_index(drop=True)
    frame["grade"] = frame["grade"].astype(np.int64)
    frame.attrs = {"unjudged": unjudged, "collapsed_duplicates": collapsed + earlier, "labels_table": labels_table}
    return frame


def grade_line(path: str | os.PathLike, query_id: str, doc_id: str, grade: int,
               annotator: str | None = None) -> int | None:
    """The first line of ``path`` (labels table or qrels) that gives this grade to this pair, or None.

    Used for error messages only (a rescan of the file), so that readers can stay columnar.
    """
    path = os.fspath(path)
    if first_field(path) == "query_id":
        rows, line_numbers, header = read_tsv_with_header(path, required=LABELS_COLUMNS)
        at = {name: header.index(name) for name in ("query_id", "doc_id", "annotator", "grade")}
        for row, number in zip(rows, line_numbers, strict=True):
            if (row[at["query_id"]].strip() == query_id and row[at["doc_id"]].strip() == doc_id
                    and (annotator is None or row[at["annotator"]].strip() == annotator)
                    and _same_integer(row[at["grade"]], grade)):
                return number
        return None
    with text_lines(path) as lines:
        for number, line in lines:
            fields = line.split()
            if len(fields) == 4 and fields[0] == query_id and fields[2] == doc_id and _same_integer(fields[3], grade):
                return number
    return None


def _same_integer(text: str, value: int) -> bool:
    try:
        return float(text) == value
    except ValueError:
        return False
