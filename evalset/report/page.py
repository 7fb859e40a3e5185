"""A self-contained HTML report of a frozen set and the runs scored on it.

One page, no external resource and no script: plots are PNG images drawn by matplotlib (Agg, no pyplot state)
and embedded as ``data:`` URIs (:mod:`evalset.report.plots`); every text that comes from the data (query text,
ids, run names, annotator names) is escaped with :func:`html.escape`. The same inputs give the same bytes (PNG
metadata stripped, every resampling seeded, no clock read).

What the page shows, on the queries of one split of the set, the answers first:

- the summary (:mod:`evalset.report.summary`): the planned comparisons' verdicts, the best runs, and what the
  verdicts rest on (queries, judged@k, holes), read from the results the sections below render;
- every planned comparison: the per-query differences (candidate minus baseline), sorted, with the verdict of
  :meth:`evalset.stats.family.ComparisonFamily.compare` in the set's family on the split, at the threshold
  ``evalset compare --set`` would use for it given the comparison log (the report records nothing in the log),
  its interval drawn from the report's resamples (too few for its level: no verdict, as
  :func:`evalset.stats.verdicts.decide` rules), and its largest losses with the query text;
- the headline score of every run with a bootstrap interval over queries
  (:func:`evalset.stats.strata.score_interval`: BCa, queries resampled within their stratum and the strata
  combined as the set's weighting does), in the page's one plot of the ranking, the runs' letter groups beside;
- every pair of the runs compared at once (:mod:`evalset.report.many`: the randomised Tukey HSD, the runs by mean
  with their letter groups, the pairs the holes could flip);
- when the set has an LLM-graded part on the split (:mod:`evalset.estimate.frozen`): each run's PPI++ estimate
  from the LLM grades corrected by the human-graded slice, beside the human-only mean and the LLM-only one, and
  the planned comparisons' PPI++ differences with their verdicts; on a set frozen with a document sample, the
  document design's estimates and differences, each with its "this set" and "new queries" intervals;
- the set: where it lives, its guideline and contract, queries per stratum, judgments per grade (with the
  guideline's grade names), and judged@k over the runs (the share of each run's top k that has a judgment: a low
  value means its score rests on unjudged documents), as a strip of stacked dots;
- the agreement heatmap, from the manifest's ``agreement`` block (or a file given), or "no agreement data recorded".

No table is wider than its column: each sits in a box that scrolls sideways on a screen narrower than it.

A judged query absent from a run is refused (:func:`evalset.evaluation.missing_queries`: the run, its file, the
count) unless the report is told the contract's ``missing`` (``-c missing=zero``: it scores 0; ``-c missing=skip``:
it is left out of the run's score and comparisons; one that differs from the set's contract overrides it); the page
then says how many. Resamples too few to place the ends of a score's interval at its level
(:func:`~evalset.stats.verdicts.minimum_resamples`) are refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from evalset import __version__
from evalset.comparing import ManyComparisons
from evalset.comparing.compare import holes_policy, what_it_rests_on, with_geometric_means
from evalset.comparing.setlog import set_family
from evalset.contract import ContractOptions
from evalset.errors import InputError
from evalset.evaluation import Evaluation, PerQuery, missing_notes, missing_queries, per_query_values
from evalset.holes.find import depth_of
from evalset.io.comparisonlog import ComparisonLog
from evalset.io.setfolder import FrozenSet
from evalset.metrics import parse_measure
from evalset.params import settings_of
from evalset.render import number
from evalset.report import plots
from evalset.report.agreement import AgreementMatrix, agreement_matrix
from evalset.report.data import PlannedComparison, ReportData
from evalset.report.estimates import estimates_section, set_estimates
from evalset.report.many import many_runs, many_section
from evalset.report.markup import escaped, html_table
from evalset.report.spec import ReportSpec
from evalset.report.summary import judged_range, summary_section, verdict_class
from evalset.seeds import generator
from evalset.stats.strata import from_summary_scale, has_strata, score_interval, stratified_summary
from evalset.stats.verdicts import ESTABLISHED, EXPLORATORY, NO_VERDICT, NOT_ESTABLISHED, css_class


def collect(frozen: FrozenSet, runs: Mapping[str, pd.DataFrame], spec: ReportSpec | None = None, *,
            agreement: Mapping[str, Any] | None = None, files: Mapping[str, str | os.PathLike] | None = None,
            **options: Any) -> ReportData:
    """Compute what the report shows (see the module docstring), as ``spec`` asks (or a
    :class:`~evalset.report.spec.ReportSpec` of ``options``: ``split``, ``seed``, ``resamples``, ...).

    ``runs`` maps run names (as the planned comparisons name them) to runs (``query_id, doc_id, score``), and
    ``files`` (optional) names their files in an error. ``agreement`` overrides the manifest's ``agreement`` block.
    Scores follow the set's contract and headline metric on the queries of ``spec.split``; ``spec.missing``
    (``zero``, ``skip``) chooses what a judged query a run lacks does (None: refused).
    """
    spec = settings_of(ReportSpec, spec, options)
    if not runs:
        raise InputError("the report needs at least one run")
    split, seed, resamples, permutations = spec.split, spec.seed, spec.resamples, spec.permutations
    level, alpha, largest, missing = spec.level, spec.alpha, spec.largest, spec.missing
    chosen = ContractOptions(missing=missing) if missing is not None else None
    evaluation = Evaluation.on_set(frozen, split, chosen, override_contract=True)
    queries, qrels = evaluation.queries, evaluation.qrels
    headline = parse_measure(frozen.contract.headline)
    judged = parse_measure(f"judged@{depth_of(headline, None)}")
    measures = [headline] if headline == judged else [headline, judged]
    values = per_query_values(evaluation, runs, [str(m) for m in measures])
    lacking = missing_queries(values, {**runs, **(files or {})})
    notes = [*missing_notes(values, lacking, "left out of its score and comparisons"),
             *(f"note: the set's contract overridden: {said}" for said in evaluation.overridden)]
    scores = _scores(values, str(headline), str(judged), queries, frozen.contract.weighting, level, resamples, seed)
    comparisons = _comparisons(frozen, values, runs, str(headline), seed, permutations, resamples, alpha, largest)
    many, many_note = many_runs(evaluation, runs, str(headline), permutations=permutations, seed=seed, alpha=alpha)
    matrix, note = None, ""
    if agreement is not None:
        matrix = agreement_matrix(agreement)
    else:  # a recorded block this reader does not know is reported on the page, not fatal
        try:
            matrix = agreement_matrix(frozen.manifest.get("agreement"))
        except InputError as exc:
            note = f"The manifest records an agreement block this report cannot read ({exc})."
    estimate, estimate_note = set_estimates(frozen, runs, split, alpha, level, chosen,
                                            {name: os.fspath(path) for name, path in (files or {}).items()})
    return ReportData(
        frozen=frozen, split=split, headline=str(headline), judged_measure=str(judged), queries=queries,
        strata=_strata(queries, qrels), grades=_grades(qrels, frozen.manifest.get("scale", {})), scores=scores,
        comparisons=comparisons, agreement=matrix, agreement_note=note, estimate=estimate,
        estimate_note=estimate_note, many=many, many_note=many_note, notes=notes,
        logged=ComparisonLog.of_set(frozen.path, split).records(),
        settings={**spec.settings(), "runs": len(runs)},
    )


def _strata(queries: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    judged = qrels.groupby("query_id").size()
    rows = []
    for stratum, group in queries.groupby("stratum", sort=True):
        counts = judged.reindex(group["query_id"]).dropna()
        rows.append({"stratum": stratum, "queries": len(group), "judged_queries": len(counts),
                     "judgments": int(counts.sum()), "traffic_share": float(group["stratum_share"].iloc[0])})
    return pd.DataFrame(rows, columns=["stratum", "queries", "judged_queries", "judgments", "traffic_share"])


def _grades(qrels: pd.DataFrame, scale: Mapping[str, str]) -> pd.DataFrame:
    counts = qrels["grade"].value_counts()
    grades = sorted({int(g) for g in scale} | {int(g) for g in counts.index})
    return pd.DataFrame({"grade": grades, "name": [scale.get(str(g), "") for g in grades],
                         "judgments": [int(counts.get(g, 0)) for g in grades]})


def _scores(values: PerQuery, headline: str, judged: str, queries: pd.DataFrame, weighting: str,
            level: float, resamples: int, seed: int) -> pd.DataFrame:
    """Each run's mean of the headline with its interval, on the scale of its summary (a geometric mean's
    interval is taken on the logs and shown as geometric means)."""
    rows, rule = [], values.measures[headline].kind.summary
    for name in values.runs:
        analysed = values.analysed(name, headline)
        summary = stratified_summary(analysed, queries, weighting)
        interval = score_interval(analysed, queries, weighting, level=level, resamples=resamples, rng=generator(seed))
        estimate, low, high = (from_summary_scale(value, rule) for value in interval)
        rows.append({"run": name, "mean": estimate, "ci_low": low, "ci_high": high,
                     "defined": summary.defined, "undefined": summary.undefined,
                     "judged": float(values.column(name, judged).mean()),
                     **{f"stratum:{s}": from_summary_scale(v.mean, rule) for s, v in summary.strata.items()}})
    return pd.DataFrame(rows).set_index("run")


def _comparisons(frozen: FrozenSet, values: PerQuery, runs: Mapping[str, pd.DataFrame], headline: str, seed: int,
                 permutations: int, resamples: int, alpha: float, largest: int) -> list[PlannedComparison]:
    """The planned comparisons, each with what its verdict rests on as ``compare`` states it: judged@k and the
    holes' bound (:func:`evalset.comparing.compare.what_it_rests_on`)."""
    evaluation, tables = values.evaluation, values.tables
    measure = parse_measure(headline)
    policy, read = holes_policy(evaluation, measure, accept_holes=False), {}
    family = set_family(len(frozen.planned), frozen=frozen, split=evaluation.split)
    stratified = has_strata(evaluation.queries)  # the strata rule of compare: the headline on the set's weighting
    strata = evaluation.queries[["query_id", "stratum", "stratum_share"]] if stratified else None
    out = []
    for baseline, candidate in frozen.planned:
        absent = [name for name in (baseline, candidate) if name not in tables]
        if absent:
            out.append(PlannedComparison(baseline, candidate, note="run not given: " + ", ".join(absent)))
            continue
        base, cand = values.analysed(baseline, headline), values.analysed(candidate, headline)  # gm_ap: logs
        common = base.index.intersection(cand.index)
        note = "" if len(common) == len(base) == len(cand) else (
            f"{len(base.index.symmetric_difference(cand.index))} queries scored by one run only were left out")
        result = family.compare(base.loc[common], cand.loc[common], baseline_name=baseline, candidate_name=candidate,
                                metric=frozen.contract.headline, alpha=alpha, permutations=permutations, seed=seed,
                                bootstrap_resamples=resamples, largest=largest, strata=strata,
                                weighting=frozen.contract.weighting if stratified else "uniform",
                                split=evaluation.split)
        result, _ = what_it_rests_on(with_geometric_means(result, values, strata), values, runs,
                                     depth_of(measure, None), policy, strata, read=read)
        differences = (cand.loc[common] - base.loc[common]).dropna().sort_values(kind="stable")
        out.append(PlannedComparison(baseline, candidate, result, differences, note))
    return out


