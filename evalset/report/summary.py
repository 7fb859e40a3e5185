"""The report's first section: what the page concludes and what that rests on, on one screen.

Conventions
-----------
- **Nothing is computed here.** Every figure is read from the objects the rest of the page renders: each planned
  comparison's verdict, difference, interval, queries, judged@k and holes from its
  :class:`~evalset.stats.paired.Comparison` (decided by :func:`evalset.stats.verdicts.decide` when the comparison
  was made; its colour is the word of the rule that fired, :func:`verdict_class`), the best runs from the scores
  table, their letter group from the runs compared at once (:mod:`evalset.report.many`), judged@k's range from
  the scores table's column.
- **What is shown**: the planned comparisons as a table (one row each, linked to its evidence further down, and
  a row saying why a comparison is not shown), the best runs (the top :data:`BEST` by score, with their
  intervals, and how many runs the Tukey HSD cannot tell from the best), then what the verdicts rest on: the
  queries of the split, judged@k over the runs, the holes of the compared top k, the notes on queries runs lack,
  and where the estimates of an LLM-graded part or a document sample are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from evalset.estimate.documents.modes import DocumentReport
from evalset.render import number
from evalset.stats.paired import Comparison
from evalset.stats.verdicts import RULES, css_class

if TYPE_CHECKING:
    from evalset.report.page import ReportData

BEST = 3
"""The runs named in the summary's line of the best runs."""
_WORDS = {rule.name: rule.word for rule in RULES}


def verdict_class(result: Comparison) -> str:
    """The HTML class of ``result``'s verdict: the word of the rule :func:`evalset.stats.verdicts.decide` fired
    when the comparison was decided (``result.rule``), never decided again."""
    return css_class(_WORDS[result.rule])


def summary_section(data: ReportData) -> str:
    """The summary's HTML (see the module docstring)."""
    from evalset.report.page import _e  # the page's helpers

    return "\n".join([
        '<section id="summary">', "<h2>Summary</h2>",
        _verdicts(data),
        _best(data),
        _rests_on(data),
        *(f'<p class="none">{_e(note)}</p>' for note in data.notes),
        "</section>",
    ])


def _verdicts(data: ReportData) -> str:
    from evalset.report.page import _e

    if not data.comparisons:
        return '<p class="none">No planned comparison recorded in the set.</p>'
    k = data.judged_measure.split("@")[1]
    rows = []
    for index, comparison in enumerate(data.comparisons, start=1):
        name = (f'<a href="#comparison-{index}">{_e(comparison.candidate)} vs {_e(comparison.baseline)}</a>')
        result = comparison.result
        if result is None:
            rows.append(f'<tr><td>{name}</td><td colspan="5" class="none">Not shown: {_e(comparison.note)}.</td>'
                        "</tr>")
            continue
        judged = result.judged_at_k or {}
        cells = [
            f'<td class="verdict"><span class="{verdict_class(result)}">{_e(result.verdict)}</span></td>',
            f'<td class="pair"><span>{number(result.mean_difference, sign=True)}</span> '  # breaks only between
            f"<span>[{number(result.ci_low, sign=True)}, {number(result.ci_high, sign=True)}]</span></td>",
            f'<td class="num">{result.n}' + (f" ({result.undefined} undef)" if result.undefined else "") + "</td>",
            f'<td class="num">{_share(judged.get("baseline"))} / {_share(judged.get("candidate"))}</td>',
            f"<td>{_e(_holes(result, k))}</td>",
        ]
        rows.append(f"<tr><td>{name}</td>{''.join(cells)}</tr>")
    level = _levels(data)
    header = ["candidate vs baseline", "verdict", f"mean difference [{level}]", "queries",
              f"judged@{k} baseline / candidate", "holes"]
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    return (f'<div class="box"><table class="verdicts"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></div>")


def _share(value: float | None) -> str:
    return "?" if value is None else f"{value:.3f}"


def _levels(data: ReportData) -> str:
    """The comparisons' interval, named once (its level is 1 - threshold, one per comparison when they differ)."""
    levels = sorted({c.result.ci_level for c in data.comparisons if c.result is not None})
    return f"BCa {levels[0]:.1%}" if len(levels) == 1 else "BCa at 1 - threshold"


def _holes(result: Comparison, k: str) -> str:
    """The holes of the compared top k as the comparison states them (its bound, or why none)."""
    bound = result.hole_bound
    if bound is None:
        return f"none in either top {k}"
    if "unjudged" not in bound:
        return bound["text"]
    change = "a fill could change the verdict" if bound["could_flip"] else "no fill changes the verdict"
    return f"{bound['unjudged']} unjudged documents: {change}"


def _best(data: ReportData) -> str:
    from evalset.report.page import _e

    scores = data.scores.sort_values("mean", ascending=False, kind="stable")
    level = data.settings["level"]
    named = [f"{number(row['mean'])} [{number(row['ci_low'])}, {number(row['ci_high'])}]"
             for _, row in scores.head(BEST).iterrows()]
    runs = list(scores.index[:BEST])
    text = (f'<p><b>Best run</b> ({_e(data.headline)}, {level:.0%} interval): <span class="best">{_e(runs[0])}</span> '
            f"{named[0]}")
    if len(runs) > 1:
        text += "; then " + ", ".join(f"{_e(run)} {shown}" for run, shown in zip(runs[1:], named[1:], strict=True))
    many = data.many
    if many is not None and many.letters:
        letters = dict(zip(many.runs, many.letters, strict=True))
        group = letters.get(runs[0], "")[:1]
        sharing = [run for run in many.runs if group and group in letters[run]]
        text += (f". {len(sharing)} of the {len(many.runs)} runs share its group <code>{_e(group)}</code> (the "
                 "Tukey HSD of all pairs cannot tell them from it)" if len(sharing) > 1 else
                 f". The Tukey HSD of all pairs tells it from each of the other {len(many.runs) - 1} runs")
    return text + ".</p>"


def _rests_on(data: ReportData) -> str:
    from evalset.report.page import _e

    judged = data.scores["judged"]
    judged_queries = int(data.strata["judged_queries"].sum())
    text = (f"<p><b>What the verdicts rest on</b>: the {len(data.queries)} queries of split <b>{_e(data.split)}</b> "
            f"({judged_queries} judged, {int(data.strata['judgments'].sum())} judgments), "
            f"{data.settings['runs']} runs; {_e(data.judged_measure)} (the share of a run's top "
            f"{_e(data.judged_measure.split('@')[1])} with a judgment) {judged_range(judged)}; the holes (unjudged "
            f"documents in a compared top {_e(data.judged_measure.split('@')[1])}) are in the table.")
    if data.estimate is not None or data.estimate_note:
        what = ("the document sample's estimates" if isinstance(data.estimate, DocumentReport)
                else "the PPI++ estimates from the LLM grades and the human slice")
        text += f' The verdicts of {what} are in <a href="#estimates">their section</a>.'
    return text + "</p>"


def judged_range(judged: pd.Series) -> str:
    """judged@k over the runs: its one value, or its range with the runs at either end."""
    from evalset.report.page import _e

    shown = judged.round(3)  # as the page writes it: runs that read alike are named alike
    low, high = shown.min(), shown.max()
    if low == high:
        return f"is {low:.3f} for every run"

    def at(value: float) -> str:
        runs = shown.index[shown == value]
        return _e(runs[0]) + (f" and {len(runs) - 1} other runs" if len(runs) > 2 else
                              f" and {_e(runs[1])}" if len(runs) == 2 else "")
    return f"ranges from {low:.3f} ({at(low)}) to {high:.3f} ({at(high)})"
