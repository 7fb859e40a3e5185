"""The plots of the HTML report: PNG images drawn by matplotlib (Agg, no pyplot state), returned as ``data:``
URIs, with the PNG metadata stripped so that the same data give the same bytes."""

from __future__ import annotations

import base64
import contextlib
import io
from collections.abc import Iterator, Sequence
from contextvars import ContextVar

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from evalset.render import UNDEFINED
from evalset.stats.paired import Comparison

LABEL_PT = 8
"""The size of tick labels, axis labels and legends (11 px at :data:`DPI`; :mod:`evalset.report.legibility` checks
that no text of a figure shows under 9 px on the page)."""
CELL_PT = 7
"""The size of the numbers written in heatmap cells (9.7 px at :data:`DPI`), the smallest text of a figure."""
TITLE_PT = 10
MARGIN = 0.04
"""The share of an axis's span left free beyond its outermost markers, so that no marker sits on the frame."""
DPI = 100
"""The resolution every plot is saved at (a 7-inch figure is 700 px wide)."""
PAGE_WIDTH_PX = 1100
"""The page's column (the body's CSS ``max-width``, shown in full on a 1366 px wide screen): an image is shown at
its own width, shrunk to the column's when wider."""

_SAVED: ContextVar[list[Figure] | None] = ContextVar("saved_figures", default=None)


@contextlib.contextmanager
def saved_figures() -> Iterator[list[Figure]]:
    """The figures :func:`png` saves while the block runs, in order (to check what a page shows)."""
    saved: list[Figure] = []
    token = _SAVED.set(saved)
    try:
        yield saved
    finally:
        _SAVED.reset(token)