# ---------------------------------------------------------------------------------------------------- HTML
_STYLE = f"""
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; color: #222;
       max-width: {plots.PAGE_WIDTH_PX}px; line-height: 1.4; padding: 0 1em; }}
h1 {{ font-size: 1.6em; margin-bottom: 0.2em; }} h2 {{ border-bottom: 1px solid #ccc; margin-top: 2em; }}
table {{ border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }}
th, td {{ border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }}
th {{ background: #f4f4f4; }} td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
.meta {{ color: #555; font-size: 0.9em; }} .none {{ color: #8a6d3b; font-style: italic; }}
.{css_class(ESTABLISHED)} {{ color: #2d7a3e; font-weight: bold; }}
.{css_class(NOT_ESTABLISHED)} {{ color: #8a6d3b; font-weight: bold; }}
.{css_class(EXPLORATORY)} {{ color: #555; font-weight: bold; }}
.{css_class(NO_VERDICT)} {{ color: #a94442; font-weight: bold; }}
img {{ max-width: 100%; height: auto; display: block; margin: 0.5em 0; }}
.comparison {{ margin-bottom: 2em; }}
.box {{ max-width: 100%; overflow-x: auto; }} .box table {{ margin: 0.4em 0; }}
.stats {{ display: flex; flex-wrap: wrap; column-gap: 1.5em; }}
#summary h2 {{ margin-top: 0.6em; }} #summary p {{ margin: 0.5em 0; }} .best {{ font-weight: bold; }}
table.verdicts td {{ vertical-align: middle; }} td.pair {{ text-align: right; }}
td.pair span {{ white-space: nowrap; font-variant-numeric: tabular-nums; }}
"""


