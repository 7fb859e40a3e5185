"""crowd-kit's models as merge rules (``dawid-skene``, ``one-coin``, ``mace``, ``glad``): one grade per (query,
document) from many annotators. Each rule's class and fixed parameters are its entry in
:data:`evalset.judgments.registry.RULES`; crowd-kit's classes are used as they are, but for MACE: crowd-kit's MACE
spends 15 s or more in pandas' per-call overhead whatever the size, so ``mace`` is fitted by
:func:`evalset.judgments.mace.fit_mace`, a numpy port that gives crowd-kit 1.4's grades bit for bit (its module
docstring; ``tests/judgments/test_mace.py`` compares it with crowd-kit's class). A manifest's record names the
implementation that fitted and the class it equals.

The long labels table (``query_id, doc_id, annotator, kind, grade``) becomes crowd-kit's frame:

==========  =======================================================================================
crowd-kit   from the labels table
==========  =======================================================================================
``task``    one (query, document) pair, numbered in sorted order
``worker``  an annotator, a human or an LLM judge alike
``label``   a grade, taken as a class (no model here knows that 2 is between 1 and 3)
==========  =======================================================================================

Rows are sorted and the parameters fixed (MACE seeded), so the same labels give the same grades; grades come back
as ints on the scale they were given in, and a model never leaves a tie.

**Identifiability.** A latent-class model learns each annotator's errors from their agreements with the others;
with two annotators (or one that varies) it cannot tell a wrong annotator from a right one (Dawid-Skene's
parameters are identified from three conditionally independent annotators on: Allman, Matias & Rhodes 2009), and
an annotator who gives one grade to everything looks perfectly consistent. :func:`check_identifiable` refuses
labels with fewer than :data:`MIN_ANNOTATORS` annotators or fewer than two annotators that use more than one
grade, naming them, and points to ``median`` or ``majority``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import AGGREGATION_RULES
from evalset.errors import InputError
from evalset.judgments.mace import fit_mace
from evalset.judgments.registry import RULES
from evalset.params import check


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
    """The crowd-kit model of a rule, built with the rule's parameters (not fitted)."""
    check("aggregation rule", rule, AGGREGATION_RULES)
    return getattr(crowdkit_aggregation(), RULES[rule].crowd_class)(**RULES[rule].parameters)


@dataclass(frozen=True)
class Aggregate:
    """The grades of one rule (``query_id, doc_id, grade``, sorted), the fitted model (crowd-kit's, or
    :class:`~evalset.judgments.mace.MaceFit` when ``implementation`` is :data:`FAST_MACE`), and what a manifest
    records of it (:meth:`record`)."""

    rule: str
    grades: pd.DataFrame
    model: Any = field(repr=False)
    iterations: int | None
    implementation: str = "crowd-kit"

    def record(self) -> dict[str, Any]:
        """The rule's library, class, version, parameters, the EM iterations run (None when not reported) and the
        implementation that fitted (``crowd-kit``, or :data:`FAST_MACE` with the class and version it equals)."""
        rule = RULES[self.rule]
        record = {"library": "crowd-kit", "version": crowdkit_version(), "class": rule.crowd_class,
                  "parameters": dict(rule.parameters), "iterations": self.iterations,
                  "implementation": self.implementation}
        if self.implementation != "crowd-kit":
            record["equals"] = f"crowd-kit {crowdkit_version()} {rule.crowd_class}"
        return record


FAST_MACE = "evalset.judgments.mace.fit_mace"
"""The implementation that fits ``mace`` while crowd-kit 1.4 is installed (the version it was checked against)."""


def fast_mace() -> bool:
    """Whether ``mace`` is fitted by :data:`FAST_MACE`: crowd-kit 1.4 installed (``pyproject.toml`` pins it)."""
    return crowdkit_version().startswith("1.4.")


MIN_ANNOTATORS = 3
"""The fewest annotators a crowd-kit model is fitted on (see Identifiability in the module docstring)."""


def check_identifiable(labels: pd.DataFrame, rule: str) -> None:
    """Refuse labels a latent-class model cannot learn from (module docstring)."""
    grades = labels.groupby(labels["annotator"].astype(str))["grade"].nunique()
    constant = sorted(grades.index[grades < 2])
    if len(grades) >= MIN_ANNOTATORS and len(grades) - len(constant) >= 2:
        return
    said = (f", {len(constant)} of whom gave one grade only ({', '.join(constant[:5])})" if constant else "")
    raise InputError(f"--merge {rule} cannot learn from these labels: {len(grades)} annotator(s){said}; a "
                     f"latent-class model needs {MIN_ANNOTATORS} annotators or more, two of them using more than one "
                     "grade, or it copies the most consistent annotator; use --merge median or majority")


def aggregate(labels: pd.DataFrame, rule: str) -> Aggregate:
    """One grade per pair of ``labels`` by the crowd-kit rule (see the module docstring); every pair graded by
    anyone gets a grade, one of the grades given to it or to another pair (an int on the labels' scale). Labels
    the model cannot learn from are refused (:func:`check_identifiable`)."""
    model = crowd_model(rule)
    check_identifiable(labels, rule)
    crowd = crowd_frame(labels)
    if rule == "mace" and fast_mace():
        fit = fit_mace(crowd.frame, **RULES[rule].parameters)
        return _grades(rule, crowd, fit.labels, fit, None, FAST_MACE)
    with warnings.catch_warnings():  # crowd-kit 1.4 uses pandas keywords pandas 3 deprecates, thousands of times
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        predicted = model.fit_predict(crowd.frame)
    history = getattr(model, "loss_history_", None)
    return _grades(rule, crowd, predicted, model, len(history) if history else None, "crowd-kit")


def _grades(rule: str, crowd: CrowdFrame, predicted: pd.Series, model: Any, iterations: int | None,
            implementation: str) -> Aggregate:
    grades = crowd.tasks.copy()
    grades["grade"] = predicted.reindex(np.arange(len(crowd.tasks))).to_numpy()
    if grades["grade"].isna().any():
        raise InputError(f"{RULES[rule].crowd_class} left {int(grades['grade'].isna().sum())} pairs without a grade")
    grades["grade"] = grades["grade"].astype(np.int64)
    return Aggregate(rule, grades, model, iterations, implementation)

