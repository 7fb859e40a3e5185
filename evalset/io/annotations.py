"""Annotations: labels tables (one row per judgment), TREC qrels read as the judgments of one annotator, and the
one rule for an annotator who judged a pair more than once.

A labels table is told from qrels by its header (first field ``query_id``), in one place:
:func:`is_labels_table`. A qrels file is the judgments of one annotator named by the file
(:func:`qrels_annotator`).

Every stage that reads grades (agreement, estimate, freeze, quality) reads them with :func:`read_annotations` and
applies :func:`settle_repeats` to what it reads, through the one reader :mod:`evalset.judgments.reading` (freeze
settles in :func:`evalset.sets.freeze`), so that one input gets one treatment:

- an exact repeat (one annotator, one pair, the same grade), in one file or across files, is collapsed and
  counted;
- one annotator giving one pair different grades is refused, naming every place (file and line), unless a rule
  of :data:`~evalset.contract.CONFLICTING_GRADES` says which judgment stands; the judgments it settles are
  counted.

The judgments of one annotator and pair are ordered by time, then by input order. A judgment's time is its
``labeled_at`` (ISO 8601); a qrels line, or an empty ``labeled_at``, has no time and comes before any judgment
that has one. Input order is the order in which the files were given, then the line. ``latest`` keeps the last
judgment in that order, ``first`` the first one; for qrels alone that is the later (earlier) file and line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evalset.contract import REPEATS_RULES
from evalset.errors import InputError
from evalset.io.files import atomic_path, check_file, first_field, read_tsv_with_header, refuse_blank, text_lines
from evalset.io.irds import PREFIX, is_irds
from evalset.io.trec import read_qrels, run_name
from evalset.params import check, validate_params

LABELS_COLUMNS = ("query_id", "doc_id", "annotator", "kind", "grade", "source", "labeled_at", "comment")
LABEL_KINDS = ("human", "llm")
ANNOTATIONS_COLUMNS = (*LABELS_COLUMNS, "file", "judged")  # as read, before settle_repeats
GRADES_COLUMNS = ("query_id", "doc_id", "annotator", "kind", "grade", "file")  # what agreement compares


def is_labels_table(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a labels table (first header field ``query_id``) rather than TREC qrels.

    An empty file is not a labels table (it reads as qrels with no line). A header of comma- or
    semicolon-separated labels columns (a CSV export) is refused: labels tables are tab-separated. An ir_datasets
    collection (``irds:ID``) is qrels.
    """
    if is_irds(path):
        return False
    first = first_field(os.fspath(path))
    for separator in (",", ";"):
        if first.split(separator, 1)[0].strip() == "query_id" and separator in first:
            raise InputError(f"this looks like a labels table separated by {separator!r}: labels tables are "
                             "tab-separated (save it as TSV)", os.fspath(path), 1)
    return first == "query_id"


def qrels_annotator(path: str | os.PathLike) -> str:
    """The annotator a qrels file stands for: its file name without extensions (``llama.qrels`` -> ``llama``); an
    ir_datasets collection's qrels, its id (``irds:msmarco-passage/trec-dl-2019/judged`` ->
    ``msmarco-passage/trec-dl-2019/judged``)."""
    return os.fspath(path).removeprefix(PREFIX) if is_irds(path) else run_name(path)


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
    if is_labels_table(path):
        judged = read_labels(path)
    else:
        qrels = read_qrels(path)
        judged = qrels[qrels["grade"] >= 0]
    return judged[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True)


