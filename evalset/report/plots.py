"""The plots of the HTML report: PNG images drawn by matplotlib (Agg, no pyplot state), returned as ``data:``
URIs, with the PNG metadata stripped so that the same data give the same bytes."""

from __future__ import annotations

import base64
import contextlib
import io
from collections.abc import Iterator, Mapping, Sequence
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
ROW_PITCH_IN = 0.16
"""The height of a run's row in a plot of runs (16 px: an 8 pt label is 11 px tall)."""
STRIP_DOT_PX = 7
"""A dot's diameter in the judged@k strip; :data:`STRIP_PITCH_IN` is a stacked dot's height (9 px)."""
STRIP_PITCH_IN = 0.09
STRIP_AXES_PX = 560
"""The strip's axes width, about (less than the 7-inch figure less its margins: dots a width apart never touch)."""
GROUP_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974",
                 "#64b5cd")
"""The colours of the letter groups of the runs compared at once (the first group's is the page's blue)."""
HOLES_COLOUR = "#dd8452"
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


def strip_plot(values: pd.Series, measure: str) -> str:
    """A share in [0, 1] per run as a dot plot of its distribution (Wilkinson's): runs whose values lie within a
    dot's width of each other stack, so the figure is as tall as the largest stack, not as the number of runs (the
    per-run values are in the scores table); a stack says its count above it where it has room. The axis ends
    just past 1 and starts below the lowest value (said on the axis when not at 0), :data:`MARGIN` of the span
    free beyond the outermost dots."""
    start = max(0.0, min(0.9, float(values.min()) - 0.05))
    room = MARGIN * (1 - start)
    low, high = min(start, float(values.min()) - room), max(1.0, float(values.max())) + room
    width = STRIP_DOT_PX / STRIP_AXES_PX * (high - low)  # a dot's width in data units
    columns: list[tuple[float, int]] = []  # (x, runs stacked)
    for value in sorted(float(v) for v in values):
        if columns and value - columns[-1][0] < width:
            columns[-1] = (columns[-1][0], columns[-1][1] + 1)
        else:
            columns.append((value, 1))
    tallest = max(count for _, count in columns)
    figure = Figure(figsize=(7, 1.1 + STRIP_PITCH_IN * tallest))
    axes = figure.subplots()
    xs = [x for x, count in columns for _ in range(count)]
    ys = [k for _, count in columns for k in range(count)]
    axes.plot(xs, ys, "o", color="#4c72b0", markersize=STRIP_DOT_PX * 72 / DPI)
    counted = -np.inf  # a stack of several runs says how many, when its count has room beside the last one said
    for x, count in columns:
        if count > 1 and x - counted >= 4 * width:
            axes.text(x, count - 0.4, str(count), ha="center", va="bottom", fontsize=LABEL_PT)
            counted = x
    axes.set_xlim(low, high)
    axes.set_ylim(-0.8, tallest + (1.6 if tallest > 1 else -0.2))
    axes.set_yticks([])
    axes.set_xlabel(f"{measure} of the {len(values)} runs, one dot each, equal values stacked"
                    + (f" (the axis starts at {start:.2f})" if start > 0 else ""), fontsize=LABEL_PT)
    axes.tick_params(axis="x", labelsize=LABEL_PT)
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


def ranking_plot(scores: pd.DataFrame, headline: str, level: float, letters: Mapping[str, str] | None = None,
                 bounds: Mapping[str, tuple[float, float]] | None = None) -> str:
    """The one plot of the runs' ranking: each run's score (``mean``) with its interval (``ci_low``, ``ci_high``),
    the best on top, one :data:`ROW_PITCH_IN` row per run. With ``letters`` (run -> its letter groups, of the runs
    compared at once) each dot takes its first group's colour and a narrow panel beside draws each group as a
    column of bars, one per run sharing its letter (contiguous members read as one bar); ``bounds`` (run -> the
    range of its mean over the fills of its holes) are drawn just under their row."""
    ordered = scores.sort_values("mean", ascending=False, kind="stable")
    names = [str(name) for name in ordered.index]
    groups = "".join(dict.fromkeys("".join(letters.get(name, "") for name in names))) if letters else ""
    figure = Figure(figsize=(7.5 if groups else 7, 1.1 + ROW_PITCH_IN * len(ordered)))
    if groups:
        axes, panel = figure.subplots(1, 2, sharey=True, width_ratios=[5, 1 + 0.15 * len(groups)])
    else:
        axes, panel = figure.subplots(), None
    positions = rows_axis(axes, names)
    low = (ordered["mean"] - ordered["ci_low"]).clip(lower=0)
    high = (ordered["ci_high"] - ordered["mean"]).clip(lower=0)
    axes.errorbar(ordered["mean"], positions, xerr=[low, high], fmt="none", ecolor="#8c8c8c", capsize=2, zorder=2)
    for k, name in enumerate(names):
        if bounds and name in bounds:
            axes.plot(bounds[name], [k + 0.3, k + 0.3], color=HOLES_COLOUR, linewidth=1.5, zorder=2)
    first = [letters.get(name, "")[:1] if letters else "" for name in names]
    colours = [GROUP_COLOURS[groups.index(g) % len(GROUP_COLOURS)] if g else GROUP_COLOURS[0] for g in first]
    axes.scatter(ordered["mean"], positions, c=colours, s=16, zorder=3)
    axes.margins(x=MARGIN)
    said = f"{level:.0%} BCa interval over queries" + ("; orange: the range over the holes" if bounds else "")
    axes.set_xlabel(f"{headline} (grey: {said})", fontsize=LABEL_PT)
    axes.tick_params(axis="x", labelsize=LABEL_PT)
    axes.grid(axis="x", alpha=0.3)
    if panel is not None:
        for index, letter in enumerate(groups):
            for k, name in enumerate(names):
                if letter in letters.get(name, ""):
                    panel.plot([index, index], [k - 0.5, k + 0.5], linewidth=4, solid_capstyle="butt",
                               color=GROUP_COLOURS[index % len(GROUP_COLOURS)])
        panel.set_xticks(range(len(groups)), list(groups), fontsize=LABEL_PT)
        panel.set_xlim(-0.7, len(groups) - 0.3)
        panel.set_xlabel("groups", fontsize=LABEL_PT)
        panel.tick_params(axis="y", left=False)
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
