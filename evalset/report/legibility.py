"""Is a report figure readable on the page? The text and marker checks of a matplotlib figure, measured from
matplotlib's own extents after a draw.

Conventions:

- **Displayed size**: the page shows an image at its own width, shrunk to the page's column
  (:data:`PAGE_WIDTH_PX`, the CSS ``max-width`` of the body, which a 1366 x 768 screen shows in full) when wider. A
  text's displayed height is ``fontsize_pt * dpi / 72 * displayed_width_px / figure_width_px``; under
  :data:`MIN_TEXT_PX` it is too small.
- **Texts** are those the renderer draws (visible, non-empty; tick labels only of the ticks shown), each taken as
  its rotated rectangle (the unrotated extent turned by its rotation about the centre of its window extent), so
  that two 45-degree labels side by side overlap only when their glyph boxes do. Two texts overlap when the
  rectangles share more than :data:`TOLERANCE_PX` in every direction; a text leaves the figure when a corner lies
  more than :data:`TOLERANCE_PX` outside it.
- **Markers** (a line's markers, a scatter's points) lie inside their axes when the marker's disc (centre plus
  half its size) keeps :data:`MARKER_CLEARANCE_PX` from the axes' frame; markers outside the view limits are
  clipped, not drawn, and not checked.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text

from evalset.report.plots import DPI, PAGE_WIDTH_PX, saved_figures

if TYPE_CHECKING:
    from evalset.report.data import ReportData

MIN_TEXT_PX = 9.0
"""The smallest text height, in CSS px as displayed, a reader is asked to read."""
TOLERANCE_PX = 0.5
"""Overlaps and overhangs up to this many pixels are antialiasing, not collisions."""
MARKER_CLEARANCE_PX = 1.0
"""The least gap between a marker's edge and its axes' frame (the frame line is about 1 px wide)."""


def displayed_width(figure_width_px: float, page_width_px: float = PAGE_WIDTH_PX) -> float:
    """The width at which the page shows an image ``figure_width_px`` wide: its own, or the column's if narrower."""
    return min(float(figure_width_px), float(page_width_px))


def displayed_px(fontsize_pt: float, dpi: float, figure_width_px: float, page_width_px: float = PAGE_WIDTH_PX
                 ) -> float:
    """A text's displayed height in CSS px: ``fontsize_pt * dpi / 72 * displayed_width / figure_width_px``."""
    return fontsize_pt * dpi / 72 * displayed_width(figure_width_px, page_width_px) / figure_width_px


@dataclass(frozen=True)
class FigureCheck:
    """What :func:`check_figure` found: each drawn text and its displayed height, and the problems (lines a
    reader can act on; none when the figure is readable)."""

    texts: tuple[tuple[str, float], ...] = ()  # (text, displayed px), in drawing order
    small: tuple[str, ...] = ()
    overlaps: tuple[str, ...] = ()
    outside: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "problems", (*self.small, *self.overlaps, *self.outside, *self.markers))

    @property
    def smallest_px(self) -> float:
        """The displayed height of the smallest text (infinite without text)."""
        return min((px for _, px in self.texts), default=float("inf"))


def check_figure(figure: Figure, dpi: float, page_width_px: float = PAGE_WIDTH_PX,
                 min_text_px: float = MIN_TEXT_PX) -> FigureCheck:
    """Draw ``figure`` at ``dpi`` (as it is saved) and check its texts and markers (see the module docstring)."""
    figure.set_dpi(dpi)
    canvas = FigureCanvasAgg(figure)
    with _drawn_texts(canvas) as drawn:
        figure.draw(canvas.get_renderer())
    renderer = canvas.get_renderer()
    width, height = figure.bbox.width, figure.bbox.height
    texts, small, boxes = [], [], []
    for text in drawn:
        px = displayed_px(text.get_fontsize(), dpi, width, page_width_px)
        texts.append((text.get_text(), px))
        if px < min_text_px:
            small.append(f"{text.get_text()!r} is {px:.1f} px tall (under {min_text_px:g})")
        boxes.append(_rectangle(text, renderer))
    overlaps = [f"{drawn[i].get_text()!r} overlaps {drawn[j].get_text()!r}"
                for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if _overlap(boxes[i], boxes[j])]
    outside = []
    for text, corners in zip(drawn, boxes, strict=True):
        over = max(-corners[:, 0].min(), -corners[:, 1].min(), corners[:, 0].max() - width,
                   corners[:, 1].max() - height)
        if over > TOLERANCE_PX:
            outside.append(f"{text.get_text()!r} leaves the figure by {over:.1f} px")
    return FigureCheck(tuple(texts), tuple(small), tuple(overlaps), tuple(outside), tuple(_markers(figure)))


