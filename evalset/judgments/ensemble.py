"""Several LLM judges as one: per combination of their grades, the human grade distribution, learnt on the human
slice of the *other* queries (cross-fitted), and the grade it predicts.

=======================  ==============================================================================================
convention               rule
=======================  ==============================================================================================
the pairs                those every judge graded; a pair some judge did not grade is left out and counted
the humans               the human grades of the slice, several annotators of a pair merged by the median, ties
                         settled low (the rule of ``estimate``)
the prediction           :func:`evalset.judgments.calibration.calibrated_distribution` with every human-graded pair
                         as the sample (pi = 1, each pair of equal weight in the cross-validated error): the model
                         of cells (each judge alone, the sum of grades, their full combination shrunk toward either)
                         chosen per query by its error on the other queries; a pair's distribution is learnt
                         leaving its own query out, so a human-graded query never predicts itself
the grade                the expected grade rounded to the nearest grade of the scale (half up): the point
                         prediction of least squared error, which quadratic kappa and a gain-weighted measure reward
the annotator            ``ensemble(JUDGE+JUDGE+...)``, kind ``llm``; its source names the judges and the slice. One
                         judge alone is ``calibrated(JUDGE)``: its grades mapped the same way (the fair rival of an
                         ensemble: is the gain the combination's, or the calibration's?)
=======================  ==============================================================================================
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.annotations import LABELS_COLUMNS, write_labels
from evalset.judgments.calibration import calibrated_distribution, candidate_models
from evalset.judgments.reading import read_grades
from evalset.judgments.rules import pair_grades
from evalset.judgments.scale import SCALE_REMEDY, apply_scale

PAIR = ["query_id", "doc_id"]


@dataclass(frozen=True)
class Ensemble:
    """The ensemble's grade of every pair all judges graded (``query_id, doc_id, grade, expected``), its name, the
    judges, the human-graded pairs and queries it learnt from, and the pairs left out (some judge did not grade)."""

    grades: pd.DataFrame
    name: str
    judges: tuple[str, ...]
    human_pairs: int
    human_queries: int
    left_out: int

    @property
    def source(self) -> str:
        return (f"ensemble of {', '.join(self.judges)}; calibrated on {self.human_pairs} human-graded pairs of "
                f"{self.human_queries} queries, cross-fitted by query")

    def labels(self) -> pd.DataFrame:
        """The grades as a labels table (docs/design.md's columns; ``comment``: the expected grade, to 4 decimals)."""
        return self.grades[[*PAIR, "grade"]].assign(
            annotator=self.name, kind="llm", source=self.source, labeled_at="",
            comment=[f"expected grade {value:.4f}" for value in self.grades["expected"]])[list(LABELS_COLUMNS)]

    def write(self, path: str | os.PathLike) -> str:
        """Write :meth:`labels` as a labels table at ``path`` (atomically); returns the path."""
        write_labels(self.labels(), path)
        return os.fspath(path)

    def to_dict(self) -> dict[str, Any]:
        """The ensemble's name, judges and what it was calibrated on (its grades are in the labels written)."""
        return {"name": self.name, "judges": list(self.judges), "labels": len(self.grades),
                "human_pairs": self.human_pairs, "human_queries": self.human_queries, "left_out": self.left_out}

    def to_text(self) -> str:
        counts = self.grades["grade"].value_counts().sort_index()
        return "\n".join([self.note.removeprefix("note: "),
                          "grades: " + ", ".join(f"{grade}: {count:,}" for grade, count in counts.items())])

    @property
    def note(self) -> str:
        left = f"; {self.left_out:,} pairs not graded by every judge left out" if self.left_out else ""
        what = f"the {len(self.judges)} judges' grades combined" if len(self.judges) > 1 else "the judge's grades"
        return (f"note: {self.name}: {what}, calibrated on "
                f"{self.human_pairs:,} human-graded pairs of {self.human_queries} queries (each query's pairs "
                f"predicted from the other queries){left}")


def ensemble_grades(judges: pd.DataFrame, human: pd.DataFrame, scale: Sequence[int]) -> Ensemble:
    """The ensemble of the judges in ``judges`` (``query_id, doc_id, annotator, grade``: one grade per judge and
    pair) calibrated on ``human`` (``query_id, doc_id, annotator, grade``) (module docstring)."""
    names = tuple(dict.fromkeys(judges["annotator"]))
    if not names:
        raise InputError("an ensemble combines LLM judges' grades: none given")
    if human.empty:
        raise InputError("an ensemble is calibrated on human grades: none given")
    wide = judges.pivot_table(index=PAIR, columns="annotator", values="grade", aggfunc="first")[list(names)]
    complete = wide.dropna()
    left_out = len(wide) - len(complete)
    if complete.empty:
        raise InputError(f"no pair is graded by every judge ({', '.join(names)})")
    humans = pair_grades(human, "median", ties="low").qrels().set_index(PAIR)["grade"]
    order = np.sort(np.asarray(scale))
    off = ~np.isin(humans.to_numpy(), order)
    if off.any():
        raise InputError(f"a human grade {humans[off].iloc[0]} off the scale {', '.join(map(str, order))}")
    keys = complete.index.to_frame(index=False)
    query = pd.factorize(keys["query_id"])[0]
    graded = humans.reindex(complete.index)
    sampled = graded.notna().to_numpy()
    if not sampled.any():
        raise InputError("no pair graded by every judge has a human grade: the ensemble has nothing to learn from")
    llm = complete.to_numpy(dtype=np.int64)
    grade = graded.fillna(order[0]).to_numpy(dtype=np.int64)
    predicted, _ = calibrated_distribution(llm, query, int(query.max()) + 1, sampled, grade, np.ones(len(llm)),
                                           order, candidate_models(llm, names), cost=np.ones(len(llm)))
    expected = predicted @ order
    nearest = order[np.abs(np.floor(expected + 0.5)[:, None] - order[None, :]).argmin(axis=1)]
    frame = keys.assign(grade=nearest.astype(np.int64), expected=expected)
    name = f"ensemble({'+'.join(names)})" if len(names) > 1 else f"calibrated({names[0]})"
    return Ensemble(frame, name, names, int(sampled.sum()),
                    int(keys.loc[sampled, "query_id"].nunique()), left_out)


def ensemble_files(judge_paths: Sequence[str | os.PathLike], human_paths: Sequence[str | os.PathLike],
                   scale: Sequence[int], conflicting_grades: str = "refuse") -> Ensemble:
    """:func:`ensemble_grades` of the judges in labels tables or qrels files (read as LLM; each annotator a judge)
    and of the humans' (read as human), every grade on ``scale`` (one off it refused with its file and line)."""
    judges = read_grades([(path, "llm") for path in judge_paths], conflicting_grades, kind="llm").judgments
    human = read_grades([(path, "human") for path in human_paths], conflicting_grades, kind="human").judgments
    on_scale = [apply_scale(grades, scale, remedy=SCALE_REMEDY)[0] for grades in (judges, human)]
    return ensemble_grades(*on_scale, scale)
