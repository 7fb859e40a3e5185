"""Comparing runs: the first run (the baseline) against each other one on one metric, in the comparison family
(:mod:`evalset.stats.family`: planned or exploratory, the Bonferroni threshold, on a set the comparison log), from
the per-query values of the evaluation room.

Conventions
-----------
- **What a verdict rests on** is stated beside it: both runs' ``judged@k`` (k: the metric's cutoff, or the
  depth given), the judged queries a run lacks, the undefined queries left out, the strata, the threshold.
- **Holes.** When either run's top k holds unjudged documents, their bound is computed
  (:func:`evalset.holes.comparison.comparison_bounds`: the difference under fills of the holes). An *established*
  verdict that a fill could flip becomes ``not established: N unjudged documents in the candidate's top k could
  flip it``. Two ways keep the verdict as judged, and the output says so: ``accept_holes`` (``--accept-holes``),
  or the contract's ``unjudged = condensed`` (the verdict then rests on the judged documents only). A metric
  without cutoff (``ap``, ``rr``, ``ndcg``) reads the whole ranking: its holes are bounded at ``depth`` when given,
  else at :data:`~evalset.contract.DEFAULT_HOLES_DEPTH` (TREC's usual pool depth; a set records no pool depth),
  and the output says which.
- **Missing queries.** A judged query absent from a run is refused (:class:`~evalset.errors.InputError` naming the
  run and the count) unless the contract's ``missing`` was chosen explicitly (``-c missing=zero``: they score 0;
  ``-c missing=skip``: they are left out of that comparison); then each comparison says how many.
- **Strata.** On a set with strata (or given ``strata``: ``query_id, stratum, stratum_share``), each stratum's
  difference is reported and the headline is on the set's weighting (traffic or uniform; given strata: traffic),
  as :func:`evalset.stats.paired.compare_paired` computes it.
- **Splits.** On a set's dev split every comparison is exploratory: the dev split is for tuning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from evalset.comparing.setlog import record_comparison, refuse_unlogged, set_family
from evalset.comparing.spec import CompareSpec
from evalset.errors import InputError
from evalset.evaluation import (
    Evaluation,
    PerQuery,
    input_notes,
    judged_count,
    missing_queries,
    per_query_values,
    unusual_grades_note,
)
from evalset.evaluation.values import Runs
from evalset.holes.comparison import ComparisonBounds, comparison_bounds
from evalset.holes.find import depth_of
from evalset.io.queries import read_queries, stratum_shares
from evalset.io.trec import expand_run_paths, read_run
from evalset.metrics import Measure, parse_measure
from evalset.params import settings_of
from evalset.render import number
from evalset.stats.paired import Comparison
from evalset.stats.strata import from_summary_scale, has_strata, query_weights
from evalset.stats.verdicts import HoleBound


@dataclass(frozen=True)
class Comparisons:
    """The comparisons of a baseline with each candidate, the per-query values they rest on, and each one's holes
    (None where not bounded). ``strata`` are the strata used (None without), ``notes`` lines for stderr."""

    results: list[Comparison]
    per_query: PerQuery
    holes: list[ComparisonBounds | None] = field(default_factory=list)
    strata: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def evaluation(self) -> Evaluation:
        return self.per_query.evaluation

    def weights(self, result: Comparison) -> pd.Series | None:
        """The per-query weights of ``result``'s headline (None: uniform)."""
        return _headline_weights(self.per_query, result, self.strata)

    def to_dict(self) -> list[dict[str, Any]]:
        """The JSON of ``compare``: one object per comparison, with its ``holes`` where they were bounded."""
        bounds = self.holes or [None] * len(self.results)
        return [result.to_dict() | ({"holes": bound.to_dict()} if bound is not None else {})
                for result, bound in zip(self.results, bounds, strict=True)]

    def to_frame(self) -> pd.DataFrame:
        """The verdict table: one row per comparison (``baseline, candidate, metric``, each run's mean, the
        ``difference`` and its interval, the permutation ``p`` and the ``threshold``, judged@k of each run, the
        ``holes`` in either top k where bounded, the ``verdict``), as ranx's and PyTerrier's tables read."""
        rows = []
        bounds = self.holes or [None] * len(self.results)
        for result, bound in zip(self.results, bounds, strict=True):
            judged = result.judged_at_k or {}
            rows.append({"baseline": result.baseline, "candidate": result.candidate, "metric": result.metric,
                         "baseline_mean": self.per_query.summary(result.baseline, result.metric).mean,
                         "candidate_mean": self.per_query.summary(result.candidate, result.metric).mean,
                         "difference": result.mean_difference, "ci_low": result.ci_low, "ci_high": result.ci_high,
                         "p": result.permutation_p, "threshold": result.threshold,
                         "judged_baseline": judged.get("baseline"), "judged_candidate": judged.get("candidate"),
                         "holes": None if bound is None else bound.holes, "verdict": result.verdict})
        return pd.DataFrame(rows)

    def to_text(self) -> str:
        """The comparisons one after the other, and the contract overridden, if it was."""
        text = "\n\n".join(result.to_text() for result in self.results)
        overridden = self.evaluation.overridden
        return text + ("\nCONTRACT OVERRIDDEN: " + ", ".join(overridden) if overridden else "")


