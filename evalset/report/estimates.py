"""The report's estimates from LLM grades and the human slice (PPI++, :mod:`evalset.estimate`), for a set with an
LLM-graded part.

Conventions
-----------
- A set has an **LLM-graded part** on a split when its labels hold LLM labels (kind ``llm``) and some queries of
  the split have LLM grades and no human grade. The estimate is then about the split's LLM-graded queries; those of
  them with a human grade are the **slice**, taken *as frozen* (design ``as frozen``): the set does not record how
  they were chosen, and the estimate holds only if they are a random slice of the LLM-graded queries.
- No estimate (``None``): no LLM label, fewer than 2 human-graded queries among the LLM-graded ones, or no
  LLM-graded query without a human grade (the humans graded everything the LLM did: their mean is the score).
- The grades are the set's labels (``labels.tsv``) as ``evalset estimate --human/--llm`` reads them: per pair the
  lower median of its human labels, and of its LLM labels (:func:`evalset.estimate.grades_of`). Human-graded
  queries of the split without an LLM grade are left out of the estimate, and counted in its notes.
- Strata: the set's strata and traffic shares when it weights by traffic; one stratum when it weights uniformly.
- The set's headline metric and evaluation contract; the planned comparisons whose runs were given, each at the
  threshold of the set's comparison family on the split (as the page's permutation tests); the report's ``alpha``
  and ``level``; Student's t intervals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalset.estimate import Estimate, SliceRecord, check_coverage, estimate_runs, grades_of
from evalset.estimate.core import WEIGHTED
from evalset.render import number
from evalset.sets import FrozenSet, select_split
from evalset.stats.family import ComparisonFamily

if TYPE_CHECKING:
    from evalset.report import ReportData

DESIGN = "as frozen"


def set_slice(frozen: FrozenSet, split: str = "test") -> SliceRecord | None:
    """The slice record of the set's LLM-graded part on ``split`` (module docstring), or ``None``."""
    queries = select_split(frozen.queries, split)
    labels = frozen.labels[frozen.labels["query_id"].isin(queries["query_id"])]
    llm_graded = set(labels.loc[labels["kind"] == "llm", "query_id"])
    human_graded = set(labels.loc[labels["kind"] == "human", "query_id"])
    in_slice = sorted(llm_graded & human_graded)
    if len(in_slice) < 2 or not llm_graded - human_graded:
        return None
    table = queries[queries["query_id"].isin(llm_graded)][["query_id", "stratum", "stratum_share"]]
    if frozen.contract.weighting == "uniform":
        table = table.assign(stratum="all", stratum_share=1.0)
    table = table.sort_values(["stratum", "query_id"], kind="stable").reset_index(drop=True)
    source = {"set": str(frozen.path), "split": split,
              "drawn": "not recorded: the set's human-graded queries are taken as the random slice"}
    return SliceRecord(DESIGN, 0, table, tuple(in_slice), {}, source)


def set_estimate(frozen: FrozenSet, runs: Mapping[str, pd.DataFrame], *, split: str = "test", alpha: float = 0.05,
                 level: float = 0.95) -> Estimate | None:
    """The PPI++ estimates of ``runs`` on the set's LLM-graded part of ``split`` (module docstring), or ``None``
    when it has none. Raises :class:`~evalset.errors.InputError` when it has one but no estimate can be made
    (a stratum with fewer than 2 human-graded queries, ppi_py not installed)."""
    record = set_slice(frozen, split)
    if record is None:
        return None
    files = (str(frozen.path / "labels.tsv"),)
    labels = frozen.labels.assign(file=files[0])
    every = set(record.queries["query_id"])
    human = grades_of(labels[(labels["kind"] == "human") & labels["query_id"].isin(record.slice)], files)
    llm = grades_of(labels[(labels["kind"] == "llm") & labels["query_id"].isin(every)], files)
    notes = check_coverage(human, llm, sorted(every), record.slice)
    split_ids = select_split(frozen.queries, split)["query_id"]
    human_only = set(labels.loc[(labels["kind"] == "human") & labels["query_id"].isin(split_ids), "query_id"]) - every
    if human_only:
        notes.append(f"{len(human_only)} human-graded queries of the split have no LLM grade and were left out")
    pairs = [pair for pair in frozen.planned if set(pair) <= set(runs)]
    family = ComparisonFamily.of(len(frozen.planned), frozen=frozen, split=split)
    return estimate_runs(runs, human, llm, record, metrics=[frozen.contract.headline],
                         contract=frozen.contract.evaluation, pairs=pairs, family=family, alpha=alpha, level=level,
                         notes=notes)


def _interval(row: Any, centre: str, prefix: str = "", sign: bool = False) -> str:
    return (f"{number(row[centre], sign=sign)} [{number(row[prefix + 'low'], sign=sign)}, "
            f"{number(row[prefix + 'high'], sign=sign)}]")


def estimates_section(data: ReportData) -> str:
    """The page's section of the estimates: nothing without an LLM-graded part, the reason when it has no
    estimate."""
    from evalset.report import _e, _table  # the page's helpers (this module loads before them)

    estimate, title = data.estimate, "<h2>Estimates from LLM grades and the human slice (PPI++)</h2>"
    if estimate is None:
        return f'{title}\n<p class="none">{_e(data.estimate_note)}</p>' if data.estimate_note else ""
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
        f"too. Per run, {_e(data.headline)}: the <b>human-only</b> mean of the human-graded queries with its "
        f"{level:.0%} Student's t interval; the <b>PPI++</b> estimate of the mean over all {settings['queries']} "
        "queries, the LLM grades of every query corrected by the human grades of the slice (prediction-powered "
        "inference, ppi_py), with its interval; the <b>LLM-only</b> mean (biased, so no interval); and the "
        "<b>effective n</b>, the number of human-graded queries the PPI++ interval is worth"
        f"{' (per stratum, then traffic-weighted)' if stratified else ''}. Assumption: the human-graded queries "
        "are taken as a random slice of the LLM-graded ones; the set does not record how they were chosen, and "
        "if they were not drawn at random the human-only and PPI++ figures are biased.</p>"),
        _table([*(["stratum (human-graded of all)"] if stratified else []), "run", "human-only" if stratified else
                f"human-only ({settings['slice']} q)", "PPI++" if stratified else f"PPI++ ({settings['queries']} q)",
                "LLM-only", "effective n"], rows,
               set(range(int(stratified) + 1, int(stratified) + 5)))]
    if pairs:
        parts += ["<h3>Planned comparisons, PPI++</h3>", "<p>Candidate minus baseline per query; the intervals are "
                  "at level 1 - threshold of the set's family; established when the PPI++ interval excludes 0.</p>",
                  _table(["comparison", "level", "human-only [interval]", "PPI++ [interval]", "LLM-only",
                          "effective n", "verdict"], pairs, {1, 2, 3, 4, 5})]
    return "\n".join(parts + [f'<p class="none">{_e(note)}</p>' for note in estimate.notes])