def png(figure: Figure) -> str:
    """The figure as a ``data:image/png;base64,...`` URI (laid out once, at :data:`DPI`, no metadata)."""
    buffer = io.BytesIO()
    figure.tight_layout()  # one layout pass; bbox_inches="tight" would draw the figure twice
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    if (saved := _SAVED.get()) is not None:
        saved.append(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def rows_axis(axes: Axes, labels: Sequence[str]) -> np.ndarray:
    """One row per label on the y axis, the first on top, half a row free above the first and below the last
    (markers never on the frame); returns the rows' positions."""
    positions = np.arange(len(labels))
    axes.set_yticks(positions, list(labels), fontsize=LABEL_PT)
    axes.set_ylim(len(labels) - 0.5, -0.5)
    return positions


def bar_plot(labels: list[str], values: list[float], title: str, xlabel: str, limit: float | None = None) -> str:
    """Horizontal bars, the first label on top."""
    figure = Figure(figsize=(7, 1.2 + 0.25 * len(labels)))
    axes = figure.subplots()
    positions = rows_axis(axes, labels)
    axes.barh(positions, values, color="#4c72b0")
    axes.set_xlabel(xlabel)
    axes.set_title(title, fontsize=TITLE_PT)
    if limit is not None:
        axes.set_xlim(0, limit)
    axes.grid(axis="x", alpha=0.3)
    return png(figure)


def dot_plot(values: pd.Series, measure: str) -> str:
    """One dot per run (a share in [0, 1]); the axis ends just past 1 and starts below the lowest value (said on
    the axis when not at 0), :data:`MARGIN` of the span free beyond the outermost dots."""
    figure = Figure(figsize=(7, 1.4 + 0.22 * len(values)))
    axes = figure.subplots()
    positions = rows_axis(axes, [str(name) for name in values.index])
    axes.plot(values.to_numpy(), positions, "o", color="#4c72b0", markersize=4)
    start = max(0.0, min(0.9, float(values.min()) - 0.05))
    room = MARGIN * (1 - start)
    axes.set_xlim(min(start, float(values.min()) - room), max(1.0, float(values.max())) + room)
    axes.set_xlabel(measure + (f" (the axis starts at {start:.2f})" if start > 0 else ""))
    axes.grid(axis="x", alpha=0.3)
    return png(figure)


def heatmap(matrix: pd.DataFrame, measure: str) -> str:
    """Pairwise agreement (annotator x annotator), each cell written in it (``undef`` where undefined); the
    figure grows with the longest annotator name, the title spans the figure above the matrix and its colour
    bar (whose label it is, so the bar has none)."""
    size = len(matrix)
    longest = max((len(str(name)) for name in matrix.index), default=1)
    name_in = 0.058 * longest  # an 8 pt label's width in inches, about
    figure = Figure(figsize=(1.5 + 0.75 * size + name_in, 0.9 + 0.65 * size + 0.72 * name_in))
    axes = figure.subplots()
    low = min(0.0, float(np.nanmin(matrix.to_numpy()))) if matrix.notna().any().any() else 0.0
    image = axes.imshow(matrix.to_numpy(dtype=float), cmap="viridis", vmin=low, vmax=1.0)
    axes.set_xticks(range(size), matrix.columns, rotation=45, ha="right", rotation_mode="anchor",
                    fontsize=LABEL_PT)
    axes.set_yticks(range(size), matrix.index, fontsize=LABEL_PT)
    for i in range(size):
        for j in range(size):
            value = matrix.iat[i, j]
            text = UNDEFINED if pd.isna(value) else f"{value:.2f}"
            shade = "black" if pd.isna(value) or value > low + 0.6 * (1 - low) else "white"
            axes.text(j, i, text, ha="center", va="center", fontsize=CELL_PT, color=shade)
    bar = figure.colorbar(image, ax=axes)
    bar.ax.tick_params(labelsize=LABEL_PT)
    figure.suptitle(f"pairwise {measure}", fontsize=TITLE_PT)
    return png(figure)


def interval_plot(scores: pd.DataFrame, headline: str, level: float) -> str:
    """Each run's score (``mean``) with its interval (``ci_low``, ``ci_high``), the best run on top."""
    ordered = scores.sort_values("mean", ascending=False, kind="stable")
    figure = Figure(figsize=(7, 1.4 + 0.24 * len(ordered)))
    axes = figure.subplots()
    positions = rows_axis(axes, [str(name) for name in ordered.index])
    low = (ordered["mean"] - ordered["ci_low"]).clip(lower=0)
    high = (ordered["ci_high"] - ordered["mean"]).clip(lower=0)
    axes.errorbar(ordered["mean"], positions, xerr=[low, high], fmt="o", color="#4c72b0", ecolor="#8c8c8c",
                  capsize=2, markersize=4)
    axes.margins(x=MARGIN)
    axes.set_xlabel(f"{headline} ({level:.0%} BCa interval over queries)")
    axes.grid(axis="x", alpha=0.3)
    return png(figure)


def query_labels(differences: pd.Series, slots: int) -> list[int]:
    """The positions (in ``differences``' order) of the queries named on a per-query axis with room for
    ``slots`` labels side by side: the largest absolute differences first (ties: the earlier position), each
    kept when no kept label is within ``ceil(len / slots)`` positions of it; every query when all fit."""
    spacing = max(1, -(-len(differences) // max(slots, 1)))
    blocked = np.zeros(len(differences), dtype=bool)
    kept = []
    for position in np.argsort(-np.abs(differences.to_numpy(dtype=float)), kind="stable"):
        if not blocked[position]:
            kept.append(int(position))
            blocked[max(0, position - spacing + 1):position + spacing] = True
    return sorted(kept)


def difference_plot(differences: pd.Series, result: Comparison) -> str:
    """The per-query differences of a comparison, sorted: wins green, losses red, the mean dashed. The queries are
    named below their bars, rotated, as many as fit (:func:`query_labels`: the largest absolute differences)."""
    figure = Figure(figsize=(9, 3.2))
    axes = figure.subplots()
    values = differences.to_numpy()
    colours = np.where(values > 0, "#55a868", np.where(values < 0, "#c44e52", "#8c8c8c"))
    axes.bar(np.arange(len(differences)), values, color=colours, width=0.85)
    axes.axhline(0, color="black", linewidth=0.8)
    mean = result.mean_difference
    axes.axhline(mean, color="#4c72b0", linestyle="--", linewidth=1, label=f"mean {mean:+.4f}")
    axes.set_xlim(-0.6, len(differences) - 0.4)
    line_px = 1.25 * LABEL_PT * DPI / 72  # a rotated label's thickness, its line height
    width_px = 0.8 * figure.get_figwidth() * DPI  # the axes' width once laid out, about (less is safe)
    shown = query_labels(differences, int(width_px // line_px))
    axes.set_xticks(shown, [str(differences.index[k]) for k in shown], rotation=90, fontsize=LABEL_PT)
    named = "" if len(shown) == len(differences) else f"; {len(shown)} named, the largest |differences|"
    axes.set_xlabel(f"{len(differences)} queries, sorted by difference{named}", fontsize=LABEL_PT)
    axes.set_ylabel(f"{result.metric}: candidate - baseline", fontsize=LABEL_PT)
    axes.set_title(f"{result.candidate} vs {result.baseline}, per query (sorted)", fontsize=TITLE_PT)
    axes.legend(fontsize=LABEL_PT, loc="upper left")
    return png(figure)
