"""Annotators scored against gold tasks: the known-answer pairs a push mixed blind into a Label Studio project
(:mod:`evalset.judgments.gold`: what a gold task is, how it is mixed in and found again), each annotator's answers
on them against the gold grade.

Conventions
-----------
- **Scores** per annotator, on the gold answers: ``gold_seen`` (answers to gold tasks), exact ``accuracy``,
  ``mae`` (mean absolute grade error), ``kappa_linear``: Cohen's kappa with linear weights against the gold
  grades over the guideline's full scale (:mod:`evalset.agreement.kappa`; as scikit-learn's
  ``cohen_kappa_score(weights="linear", labels=scale)``, and its rule): an annotator who gives one grade to gold of
  several grades, or several grades to gold of one, has kappa 0 (agreement at chance); kappa is undefined when
  both are one and the same grade (0/0).
- **Flag** (:class:`GoldPolicy`): ``flagged`` when ``kappa_linear < 0.4`` on at least 20 gold answers;
  ``passed`` when at least 0.4; ``not enough gold`` below 20 answers (neither flagged nor passed);
  ``undefined`` when kappa is. See docs/quality.md for why these thresholds.
- A pull scores its gold answers through :func:`gold_check` (the gold pairs and this module's scoring under a
  policy, as :class:`evalset.judgments.gold.GoldCheck`), so that Label Studio's room needs no import of this one.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalset.agreement.kappa import confusion_matrix, disagreement_weights, kappa_from_confusion
from evalset.io.files import atomic_path
from evalset.judgments.gold import GoldCheck
from evalset.quality.spec import GoldPolicy
from evalset.render import json_safe, number, text_table

SCORE_COLUMNS = ("annotator", "gold_seen", "accuracy", "mae", "kappa_linear", "verdict")
VERDICTS = ("passed", "flagged", "not enough gold", "undefined")


# ----------------------------------------------------------------------------------------------- pull: scores
def kappa_against_gold(grades: np.ndarray, gold: np.ndarray, scale: list[int]) -> float:
    """Linear-weighted kappa of ``grades`` against ``gold`` over ``scale`` (the rule of
    :mod:`evalset.agreement.kappa`: 0 for a constant side, NaN when 0/0)."""
    confusion = confusion_matrix(np.asarray(gold), np.asarray(grades), scale)
    return float(kappa_from_confusion(confusion, disagreement_weights(len(scale), "linear")))


def score_annotators(answers: pd.DataFrame, scale: list[int], policy: GoldPolicy = GoldPolicy()) -> pd.DataFrame:
    """Per annotator (sorted), :data:`SCORE_COLUMNS` from the gold answers (``annotator, grade, gold``); no
    answer gives no row (:class:`GoldReport` warns)."""
    rows = []
    for annotator, group in answers.groupby("annotator", sort=True):
        grades, gold = group["grade"].to_numpy(np.int64), group["gold"].to_numpy(np.int64)
        kappa = kappa_against_gold(grades, gold, scale)
        if len(group) < policy.min_gold:
            verdict = "not enough gold"
        elif math.isnan(kappa):
            verdict = "undefined"
        else:
            verdict = "flagged" if kappa < policy.min_kappa else "passed"
        rows.append({"annotator": annotator, "gold_seen": len(group), "accuracy": float(np.mean(grades == gold)),
                     "mae": float(np.mean(np.abs(grades - gold))), "kappa_linear": kappa, "verdict": verdict})
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))


@dataclass(frozen=True)
class GoldReport:
    """Each annotator scored against gold (:func:`score_annotators`: :data:`SCORE_COLUMNS`) under ``policy``.

    ``gold_only_answers`` counts the answers on gold-only tasks (kept out of the labels); ``gold_path`` and
    ``gold_pairs`` name the gold file. ``to_text()`` is what ``evalset pull --gold`` prints (a warning when no gold
    task was answered yet), ``to_dict()`` the JSON of ``--gold-report``.
    """

    scores: pd.DataFrame
    policy: GoldPolicy
    gold_only_answers: int
    gold_path: str | None
    gold_pairs: int

    def to_text(self) -> str:
        scores = self.scores
        if scores.empty:
            return "warning: no answer to a gold task yet: no annotator can be scored against gold"
        head = [f"gold checks: {int(scores['gold_seen'].sum())} answer(s) to gold tasks by {len(scores)} "
                f"annotator(s) ({self.gold_only_answers} on gold-only tasks, kept out of the labels); "
                f"{self.policy.describe()}"]
        rows = [["annotator", "gold seen", "accuracy", "MAE", "kappa (linear)", "verdict"]]
        rows += [[r.annotator, r.gold_seen, number(r.accuracy, 3), number(r.mae, 3), number(r.kappa_linear, 3),
                  r.verdict] for r in scores.itertuples()]
        flagged = scores.loc[scores["verdict"] == "flagged", "annotator"].tolist()
        tail = [f"flagged: {', '.join(flagged)}" if flagged else "flagged: none"]
        return "\n".join(head + text_table(rows, right={1, 2, 3, 4}) + tail)

    def to_dict(self) -> dict[str, Any]:
        return json_safe({"policy": {**asdict(self.policy), "kappa": "Cohen's kappa, linear weights, full scale, "
                                     "against the gold grade"},
                          "gold": {"path": self.gold_path, "pairs": self.gold_pairs},
                          "gold_only_answers": self.gold_only_answers,
                          "annotators": self.scores.to_dict(orient="records")})

    def write(self, path: str | os.PathLike) -> str:
        """Write the report atomically: a TSV table (``.tsv``) or JSON (any other name); returns the path."""
        with atomic_path(path) as tmp:
            if os.fspath(path).endswith(".tsv"):
                self.scores.to_csv(tmp, sep="\t", index=False, lineterminator="\n", na_rep="")
            else:
                Path(tmp).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return os.fspath(path)


def gold_report(answers: pd.DataFrame, gold: pd.DataFrame, scale: list[int], policy: GoldPolicy = GoldPolicy(),
                gold_only_answers: int = 0) -> GoldReport:
    """The gold answers (``annotator, grade, gold``) scored per annotator against ``gold``
    (:func:`evalset.judgments.gold.read_gold`)."""
    return GoldReport(score_annotators(answers, scale, policy), policy, gold_only_answers, gold.attrs.get("path"),
                      len(gold))


def gold_check(gold: pd.DataFrame, policy: GoldPolicy = GoldPolicy()) -> GoldCheck:
    """What a pull checks the annotators against: ``gold`` (:func:`evalset.judgments.gold.read_gold`), the answers
    on it scored by :func:`gold_report` under ``policy``."""
    def score(answers: pd.DataFrame, scale: list[int], gold_only_answers: int) -> GoldReport:
        return gold_report(answers, gold, scale, policy, gold_only_answers)

    return GoldCheck(gold, score)
