"""The report's "All runs" section: every pair of the runs given, compared at once as ``evalset compare --all --set``
does (:func:`evalset.comparing.compare_many`: the randomised Tukey HSD, the set's weights, the holes), with the runs
by mean, their letter groups, the pairs the holes could flip, and a plot of the groups.

A judged query missing from a run follows the ``missing`` the report was given (``--missing``): without it the
report has refused such a run before (:func:`evalset.evaluation.missing_queries`), as ``compare --all`` does.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from evalset.comparing import ManyComparisons, compare_many
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.render import number
from evalset.report.plots import LABEL_PT, MARGIN, png, rows_axis
from evalset.stats.verdicts import NOT_ESTABLISHED, css_class

GROUP_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974",
                 "#64b5cd")


def many_runs(evaluation: Evaluation, runs: Mapping[str, pd.DataFrame], metric: str, *, permutations: int,
              seed: int, alpha: float) -> tuple[ManyComparisons | None, str]:
    """Every pair of ``runs`` compared at once, or None and why (fewer than two runs, nothing to compare)."""
    if len(runs) < 2:
        return None, "One run only: nothing to compare."
    try:
        return compare_many(evaluation, runs, metric, permutations=permutations, seed=seed, alpha=alpha,
                            missing=evaluation.contract.missing), ""
    except InputError as exc:
        return None, f"The runs could not be compared at once: {exc}"


def groups_plot(result: ManyComparisons) -> str:
    """Each run's mean (the best on top; grey: its range over the holes), coloured by its first letter group, and
    beside it each group as a bar spanning the runs that share its letter."""
    letters = "".join(dict.fromkeys("".join(result.letters or ())))
    size = len(result.runs)
    figure = Figure(figsize=(7.5, 1.4 + 0.24 * size))
    axes, groups = figure.subplots(1, 2, sharey=True, width_ratios=[5, 1 + 0.15 * len(letters)])
    positions = rows_axis(axes, result.runs)
    colours = [GROUP_COLOURS[letters.index(own[0]) % len(GROUP_COLOURS)] for own in result.letters or ()]
    for k, run in enumerate(result.runs):
        if run in result.bounds:
            axes.plot(result.bounds[run], [k, k], color="#8c8c8c", linewidth=1, zorder=2)
    axes.scatter(result.means, positions, c=colours, s=18, zorder=3)
    axes.set_xlabel(f"{result.metric}" + (" (grey: the range over the holes)" if result.bounds else ""),
                    fontsize=LABEL_PT)
    axes.margins(x=MARGIN)
    axes.grid(axis="x", alpha=0.3)
    for index, letter in enumerate(letters):
        members = [k for k, own in enumerate(result.letters) if letter in own]
        groups.plot([index, index], [min(members) - 0.3, max(members) + 0.3], linewidth=4, solid_capstyle="butt",
                    color=GROUP_COLOURS[index % len(GROUP_COLOURS)])
    groups.set_xticks(range(len(letters)), list(letters), fontsize=LABEL_PT)
    groups.set_xlim(-0.7, len(letters) - 0.3)
    groups.set_xlabel("groups", fontsize=LABEL_PT)
    groups.tick_params(axis="y", left=False)
    return png(figure)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def many_section(result: ManyComparisons | None, note: str = "") -> str:
    """The "All runs" section of the page."""
    if result is None:
        return f'<h2>All runs</h2>\n<p class="none">{_e(note)}</p>'
    weighting = "traffic-weighted, " if result.weighted else ""
    flippable = [pair for pair in result.significant if pair.rule == "holes could flip"]
    rows = "".join(
        f"<tr><td>{_e(run)}</td><td><code>{_e(result.letters[k])}</code></td>"
        f'<td class="num">{number(result.means[k])}</td>'
        + (f'<td class="num">{result.judged[k]:.3f}</td>' if result.judged is not None else "")
        + f'<td class="num">{result.unjudged.get(run, 0)}</td></tr>'
        for k, run in enumerate(result.runs))
    judged = f"<th>{_e(result.judged_measure)}</th>" if result.judged is not None else ""
    parts = [
        "<h2>All runs</h2>",
        f"<p>Every pair of the {len(result.runs)} runs on {_e(result.metric)} ({weighting}{result.queries} queries"
        f"{', exploratory (dev split)' if result.exploratory else ''}): the randomised Tukey HSD (Carterette 2012; "
        f"{result.permutations} permutations of each query's values across the runs, seed {result.seed}) over the "
        f"{len(result.pairs)} pairs, at a family-wise error rate of {result.alpha:g}. Runs that share a letter are "
        f"not distinguishable; {len(result.significant)} pairs differ significantly.</p>",
        f'<img src="{groups_plot(result)}" alt="{_e(result.metric)} per run with its letter groups">',
        f"<table><thead><tr><th>run</th><th>group</th><th>{_e(result.metric)}</th>{judged}<th>holes</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>",
        f"<p>{_e(result.anova.to_text())}.</p>",
    ]
    if flippable:
        parts.append(f'<p class="{css_class(NOT_ESTABLISHED)}">{len(flippable)} significant pairs are '
                     f"{NOT_ESTABLISHED}: the holes (unjudged documents of the top k) could flip them: "
                     + _e(", ".join(f"{p.a} vs {p.b}" for p in flippable[:10]))
                     + (", ..." if len(flippable) > 10 else "") + ".</p>")
    return "\n".join(parts)