@contextlib.contextmanager
def _drawn_texts(canvas: FigureCanvasAgg) -> Iterator[list[Text]]:
    """The Text artists the renderer is asked to draw (each once), recorded while the block runs."""
    renderer, drawn = canvas.get_renderer(), []
    original = renderer.draw_text

    def record(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if mtext is not None and all(mtext is not seen for seen in drawn):
            drawn.append(mtext)
        return original(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderer.draw_text = record
    try:
        yield drawn
    finally:
        del renderer.draw_text


def _rectangle(text: Text, renderer: object) -> np.ndarray:
    """The four corners (display px) of a text's rotated rectangle."""
    box = text.get_window_extent(renderer)
    angle = np.deg2rad(text.get_rotation())
    flat = Text(0, 0, text.get_text(), fontproperties=text.get_fontproperties(), linespacing=text.get_linespacing())
    flat.set_figure(text.get_figure(root=True))
    unrotated = flat.get_window_extent(renderer)
    w, h = unrotated.width / 2, unrotated.height / 2
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    corners = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) @ turn.T
    return corners + np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Separating axes: two convex rectangles overlap unless their projections part on an edge's normal."""
    if (np.minimum(a.max(axis=0), b.max(axis=0)) - np.maximum(a.min(axis=0), b.min(axis=0)) <= TOLERANCE_PX).any():
        return False  # their window extents part already
    for corners in (a, b):
        for k in range(2):
            edge = corners[k + 1] - corners[k]
            normal = np.array([-edge[1], edge[0]]) / (np.hypot(*edge) or 1.0)
            pa, pb = a @ normal, b @ normal
            if min(pa.max(), pb.max()) - max(pa.min(), pb.min()) <= TOLERANCE_PX:
                return False
    return True


def _markers(figure: Figure) -> list[str]:
    problems = []
    for axes in figure.axes:
        frame = axes.get_window_extent()
        view = axes.viewLim
        for artist in [*axes.lines, *axes.collections]:
            if not artist.get_visible():
                continue
            if isinstance(artist, Line2D) and artist.get_marker() not in (None, "None", "", " "):
                data = np.column_stack([artist.get_xdata(orig=False), artist.get_ydata(orig=False)]).astype(float)
                radius = np.full(len(data), artist.get_markersize() * figure.dpi / 72 / 2)
                transform = artist.get_transform()
            elif isinstance(artist, PathCollection) and len(artist.get_offsets()):
                data = np.asarray(artist.get_offsets(), dtype=float)
                sizes = np.resize(artist.get_sizes(), len(data))
                radius = np.sqrt(sizes) * figure.dpi / 72 / 2
                transform = artist.get_offset_transform()
            else:
                continue
            shown = _in_view(axes.transData.inverted().transform(transform.transform(data)), view)
            centres = transform.transform(data)[shown]
            for (x, y), r in zip(centres, radius[shown], strict=True):
                gap = min(x - frame.x0, frame.x1 - x, y - frame.y0, frame.y1 - y) - r
                if gap < MARKER_CLEARANCE_PX:
                    problems.append(f"a marker at ({x:.0f}, {y:.0f}) px touches the frame of axes "
                                    f"{axes.get_label() or figure.axes.index(axes)} ({gap:+.1f} px)")
    return problems


def _in_view(points: np.ndarray, view: object) -> np.ndarray:
    (x0, x1), (y0, y1) = sorted(view.intervalx), sorted(view.intervaly)
    return ((points[:, 0] >= x0) & (points[:, 0] <= x1) & (points[:, 1] >= y0) & (points[:, 1] <= y1)
            & np.isfinite(points).all(axis=1))


def check_report(data: ReportData, page_width_px: float = PAGE_WIDTH_PX) -> list[FigureCheck]:
    """Every figure of the page :func:`evalset.report.render_html` lays out for ``data``, checked."""
    from evalset.report.page import render_html

    with saved_figures() as figures:
        render_html(data)
    return [check_figure(figure, DPI, page_width_px) for figure in figures]