# --- reading annotations: every judgment of every file, in input order
def read_annotation_file(path: str | os.PathLike, qrels_kind: str = "human") -> pd.DataFrame:
    """Every judgment of one file, a labels table or TREC qrels, in file order: :data:`ANNOTATIONS_COLUMNS`.

    A labels table gives each row's annotator and kind (an empty annotator is refused with its line). A qrels
    file is one annotator named by :func:`qrels_annotator`, of kind ``qrels_kind``, with ``source`` the file
    name and no ``labeled_at`` or ``comment``. ``file`` is ``path`` (for messages that name the file and line);
    ``judged`` is False for a negative qrels grade, which means what it means to trec_eval (pooled, not judged).
    Repeats are kept as read: :func:`settle_repeats` applies the rule to them.
    """
    check("kind", qrels_kind, LABEL_KINDS)
    path = os.fspath(path)
    if not is_irds(path):
        check_file(path)
    if is_labels_table(path):
        frame = read_labels(path)
        blank = frame["annotator"].str.strip() == ""
        if blank.any():
            row = frame[blank].iloc[0]
            raise InputError("empty annotator", path,
                             grade_line(path, row["query_id"], row["doc_id"], int(row["grade"])))
        judged = np.ones(len(frame), dtype=bool)
    else:
        qrels = read_qrels(path, every_line=True)
        frame = qrels.assign(annotator=qrels_annotator(path), kind=qrels_kind,
                             source=path if is_irds(path) else Path(path).name,
                             labeled_at="", comment="")[list(LABELS_COLUMNS)]
        judged = qrels["grade"].to_numpy() >= 0
    frame = frame.assign(file=path, judged=judged)
    frame["grade"] = frame["grade"].astype(np.int64)
    return frame.reset_index(drop=True)


def read_annotations(sources: Sequence[tuple[str | os.PathLike, str]]) -> pd.DataFrame:
    """Every judgment of every file, in input order: ``sources`` are ``(path, kind of a qrels annotator)``.

    Returns :data:`ANNOTATIONS_COLUMNS` (see :func:`read_annotation_file`), repeats kept as read; pass the
    result to :func:`settle_repeats`.
    """
    frames = [read_annotation_file(path, kind) for path, kind in sources]
    if not frames:
        return pd.DataFrame({name: pd.Series(dtype=object) for name in ANNOTATIONS_COLUMNS}).astype(
            {"grade": np.int64, "judged": bool})
    return pd.concat(frames, ignore_index=True)


# --- the one rule for one annotator's repeated judgments of one pair
_KEY = ["query_id", "doc_id", "annotator"]


@validate_params(REPEATS_RULES)
def settle_repeats(judgments: pd.DataFrame, conflicting_grades: str = "refuse"
                   ) -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    """One judgment per annotator and pair, by the rule of the module docstring.

    ``judgments`` hold at least ``query_id, doc_id, annotator, grade``; ``file`` (to name places; without it,
    rows are named by position), ``labeled_at`` (the time of a judgment) and ``judged`` (False: a negative
    qrels grade) are used when present. ``conflicting_grades`` is one of
    :data:`~evalset.contract.CONFLICTING_GRADES` (:data:`~evalset.contract.REPEATS_RULES`): ``refuse`` raises
    :class:`InputError` naming the places of the first conflict (and how many there are).

    Returns the judgments that stand, in input order, without the unjudged rows and the ``judged`` column,
    and per annotator (in order of appearance) ``unjudged`` (negative qrels grades left out, after settling),
    ``collapsed_duplicates`` (rows repeating an earlier judgment's grade) and ``conflicting_grades_settled``
    (pairs this annotator graded differently, settled by the rule).
    """
    frame = judgments.reset_index(drop=True)
    counts = {name: {"unjudged": 0, "collapsed_duplicates": 0, "conflicting_grades_settled": 0}
              for name in pd.unique(frame["annotator"])}
    keep = np.ones(len(frame), dtype=bool)
    repeated = frame.duplicated(_KEY, keep=False).to_numpy()
    if repeated.any():
        rows = frame[repeated]
        _add_counts(counts, "collapsed_duplicates", rows[rows.duplicated([*_KEY, "grade"])])
        grades_given = rows.groupby(_KEY, sort=False)["grade"].transform("nunique").to_numpy()
        conflicting = rows[grades_given > 1]
        if len(conflicting) and conflicting_grades == "refuse":
            raise _conflict_error(conflicting)
        _add_counts(counts, "conflicting_grades_settled", conflicting.drop_duplicates(_KEY))
        if conflicting_grades != "refuse":
            rows = rows.iloc[_judgment_order(rows)]
        standing = rows.drop_duplicates(_KEY, keep="last" if conflicting_grades == "latest" else "first").index
        keep[repeated] = False
        keep[standing] = True
    if "judged" in frame:
        unjudged = keep & ~frame["judged"].to_numpy(dtype=bool)
        _add_counts(counts, "unjudged", frame[unjudged])
        keep &= ~unjudged
    kept = frame[keep].drop(columns="judged", errors="ignore").reset_index(drop=True)
    return kept, counts


