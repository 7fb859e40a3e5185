"""The printed forms of a reusability analysis: the text tables, the JSON document, and the plot (the drop of each
run against the relevant documents only it, or only its group, found)."""

from __future__ import annotations

from typing import Any

from evalset.render import json_safe, number, text_table
from evalset.reusability.leave_out import LeaveOut, Reusability

TITLES = {"run": "Leave one run out", "group": "Leave one group out"}
LABELLED_POINTS = 6
"""The plot names the runs with the largest drops, up to this many per panel."""


def _percent(value: float) -> str:
    return number(value * 100, 1) + "%" if value == value else number(value)


def _table(result: Reusability, part: LeaveOut) -> list[str]:
    judged = f"judged@{result.depth}'"
    counts = part.owners.set_index("owner")
    header = ["run", "full", "reduced", "drop", "drop%", "rank", "rank'", judged, "unique", "judged", "relevant"]
    if part.kind == "group":
        header.insert(0, "group")
    rows = [header]
    for row in part.rows.itertuples():
        owner = counts.loc[row.owner]
        cells = [row.run, number(row.full), number(row.reduced), number(row.drop), _percent(row.relative_drop),
                 row.rank_full, row.rank_reduced, number(row.judged_reduced, 3), owner["unique"],
                 owner["unique_judged"], owner["unique_relevant"]]
        rows.append([row.owner, *cells] if part.kind == "group" else cells)
    first = 2 if part.kind == "group" else 1
    return text_table(rows, right=set(range(first, len(header))))


def _summary(result: Reusability, part: LeaveOut) -> list[str]:
    largest = part.largest
    changes = part.rank_changes
    moved = ", ".join(f"{r.run} {r.rank_full}->{r.rank_reduced}" for r in changes.itertuples()) or "none"
    return [
        f"largest drop {number(largest['drop'])} ({largest['run']}), mean drop {number(part.mean_drop)} over "
        f"{len(part.rows)} runs",
        f"Kendall's tau {number(part.kendall_tau, 3)}, tau_AP {number(part.tau_ap, 3)} (official ranking vs each "
        f"run scored on its {part.kind}'s reduced qrels)",
        f"rank changes ({len(changes)}): {moved}",
        f"verdict: {part.verdict}",
    ]


def format_reusability(result: Reusability) -> str:
    """The text output: the pool, then per kind a table (one row per run, by official rank) and its summary."""
    groups = f", {len(result.groups.owners)} groups" if result.groups is not None else ""
    lines = [f"{result.metric}, pool depth {result.depth}: {len(result.runs.rows)} runs{groups}, {result.queries} "
             f"judged queries, {result.judgments} judgments ({result.source})",
             "unique/judged/relevant: the pairs of the depth-k pool only this run (group) contributed, and their "
             "judgments; reduced: scored without them; rank': its rank then, the other runs keeping their scores"]
    for part in (result.runs, result.groups):
        if part is None:
            continue
        lines += ["", f"{TITLES[part.kind]}:", *_table(result, part), *_summary(result, part)]
    return "\n".join(lines)


def _part_document(part: LeaveOut) -> dict[str, Any]:
    largest = part.largest
    changes = part.rank_changes
    return {
        "rows": part.rows.to_dict(orient="records"),
        part.kind + "s": part.owners.to_dict(orient="records"),
        "summary": {"largest_drop": {"run": largest["run"], "drop": largest["drop"]}, "mean_drop": part.mean_drop,
                    "kendall_tau": part.kendall_tau, "tau_ap": part.tau_ap,
                    "rank_changes": changes[["run", "rank_full", "rank_reduced"]].to_dict(orient="records"),
                    "level": part.level, "verdict": part.verdict},
    }


def reusability_document(result: Reusability) -> dict[str, Any]:
    """The JSON layout: the pool's figures, ``runs`` and ``groups`` (null without a group file), each with its
    rows, its owners' contributions and its summary; and the notes."""
    return json_safe({
        "metric": result.metric, "depth": result.depth, "queries": result.queries, "judgments": result.judgments,
        "source": result.source, "leave_one_run_out": _part_document(result.runs),
        "leave_one_group_out": _part_document(result.groups) if result.groups is not None else None,
        "notes": result.notes,
    })


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
    import matplotlib

    matplotlib.use("Agg")
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