def _image(uri: str, alt: str) -> str:
    return f'<img src="{uri}" alt="{escaped(alt)}">'


def render_html(data: ReportData) -> str:
    """Lay the report out as one HTML page (UTF-8, no script, no external resource)."""
    frozen = data.frozen
    title = f"evalset report: {frozen.name} {frozen.version}"
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',  # no favicon request
        f"<title>{escaped(title)}</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
        f"<h1>{escaped(title)}</h1>",
        summary_section(data),  # the answers first: the verdicts, the best runs, what they rest on
        _comparisons_section(data),
        _scores_section(data),
        many_section(data.many, data.many_note),
        _section("estimates", estimates_section(data)),
        _set_section(data),
        _agreement_section(data.agreement, data.agreement_note),
        data.probes,
        f'<p class="meta">Made by evalset {escaped(__version__)}. Bootstrap: BCa, {data.settings["resamples"]} '
        f'resamples; permutation test: {data.settings["permutations"]} sign flips; seed {data.settings["seed"]}.</p>',
        "</body>", "</html>",
    ]
    return "\n".join(parts) + "\n"


def _section(name: str, html_text: str) -> str:
    """A section's HTML in an element a link can reach (``#name``); nothing when it is empty."""
    return f'<section id="{name}">\n{html_text}\n</section>' if html_text else ""


