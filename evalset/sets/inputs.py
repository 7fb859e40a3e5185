"""What a frozen set may be made of: the checks ``evalset freeze`` makes before anything is written, and the
check after the build, before the version is renamed into place.

Conventions
-----------
- Query and document ids are TREC ids: not empty, no white space (a field separator in qrels and runs). A
  judgment or a query whose id TREC qrels cannot hold is refused, naming the file and line it came from (or its
  row, for a frame that names no file); so is a grade off the guideline's scale.
- A labels file that holds no judgment is refused, naming it (:func:`evalset.judgments.read_judgments`): an empty
  input is a mistake, never a 0-judgment set.
- A set frozen with a document sample (:func:`check_sample`): its human labels are exactly the sampled pairs
  (any number of annotators each), every LLM judge (an annotator of kind ``llm``) grades every pair of the
  sample's pool, and the pool's queries are the set's.
- The built version is read back with the project's own readers (:func:`check_reads_back`) before it is
  renamed into place: a version that exists reads back as it was written.
- A set's headline metric names a measure (:func:`set_contract`, and :func:`evalset.sets.freeze` for a contract
  made elsewhere): an unknown one is refused with the measures known, as every ``-m`` is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_METRIC, EvaluationContract
from evalset.errors import InputError
from evalset.io.annotations import grade_line, read_labels
from evalset.io.guideline import Guideline
from evalset.io.queries import read_queries
from evalset.io.samplerecord import SampleRecord, refuse_ungraded, sampled_grades
from evalset.io.setfiles import LABELS_FILE, QRELS_FILE, QUERIES_FILE
from evalset.io.setfolder import SetContract
from evalset.io.trec import read_qrels
from evalset.judgments import reading
from evalset.metrics.measures import parse_measure


def set_contract(evaluation: EvaluationContract | None = None, headline: str = DEFAULT_METRIC,
                 weighting: str = "traffic") -> SetContract:
    """The contract a set is frozen under, its headline checked first as a measure's spelling
    (:func:`evalset.metrics.measures.parse_measure`), then its declared rules (:class:`SetContract`)."""
    parse_measure(headline)
    return SetContract(evaluation or EvaluationContract(), headline, weighting)


def read_judgments(human: Sequence[str | os.PathLike], llm: Sequence[str | os.PathLike] = ()) -> pd.DataFrame:
    """Every judgment of the labels files (``human``: labels tables, or qrels as one human annotator each;
    ``llm``: qrels or labels of an LLM judge), as :func:`evalset.judgments.read_judgments` reads them (a file that
    holds no judgment is refused, naming it)."""
    return reading.read_judgments([*((path, "human") for path in human), *((path, "llm") for path in llm)])


def bad_ids(ids: pd.Series) -> np.ndarray:
    """Which ids TREC qrels and runs cannot hold: empty, or containing white space."""
    text = ids.astype(str)
    return ((text == "") | text.str.contains(r"\s", regex=True)).to_numpy()


def _id_problem(what: str, value: str) -> str:
    return f"{what} {value!r} " + ("is empty" if value == "" else "contains white space") + \
        ", which TREC qrels cannot hold"


def _label_place(labels: pd.DataFrame, row: int) -> tuple[str | None, int | None]:
    """(file, line) of one judgment read from a file (its ``file`` column); (None, row number) otherwise."""
    entry = labels.iloc[row]
    path = entry.get("file")
    if not (isinstance(path, str) and os.path.isfile(path)):
        return None, row + 1
    return path, grade_line(path, entry["query_id"], entry["doc_id"], entry["grade"], entry["annotator"])


def _refuse_label(labels: pd.DataFrame, bad: np.ndarray, message: str, name: str) -> InputError:
    path, line = _label_place(labels, int(np.flatnonzero(bad)[0]))
    more = int(bad.sum()) - 1
    message += f" ({more} more such judgment(s))" if more else ""
    return InputError(message, path, line) if path else InputError(f"{message} ({name} row {line})")


def check_labels(labels: pd.DataFrame, guideline: Guideline, name: str = "labels") -> None:
    """Refuse a judgment a frozen set cannot hold, naming its file and line (or ``name`` and the row, for a frame
    that names no file): a query or document id that TREC qrels cannot hold, or a grade off the guideline's
    scale."""
    for column, what in (("query_id", "query id"), ("doc_id", "document id")):
        bad = bad_ids(labels[column])
        if bad.any():
            value = str(labels[column].iloc[int(np.flatnonzero(bad)[0])])
            raise _refuse_label(labels, bad, _id_problem(what, value) + "; fix the id and freeze again", name)
    off_scale = ~np.isin(pd.to_numeric(labels["grade"], errors="coerce").to_numpy(dtype=float), guideline.grades)
    if off_scale.any():
        grade = labels["grade"].tolist()[int(np.flatnonzero(off_scale)[0])]
        raise _refuse_label(labels, off_scale, f"grade {grade!r} is not on the scale of {guideline.path} "
                                               f"({', '.join(map(str, guideline.grades))})", name)


def check_queries(queries: pd.DataFrame, source: str | None = None) -> None:
    """Refuse a query id that TREC qrels and runs cannot hold, naming ``source`` (the queries file) and the line
    (:func:`~evalset.io.queries.read_queries` keeps line numbers in ``attrs["line_numbers"]``)."""
    bad = bad_ids(queries["query_id"])
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        lines = queries.attrs.get("line_numbers")
        line = lines[row] if lines and len(lines) == len(queries) else None
        message = _id_problem("query id", str(queries["query_id"].iloc[row]))
        if source is not None:
            raise InputError(message, source, line)
        raise InputError(f"{message} ({f'line {line}' if line else f'row {row + 1}'} of the queries)")


def _files(labels: pd.DataFrame) -> str | None:
    files = labels["file"].dropna().astype(str).unique().tolist() if "file" in labels else []
    return ", ".join(files) or None


def check_sample(labels: pd.DataFrame, queries: pd.DataFrame, sample: SampleRecord) -> None:
    """Refuse labels that do not match the document ``sample`` they were drawn by (module docstring), naming the
    labels' file: a human label of an unsampled pair or outside the pool, a sampled pair without one, a pooled
    pair an LLM judge did not grade, a pool query the queries do not hold; a sample of a set's holes (it grows that
    set: :func:`evalset.sets.holes.freeze_hole_sample`)."""
    if "set" in sample.source:
        raise InputError(f"a sample of the holes of the set {sample.source['set']}: it grows that set (evalset freeze "
                         "grow LABELS --sample SAMPLE), it does not start a new one")
    outside = sorted(set(sample.pairs["query_id"]) - set(queries["query_id"].astype(str)))
    if outside:
        raise InputError(f"{len(outside)} queries of the document sample are not in the queries file (e.g. "
                         f"{', '.join(outside[:3])}): give the queries the pool was drawn for")
    human = labels[labels["kind"] == "human"]
    if human.empty:
        raise InputError("the labels hold no human grade of the sampled pairs: a set frozen with a document sample "
                         "needs them (evalset pull)")
    sampled_grades(sample.pairs, sample.pairs["sampled"].to_numpy(),
                   human.drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id", "grade"]], _files(human))
    for judge, graded in labels[labels["kind"] == "llm"].groupby("annotator", sort=True):
        refuse_ungraded(sample.pairs, graded, f"the LLM judge {judge}", _files(graded))


def check_reads_back(build: Path, qrels: pd.DataFrame, queries: pd.DataFrame, labels: pd.DataFrame) -> None:
    """Read a built version's files with the project's own readers and compare them with what was written: a
    version that exists must read back. Raises :class:`InputError` (nothing is frozen) when one does not."""
    try:
        qrels_back, queries_back = read_qrels(build / QRELS_FILE), read_queries(build / QUERIES_FILE)
        labels_back = read_labels(build / LABELS_FILE)
    except InputError as exc:
        raise InputError(f"the version built from these inputs does not read back ({exc.message}); nothing was "
                         "frozen") from None
    key = ["query_id", "doc_id", "grade"]

    def pairs(frame: pd.DataFrame) -> list[list[str]]:
        return frame[key].astype(str).sort_values(key).to_numpy().tolist()

    differ = [name for name, same in (
        (QRELS_FILE, pairs(qrels) == pairs(qrels_back)),
        (QUERIES_FILE, queries["query_id"].astype(str).tolist() == queries_back["query_id"].tolist()),
        (LABELS_FILE, len(labels) == len(labels_back))) if not same]
    if differ:
        raise InputError(f"the version built from these inputs does not read back as written ({', '.join(differ)})"
                         "; nothing was frozen")
