"""The agreement report's files: one folder with the report as JSON, the disagreements as TSV, the kappa matrix
as a heatmap and, with the annotators' quality, their confusion matrices (its text and JSON are
:class:`evalset.agreement.Agreement`'s)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from evalset.agreement.analysis import KAPPA_KEYS, AgreementReport
from evalset.io.files import atomic_path

AGREEMENT_FILES = ("agreement.json", "disagreements.tsv", "kappa.png", "confusion.png")
"""The files of an agreement folder (``confusion.png`` with the annotators' quality only)."""


def write_disagreements(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """The full disagreements table as TSV with a header (atomically); an ungraded cell is empty."""
    with atomic_path(path) as tmp:
        table.to_csv(tmp, sep="\t", index=False, na_rep="", lineterminator="\n")


def write_heatmap(report: AgreementReport, path: str | os.PathLike) -> None:
    """A heatmap of the pairwise kappa matrix (matplotlib, PNG), written atomically."""
    from evalset.render import quiet_matplotlib

    quiet_matplotlib()
    import matplotlib.pyplot as plt

    matrix = report.matrix()
    size = len(matrix)
    inches = max(6.0, 0.32 * size + 3.0)
    figure, axes = plt.subplots(figsize=(inches + 1.5, inches))
    values = np.ma.masked_invalid(matrix.to_numpy(dtype=float))
    image = axes.imshow(values, vmin=min(0.0, float(np.nanmin(matrix.to_numpy()))), vmax=1.0, cmap="viridis")
    axes.set_xticks(range(size), labels=matrix.columns, rotation=90, fontsize=8)
    axes.set_yticks(range(size), labels=matrix.index, fontsize=8)
    if size <= 12:
        for i in range(size):
            for j in range(size):
                if i != j and not np.ma.is_masked(values[i, j]):
                    axes.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=8,
                              color="white" if values[i, j] < 0.5 else "black")
    axes.set_title(f"Pairwise {KAPPA_KEYS[report.kappa]} (grades {report.scale[0]}-{report.scale[-1]})")
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=120, metadata={"Software": None})
    plt.close(figure)