def _add_counts(counts: dict[str, dict[str, int]], key: str, rows: pd.DataFrame) -> None:
    for name, count in rows["annotator"].value_counts(sort=False).items():
        counts[name][key] += int(count)


def _judgment_order(rows: pd.DataFrame) -> np.ndarray:
    """Positions of ``rows`` ordered by time (none first), then input order (see the module docstring)."""
    position = np.arange(len(rows))
    if "labeled_at" not in rows:
        return position
    text = rows["labeled_at"].astype(str).str.strip()
    stamps = pd.to_datetime(text.where(text != ""), utc=True, errors="coerce", format="ISO8601")
    bad = stamps.isna().to_numpy() & (text != "").to_numpy()
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        row = rows.iloc[first]
        path, line = _place(row, int(rows.index[first]))
        raise InputError(f"labeled_at {row['labeled_at']!r} is not an ISO 8601 time, which is needed to order "
                         f"annotator {row['annotator']}'s judgments of query {row['query_id']} document "
                         f"{row['doc_id']}", path, line)
    time = stamps.to_numpy(dtype="datetime64[ns]").view(np.int64)  # NaT (no time) is the smallest
    return np.lexsort((position, time))


def _place(row: pd.Series, position: int) -> tuple[str | None, int | None]:
    """(file, line) of a judgment for messages; (None, row number) for a frame that names no file."""
    path = row.get("file")
    if isinstance(path, str) and os.path.isfile(path):
        return path, grade_line(path, row["query_id"], row["doc_id"], int(row["grade"]), row["annotator"])
    return None, position + 1


def _conflict_error(conflicting: pd.DataFrame) -> InputError:
    query_id, doc_id, annotator = conflicting.iloc[0][_KEY]
    same = conflicting[(conflicting["query_id"] == query_id) & (conflicting["doc_id"] == doc_id)
                       & (conflicting["annotator"] == annotator)].drop_duplicates("grade")
    places = [_place(row, int(index)) for index, row in same.iterrows()]
    where = ", ".join(f"{path}:{line} grade {grade}" if path else f"row {line} grade {grade}"
                      for (path, line), grade in zip(places, same["grade"], strict=True))
    others = conflicting.drop_duplicates(_KEY).shape[0] - 1
    count = "two" if len(same) == 2 else str(len(same))
    message = (f"annotator {annotator} gives query {query_id} document {doc_id} {count} different grades ({where})"
               + (f"; {others} more pairs are graded differently by one annotator" if others else "")
               + "; --conflicting-grades latest|first says which judgment stands")
    path, line = places[-1]
    return InputError(message, path, line if path else None)


def labels_from_file(path: str | os.PathLike, kind: str = "human") -> pd.DataFrame:
    """A labels table from a labels TSV, or from TREC qrels as one annotator named by the file.

    Read by :func:`read_annotation_file` (qrels rows become judgments of ``kind``) and settled by
    :func:`settle_repeats` (exact repeats collapsed, different grades of one annotator for one pair refused);
    a negative qrels grade (pooled, not judged) is not a judgment: such rows are left out and counted in
    ``frame.attrs["unjudged_rows"]``.
    """
    labels, counts = settle_repeats(read_annotation_file(path, kind))
    labels = labels[list(LABELS_COLUMNS)]
    labels.attrs["unjudged_rows"] = sum(entry["unjudged"] for entry in counts.values())
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


def grade_line(path: str | os.PathLike, query_id: str, doc_id: str, grade: int,
               annotator: str | None = None) -> int | None:
    """The first line of ``path`` (labels table or qrels) that gives this grade to this pair, or None.

    Used for error messages only (a rescan of the file), so that readers can stay columnar.
    """
    path = os.fspath(path)
    if is_labels_table(path):
        rows, line_numbers, header = read_tsv_with_header(path, required=LABELS_COLUMNS)
        at = {name: header.index(name) for name in ("query_id", "doc_id", "annotator", "grade")}
        for row, number in zip(rows, line_numbers, strict=True):
            if (row[at["query_id"]] == query_id and row[at["doc_id"]] == doc_id  # as read_labels reads them
                    and (annotator is None or row[at["annotator"]] == annotator)
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
