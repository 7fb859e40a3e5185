"""Does a sample of a frozen set's holes estimate the next system's full-judgment score? Leave-one-group-out on
fully judged data: each group of runs in turn is left out of the set's pool, its runs become new systems with
holes, and many seeded samples of their holes are estimated by the hole sample's design
(:mod:`evalset.estimate.documents.holes`) and held against the full judgments.

Conventions
-----------
- **The set without a group.** ``qrels`` are the full judgments; ``groups`` maps each run to its group (a
  participant, a team). For each group ``G`` the frozen set is ``qrels`` without the pairs only ``G``'s runs
  brought into the depth-``depth`` pool of the runs given (:func:`evalset.pooling.contributions.reduced_qrels`;
  the runs given are the pool and are checked as ``evalset reusability`` checks them). Each run ``R`` of ``G`` is
  then a new system on that set.
- **A run's design** (the hole sample's, :mod:`evalset.estimate.documents.holes`, design "run"): the runs are ``R`` and
  the best run outside ``G`` (the highest true mean of the first measure; the first by name on a tie), so that ``R``'s
  mean, the best run's and the difference ``R - best`` are estimated; the holes are those of the two runs' top ``depth``
  (:func:`~evalset.estimate.documents.holes.find_holes`; the best run, in the pool, has none the full judgments judge).
  The pool is the frozen set's judged pairs (``pi`` 1, their grades known) then the holes, each drawn with one inclusion
  probability: ``fraction``, or the run's own from ``fractions`` (a hook: given the run's holes and its prepared design,
  :class:`HoleDesign`, it returns run -> fraction). The pool is prepared once per run under
  :data:`~evalset.estimate.documents.rules.HOLE_SAMPLE` with :func:`~evalset.estimate.documents.holes.hole_strata` (its
  stratum "top": the judged pairs in the top k of the two runs); per draw the design's own steps
  (:meth:`~evalset.estimate.documents.estimate.DocumentPool.sample`, ``estimate``, ``floor``,
  :func:`~evalset.estimate.documents.estimate.mean_intervals`), the estimate and "this set"'s interval clipped to the
  measure's range as the estimate clips them. A drawn hole's human grade is its grade in ``qrels``.
- **Seeds.** Draw ``i`` of run ``R`` is :func:`~evalset.estimate.documents.sample.poisson_sample` of its holes (in
  the order query, document) with the ``i``-th of ``generator(seed, crc32(R)).integers(2**32, size=draws)``
  (:func:`evalset.seeds.generator`): a run's draws depend on the seed and its name, not on the other runs given.
  The same inputs give byte-identical output.
- **A hole no one judged** (in the top k, graded by no line of ``qrels``) has no grade to draw: it is left out of
  the design, where it scores as the truth scores it (unjudged), and counted in a note.
- **The truth** of a run is what a sample of its holes can reach: its mean over the design's queries on the set
  with its own holes judged (the frozen set's qrels and the full judgments' grades of the holes of ``R`` and the
  best run, which has none), from the evaluation room (:func:`evalset.evaluation.per_query_values`, the contract's
  conventions), never from the design's code; of the difference, the difference of the truths. Under the full
  ``qrels`` nDCG's ideal also counts the relevant pairs only ``G``'s other runs found, which no sample of ``R``'s
  holes holds: that gap, the full judgments' score minus the truth, is the row's **completeness** (the pool's, not
  the estimator's; DL19: at most 0.0021). The **frozen-only error** is the run's score on the frozen set (also the
  evaluation room's) minus the truth.
- **Reported** (:class:`~evalset.estimate.simulate.Validation`) per run, measure and kind (``means``: its mean;
  ``differences``: ``R - best``), in its ``columns``: its holes, fraction and mean share drawn, the truth, the
  completeness, the bias (mean error over the draws), the RMSE, the coverage of "this set"'s interval (the share of
  draws holding the truth, within :data:`~evalset.estimate.simulate.TOLERANCE`) and its mean width, each with its
  Monte Carlo error, ``se_ratio`` (the mean standard error of the draws over their estimates' spread), the best
  run's bias in the same design (``best_bias``, ``best_bias_mc``: its numerator is known, its ideal estimated) and the
  frozen-only error. Its ``table`` is every design's summary (:func:`~evalset.estimate.simulate.summarize`:
  coverage and width over the runs with a hole, bias and RMSE over every run); ``beside``, per measure and kind over
  the runs with a hole: the mean share drawn and the share weighted by holes (all holes drawn over all holes), the
  median and least ``se_ratio``, the bias test (the sum of the squared ``bias / bias_mc`` and its chi-square
  p-value on as many degrees of freedom as runs), the largest ``|bias|`` over the draws' spread, the best run's
  largest ``|bias| / bias_mc``, the worst RMSE (and its run; over every run), the largest coverage, the runs
  covering under :data:`COVERAGE_CARE`, the frozen-only RMSE (its mean over the runs, as the table's RMSE is
  the mean of the runs' RMSEs: a frozen-only error is the same in every draw, its RMSE its size) and the largest
  completeness gap over the runs. Where no hole moves the best run's estimate (P@10: it has none), a paired
  difference is its run's estimate less a known score: a note says its figures repeat the run means'.
- **A run without a hole** (its top k judged in full on the set without its group) is said in a note: its
  estimate is the set's own score, drawn never; its error (the frozen-only one) counts in the RMSE, and it is left
  out of the coverage, width and share figures.
- Bad input is one :class:`~evalset.errors.InputError`: a run without a group (naming the groups' source,
  their ``attrs["source"]``), runs of fewer than 2 groups, a pair ``qrels`` judge without an LLM grade (the first
  named, before any draw), no run of any group with a hole, a fraction outside (0, 1), both or neither of
  ``fraction`` and ``fractions``, a group to leave out without a run given. A query a run lacks follows the
  missing-queries rule (:class:`evalset.estimate.inputs.Missing`): refused unless chosen, ``zero`` scores it 0 (a
  note), ``skip`` is refused (a simulation's truths are over every query).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_SEED, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.estimate import DocumentPool, mean_intervals, prepare_pool
from evalset.estimate.documents.holes import hole_strata
from evalset.estimate.documents.holesizing import shares, unit_variances
from evalset.estimate.documents.rules import HOLE_SAMPLE
from evalset.estimate.documents.sample import poisson_sample
from evalset.estimate.inputs import chosen_conventions, missing_rule, query_values, refuse_skip
from evalset.estimate.simulate import KINDS, Drawn, Validation, coverage_error, simulate, summarize
from evalset.evaluation import Evaluation, PerQuery, per_query_values
from evalset.holes.find import Holes, find_holes, judged_pairs
from evalset.io.samplerecord import refuse_ungraded
from evalset.metrics.documents import DocumentTerms, document_terms
from evalset.params import DEPTH, POSITIVE_NUMBER, PROBABILITY, RESAMPLES, SEED, check, validate_params
from evalset.pooling.contributions import pool_of_runs, reduced_qrels, unique_contributions
from evalset.render import number, text_table
from evalset.seeds import generator
from evalset.stats.quantiles import around, chi_square_tail

MEASURES = ("ndcg@10", "P(rel=2)@10")
"""The measures by default: nDCG@10 and precision at 10 counting grades 2 and up (DL19's binary relevance)."""
COVERAGE_CARE = 0.94
"""A run's coverage under this is counted (0.95 nominal, less about one Monte Carlo error at 500 draws, 0.0097)."""
RULES = {"depth": DEPTH, "fraction": PROBABILITY, "draws": RESAMPLES, "seed": SEED, "level": PROBABILITY}
"""The parameters' rules of :func:`simulate_holes`."""


@dataclass(frozen=True)
class HoleDesign:
    """A run's design, as a per-run fraction rule is handed it: the run, its group and the best run beside it, the
    prepared pool (pairs: the set's judged pairs then the holes; its rules, strata and judges), ``known`` each
    pair's grade where the set knows it (0 for a hole), ``hole`` which pairs are holes, the measures, the scale."""

    group: str
    run: str
    best: str
    pool: DocumentPool
    known: np.ndarray
    hole: np.ndarray
    measures: tuple[DocumentTerms, ...]
    scale: np.ndarray


FractionRule = Callable[[Holes, HoleDesign], Mapping[str, float]]
"""A per-run fraction: given a run's holes and its design, run -> the share of its holes each draw takes."""


def sized_by(precision: float) -> FractionRule:
    """The fraction rule of ``estimate select holes --precision`` (:mod:`evalset.estimate.documents.holesizing`): each
    run's share for ``precision``, predicted from its design before any hole is drawn."""
    precision = check("precision", precision, POSITIVE_NUMBER)

    def rule(holes: Holes, design: HoleDesign) -> Mapping[str, float]:
        unit = unit_variances(design.pool, design.known, design.hole, design.measures, design.scale)
        count = holes.per_run.set_index("run")["holes"].reindex(design.pool.names).fillna(0).to_numpy()
        return dict(zip(design.pool.names, shares(unit, count, precision)["fraction"], strict=True))

    rule.text = f"each run's share of its holes sized for a standard error of {precision:g}"
    return rule


@validate_params(RULES)
def simulate_holes(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, llm: pd.DataFrame | None,
                   groups: Mapping[str, str], *, depth: int = 10, fraction: float | None = None,
                   fractions: FractionRule | None = None, draws: int = 500, seed: int = DEFAULT_SEED,
                   measures: Sequence[str] = MEASURES, contract: EvaluationContract | None = None,
                   level: float = 0.95, progress: Callable[[Iterable], Iterable] = iter,
                   chosen: Collection[str] | None = None, sources: Mapping[str, object] | None = None,
                   left_out: Collection[str] | None = None) -> Validation:
    """Leave each group of ``runs`` out of the pool of the full judgments ``qrels`` and estimate each of its runs
    from ``draws`` samples of its holes (module docstring); ``llm`` (``query_id, doc_id, judge, grade`` of every
    pair ``qrels`` judge; ``None``: Horvitz-Thompson's estimator), ``groups`` run -> group, ``left_out`` the
    groups left out in turn (default every one; the pool is every run's), ``progress`` wraps the runs (group by
    group)."""
    if (fraction is None) == (fractions is None):
        raise InputError("give one of a fraction of each run's holes or a rule giving each run its fraction")
    chosen = chosen_conventions(contract, chosen)
    contract = contract or EvaluationContract()
    parsed = tuple(document_terms(m, contract) for m in measures)
    names = [str(name) for name in runs]
    owner = _owners(names, groups)
    full = judged_pairs(qrels).sort_values(["query_id", "doc_id"], ignore_index=True)
    llm = None if llm is None else _llm_of(llm, full)
    keys = pd.MultiIndex.from_frame(full[["query_id", "doc_id"]])
    grade_of = pd.Series(full["grade"].to_numpy(dtype=np.int64), index=keys)
    query_ids = sorted(full["query_id"].unique())
    missing = refuse_skip(missing_rule(query_values(runs, full, query_ids, "p@1", contract, chosen), query_ids,
                                       sources))
    scale = np.union1d(full["grade"].to_numpy(dtype=np.int64), [0] if llm is None else
                       np.union1d(llm["grade"].to_numpy(dtype=np.int64), [0]))
    spellings = [str(terms) for terms in parsed]
    scored = per_query_values(Evaluation.on_qrels(full, contract), runs, spellings)
    first = {name: float(scored.column(name, spellings[0]).reindex(query_ids).mean()) for name in names}
    unique = unique_contributions(pool_of_runs(runs, qrels, depth, contract.ties).top, owner)
    frozen = reduced_qrels(qrels, unique, _left_out(owner, left_out))
    order = sorted((name for name in names if owner[name] in frozen), key=lambda name: (owner[name], name))
    rows, notes, unjudged = [], [], set()
    best_of = {group: max(sorted(n for n in names if owner[n] != group), key=lambda n: first[n])
               for group in frozen}
    frozen_scores = {group: per_query_values(Evaluation.on_qrels(frozen[group], contract),
                                             {n: runs[n] for n in (best_of[group], *_members(order, owner, group))},
                                             spellings) for group in frozen}
    for name in progress(order):
        group = owner[name]
        best = best_of[group]
        pair = {best: runs[best], name: runs[name]}
        holes = find_holes(frozen[group], pair, depth, contract.ties, empty_ok=True)
        hole_keys = pd.MultiIndex.from_frame(holes.holes[["query_id", "doc_id"]])
        judged = hole_keys.isin(keys)
        unjudged |= set(zip(holes.holes["query_id"][~judged], holes.holes["doc_id"][~judged], strict=True))
        kept = holes.holes[judged].reset_index(drop=True)
        pairs = pd.concat([holes.judged[["query_id", "doc_id"]], kept[["query_id", "doc_id"]]], ignore_index=True)
        pool = prepare_pool(pairs, llm, pair, contract, HOLE_SAMPLE, hole_strata(pairs, holes))
        hole = np.r_[np.zeros(len(holes.judged), bool), np.ones(len(kept), bool)]
        known = np.r_[holes.judged["grade"].to_numpy(dtype=np.int64), np.zeros(len(kept), np.int64)]
        hole_grades = grade_of.reindex(pd.MultiIndex.from_frame(kept[["query_id", "doc_id"]])).to_numpy(np.int64)
        own = pd.concat([frozen[group][["query_id", "doc_id", "grade"]],
                         kept[["query_id", "doc_id"]].assign(grade=hole_grades)])
        reachable = per_query_values(Evaluation.on_qrels(own, contract), pair, spellings)
        truth = {t: _means(reachable, t, [best, name], pool.query_ids) for t in spellings}
        full = {t: _means(scored, t, [best, name], pool.query_ids) for t in spellings}
        base = {t: _means(frozen_scores[group], t, [best, name], pool.query_ids) for t in spellings}
        facts = {"group": group, "run": name, "best": best, "holes": len(kept)}
        if not len(kept):
            notes.append(f"note: {name} ({group}) has no hole in its top {depth} on the set without its group: its "
                         "estimate is the set's own score (no draw); its error counts in the RMSE, and it is left "
                         "out of the coverage, width and share figures")
            rows += [_row(facts, t, kind, truth[t], full[t], base[t], None) for t in spellings for kind in KINDS]
            continue
        design = HoleDesign(group, name, best, pool, known, hole, parsed, scale)
        share = fraction if fractions is None else fractions(holes, design)[name]
        share = check(f"the fraction of {name}'s holes", share, PROBABILITY)
        grades = known.copy()
        grades[hole] = hole_grades
        seeds = generator(seed, zlib.crc32(name.encode())).integers(2 ** 32, size=draws)
        drawn = _draws(replace(design, known=grades), share, seeds, level, truth)
        rows += [_row({**facts, "fraction": share}, t, kind, truth[t], full[t], base[t], drawn)
                 for t in spellings for kind in KINDS]
    per_run = pd.DataFrame(rows)
    if not (per_run["holes"] > 0).any():
        raise InputError(f"no run of any group has a hole in its top {depth} on the set without its group: every "
                         "pair is judged, nothing to simulate")
    if unjudged:
        notes.append(f"note: {len(unjudged):,} {'hole' if len(unjudged) == 1 else 'holes'} in the runs' top "
                     f"{depth} {'is' if len(unjudged) == 1 else 'are'} judged by no line of the full judgments "
                     "either: no grade to draw; left out of the designs, scored as the truth scores it (unjudged)")
    for measure, means in per_run[(per_run["kind"] == "means") & (per_run["holes"] > 0)].groupby("measure", sort=False):
        if draws > 1 and (means["best_bias_mc"] == 0).all():
            notes.append(f"note: {measure}'s paired differences repeat its run means: no hole moves the best run's "
                         "estimate (the same in every draw), so a difference's coverage and width are its run's")
    notes.append(f"note: a coverage over {draws} draw{'s' if draws > 1 else ''} is within about "
                 f"{2 * coverage_error(0.95, draws):.3f} of the rate (two Monte Carlo errors at 0.95)")
    settings = {"draws": draws, "seed": seed, "level": level, "depth": depth, "fraction": fraction,
                "fractions": None if fractions is None else getattr(fractions, "text", "each run's fraction"),
                "groups": len(frozen), "runs": len(order), "holes": int(per_run.drop_duplicates("run")["holes"].sum()),
                "queries": len(query_ids), "measures": spellings, "judges": [] if llm is None else
                sorted(llm["judge"].unique()), "estimator": "Horvitz-Thompson, no LLM" if llm is None else
                "calibrated LLM: " + ", ".join(sorted(llm["judge"].unique())), "design": HOLE_SAMPLE.name,
                "this_set": HOLE_SAMPLE.this_set, "contract": contract.to_dict(),
                "best": {group: best_of[group] for group in sorted(frozen)}}
    beside = _beside(per_run)
    return Validation("holes", _heading(settings), summarize(per_run, {"set": '"this set"'}), per_run, beside,
                      _said(beside, per_run), settings, [*missing.notes(), *notes])


def _members(order: Sequence[str], owner: Mapping[str, str], group: str) -> list[str]:
    """The runs of ``group``, in ``order``."""
    return [name for name in order if owner[name] == group]


def _owners(names: Sequence[str], groups: Mapping[str, str]) -> dict[str, str]:
    """Run -> group for every run given; a run without one refused, naming the groups' source."""
    source = getattr(groups, "attrs", {}).get("source")
    given = {str(run): str(group) for run, group in dict(groups).items()}
    lacking = [name for name in names if name not in given]
    if lacking:
        such = "1 such run" if len(lacking) == 1 else f"{len(lacking)} such runs"
        raise InputError(f"run {lacking[0]} has no group ({such}): give every run's group", source)
    owner = {name: given[name] for name in names}
    if len(set(owner.values())) < 2:
        raise InputError(f"the runs are of {len(set(owner.values()))} group: leaving a group out needs runs of at "
                         "least 2 groups (the best run outside the group is compared)", source)
    return owner


def _left_out(owner: Mapping[str, str], left_out: Collection[str] | None) -> list[str]:
    """The groups left out in turn, sorted: ``left_out`` (each with a run given), default every one."""
    every = sorted(set(owner.values()))
    unknown = sorted(set(left_out or ()) - set(every))
    if unknown:
        raise InputError(f"no run of the group {unknown[0]} to leave out (groups: {', '.join(every)})")
    return every if left_out is None else sorted(set(left_out))


def _llm_of(llm: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """The LLM grades of the judged pairs, each judge checked to grade every one (the first missing named)."""
    source = str(llm.attrs.get("source", "llm"))
    missing = [c for c in ("query_id", "doc_id", "judge", "grade") if c not in llm.columns]
    if missing:
        raise InputError(f"the LLM grades lack the column(s) {', '.join(missing)}", source)
    llm = llm.assign(query_id=llm["query_id"].astype(str), doc_id=llm["doc_id"].astype(str),
                     judge=llm["judge"].astype(str))
    for judge, rows in llm.groupby("judge", sort=True):
        refuse_ungraded(full, rows, f"judge {judge}", source)
    inside = pd.MultiIndex.from_frame(llm[["query_id", "doc_id"]]).isin(
        pd.MultiIndex.from_frame(full[["query_id", "doc_id"]]))
    return llm[inside].reset_index(drop=True)


def _means(scored: PerQuery, measure: str, names: Sequence[str], query_ids: Sequence[str]) -> np.ndarray:
    """The runs' means of ``measure`` over ``query_ids`` (undefined queries left out, as a score does): the best
    run's, the run's, and the difference of the run minus the best."""
    best, run = (float(scored.column(name, measure).reindex(list(query_ids)).mean()) for name in names)
    return np.array([best, run, run - best])


def _draws(design: HoleDesign, fraction: float, seeds: np.ndarray, level: float,
           truth: Mapping[str, np.ndarray]) -> dict[str, pd.DataFrame]:
    """Per measure the figures (the one simulation, :func:`~evalset.estimate.simulate.simulate`) of the clipped
    estimates and "this set" ends of the run's mean and of the difference against their ``truth``, each row with the
    mean share of the holes the draws took (``share``; module docstring)."""
    pool, hole = design.pool, design.hole
    pi = np.where(hole, fraction, 1.0)
    uniform = np.full(int(hole.sum()), fraction)
    limits = {}
    for terms in design.measures:
        low, high = terms.bounds(design.scale, pool.ranking(terms.ranking).depth)
        limits[str(terms)] = (np.array([low, low, low - high]), np.array([high, high, high - low]))

    def simulate_one(draw_seed: int) -> dict[str, Drawn]:
        drawn = poisson_sample(uniform, int(draw_seed))
        sampled = ~hole
        sampled[hole] = drawn
        sample = pool.sample(pi, sampled, np.where(sampled, design.known, 0), design.scale)
        found = {}
        for terms in design.measures:
            values, z, answered = pool.estimate(terms, sample)
            columns = mean_intervals(values, z, sample.variance_factor, pi, level, [(0, 1)], answered, sample.query,
                                     pool.floor(terms, sample), pool.rules)
            centre = columns["estimate"]
            low, high = limits[str(terms)]
            estimate, *ends = np.clip([centre, *around(centre, columns["se_set"], columns["z"])], low, high)
            found[str(terms)] = (estimate, {"set": tuple(ends)}, {"share": drawn.mean(), "se_set": columns["se_set"]})
        return found

    return {measure: tally.figures().assign(share=tally.extra("share").mean(), se_ratio=tally.se_ratio("se_set"))
            for measure, tally in simulate(simulate_one, seeds, truth).items()}


def _row(facts: dict[str, Any], measure: str, kind: str, truth: np.ndarray, full: np.ndarray, frozen: np.ndarray,
         drawn: dict[str, pd.DataFrame] | None) -> dict[str, Any]:
    """One per-run row (module docstring); ``drawn`` None: a run without a hole, estimated as the set scores it."""
    at = 1 if kind == "means" else 2
    error = float(frozen[at] - truth[at])
    row = {**facts, "fraction": facts.get("fraction", np.nan), "measure": measure, "kind": kind,
           "name": facts["run"] if kind == "means" else f"{facts['run']} - {facts['best']}", "truth": float(truth[at]),
           "completeness": float(full[at] - truth[at])}
    if drawn is None:
        return {**row, "share": np.nan, "mean_estimate": float(frozen[at]), "bias": error, "bias_mc": 0.0,
                "rmse": abs(error), "rmse_mc": 0.0, "coverage_set": np.nan, "coverage_set_mc": np.nan,
                "width_set": np.nan, "width_set_mc": np.nan, "se_ratio": np.nan, "best_bias": np.nan,
                "best_bias_mc": np.nan, "frozen_error": error}
    figures, best = drawn[measure].iloc[at], drawn[measure].iloc[0]
    return {**row, "share": float(figures["share"]), "mean_estimate": float(figures["estimate_mean"]),
            **{key: float(figures[key]) for key in ("bias", "bias_mc", "rmse", "rmse_mc", "coverage_set",
                                                     "coverage_set_mc", "width_set", "width_set_mc", "se_ratio")},
            "best_bias": float(best["bias"]), "best_bias_mc": float(best["bias_mc"]), "frozen_error": error}


def _beside(per_run: pd.DataFrame) -> pd.DataFrame:
    """The design's own figures per measure and kind over the runs (module docstring)."""
    rows = []
    for (measure, kind), runs in per_run.groupby(["measure", "kind"], sort=False):
        drawn = runs[runs["holes"] > 0]
        worst = runs.loc[runs["rmse"].idxmax()]
        z = drawn["bias"] / drawn["bias_mc"]
        spread = np.sqrt(np.maximum(drawn["rmse"] ** 2 - drawn["bias"] ** 2, 0.0))
        statistic = float((z ** 2).sum())
        rows.append({"measure": measure, "kind": kind, "runs": len(runs), "with_holes": len(drawn),
                     "share": float(drawn["share"].mean()),
                     "share_weighted": float((drawn["share"] * drawn["holes"]).sum() / drawn["holes"].sum()),
                     "se_ratio_median": float(drawn["se_ratio"].median()),
                     "se_ratio_min": float(drawn["se_ratio"].min()),
                     "bias_chi2": statistic, "bias_p": chi_square_tail(statistic, len(drawn)),
                     "bias_sd_max": float((drawn["bias"].abs() / spread).max()),
                     "best_z_max": float(np.abs(np.divide(drawn["best_bias"], drawn["best_bias_mc"],
                                                          out=np.zeros(len(drawn)),
                                                          where=drawn["best_bias_mc"] > 0)).max()),
                     "rmse_worst": float(worst["rmse"]), "rmse_worst_run": worst["run"],
                     "coverage_max": float(drawn["coverage_set"].max()),
                     "below": int((drawn["coverage_set"] < COVERAGE_CARE).sum()),
                     "frozen_rmse": float(runs["frozen_error"].abs().mean()),
                     "completeness_max": float(runs["completeness"].abs().max())})
    return pd.DataFrame(rows)


def _heading(s: dict[str, Any]) -> tuple[str, ...]:
    share = f"{s['fraction']:.0%} of each run's holes" if s["fraction"] is not None else s["fractions"]
    return (f"leave-one-group-out: {s['draws']} draws of {share} ({s['groups']} groups, {s['runs']} runs, "
            f"{s['holes']:,} holes in their top {s['depth']}, {s['queries']} queries; seed {s['seed']}; "
            f"{s['estimator']}); \"this set\" at level {s['level']:.4g}; truth: each run's score on the set with its "
            "own holes judged (completeness: the full judgments' score minus it)",
            "paired differences: each run minus the best run outside its group; columns: the runs with a hole (bias "
            "and RMSE: every run)")


def _said(beside: pd.DataFrame, per_run: pd.DataFrame) -> tuple[str, ...]:
    header = ["measure", "kind", "runs (with holes)", "share (by holes)", "SE/spread median (min)",
              "bias: sum z^2 (p)", "|bias|/sd max", "best |z| max", "worst RMSE", "coverage max",
              f"< {COVERAGE_CARE:g}", "frozen-only RMSE", "completeness max"]
    rows = [[row.measure, KINDS[row.kind], f"{row.runs} ({row.with_holes})",
             f"{number(row.share, 3)} ({number(row.share_weighted, 3)})",
             f"{number(row.se_ratio_median, 2)} ({number(row.se_ratio_min, 2)})",
             f"{number(row.bias_chi2, 1)} ({number(row.bias_p, 2)})", number(row.bias_sd_max, 2),
             number(row.best_z_max, 1) if row.kind == "means" else "-",
             f"{number(row.rmse_worst, 4)} {row.rmse_worst_run}", number(row.coverage_max, 3), row.below,
             number(row.frozen_rmse, 4), number(row.completeness_max, 4)] for row in beside.itertuples()]
    lines = text_table([header, *rows])
    for (measure, kind), rows in per_run.groupby(["measure", "kind"], sort=False):
        low = rows[rows["coverage_set"] < COVERAGE_CARE].sort_values(["coverage_set", "run"])
        if len(low):
            lines.append(f"under {COVERAGE_CARE:g}: {measure} {KINDS[kind]}: " + ", ".join(
                f"{row.run} {number(row.coverage_set, 3)} ({row.holes} holes)" for row in low.itertuples()))
    return tuple(lines)
