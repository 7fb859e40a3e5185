"""The report's "All runs" section: every pair of the runs given, compared at once as ``evalset compare --all --set``
does (:func:`evalset.comparing.compare_many`: the randomised Tukey HSD, the set's weights, the holes), with the runs
by mean, their letter groups and the pairs the holes could flip. The groups are drawn beside the scores, in the
page's one plot of the ranking (:func:`evalset.report.plots.ranking_plot`).

A judged query missing from a run follows the ``missing`` the report was given (``-c missing``): without it the
report has refused such a run before (:func:`evalset.evaluation.missing_queries`), as ``compare --all`` does.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from evalset.comparing import ManyComparisons, compare_many
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.render import number
from evalset.report.markup import escaped
from evalset.stats.verdicts import NOT_ESTABLISHED, css_class


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


def many_section(result: ManyComparisons | None, note: str = "") -> str:
    """The "All runs" section of the page."""
    if result is None:
        return f'<h2>All runs</h2>\n<p class="none">{escaped(note)}</p>'
    weighting = "traffic-weighted, " if result.weighted else ""
    flippable = [pair for pair in result.significant if pair.rule == "holes could flip"]
    rows = "".join(
        f"<tr><td>{escaped(run)}</td><td><code>{escaped(result.letters[k])}</code></td>"
        f'<td class="num">{number(result.means[k])}</td>'
        + (f'<td class="num">{result.judged[k]:.3f}</td>' if result.judged is not None else "")
        + f'<td class="num">{result.unjudged.get(run, 0)}</td></tr>'
        for k, run in enumerate(result.runs))
    judged = f"<th>{escaped(result.judged_measure)}</th>" if result.judged is not None else ""
    parts = [
        "<h2>All runs</h2>",
        f"<p>Every pair of the {len(result.runs)} runs on {escaped(result.metric)} ({weighting}{result.queries} queries"
        f"{', exploratory (dev split)' if result.exploratory else ''}): the randomised Tukey HSD (Carterette 2012; "
        f"{result.permutations} permutations of each query's values across the runs, seed {result.seed}) over the "
        f"{len(result.pairs)} pairs, at a family-wise error rate of {result.alpha:g}. Runs that share a letter are "
        f"not distinguishable (the groups are drawn beside the scores above); {len(result.significant)} pairs "
        "differ significantly.</p>",
        f'<div class="box"><table><thead><tr><th>run</th><th>group</th><th>{escaped(result.metric)}</th>{judged}'
        f"<th>holes</th></tr></thead><tbody>{rows}</tbody></table></div>",
        f"<p>{escaped(result.anova.to_text())}.</p>",
    ]
    if flippable:
        parts.append(f'<p class="{css_class(NOT_ESTABLISHED)}">{len(flippable)} significant pairs are '
                     f"{NOT_ESTABLISHED}: the holes (unjudged documents of the top k) could flip them: "
                     + escaped(", ".join(f"{p.a} vs {p.b}" for p in flippable[:10]))
                     + (", ..." if len(flippable) > 10 else "") + ".</p>")
    return "\n".join(parts)