def _header(data: ReportData) -> str:
    frozen, manifest = data.frozen, data.frozen.manifest
    guideline = manifest.get("guideline") or {}
    contract = ", ".join(f"{k}={v}" for k, v in frozen.contract.to_dict().items())
    return (f'<p class="meta">Set <code>{escaped(frozen.path)}</code>, '
            f'created {escaped(manifest.get("created", "?"))}, '
            f'guideline {escaped(guideline.get("name", "?"))} v{escaped(guideline.get("version", "?"))} '
            f'(sha256 {escaped(str(guideline.get("sha256", ""))[:12])}). Split <b>{escaped(data.split)}</b>: '
            f"{len(data.queries)} queries; {data.settings['runs']} runs.<br>Contract: {escaped(contract)}.</p>")


def _set_section(data: ReportData) -> str:
    strata_rows = [[r.stratum, r.queries, r.judged_queries, r.judgments, f"{r.traffic_share:.3f}"]
                   for r in data.strata.itertuples()]
    grade_rows = [[r.grade, r.name, r.judgments] for r in data.grades.itertuples()]
    judged = data.scores["judged"].sort_values(ascending=False, kind="stable")
    return "\n".join([
        "<h2>The set</h2>",
        _header(data),
        "<h3>Queries per stratum</h3>",
        html_table(["stratum", "queries", "judged queries", "judgments", "traffic share"], strata_rows, {1, 2, 3, 4}),
        "<h3>Judgments per grade</h3>",
        html_table(["grade", "name", "judgments"], grade_rows, {0, 2}),
        _image(plots.bar_plot([f"{r.grade} {r.name}".strip() for r in data.grades.itertuples()],
                         data.grades["judgments"].tolist(), "judgments per grade", "judgments"),
               "bar chart of judgments per grade"),
        f"<h3>{escaped(data.judged_measure)} of the runs</h3>",
        f"<p>The share of each run's top {escaped(data.judged_measure.split('@')[1])} that has a judgment, averaged "
        "over the judged queries. Unjudged documents count as not relevant, so a low value means the score "
        "understates the run.</p>",
        _image(plots.strip_plot(judged, data.judged_measure), f"{data.judged_measure} of the runs"),
        f"<p>{escaped(data.judged_measure)} {judged_range(judged)}; the table of scores above gives it per run.</p>",
    ])