def compare_runs(evaluation: Evaluation, runs: Runs, metric: str | None = None, *, spec: CompareSpec | None = None,
                 stream: bool | None = None, bound_holes: bool | None = None, **options: Any) -> Comparisons:
    """Compare the first run (the baseline) with each other one on ``metric`` (default: the headline), under the
    rules of the module docstring; the settings are ``spec``, or a :class:`~evalset.comparing.spec.CompareSpec` of
    ``options`` (its fields: ``planned``, ``alpha``, ``permutations``, ``seed``, ``depth``, ...).

    The comparisons form one :class:`~evalset.stats.family.ComparisonFamily` (the others asked for, the set's
    planned list and its log on the split; ``planned`` overrides the planned count); on a set each comparison is
    appended to the set's comparison log as it is made. ``depth`` is the top k of judged@k and of the holes
    (default: the metric's cutoff); ``bound_holes`` forces the holes' bound (True) or skips it (False) whatever
    the policy; ``interval`` and ``primary_test`` are :func:`~evalset.stats.paired.compare_paired`'s; ``strata``
    (a queries file or frame with ``stratum`` and ``stratum_share``) stratifies a comparison on qrels.
    """
    spec = settings_of(CompareSpec, spec, {"metric": metric, **options} if metric else options)
    refuse_unlogged(evaluation.frozen, evaluation.split)
    metric, depth = spec.metric or evaluation.headline, spec.depth
    measure = parse_measure(metric)
    k = depth_of(measure, depth)
    judged = f"judged@{k}"
    asked = [metric] + ([judged] if parse_measure(judged) != measure else [])
    asked += [FIRST_STAGE] if measure.cutoff is not None and parse_measure(FIRST_STAGE) != measure else []
    named = runs if isinstance(runs, Mapping) else expand_run_paths(runs)
    values = per_query_values(evaluation, named, asked, stream=stream)
    baseline, *candidates = values.runs
    if not candidates:
        raise InputError(f"no candidate run to compare with the baseline {baseline}")
    lacking = missing_queries(values, named)
    strata, weighting = comparison_strata(evaluation, spec.strata, values)
    family = set_family(len(candidates), planned=spec.planned, frozen=evaluation.frozen, split=evaluation.split)
    policy = holes_policy(evaluation, measure, spec.accept_holes)
    read: dict[str, pd.DataFrame] = {}
    results, holes, notes = [], [], input_notes(values, missing=False)  # score's notes; the missing rule's below
    for name in candidates:
        pair = _paired(values, baseline, name, metric)
        result = family.compare(pair["baseline"], pair["candidate"], baseline_name=baseline, candidate_name=name,
                                metric=metric, exploratory=spec.exploratory, alpha=spec.alpha,
                                permutations=spec.permutations, seed=spec.seed, interval=spec.interval,
                                primary_test=spec.primary_test, interval_decides=spec.interval_decides,
                                min_effect=spec.min_effect, strata=strata,
                                weighting=weighting, split=evaluation.split)
        result = with_geometric_means(result, values, strata)
        family = record_comparison(family, result, evaluation.frozen, evaluation.split)
        if family.off_headline(metric):
            notes.append(f"note: {name} vs {baseline} is exploratory: {metric} is not the set's headline "
                         f"({family.headline}), and a measure chosen after the scores are seen decides nothing; "
                         "compare on the headline to decide")
        elif family.kind(baseline, name) == "exploratory":  # not among the set's planned comparisons
            notes.append(_not_planned(baseline, name, family.planned))
        missing = _missing_record(evaluation, lacking, baseline, name, judged_count(values, baseline))
        if missing:
            notes.append(f"{name} vs {baseline}: {missing['text']}")
        result, bound = what_it_rests_on(replace(result, missing=missing), values, named, k, policy, strata,
                                         bound_holes, defaulted=None if measure.cutoff or depth else k, read=read)
        results.append(result)
        holes.append(bound)
    grades = unusual_grades_note(evaluation)
    return Comparisons(results, values, holes, strata, [*notes, *([grades] if grades else [])])


FIRST_STAGE = "recall"
"""What each run's candidates hold (recall over its whole ranking), printed beside a measure of the top (one with a
cutoff): two runs that rerank the same candidates have the same recall, and a gain between two that do not mixes
what their candidates hold with how they rank them."""


