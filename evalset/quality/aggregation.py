"""Aggregating a crowd: one grade per (query, document) from many annotators by crowd-kit's models.

The grades of the long labels table (``query_id, doc_id, annotator, kind, grade``) become crowd-kit's frame
(``task, worker, label``): a task is one (query, document) pair, numbered in sorted order; a worker is an annotator
(a human or an LLM judge alike); a label is a grade, an ordinal grade taken as a class (no model here knows that 2
is between 1 and 3). The rules, with crowd-kit's classes as they are (nothing is rewritten here):

``dawid-skene``
    :class:`crowdkit.aggregation.DawidSkene` (Dawid & Skene 1979): each annotator has a full confusion matrix
    (the probability of each grade given the true one), learned by EM from a majority-vote start.
``one-coin``
    :class:`crowdkit.aggregation.OneCoinDawidSkene`: one accuracy per annotator, errors spread evenly over the
    other grades.
``mace``
    :class:`crowdkit.aggregation.MACE` (Hovy et al. 2013): each annotator either knows the answer or spams (picks
    by a habit of their own); seeded restarts (``random_state``).
``glad``
    :class:`crowdkit.aggregation.GLAD` (Whitehill et al. 2009): an ability per annotator and a difficulty per pair.

Parameters are fixed (:data:`AGGREGATION_PARAMETERS`, the seed is the project's default) and inputs sorted, so the
same labels give the same grades. Grades come back as ints on the scale they were given in.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import AGGREGATION_RULES, DEFAULT_SEED
from evalset.errors import InputError

AGGREGATION_CLASSES = {"dawid-skene": "DawidSkene", "one-coin": "OneCoinDawidSkene", "mace": "MACE", "glad": "GLAD"}
AGGREGATION_PARAMETERS: dict[str, dict[str, Any]] = {
    "dawid-skene": {"n_iter": 100, "tol": 1e-5},
    "one-coin": {"n_iter": 100, "tol": 1e-5},
    "mace": {"n_restarts": 10, "n_iter": 50, "method": "vb", "smoothing": 0.1, "default_noise": 0.5, "alpha": 0.5,
             "beta": 0.5, "random_state": DEFAULT_SEED},
    "glad": {"n_iter": 100, "tol": 1e-5, "m_step_max_iter": 25, "m_step_tol": 1e-2},
}
"""The parameters each crowd-kit class is built with (crowd-kit's defaults, MACE seeded with the default seed)."""


def crowdkit_aggregation() -> ModuleType:
    """``crowdkit.aggregation``, or a one-line error naming the extra that installs it."""
    try:
        from crowdkit import aggregation
    except ImportError:
        raise InputError("crowd-kit aggregation needs crowd-kit, which is not installed: "
                         "pip install 'evalset[quality]'") from None
    return aggregation


def crowdkit_version() -> str:
    """The installed crowd-kit's version (for manifests)."""
    return metadata.version("crowd-kit")


@dataclass(frozen=True)
class CrowdFrame:
    """The labels as crowd-kit takes them: ``frame`` (``task, worker, label``, sorted by task then worker) and
    ``tasks`` (``query_id, doc_id`` of task ``i`` in row ``i``)."""

    frame: pd.DataFrame
    tasks: pd.DataFrame


def crowd_frame(labels: pd.DataFrame) -> CrowdFrame:
    """The long labels table (one grade per annotator and pair) as crowd-kit's ``task, worker, label`` frame.

    Rows are sorted by (query, document, annotator) so that the frame, and so every model's result, depends on the
    labels only, not on their order. Two grades of one annotator for one pair are refused (settle them first:
    :func:`evalset.io.annotations.settle_repeats`).
    """
    if labels.empty:
        raise InputError("no labels to aggregate")
    table = labels[["query_id", "doc_id", "annotator", "grade"]].astype(
        {"query_id": str, "doc_id": str, "annotator": str})
    twice = table.duplicated(["query_id", "doc_id", "annotator"])
    if twice.any():
        row = table[twice].iloc[0]
        raise InputError(f"annotator {row['annotator']} graded {row['query_id']} {row['doc_id']} more than once; "
                         "settle repeats before aggregating")
    table = table.sort_values(["query_id", "doc_id", "annotator"], kind="stable").reset_index(drop=True)
    task = table.groupby(["query_id", "doc_id"], sort=True).ngroup().to_numpy(dtype=np.int64)
    frame = pd.DataFrame({"task": task, "worker": table["annotator"].to_numpy(dtype=object),
                          "label": table["grade"].to_numpy(dtype=np.int64)})
    tasks = table.drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id"]].reset_index(drop=True)
    return CrowdFrame(frame, tasks)


def crowd_model(rule: str) -> Any:
    """The crowd-kit model of a rule, built with :data:`AGGREGATION_PARAMETERS` (not fitted)."""
    if rule not in AGGREGATION_RULES:
        raise InputError(f"aggregation rule must be one of {', '.join(AGGREGATION_RULES)}, got {rule!r}")
    aggregation = crowdkit_aggregation()
    return getattr(aggregation, AGGREGATION_CLASSES[rule])(**AGGREGATION_PARAMETERS[rule])


@dataclass(frozen=True)
class Aggregate:
    """The grades of one rule (``query_id, doc_id, grade``, sorted), the fitted crowd-kit model, and what a
    manifest records of it (:meth:`record`)."""

    rule: str
    grades: pd.DataFrame
    model: Any = field(repr=False)
    iterations: int | None

    def record(self) -> dict[str, Any]:
        """The rule's library, class, version, parameters and the EM iterations run (None when not reported)."""
        return {"library": "crowd-kit", "version": crowdkit_version(), "class": AGGREGATION_CLASSES[self.rule],
                "parameters": dict(AGGREGATION_PARAMETERS[self.rule]), "iterations": self.iterations}


def aggregate(labels: pd.DataFrame, rule: str) -> Aggregate:
    """One grade per pair of ``labels`` by the crowd-kit rule (see the module docstring); every pair graded by
    anyone gets a grade, one of the grades given to it or to another pair (an int on the labels' scale)."""
    model = crowd_model(rule)
    crowd = crowd_frame(labels)
    with warnings.catch_warnings():  # crowd-kit 1.4 uses pandas keywords pandas 3 deprecates, thousands of times
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        predicted = model.fit_predict(crowd.frame)
    grades = crowd.tasks.copy()
    grades["grade"] = predicted.reindex(np.arange(len(crowd.tasks))).to_numpy()
    if grades["grade"].isna().any():
        raise InputError(f"{AGGREGATION_CLASSES[rule]} left {int(grades['grade'].isna().sum())} pairs without a grade")
    grades["grade"] = grades["grade"].astype(np.int64)
    history = getattr(model, "loss_history_", None)
    return Aggregate(rule, grades, model, len(history) if history else None)


def vote(labels: pd.DataFrame, rule: str) -> tuple[pd.DataFrame, int]:
    """The plain rules on every pair, ties settled low: ``majority`` (the most frequent grade; equally frequent
    grades: the lowest) or ``median`` (the lower median). Returns the grades (``query_id, doc_id, grade``, sorted)
    and the number of pairs settled by the tie rule, which ``freeze`` would leave unresolved instead."""
    if rule not in ("majority", "median"):
        raise InputError(f"vote rule must be majority or median, got {rule!r}")
    crowd = crowd_frame(labels)
    frame = crowd.frame
    if rule == "median":
        grouped = frame.groupby("task", sort=True)["label"]
        low, high = grouped.quantile(0.5, interpolation="lower"), grouped.quantile(0.5, interpolation="higher")
        grade, ties = low, int((low != high).sum())
    else:
        votes = frame.groupby(["task", "label"]).size().rename("votes").reset_index()
        votes = votes.sort_values(["task", "votes", "label"], ascending=[True, False, True], kind="stable")
        top = votes.groupby("task").head(2)
        first, second = top.groupby("task").nth(0).set_index("task"), top.groupby("task").nth(1).set_index("task")
        grade = first["label"]
        ties = int((second["votes"] == first["votes"].reindex(second.index)).sum())
    grades = crowd.tasks.copy()
    grades["grade"] = grade.reindex(np.arange(len(crowd.tasks))).to_numpy(dtype=np.int64)
    return grades, ties