def _agreement_section(agreement: AgreementMatrix | None, note: str = "") -> str:
    if agreement is None:
        return f'<h2>Agreement</h2>\n<p class="none">{escaped(note or "No agreement data recorded.")}</p>'
    matrix = agreement.matrix
    rows = [[name, *(number(v, 3) for v in matrix.loc[name])] for name in matrix.index]
    parts = ["<h2>Agreement</h2>", f"<p>Pairwise {escaped(agreement.measure)} between annotators (1 on the diagonal; "
             "undef where undefined or not measured).</p>",
             _image(plots.heatmap(agreement.matrix, agreement.measure), f"heatmap of pairwise {agreement.measure}"),
             html_table(["annotator", *matrix.columns], rows, set(range(1, len(matrix.columns) + 1)))]
    if agreement.alpha_ordinal is not None:
        parts.append(f"<p>Krippendorff's alpha (ordinal), all annotators: {number(agreement.alpha_ordinal, 3)}</p>")
    if agreement.system_taus is not None:
        parts.append("<h3>Do the annotators rank systems alike?</h3>")
        parts.append(html_table(["a", "b", "runs", "Kendall's tau", "tau_AP"],
                            [[r.a, r.b, r.runs, number(r.kendall_tau, 3), number(r.tau_ap, 3)]
                             for r in agreement.system_taus.itertuples()], {2, 3, 4}))
    return "\n".join(parts)


def _scores_section(data: ReportData) -> str:
    scores = data.scores.sort_values("mean", ascending=False, kind="stable")
    strata = [c for c in scores.columns if c.startswith("stratum:")]
    weighting = data.frozen.contract.weighting
    level = data.settings["level"]
    letters, bounds = _groups(data.many)
    header = ["run", data.headline, f"{level:.0%} interval", "defined", "undefined", data.judged_measure]
    if len(strata) > 1:
        header += [c.split(":", 1)[1] for c in strata]
    rows = []
    for name, row in scores.iterrows():
        cells = [name, number(row["mean"]), f"[{number(row['ci_low'])}, {number(row['ci_high'])}]",
                 int(row["defined"]), int(row["undefined"]), f"{row['judged']:.3f}"]
        if len(strata) > 1:
            cells += [number(row[c]) for c in strata]
        rows.append(cells)
    averaging = ("traffic-weighted across strata (sum of share x stratum mean)" if weighting == "traffic"
                 else "the plain mean over queries")
    return "\n".join([
        "<h2>Scores per run</h2>",
        f"<p>{escaped(data.headline)}, {escaped(averaging)}, over the queries where it is defined; the interval is a "
        f"{level:.0%} BCa bootstrap over queries (resampled within their stratum).</p>",
        _image(plots.ranking_plot(scores, data.headline, level, letters, bounds),
               f"{data.headline} per run with intervals" + (" and its letter groups" if letters else "")),
        html_table(header, rows, set(range(1, len(header)))),
    ])


def _groups(many: ManyComparisons | None) -> tuple[dict[str, str] | None, dict[str, tuple[float, float]] | None]:
    """The letter groups and holes' ranges of the runs compared at once, by run (None: not compared)."""
    if many is None or not many.letters:
        return None, None
    return dict(zip(many.runs, many.letters, strict=True)), dict(many.bounds) or None