def what_it_rests_on(result: Comparison, values: PerQuery, runs: Mapping[str, Any], k: int, policy: str,
                     strata: pd.DataFrame | None, bound_holes: bool | None = None, defaulted: int | None = None,
                     read: dict[str, pd.DataFrame] | None = None) -> tuple[Comparison, ComparisonBounds | None]:
    """``result`` with both runs' judged@k over the compared queries (``values`` hold ``judged@k``) and, where
    either top k holds unjudged documents, the holes' bound handed to its verdict under ``policy``
    (:func:`holes_policy`; ``bound_holes`` forces or skips the bound), and the bound. ``runs`` are the runs as
    given (files or frames), read once into ``read``; ``defaulted`` is the depth chosen for a metric without
    cutoff, said. The rule of ``compare`` and of ``report``'s planned comparisons."""
    read = {} if read is None else read
    compared = _paired(values, result.baseline, result.candidate, result.metric).dropna().index
    judged = f"judged@{k}"
    runs_of = {"baseline": result.baseline, "candidate": result.candidate}

    def means_of(measure: str) -> dict[str, float]:  # both runs' means over the compared queries
        return {side: float(values.column(run, measure).reindex(compared).mean()) for side, run in runs_of.items()}

    sides = {side: values.column(run, judged) for side, run in runs_of.items()}
    judged_at_k = {"k": k, **means_of(judged)}

    def with_judged(moved: list[dict[str, Any]]) -> list[dict[str, Any]]:  # each query's judged@k, both runs'
        return [{**row, "judged": {side: float(column[row["query_id"]]) for side, column in sides.items()}}
                for row in moved]

    first_stage = {"metric": FIRST_STAGE, **means_of(FIRST_STAGE)} if FIRST_STAGE in values.measures else None
    result = replace(result, judged_at_k=judged_at_k, largest_gains=with_judged(result.largest_gains),
                     largest_losses=with_judged(result.largest_losses), first_stage=first_stage)
    has_holes = min(judged_at_k["baseline"], judged_at_k["candidate"]) < 1
    bound = None
    if has_holes and (bound_holes if bound_holes is not None else policy == "bounded"):
        for run in (result.baseline, result.candidate):
            if run not in read:
                read[run] = runs[run] if isinstance(runs[run], pd.DataFrame) else read_run(runs[run])
        bound = comparison_bounds(values, read, result, k, weights=_headline_weights(values, result, strata))
    return _with_holes(result, bound, policy if has_holes else None, defaulted), bound


def _headline_weights(values: PerQuery, result: Comparison, strata: pd.DataFrame | None) -> pd.Series | None:
    """The per-query weights of ``result``'s headline over the queries it compared (None: uniform)."""
    if result.weighting != "traffic" or strata is None:
        return None
    compared = _paired(values, result.baseline, result.candidate, result.metric).dropna().index
    return query_weights(pd.Index(compared.astype(str)), strata)


def _paired(values: PerQuery, baseline: str, candidate: str, metric: str) -> pd.DataFrame:
    """The two runs' values on the queries both were scored on (all of them, unless ``missing = skip``), on the
    scale a comparison takes (:meth:`~evalset.evaluation.PerQuery.analysed`: a geometric measure's logs)."""
    frame = pd.DataFrame({"baseline": values.analysed(baseline, metric),
                          "candidate": values.analysed(candidate, metric)})
    return frame[frame.index.isin(values.column(baseline, metric).index)
                 & frame.index.isin(values.column(candidate, metric).index)]


def with_geometric_means(result: Comparison, values: PerQuery, strata: pd.DataFrame | None) -> Comparison:
    """``result`` with, for a measure summarised geometrically (its values compared as logs), each side's summary
    over the compared queries on the headline's weights; any other ``result`` as it is."""
    if values.measures[result.metric].kind.summary != "geometric":
        return result
    compared = _paired(values, result.baseline, result.candidate, result.metric).dropna()
    weights = _headline_weights(values, result, strata)
    mean = (lambda column: float(weights.reindex(column.index.astype(str)).to_numpy() @ column.to_numpy())) \
        if weights is not None else (lambda column: float(column.mean()))
    return replace(result, geometric_means={side: from_summary_scale(mean(compared[side]), "geometric")
                                            for side in ("baseline", "candidate")})


def _not_planned(baseline: str, candidate: str, planned: tuple[tuple[str, str], ...]) -> str:
    """The note of a comparison a set did not plan: its planned ones, and the nearest by name (a typo at freeze)."""
    import difflib

    names = [f"{b}:{c}" for b, c in planned]
    near = difflib.get_close_matches(f"{baseline}:{candidate}", names, n=1, cutoff=0.8)
    said = f"; the nearest is {near[0]} (a typo at freeze? the plan cannot change: freeze a new version)" \
        if near else ""
    return (f"note: {candidate} vs {baseline} is exploratory: the set plans {', '.join(names)}{said}")


