"""The report's section of the estimates of a set with an LLM-graded part: from LLM grades and the human slice
(PPI++), or from the document sample the set records (the document design, both its intervals);
:mod:`evalset.estimate.frozen` says when a set has one and how it is estimated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from evalset.contract import ContractOptions
from evalset.errors import InputError
from evalset.estimate.documents.report import DocumentReport
from evalset.estimate.figures import WEIGHTED, Estimate
from evalset.estimate.frozen import set_estimate
from evalset.io.setfolder import FrozenSet
from evalset.render import number
from evalset.report.data import ReportData
from evalset.report.markup import escaped, html_table
from evalset.stats.verdicts import ESTABLISHED, NO_VERDICT


def _bounds(row: Any, prefix: str = "", sign: bool = False) -> str:
    return f"[{number(row[prefix + 'low'], sign=sign)}, {number(row[prefix + 'high'], sign=sign)}]"


def _interval(row: Any, centre: str, prefix: str = "", sign: bool = False) -> str:
    return f"{number(row[centre], sign=sign)} {_bounds(row, prefix, sign)}"


def set_estimates(frozen: FrozenSet, runs: Mapping[str, pd.DataFrame], split: str, alpha: float, level: float,
                  options: ContractOptions | None = None,
                  sources: Mapping[str, str] | None = None) -> tuple[Estimate | DocumentReport | None, str]:
    """The set's estimates (:func:`evalset.estimate.frozen.set_estimate`, under the report's contract ``options``:
    its ``-c missing``), or ``None`` and why there are none when the set has an LLM-graded part or a document
    sample but no estimate can be made."""
    try:
        return set_estimate(frozen, runs, split=split, alpha=alpha, level=level, options=options,
                            override_contract=True, sources=sources), ""
    except InputError as exc:
        part = "a document sample" if frozen.sample is not None else "an LLM-graded part"
        return None, f"The set has {part}, but no estimate could be made: {exc}"


def estimates_section(data: ReportData) -> str:
    """The page's section of the estimates: nothing without an LLM-graded part, the reason when it has no
    estimate."""
    estimate, title = data.estimate, "<h2>Estimates from LLM grades and the human slice (PPI++)</h2>"
    if estimate is None:
        return f'{title}\n<p class="none">{escaped(data.estimate_note)}</p>' if data.estimate_note else ""
    if isinstance(estimate, DocumentReport):
        return _sample_section(estimate)
    runs, settings = estimate.runs, estimate.settings
    stratified, level = runs["stratum"].nunique() > 1, settings["level"]
    order = runs.drop_duplicates("run", keep="last").sort_values("estimate", ascending=False, kind="stable")["run"]
    rank = {run: i for i, run in enumerate(order)}  # best PPI++ estimate (traffic-weighted when stratified) first
    runs = runs.assign(rank=runs["run"].map(rank)).sort_values("rank", kind="stable")
    rows = [[*([f"{r['stratum']} ({int(r['n'])} of {int(r['n'] + r['N'])})"] if stratified else []), r["run"],
             _interval(r, "human_mean", "human_"), _interval(r, "estimate"), number(r["llm_mean"]),
             number(r["effective_n"], 1)] for _, r in runs.iterrows()]
    comparisons = estimate.comparisons
    if stratified:
        comparisons = comparisons[comparisons["stratum"] == WEIGHTED]
    pairs = [[f"{r['candidate']} - {r['baseline']}", f"{r['level']:.4g}", _interval(r, "human_mean", "human_", True),
              _interval(r, "estimate", sign=True), number(r["llm_mean"], sign=True), number(r["effective_n"], 1),
              r["verdict"]] for _, r in comparisons.iterrows()]
    parts = [title, (
        f"<p>{settings['queries']} queries of the split have LLM grades, {settings['slice']} of them human grades "
        f"too. Per run, {escaped(data.headline)}: the <b>human-only</b> mean of the human-graded queries with its "
        f"{level:.0%} Student's t interval; the <b>PPI++</b> estimate of the mean over all {settings['queries']} "
        "queries, the LLM grades of every query corrected by the human grades of the slice (prediction-powered "
        "inference, ppi_py), with its interval; the <b>LLM-only</b> mean (biased, so no interval); and the "
        "<b>effective n</b>, the number of human-graded queries the PPI++ interval is worth"
        f"{' (per stratum, then traffic-weighted)' if stratified else ''}. Assumption: the human-graded queries "
        "are taken as a random slice of the LLM-graded ones; the set does not record how they were chosen, and "
        "if they were not drawn at random the human-only and PPI++ figures are biased.</p>"),
        html_table([*(["stratum (human-graded of all)"] if stratified else []), "run", "human-only" if stratified else
                f"human-only ({settings['slice']} q)", "PPI++" if stratified else f"PPI++ ({settings['queries']} q)",
                "LLM-only", "effective n"], rows,
               set(range(int(stratified) + 1, int(stratified) + 5)))]
    if pairs:
        parts += ["<h3>Planned comparisons, PPI++</h3>", "<p>Candidate minus baseline per query; the intervals are "
                  f"at level 1 - threshold of the set's family; {ESTABLISHED} when the PPI++ interval excludes 0, "
                  f"{NO_VERDICT} when it left the difference's range.</p>",
                  html_table(["comparison", "level", "human-only [interval]", "PPI++ [interval]", "LLM-only",
                          "effective n", "verdict"], pairs, {1, 2, 3, 4, 5})]
    return "\n".join(parts + [f'<p class="none">{escaped(note)}</p>' for note in estimate.caveats])


def _sample_section(report: DocumentReport) -> str:
    """The section of a set frozen with a document sample: each run's estimate with its two intervals, then the
    comparisons with both intervals and the verdict (which interval it rests on is named)."""
    table, s, level = report.estimate.table, report.estimate.settings, report.estimate.settings["level"]
    no_text = report.settings.get("no_text")
    left_out = f" ({no_text:,} pooled pair(s) without text left out of the draw: unjudged)" if no_text else ""
    parts = ["<h2>Estimates from the document sample (humans on a sample of every query's pairs, the LLM on all)"
             "</h2>", (
        f"<p>{s['sampled']:,} of the {s['pairs']:,} pooled pairs{left_out} over {s['queries']} queries were drawn at "
        "random, "
        f"each with its recorded inclusion probability, and graded by humans; {escaped(s['estimator'])}. Per run, the "
        f"estimate of the mean and its two {level:.0%} intervals: <b>this set</b>, the uncertainty of which pairs "
        "were sampled, for these queries; <b>new queries</b>, Student's t across queries, which adds the "
        "between-query variance and holds for new queries of the same population. The page's scores and "
        "comparisons use the human grades of the sampled pairs alone (an unsampled pair is a hole, scored not "
        "relevant; judged@k says how many): these estimates use every pooled pair.</p>")]
    for measure, rows in table.groupby("measure", sort=False):
        runs = rows[rows["kind"] == "run"].sort_values("estimate", ascending=False, kind="stable")
        parts.append(html_table([f"run ({measure})", "estimate", "this set", "new queries"],
                            [[r["name"], number(r["estimate"]), _bounds(r, "set_"), _bounds(r, "new_")]
                             for _, r in runs.iterrows()], {1, 2, 3}))
    if len(report.comparisons):
        parts += ["<h3>Comparisons, document design</h3>", "<p>Candidate minus baseline per query; the intervals "
                  f"are at level 1 - threshold of the set's family; {ESTABLISHED} when the interval the verdict "
                  f"names excludes 0, {NO_VERDICT} when the estimate or an interval left the difference's range.</p>",
                  html_table(["comparison", "measure", "level", "estimate", "this set", "new queries", "verdict"],
                         [[f"{r['candidate']} - {r['baseline']}", r["measure"], f"{r['level']:.4g}",
                           number(r["estimate"], sign=True), _bounds(r, "set_", True), _bounds(r, "new_", True),
                           r["verdict"]] for _, r in report.comparisons.iterrows()], {2, 3, 4, 5})]
    return "\n".join(parts + [f'<p class="none">{escaped(note)}</p>' for note in report.estimate.caveats])