def _comparisons_section(data: ReportData) -> str:
    parts = ["<h2>Planned comparisons</h2>"]
    if not data.comparisons:
        parts.append('<p class="none">No planned comparison recorded in the set.</p>')
        return "\n".join(parts)
    texts = data.queries.set_index("query_id")["query"]
    for index, comparison in enumerate(data.comparisons, start=1):
        parts.append(f'<div class="comparison" id="comparison-{index}">')
        parts.append(f"<h3>{escaped(comparison.candidate)} vs {escaped(comparison.baseline)}</h3>")
        result = comparison.result
        if result is None:
            parts.append(f'<p class="none">Not shown: {escaped(comparison.note)}.</p></div>')
            continue
        parts.append(f'<p>Verdict: <span class="{verdict_class(result)}">{escaped(result.verdict)}</span></p>')
        parts.append(f'<p class="meta">Threshold: {result.threshold:.4g} = {escaped(result.family)}</p>')
        if result.hole_bound:
            parts.append(f'<p class="meta">Holes: {escaped(result.hole_bound["text"])}</p>')
        if comparison.note:
            parts.append(f'<p class="none">{escaped(comparison.note)}</p>')
        parts.append(_image(plots.difference_plot(comparison.differences, comparison.result),
                            f"per-query differences of {comparison.candidate} vs {comparison.baseline}"))
        parts.append('<div class="stats">' + html_table(
            ["queries", "undefined", "mean diff", "median diff", "wins/losses/ties", "effect size"],
            [[result.n, result.undefined, number(result.mean_difference, sign=True),
              number(result.median_difference, sign=True), f"{result.wins}/{result.losses}/{result.ties}",
              number(result.effect_size, 3)]], set(range(6))) + html_table(
            ["permutation p", "t-test p", f"BCa {result.ci_level:.1%} CI", "threshold"],
            [[f"{result.permutation_p:.4g}", f"{result.ttest_p:.4g}",
              f"[{number(result.ci_low, sign=True)}, {number(result.ci_high, sign=True)}]",
              f"{result.threshold:.4g}"]], set(range(4))) + "</div>")
        parts.append("<h4>Largest losses</h4>")
        if result.largest_losses:
            parts.append(html_table(
                ["query", "text", comparison.baseline, comparison.candidate, "difference"],
                [[loss["query_id"], texts.get(loss["query_id"], ""), number(loss["baseline"]),
                  number(loss["candidate"]), number(loss["difference"], sign=True)]
                 for loss in result.largest_losses], {2, 3, 4}))
        else:
            parts.append('<p class="none">The candidate loses on no query.</p>')
        parts.append("</div>")
    return "\n".join([*parts, _log_section(data)])


def _log_section(data: ReportData) -> str:
    """The comparisons the set's log holds on this version and split, each said counted in the family or not
    (:mod:`evalset.stats.family`: on a set with planned comparisons, the exploratory looks are not)."""
    title = f"<h3>The comparison log ({data.frozen.path.parent.name}/comparisons.jsonl, {data.split} split)</h3>"
    if not data.logged:
        return f'{title}\n<p class="none">No comparison logged on this version and split.</p>'
    planned = set(data.frozen.planned)
    rows = [[r["baseline"], r["candidate"], r["metric"], r.get("kind", ""), number(r.get("permutation_p")),
             "no: exploratory" if planned and (r["baseline"], r["candidate"]) not in planned else "yes",
             r.get("at", "")] for r in data.logged]
    return title + "\n" + html_table(["baseline", "candidate", "metric", "kind", "permutation p",
                                      "counted in the family", "at"], rows, {4})


def build_report(frozen: FrozenSet, runs: Mapping[str, pd.DataFrame], **options: Any) -> str:
    """The HTML report of ``frozen`` and ``runs`` (options as :func:`collect`)."""
    return render_html(collect(frozen, runs, **options))
