"""The plots of the HTML report: PNG images drawn by matplotlib (Agg, no pyplot state), returned as ``data:``
URIs, with the PNG metadata stripped so that the same data give the same bytes."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalset.render import UNDEFINED
from evalset.stats.paired import Comparison

MAX_QUERY_LABELS = 80
"""The per-query difference plot names each query on its axis up to this many queries."""


def png(figure: Figure) -> str:
    """The figure as a ``data:image/png;base64,...`` URI (laid out once, no metadata)."""
    buffer = io.BytesIO()
    figure.tight_layout()  # one layout pass; bbox_inches="tight" would draw the figure twice
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def bar_plot(labels: list[str], values: list[float], title: str, xlabel: str, limit: float | None = None) -> str:
    """Horizontal bars, the first label on top."""
    figure = Figure(figsize=(7, 1.2 + 0.25 * len(labels)))
    axes = figure.subplots()
    positions = np.arange(len(labels))
    axes.barh(positions, values, color="#4c72b0")
    axes.set_yticks(positions, labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel(xlabel)
    axes.set_title(title, fontsize=10)
    if limit is not None:
        axes.set_xlim(0, limit)
    axes.grid(axis="x", alpha=0.3)
    return png(figure)


def dot_plot(values: pd.Series, measure: str) -> str:
    """One dot per run; the axis ends at 1 and starts below the lowest value (said on the axis when not at 0)."""
    figure = Figure(figsize=(7, 1.4 + 0.22 * len(values)))
    axes = figure.subplots()
    positions = np.arange(len(values))
    axes.plot(values.to_numpy(), positions, "o", color="#4c72b0", markersize=4)
    axes.set_yticks(positions, values.index, fontsize=8)
    axes.invert_yaxis()
    start = max(0.0, min(0.9, float(values.min()) - 0.05))
    axes.set_xlim(start, 1.005)
    axes.set_xlabel(measure + (f" (the axis starts at {start:.2f})" if start > 0 else ""))
    axes.grid(axis="x", alpha=0.3)
    return png(figure)


def heatmap(matrix: pd.DataFrame, measure: str) -> str:
    """Pairwise agreement (annotator x annotator), each cell written in it (``undef`` where undefined)."""
    size = len(matrix)
    figure = Figure(figsize=(1.6 + 0.75 * size, 1.2 + 0.65 * size))
    axes = figure.subplots()
    low = min(0.0, float(np.nanmin(matrix.to_numpy()))) if matrix.notna().any().any() else 0.0
    image = axes.imshow(matrix.to_numpy(dtype=float), cmap="viridis", vmin=low, vmax=1.0)
    axes.set_xticks(range(size), matrix.columns, rotation=45, ha="right", fontsize=8)
    axes.set_yticks(range(size), matrix.index, fontsize=8)
    for i in range(size):
        for j in range(size):
            value = matrix.iat[i, j]
            text = UNDEFINED if pd.isna(value) else f"{value:.2f}"
            shade = "black" if pd.isna(value) or value > low + 0.6 * (1 - low) else "white"
            axes.text(j, i, text, ha="center", va="center", fontsize=7, color=shade)
    figure.colorbar(image, ax=axes, label=measure)
    axes.set_title(f"pairwise {measure}", fontsize=10)
    return png(figure)


def interval_plot(scores: pd.DataFrame, headline: str, level: float) -> str:
    """Each run's score (``mean``) with its interval (``ci_low``, ``ci_high``), the best run on top."""
    ordered = scores.sort_values("mean", ascending=True, kind="stable")
    figure = Figure(figsize=(7, 1.4 + 0.24 * len(ordered)))
    axes = figure.subplots()
    positions = np.arange(len(ordered))
    low = (ordered["mean"] - ordered["ci_low"]).clip(lower=0)
    high = (ordered["ci_high"] - ordered["mean"]).clip(lower=0)
    axes.errorbar(ordered["mean"], positions, xerr=[low, high], fmt="o", color="#4c72b0", ecolor="#8c8c8c",
                  capsize=2, markersize=4)
    axes.set_yticks(positions, ordered.index, fontsize=8)
    axes.set_xlabel(f"{headline} ({level:.0%} BCa interval over queries)")
    axes.grid(axis="x", alpha=0.3)
    return png(figure)


def difference_plot(differences: pd.Series, result: Comparison) -> str:
    """The per-query differences of a comparison, sorted: wins green, losses red, the mean dashed."""
    figure = Figure(figsize=(9, 3.2))
    axes = figure.subplots()
    colours = np.where(differences.to_numpy() > 0, "#55a868", np.where(differences.to_numpy() < 0, "#c44e52",
                                                                        "#8c8c8c"))
    axes.bar(np.arange(len(differences)), differences.to_numpy(), color=colours, width=0.85)
    axes.axhline(0, color="black", linewidth=0.8)
    mean = result.mean_difference
    axes.axhline(mean, color="#4c72b0", linestyle="--", linewidth=1, label=f"mean {mean:+.4f}")
    if len(differences) <= MAX_QUERY_LABELS:
        axes.set_xticks(np.arange(len(differences)), differences.index, rotation=90, fontsize=6)
    else:
        axes.set_xticks([])
        axes.set_xlabel(f"{len(differences)} queries, sorted by difference", fontsize=8)
    axes.set_ylabel(f"{result.metric}: candidate - baseline", fontsize=8)
    axes.set_title(f"{result.candidate} vs {result.baseline}, per query (sorted)", fontsize=10)
    axes.legend(fontsize=8, loc="upper left")
    return png(figure)
