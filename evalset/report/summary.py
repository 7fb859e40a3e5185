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

import pandas as pd

from evalset.estimate.documents.report import DocumentReport
from evalset.render import number
from evalset.report.data import ReportData
from evalset.report.markup import escaped
from evalset.stats.paired import Comparison
from evalset.stats.verdicts import RULES, css_class

BEST = 3
"""The runs named in the summary's line of the best runs."""
_WORDS = {rule.name: rule.word for rule in RULES}


def verdict_class(result: Comparison) -> str:
    """The HTML class of ``result``'s verdict: the word of the rule :func:`evalset.stats.verdicts.decide` fired
    when the comparison was decided (``result.rule``), never decided again."""
    return css_class(_WORDS[result.rule])


def summary_section(data: ReportData) -> str:
    """The summary's HTML (see the module docstring)."""
    return "\n".join([
        '<section id="summary">', "<h2>Summary</h2>",
        _verdicts(data),
        _best(data),
        _rests_on(data),
        *(f'<p class="none">{escaped(note)}</p>' for note in data.notes),
        "</section>",
    ])


def _verdicts(data: ReportData) -> str:
    if not data.comparisons:
        return '<p class="none">No planned comparison recorded in the set.</p>'
    k = data.judged_measure.split("@")[1]
    rows = []
    for index, comparison in enumerate(data.comparisons, start=1):
        name = (f'<a href="#comparison-{index}">{escaped(comparison.candidate)} vs {escaped(comparison.baseline)}</a>')
        result = comparison.result
        if result is None:
            rows.append(f'<tr><td>{name}</td><td colspan="5" class="none">Not shown: {escaped(comparison.note)}.</td>'
                        "</tr>")
            continue
        judged = result.judged_at_k or {}
        cells = [
            f'<td class="verdict"><span class="{verdict_class(result)}">{escaped(result.verdict)}</span></td>',
            f'<td class="pair"><span>{number(result.mean_difference, sign=True)}</span> '  # breaks only between
            f"<span>[{number(result.ci_low, sign=True)}, {number(result.ci_high, sign=True)}]</span></td>",
            f'<td class="num">{result.n}' + (f" ({result.undefined} undef)" if result.undefined else "") + "</td>",
            f'<td class="num">{_share(judged.get("baseline"))} / {_share(judged.get("candidate"))}</td>',
            f"<td>{escaped(_holes(result, k))}</td>",
        ]
        rows.append(f"<tr><td>{name}</td>{''.join(cells)}</tr>")
    level = _levels(data)
    header = ["candidate vs baseline", "verdict", f"mean difference [{level}]", "queries",
              f"judged@{k} baseline / candidate", "holes"]
    head = "".join(f"<th>{escaped(h)}</th>" for h in header)
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
    scores = data.scores.sort_values("mean", ascending=False, kind="stable")
    level = data.settings["level"]
    named = [f"{number(row['mean'])} [{number(row['ci_low'])}, {number(row['ci_high'])}]"
             for _, row in scores.head(BEST).iterrows()]
    runs = list(scores.index[:BEST])
    text = (f'<p><b>Best run</b> ({escaped(data.headline)}, {level:.0%} interval): '
            f'<span class="best">{escaped(runs[0])}</span> '
            f"{named[0]}")
    if len(runs) > 1:
        text += "; then " + ", ".join(f"{escaped(run)} {shown}" for run, shown in zip(runs[1:], named[1:], strict=True))
    many = data.many
    if many is not None and many.letters:
        letters = dict(zip(many.runs, many.letters, strict=True))
        group = letters.get(runs[0], "")[:1]
        sharing = [run for run in many.runs if group and group in letters[run]]
        text += (f". {len(sharing)} of the {len(many.runs)} runs share its group <code>{escaped(group)}</code> (the "
                 "Tukey HSD of all pairs cannot tell them from it)" if len(sharing) > 1 else
                 f". The Tukey HSD of all pairs tells it from each of the other {len(many.runs) - 1} runs")
    return text + ".</p>"


def _rests_on(data: ReportData) -> str:
    judged = data.scores["judged"]
    judged_queries = int(data.strata["judged_queries"].sum())
    text = (f"<p><b>What the verdicts rest on</b>: the {len(data.queries)} queries of split "
            f"<b>{escaped(data.split)}</b> "
            f"({judged_queries} judged, {int(data.strata['judgments'].sum())} judgments), "
            f"{data.settings['runs']} runs; {escaped(data.judged_measure)} (the share of a run's top "
            f"{escaped(data.judged_measure.split('@')[1])} with a judgment) {judged_range(judged)}; the holes "
            "(unjudged "
            f"documents in a compared top {escaped(data.judged_measure.split('@')[1])}) are in the table.")
    if data.estimate is not None or data.estimate_note:
        what = ("the document sample's estimates" if isinstance(data.estimate, DocumentReport)
                else "the PPI++ estimates from the LLM grades and the human slice")
        text += f' The verdicts of {what} are in <a href="#estimates">their section</a>.'
    return text + "</p>"


def judged_range(judged: pd.Series) -> str:
    """judged@k over the runs: its one value, or its range with the runs at either end."""
    shown = judged.round(3)  # as the page writes it: runs that read alike are named alike
    low, high = shown.min(), shown.max()
    if low == high:
        return f"is {low:.3f} for every run"

    def at(value: float) -> str:
        runs = shown.index[shown == value]
        return escaped(runs[0]) + (f" and {len(runs) - 1} other runs" if len(runs) > 2 else
                              f" and {escaped(runs[1])}" if len(runs) == 2 else "")
    return f"ranges from {low:.3f} ({at(low)}) to {high:.3f} ({at(high)})"
