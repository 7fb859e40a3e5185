"""Where an estimate's grades and runs come from: files of grades (labels tables of ``evalset pull`` and ``evalset
judge``, or qrels), one grade per pair, and run files or folders of runs. A frozen set's grades and runs are its own
(:mod:`evalset.estimate.frozen` reads them through :mod:`evalset.io.setfolder`).

Conventions
-----------
- Grades are read by :func:`evalset.judgments.read_grades`; one annotator's repeats are settled by
  ``conflicting_grades``. Several annotators of one pair (two humans, or several LLM files merged) give the pair
  their grade under the rule ``median`` with ties settled low (:mod:`evalset.judgments.rules`): of an even number,
  the lower of the two middle grades; the pairs so merged, and the ties, are counted (:class:`Grades`).
- The document designs keep each LLM file apart, one judge (:func:`read_judges`), named by its file's name (its
  path where two files share a name).
- Runs are read by :func:`evalset.io.trec.read_run`, by name, each with its file (named when a run is refused).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from evalset.io.samplerecord import refuse_ungraded
from evalset.io.trec import expand_run_paths, read_run
from evalset.judgments import reading
from evalset.judgments.rules import pair_grades

FilePath = str | os.PathLike


@dataclass(frozen=True)
class Grades:
    """One grade per pair (``query_id, doc_id, grade``), the judgments they came from (with ``file``), and
    counts for the notes."""

    qrels: pd.DataFrame
    judgments: pd.DataFrame
    merged_pairs: int = 0
    tied_pairs: int = 0
    files: tuple[str, ...] = ()
    other_kind: int = 0  # labels of the other kind (human, llm) in the files, left out

    @property
    def query_ids(self) -> set[str]:
        return set(self.qrels["query_id"])


def read_grades(paths: Sequence[FilePath], kind: str, conflicting_grades: str = "refuse") -> Grades:
    """The grades of ``paths`` (labels tables or qrels; a qrels file is one annotator of ``kind``), one per pair
    (module docstring). A file without a judgment is refused, naming it."""
    files = tuple(os.fspath(path) for path in paths)
    read = reading.read_grades([(path, kind) for path in files], conflicting_grades, kind=kind)
    return replace(grades_of(read.judgments, files), other_kind=read.other_kind)


def grades_of(judgments: pd.DataFrame, files: tuple[str, ...] = ()) -> Grades:
    """One grade per pair of ``judgments`` (``query_id, doc_id, annotator, grade``): the median, ties settled low."""
    merged = pair_grades(judgments, "median", ties="low")
    return Grades(merged.qrels(), judgments, int((merged.table["n"] > 1).sum()), merged.tied, files)


def _judge_names(paths: Sequence[str]) -> list[str]:
    names = [Path(path).name for path in paths]
    return [path if names.count(name) > 1 else name for path, name in zip(paths, names, strict=True)]


def read_judges(paths: Sequence[FilePath], conflicting_grades: str = "refuse",
                pool: pd.DataFrame | None = None) -> pd.DataFrame:
    """The LLM grades of ``paths``, one judge per file (module docstring): ``query_id, doc_id, judge, grade``;
    with ``pool`` (``query_id, doc_id``), refuse a file that misses a pooled pair, naming it."""
    files = [os.fspath(path) for path in paths]
    frames = []
    for path, judge in zip(files, _judge_names(files), strict=True):
        qrels = read_grades([path], "llm", conflicting_grades).qrels
        if pool is not None:
            refuse_ungraded(pool, qrels, "the LLM", path)
        frames.append(qrels[["query_id", "doc_id", "grade"]].assign(judge=judge))
    return pd.concat(frames, ignore_index=True)[["query_id", "doc_id", "judge", "grade"]]


def read_runs_and_files(runs: Sequence[FilePath]) -> tuple[dict, dict[str, str]]:
    """The runs (files or folders) read, by name, as :func:`evalset.io.trec.read_runs` reads them, and each one's
    file (named when a run is refused)."""
    files = {name: os.fspath(path) for name, path in expand_run_paths(runs).items()}
    return {name: read_run(path) for name, path in files.items()}, files
