"""The plot of a reusability analysis: the drop of each run against the relevant documents only it, or only its
group, found."""

from __future__ import annotations

from evalset.render import number
from evalset.reusability.leave_out import TITLES, Reusability

LABELLED_POINTS = 6
"""The plot names the runs with the largest drops, up to this many per panel."""


_LABEL_HEIGHT = 8.0  # points, for labels in 7-point type
_LABEL_CHAR_WIDTH = 4.2
_LABEL_OFFSET = 3.0  # points right of and above its point, where a label goes unless it would cover another


def _label_lifts(axis, points: list[tuple[float, float]], texts: list[str]) -> list[float]:
    """How far above its point (in points) each label goes so that no two labels overlap: in order, a label that
    would cover one placed before moves down below it, with a line to its point."""
    axis.autoscale_view()
    scale = 72.0 / axis.figure.dpi
    where = [(x * scale, y * scale) for x, y in axis.transData.transform(points)] if points else []
    placed: list[tuple[float, float, float]] = []  # left, right and bottom of each label, in points
    lifts = []
    for (x, y), text in zip(where, texts, strict=True):
        left, bottom = x + _LABEL_OFFSET, y + _LABEL_OFFSET
        right = left + _LABEL_CHAR_WIDTH * len(text)
        while any(left < other_right and other_left < right and abs(bottom - other_bottom) < _LABEL_HEIGHT
                  for other_left, other_right, other_bottom in placed):
            bottom -= _LABEL_HEIGHT
        placed.append((left, right, bottom))
        lifts.append(bottom - y)
    return lifts


def plot_reusability(result: Reusability, path: str) -> None:
    """The drop of each run against the relevant documents only it (its group) found, one panel per kind, as PNG
    (metadata stripped: the same data give the same bytes)."""
    from evalset.render import quiet_matplotlib

    quiet_matplotlib()
    from matplotlib.figure import Figure

    from evalset.io.files import atomic_path

    parts = [part for part in (result.runs, result.groups) if part is not None]
    figure = Figure(figsize=(6.5 * len(parts), 4.8))
    for axis, part in zip(figure.subplots(1, len(parts), squeeze=False)[0], parts, strict=True):
        relevant = part.owners.set_index("owner")["unique_relevant"]
        x = part.rows["owner"].map(relevant).to_numpy()
        axis.scatter(x, part.rows["drop"], s=18, color="#4c72b0", alpha=0.8)
        labelled = part.rows.nlargest(LABELLED_POINTS, "drop")
        points = list(zip(labelled["owner"].map(relevant), labelled["drop"], strict=True))
        for run, point, lift in zip(labelled["run"], points, _label_lifts(axis, points, list(labelled["run"])),
                                    strict=True):
            moved = lift != _LABEL_OFFSET
            axis.annotate(run, point, fontsize=7, xytext=(_LABEL_OFFSET, lift), textcoords="offset points",
                          arrowprops={"arrowstyle": "-", "color": "grey", "linewidth": 0.5} if moved else None)
        axis.axhline(0, color="grey", linewidth=0.8)
        axis.set_xlabel(f"relevant documents only its {part.kind} found (top {result.depth})")
        axis.set_ylabel(f"drop in {result.metric} (full - reduced qrels)")
        axis.set_title(f"{TITLES[part.kind]}: tau {number(part.kendall_tau, 3)}, tau_AP {number(part.tau_ap, 3)}",
                       fontsize=10)
        axis.grid(alpha=0.3)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