def _missing_record(evaluation: Evaluation, lacking: dict[str, int], baseline: str, candidate: str,
                    judged: int) -> dict[str, Any] | None:
    counts = {"baseline": lacking[baseline], "candidate": lacking[candidate]}
    if not any(counts.values()):
        return None
    policy = evaluation.contract.missing
    said = " and ".join(f"{run} lacks {lacking[run]}" for run in (baseline, candidate) if lacking[run])
    effect = "scored 0 (-c missing=zero)" if policy == "zero" else "left out of this comparison (-c missing=skip)"
    return {"policy": policy, **counts, "text": f"{said} of the {judged} judged queries: {effect}"}


def comparison_strata(evaluation: Evaluation, given: pd.DataFrame | str | os.PathLike | None,
            values: PerQuery) -> tuple[pd.DataFrame | None, str]:
    """The strata of the comparisons and the weighting of their headline (module docstring)."""
    if evaluation.frozen is not None and has_strata(evaluation.queries):
        return evaluation.queries[["query_id", "stratum", "stratum_share"]], evaluation.frozen.contract.weighting
    if given is None:
        return None, "uniform"
    source = None if isinstance(given, pd.DataFrame) else os.fspath(given)
    frame = given if isinstance(given, pd.DataFrame) else read_queries(given)
    if "stratum" in frame.columns and "stratum_share" not in frame.columns:
        raise InputError("a stratum column without stratum_share: give each stratum's traffic share "
                         "(stratum_share), or drop the stratum column for an unweighted comparison", source)
    if "stratum" not in frame.columns:
        return None, "uniform"  # query texts only
    shares = stratum_shares(frame, source)
    frame = frame.assign(query_id=frame["query_id"].astype(str), stratum_share=shares)
    compared = pd.Index(values.tables[values.runs[0]].index.astype(str))
    without = compared.difference(frame["query_id"])
    if len(without):
        raise InputError(f"{len(without)} judged queries have no stratum here (e.g. {', '.join(without[:3])})",
                         source)
    if frame["stratum"].nunique() < 2:
        return None, "uniform"
    return frame[["query_id", "stratum", "stratum_share"]], "traffic"


def holes_policy(evaluation: Evaluation, measure: Measure, accept_holes: bool) -> str:
    """How the holes weigh on a verdict: ``bounded`` (the default), ``accepted`` or ``condensed`` (the contract's
    unjudged rule)."""
    if measure.contract(evaluation.contract).unjudged == "condensed":
        return "condensed"
    return "accepted" if accept_holes else "bounded"


def _with_holes(result: Comparison, bound: ComparisonBounds | None, policy: str | None,
                defaulted: int | None = None) -> Comparison:
    """``result`` with its holes stated and handed to the verdict (which withholds one a fill could flip);
    ``defaulted``: the depth chosen for a metric without cutoff, said."""
    if policy is None:
        return result
    if bound is not None and bound.holes == 0:  # short rankings, not holes, kept judged@k below 1
        return result
    depth = (f" ({result.metric} has no cutoff: bounded at depth {defaulted}, the default; --depth K to choose)"
             if defaulted else "")
    if bound is None:
        text = {"condensed": "not bounded (unjudged = condensed): the verdict rests on the judged documents only",
                "accepted": "not bounded (--accept-holes): the verdict counts the unjudged documents as not "
                            "relevant",
                "bounded": "not bounded"}[policy]
        return replace(result, hole_bound={"policy": policy, "text": text + depth})
    where = {(True, True): "the two runs'", (False, True): "the candidate's", (True, False): "the baseline's"}
    in_runs = (int(bound.per_query["holes_baseline"].sum()) > 0, int(bound.per_query["holes_candidate"].sum()) > 0)
    place = f"{where.get(in_runs, 'the runs')} top {bound.depth}"
    text = (f"{bound.holes} unjudged documents in {place}: the mean difference could be anywhere in "
            f"[{number(bound.mean_low, sign=True)}, {number(bound.mean_high, sign=True)}]")
    text += (f" (low end: {bound.outcome_low}; high end: {bound.outcome_high})" if bound.could_flip
             else "; no fill of them changes the verdict")
    if policy != "bounded":
        text += f" (kept as judged: {'--accept-holes' if policy == 'accepted' else 'unjudged = condensed'})"
    summary = {"policy": policy, "depth": bound.depth, "unjudged": bound.holes,
               "baseline": int(bound.per_query["holes_baseline"].sum()),
               "candidate": int(bound.per_query["holes_candidate"].sum()), "mean_low": bound.mean_low,
               "mean_high": bound.mean_high, "could_flip": bound.could_flip, "text": text + depth}
    holes = HoleBound(bound.holes, place, bound.could_flip, policy)
    return replace(result, hole_bound=summary).decided(holes=holes)
