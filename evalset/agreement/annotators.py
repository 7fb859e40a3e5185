"""Per-annotator quality without gold: agreement with the consensus of the others, and Dawid-Skene's confusion
matrix of each annotator.

Leave-one-out consensus
    For each annotator and each pair they graded that at least one other annotator graded too, the consensus of
    the others is the lower median of the other annotators' grades (of an even number, the lower of the two
    middle grades). The annotator is scored against it on those pairs: exact agreement, unweighted and quadratic
    kappa (Cohen's, as :mod:`evalset.agreement.kappa` computes them), and the number of pairs. A careless
    annotator agrees with nobody's consensus; a good one agrees with it about as much as the others do.
Dawid-Skene confusion matrix
    crowd-kit's :class:`~crowdkit.aggregation.DawidSkene` fitted on all the labels (the merge rule
    ``dawid-skene`` of :mod:`evalset.judgments.rules`); its ``errors_`` give, per annotator, the probability of each
    grade they give (columns) given the pair's true grade (rows). Rows sum to 1; a careful annotator's matrix is
    heavy on the diagonal, a constant one has a single full column, a random one flat rows.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalset.agreement.kappa import confusion_matrix, disagreement_weights, kappa_from_confusion
from evalset.errors import InputError
from evalset.judgments.rules import pair_grades
from evalset.judgments.scale import OutOfScale, apply_scale
from evalset.render import json_safe, number, text_table


def kappas(reference: np.ndarray, grades: np.ndarray, scale: Sequence[int]) -> dict[str, float]:
    """Exact agreement, unweighted and quadratic kappa of ``grades`` against ``reference`` (NaN when undefined)."""
    confusion = confusion_matrix(np.asarray(reference), np.asarray(grades), scale)
    size = len(scale)
    total = confusion.sum()
    return {"exact": float(np.trace(confusion) / total) if total else float("nan"),
            "kappa": float(kappa_from_confusion(confusion, disagreement_weights(size, "unweighted"))),
            "kappa_quadratic": float(kappa_from_confusion(confusion, disagreement_weights(size, "quadratic")))}


def leave_one_out_consensus(labels: pd.DataFrame, scale: Sequence[int]) -> pd.DataFrame:
    """Each label with the lower median of the other annotators' grades of its pair (``consensus``) and their
    number (``others``); labels of pairs nobody else graded are left out."""
    scale = sorted(scale)
    table = labels[["query_id", "doc_id", "annotator", "grade"]].reset_index(drop=True)
    pair = table.groupby(["query_id", "doc_id"], sort=True).ngroup().to_numpy()
    position = np.searchsorted(scale, table["grade"].to_numpy())
    counts = np.zeros((pair.max() + 1 if len(pair) else 0, len(scale)), dtype=np.int64)
    np.add.at(counts, (pair, position), 1)
    others = counts[pair].copy()
    others[np.arange(len(table)), position] -= 1
    size = others.sum(axis=1)
    needed = (size - 1) // 2 + 1  # the lower median is the ((m - 1) // 2)-th of m sorted grades (0-based)
    consensus = np.argmax(np.cumsum(others, axis=1) >= needed[:, None], axis=1)
    table["consensus"] = np.asarray(scale)[consensus]
    table["others"] = size
    return table[size > 0].reset_index(drop=True)


@dataclass(frozen=True)
class AnnotatorQuality:
    """Per-annotator quality: ``table`` (annotator, kind, pairs, exact, kappa, kappa_quadratic against the
    leave-one-out consensus; worst quadratic kappa first) and ``confusions`` (annotator -> Dawid-Skene's ``K x K``
    matrix, rows the true grade, columns the annotator's)."""

    scale: tuple[int, ...]
    table: pd.DataFrame
    confusions: dict[str, np.ndarray]
    aggregation: dict[str, Any]

    def to_text(self) -> str:
        """The section ``evalset agreement --annotator-quality`` prints: leave-one-out agreement per annotator
        (worst first) and each Dawid-Skene diagonal."""
        header = ["annotator", "kind", "pairs", "exact", "kappa", "kappa_quadratic",
                  *[f"DS {g}|{g}" for g in self.scale]]
        rows = [[row["annotator"], row["kind"], row["pairs"], number(row["exact"], 3), number(row["kappa"], 3),
                 number(row["kappa_quadratic"], 3), *[number(v, 2) for v in np.diag(self.confusions[row["annotator"]])]]
                for row in self.table.to_dict("records")]
        return "\n".join(["Per-annotator quality (against the lower median of the others; Dawid-Skene P(grade = true "
                          "grade)):", *text_table([header, *rows], right=set(range(2, len(header))))])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the ``annotator_quality`` of ``evalset agreement --format json``): per annotator, the
        leave-one-out figures and the confusion matrix (rows: true grade)."""
        return json_safe({
            "scale": list(self.scale),
            "consensus": "lower median of the other annotators' grades of the pair",
            "dawid_skene": self.aggregation,
            "annotators": [{**row, "confusion": self.confusions[row["annotator"]].round(4).tolist()}
                           for row in self.table.to_dict("records")],
        })


def annotator_quality(labels: pd.DataFrame, scale: Sequence[int], out_of_scale: OutOfScale = "error"
                      ) -> AnnotatorQuality:
    """Quality of every annotator of ``labels`` (one grade per annotator and pair; see the module docstring).
    Grades off ``scale`` are refused, clipped or dropped as ``evalset agreement`` does (``out_of_scale``). Needs
    at least two annotators."""
    scale = tuple(sorted(scale))
    labels, _ = apply_scale(labels, scale, out_of_scale)
    if labels["annotator"].nunique() < 2:
        raise InputError("per-annotator quality needs at least two annotators")
    loo = leave_one_out_consensus(labels, scale)
    kinds = labels.drop_duplicates("annotator").set_index("annotator")["kind"] if "kind" in labels else None
    rows = []
    for name in sorted(labels["annotator"].unique()):
        mine = loo[loo["annotator"] == name]
        rows.append({"annotator": name, "kind": kinds[name] if kinds is not None else "",
                     "pairs": len(mine), **kappas(mine["consensus"].to_numpy(), mine["grade"].to_numpy(), scale)})
    table = pd.DataFrame(rows).sort_values(["kappa_quadratic", "annotator"], na_position="first", kind="stable")
    fit = pair_grades(labels, "dawid-skene").fit
    errors = fit.model.errors_
    confusions = {}
    for name in sorted(labels["annotator"].unique()):
        block = errors.xs(name, level="worker")  # rows: the annotator's grade; columns: the true grade
        block = block.reindex(index=list(scale), columns=list(scale), fill_value=0.0)
        confusions[name] = block.to_numpy(dtype=float).T
    return AnnotatorQuality(scale, table.reset_index(drop=True), confusions, fit.record())


def write_confusion_plot(quality: AnnotatorQuality, path: str | os.PathLike) -> None:
    """One heatmap per annotator of Dawid-Skene's confusion matrix (matplotlib Agg, PNG), written atomically."""
    from evalset.render import quiet_matplotlib

    quiet_matplotlib()
    import matplotlib.pyplot as plt

    from evalset.io.files import atomic_path

    names = list(quality.table["annotator"])
    columns = min(6, len(names))
    rows = -(-len(names) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(2.4 * columns, 2.5 * rows), squeeze=False)
    labels = [str(g) for g in quality.scale]
    for slot, ax in enumerate(axes.ravel()):
        if slot >= len(names):
            ax.axis("off")
            continue
        matrix = quality.confusions[names[slot]]
        ax.imshow(matrix, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_title(names[slot], fontsize=8)
        ax.set_xticks(range(len(labels)), labels=labels, fontsize=7)
        ax.set_yticks(range(len(labels)), labels=labels, fontsize=7)
        if len(labels) <= 5:
            for i in range(len(labels)):
                for j in range(len(labels)):
                    ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=6,
                            color="white" if matrix[i, j] < 0.5 else "black")
    figure.suptitle("Dawid-Skene confusion per annotator (rows: true grade, columns: grade given)", fontsize=9)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110, metadata={"Software": None})
    plt.close(figure)
