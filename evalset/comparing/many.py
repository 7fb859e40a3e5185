"""Many systems at once: every pair of runs, or every run against one baseline, under a family-wise correction that
fits many systems (:mod:`evalset.stats.multiple`), with the groups of runs not distinguishable from each other.

Conventions
-----------
- The values are the evaluation room's (:func:`evalset.evaluation.per_query_values`, judged@k beside nDCG@k),
  under the contract in force. Every run is compared on the same queries: a query undefined for any run is left
  out for all and counted.
- **Missing queries.** A judged query absent from a run is no silent zero: with ``missing=None`` (the user chose
  no policy) it is an :class:`~evalset.errors.InputError` naming the run; ``missing="zero"`` scores it 0 (the
  contract's ``zero``), with a note; ``missing="skip"`` leaves the query out for every run, with a note.
- **Weights.** On a set weighted by traffic each query weighs ``share_s / n_s`` (its stratum's traffic share,
  the shares renormalised over the strata present, over the stratum's compared queries); the means and the tests
  use these weights and the output says "traffic-weighted". Elsewhere every query weighs the same. The ANOVA is
  always the plain one.
- **The family**: every pair (``baseline=None``) or the baseline against every other run; the correction is
  ``tukey`` (the randomised max-statistic test: Carterette's randomised Tukey HSD over every pair), ``holm`` or
  ``bonferroni`` (on the paired permutation test of each pair). A pair is *significant* when its adjusted p is
  below ``alpha``.
- **Holes.** For a metric with a cutoff k, the holes of a run are the unjudged documents of its top k
  (:mod:`evalset.holes.find`) on the compared queries. Each run's mean is bounded: low with every hole of
  every run judged not relevant (grade 0; as judged for every measure but those reading judged non-relevant
  documents), high with that run's holes relevant at the top grade (:func:`evalset.holes.find.top_grade`;
  one evaluation per run with holes). A significant pair (a, b) could be flipped by its holes when
  ``[low_a - high_b, high_a - low_b]`` contains 0; ``accept_holes=True`` keeps the plain verdict and says so.
  A metric without a cutoff is bounded at :data:`~evalset.contract.DEFAULT_HOLES_DEPTH` unless ``depth`` is given.
- **Verdicts** are :func:`evalset.stats.verdicts.decide`'s on each pair's adjusted p (at ``alpha``), its queries,
  the permutations and its holes (the short form in the tables: ``established``, ``not established: holes could
  flip``, ``exploratory: dev split``). The letters (all pairs only) separate two runs when their difference is
  established (with ``accept_holes``: significant, the holes kept as judged).
- Nothing is appended to a set's comparison log: this is a survey of the runs, under its own family-wise error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from evalset.comparing.compare import comparison_strata, holes_policy
from evalset.comparing.spec import CompareSpec
from evalset.contract import MISSING_POLICIES
from evalset.errors import InputError
from evalset.evaluation import (
    Evaluation,
    PerQuery,
    missing_notes,
    missing_queries,
    per_query_values,
    unusual_grades_note,
)
from evalset.evaluation.values import Runs
from evalset.holes.find import depth_of, filled_qrels, graded_top_k, top_grade
from evalset.io.trec import expand_run_paths, read_run
from evalset.metrics import parse_measure
from evalset.params import check, settings_of
from evalset.render import UNDEFINED, json_safe, number, text_table
from evalset.seeds import generator
from evalset.stats.multiple import (
    Anova,
    all_pairs,
    baseline_pairs,
    compact_letters,
    corrected_pair_p_values,
    max_statistic_p_values,
    pair_matrix,
    two_way_anova,
)
from evalset.stats.strata import GEOMETRIC_FLOOR, from_summary_scale, query_weights
from evalset.stats.verdicts import ESTABLISHED, Evidence, HoleBound, comparison_kind, decide

CORRECTION_NAMES = {"tukey": "randomised Tukey HSD (max-statistic permutation test, Carterette 2012)",
                    "holm": "Holm (on paired permutation p-values)",
                    "bonferroni": "Bonferroni (on paired permutation p-values)"}

SHOWN_PAIRS = 30
"""The text lists this many significant pairs (and every one whose verdict is withheld); JSON and TSV hold them
all."""


@dataclass(frozen=True)
class PairVerdict:
    """One pair of the family: ``difference`` is mean(a) - mean(b) (all pairs: a the higher mean; against a
    baseline: a the candidate, b the baseline); ``low, high`` bound it over the fills of the holes."""

    a: str
    b: str
    difference: float
    p: float
    raw_p: float | None
    significant: bool
    low: float
    high: float
    verdict: str
    rule: str = ""
    established: bool = False

    def to_dict(self) -> dict[str, Any]:
        return json_safe(self.__dict__)


@dataclass(frozen=True)
class ManyComparisons:
    """Runs compared at once (see the module docstring); ``runs`` are ordered by mean, the best first."""

    metric: str
    runs: list[str]
    means: list[float]
    judged_measure: str | None
    judged: list[float] | None
    letters: list[str] | None
    pairs: list[PairVerdict]
    adjusted: pd.DataFrame
    raw: pd.DataFrame | None
    anova: Anova
    baseline: str | None
    correction: str
    alpha: float
    permutations: int
    seed: int
    queries: int
    weighted: bool
    exploratory: bool
    accept_holes: bool
    exploratory_reason: str = ""  # "dev split", or the measure is not the set's headline
    unjudged: dict[str, int] = field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    overridden: tuple[str, ...] = ()

    @property
    def significant(self) -> list[PairVerdict]:
        return [pair for pair in self.pairs if pair.significant]

    def to_tsv(self) -> str:
        """The adjusted p-values: a header ``run`` + the run names, one row per run (``undef``: not in the family)."""
        lines = ["\t".join(["run", *self.runs])]
        for run in self.runs:
            lines.append("\t".join([run, *(UNDEFINED if np.isnan(p) else f"{p:.6g}" for p in self.adjusted.loc[run])]))
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``compare --all`` / ``--baseline``: runs, means, letters, the adjusted (and raw) p-values
        as nested dicts, every pair's verdict, the ANOVA and the settings."""
        def nested(frame: pd.DataFrame | None) -> dict[str, dict[str, float]] | None:
            return None if frame is None else {a: dict(frame.loc[a]) for a in frame.index}

        return json_safe({
            "metric": self.metric, "runs": self.runs, "means": dict(zip(self.runs, self.means, strict=True)),
            "judged_measure": self.judged_measure,
            "judged": None if self.judged is None else dict(zip(self.runs, self.judged, strict=True)),
            "letters": None if self.letters is None else dict(zip(self.runs, self.letters, strict=True)),
            "adjusted_p": nested(self.adjusted), "raw_p": nested(self.raw),
            "pairs": [pair.to_dict() for pair in self.pairs], "anova": self.anova.to_dict() | {"weighting": "uniform"},
            "unjudged": self.unjudged, "bounds": {run: list(b) for run, b in self.bounds.items()},
            "settings": {"family": "baseline" if self.baseline else "all pairs", "baseline": self.baseline,
                         "pairs": len(self.pairs), "correction": self.correction, "alpha": self.alpha,
                         "permutations": self.permutations, "seed": self.seed, "queries": self.queries,
                         "weighting": "traffic" if self.weighted else "uniform", "exploratory": self.exploratory,
                         "accept_holes": self.accept_holes, "contract_overridden": list(self.overridden)}})

    def to_text(self) -> str:
        """The runs by mean with their groups, the significant pairs (or the baseline's row), the ANOVA, the
        settings."""
        return _text(self)


def compare_many(evaluation: Evaluation, runs: Runs, metric: str | None = None, *, spec: CompareSpec | None = None,
                 missing: str | None = None, **options: Any) -> ManyComparisons:
    """Compare every pair of ``runs`` (or each against ``baseline``, a run name) on ``metric`` (default: the
    headline) under ``correction`` (default tukey; module docstring: missing queries, weights, holes, verdicts);
    the settings are ``spec``, or a :class:`~evalset.comparing.spec.CompareSpec` of ``options``. ``missing``
    chooses the missing-query policy (None: the evaluation's, refused unless chosen there); ``depth`` is the top
    k of judged@k and of the holes (default: the metric's cutoff); ``strata`` (``query_id, stratum,
    stratum_share``, a frame or a queries file) weigh the queries by traffic on qrels, as for a single comparison."""
    if spec is None:  # every pair, unless a baseline is named
        options = {"all_pairs": options.get("baseline") is None, **options}
    spec = settings_of(CompareSpec, spec, {"metric": metric, **options} if metric else options)
    baseline, correction, alpha, permutations = spec.baseline, spec.correction or "tukey", spec.alpha, spec.permutations
    seed, depth, accept_holes = spec.seed, spec.depth, spec.accept_holes
    evaluation = _with_missing(evaluation, missing)
    metric = spec.metric or evaluation.headline
    named = runs if isinstance(runs, Mapping) else expand_run_paths(runs)
    measure = parse_measure(metric)
    if len(named) < 2:
        raise InputError(f"comparing many runs needs at least two, got {len(named)}")
    if baseline is not None and baseline not in named:
        shown = ", ".join(list(named)[:5]) + (", ..." if len(named) > 5 else "")
        raise InputError(f"the baseline {baseline!r} is none of the runs given ({shown})")
    k = depth_of(measure, depth)
    policy = holes_policy(evaluation, measure, accept_holes)
    # the holes read each run's top k: the runs are then read whole once (else a big file streams)
    frames = named if policy == "condensed" else {
        name: run if isinstance(run, pd.DataFrame) else read_run(run) for name, run in named.items()}
    judged_measure = f"judged@{k}"
    asked = [metric] + ([judged_measure] if parse_measure(judged_measure) != measure else [])
    values = per_query_values(evaluation, frames, asked)
    notes = missing_notes(values, missing_queries(values, named), "left out for every run")
    strata, weighting = comparison_strata(evaluation, spec.strata, values)
    matrix, weights, left = _matrix(values, metric, strata if weighting == "traffic" else None)
    notes += left
    order = sorted(range(matrix.shape[1]), key=lambda k: -float(weights @ matrix.iloc[:, k]))
    matrix = matrix.iloc[:, order]
    names = list(matrix.columns)
    x = matrix.to_numpy(dtype=np.float64)
    means = weights @ x
    judged = [float(values.column(name, judged_measure).reindex(matrix.index).mean()) for name in names]
    pairs = all_pairs(len(names)) if baseline is None else baseline_pairs(len(names), names.index(baseline))
    rng = generator(seed)
    raw = None
    if correction == "tukey":
        adjusted = max_statistic_p_values(x, pairs, permutations, rng, weights)
    else:
        raw, adjusted = corrected_pair_p_values(x, pairs, permutations, rng, correction, weights)
    unjudged, bounds = _holes(evaluation, frames, metric, k, matrix, weights) if policy in (
        "bounded", "accepted") else ({}, {})
    if measure.cutoff is None and depth is None:
        notes.append(f"note: {metric} has no cutoff: its holes (unjudged documents) are bounded at depth {k}, the "
                     "default; --depth K to choose")
    if policy == "condensed":
        notes.append("note: the holes are not bounded (unjudged = condensed): the verdicts rest on the judged "
                     "documents only")
    headline = evaluation.frozen.contract.headline if evaluation.frozen is not None else None
    off_headline = headline is not None and measure != parse_measure(headline)
    kind = comparison_kind(off_headline, evaluation.split)
    reason = "dev split" if evaluation.split == "dev" else f"not the set's headline, {headline}" if off_headline else ""
    if off_headline:
        notes.append(f"note: {metric} is not the set's headline ({headline}): every pair is exploratory, a lead; a "
                     "measure chosen after the scores are seen decides nothing")
    verdicts, different = [], np.zeros((len(names), len(names)), dtype=bool)
    for index, (i, j) in enumerate(pairs):
        a, b = (j, i) if baseline is not None else (i, j)  # against a baseline: a is the candidate
        low = bounds.get(names[a], (means[a],) * 2)[0] - bounds.get(names[b], (means[b],) * 2)[1]
        high = bounds.get(names[a], (means[a],) * 2)[1] - bounds.get(names[b], (means[b],) * 2)[0]
        significant = bool(adjusted[index] < alpha)
        holes = unjudged.get(names[a], 0) + unjudged.get(names[b], 0)
        decision = decide(Evidence(
            float(means[a] - means[b]), alpha, split=evaluation.split, kind=kind, p=float(adjusted[index]),
            test="adjusted p",
            n=len(matrix), permutations=permutations,
            holes=HoleBound(holes, f"the two runs' top {k}", low <= 0 <= high, policy) if holes else None))
        different[i, j] = different[j, i] = significant and decision.rule != "holes could flip"
        verdicts.append(PairVerdict(names[a], names[b], float(means[a] - means[b]), float(adjusted[index]),
                                    None if raw is None else float(raw[index]), significant, float(low), float(high),
                                    decision.short, decision.rule, decision.established))
        if decision.rule in ("too few flips", "few queries") and len(verdicts) == 1:  # one design for every pair
            notes.append(f"note: every pair: {decision.text}")
    if unjudged:
        notes.append(f"note: {sum(unjudged.values()):,} unjudged documents in the top {k} of "
                     f"{len(unjudged)} of {len(names)} runs" + ("; accepted (--accept-holes): the verdicts are as "
                                                               "judged" if accept_holes else ""))
    grades_note = unusual_grades_note(evaluation)
    summary = measure.kind.summary  # a geometric measure's matrix holds logs: its means and bounds shown as summaries
    if summary == "geometric":
        notes.append(f"note: {metric} is a geometric mean: the runs are compared on log(max(value, "
                     f"{GEOMETRIC_FLOOR:g})) per query; its means and ranges are geometric, its differences log ratios")
    bounds = {name: (from_summary_scale(low, summary), from_summary_scale(high, summary))
              for name, (low, high) in bounds.items()}
    return ManyComparisons(
        metric=metric, runs=names, means=[from_summary_scale(float(m), summary) for m in means],
        judged_measure=judged_measure, judged=judged,
        letters=compact_letters(different) if baseline is None else None, pairs=verdicts,
        adjusted=pd.DataFrame(pair_matrix(adjusted, pairs, len(names)), index=names, columns=names),
        raw=None if raw is None else pd.DataFrame(pair_matrix(raw, pairs, len(names)), index=names, columns=names),
        anova=two_way_anova(x), baseline=baseline, correction=correction, alpha=alpha, permutations=permutations,
        seed=seed, queries=len(matrix), weighted=weighting == "traffic", exploratory=kind == "exploratory",
        exploratory_reason=reason,
        accept_holes=accept_holes, unjudged=unjudged, bounds=bounds,
        notes=notes + ([grades_note] if grades_note else []), overridden=evaluation.overridden)


def _with_missing(evaluation: Evaluation, missing: str | None) -> Evaluation:
    """The evaluation with ``missing`` chosen (None: as it is)."""
    if missing is None:
        return evaluation
    check("missing", missing, MISSING_POLICIES)
    if missing != evaluation.contract.missing and evaluation.frozen is not None:
        raise InputError(f"missing={missing} contradicts the set's contract (missing={evaluation.contract.missing}): "
                         "give it when the evaluation is made (-c missing=... with --override-contract)")
    chosen = replace(evaluation, given=tuple(dict.fromkeys((*evaluation.given, "missing"))))
    return chosen.with_contract(missing=missing) if missing != evaluation.contract.missing else chosen


def _matrix(values: PerQuery, metric: str,
            strata: pd.DataFrame | None) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """The queries x runs values on the queries every run defines, the per-query weights (traffic with
    ``strata``, else uniform), and the notes."""
    frame = values.analysed_values(metric)
    absent = frame.index[~np.all([frame.index.isin(values.tables[name].index) for name in values.runs], axis=0)]
    undefined = frame.index[frame.isna().any(axis=1) & ~frame.index.isin(absent)]
    kept = frame.drop(index=absent.union(undefined))
    notes = []
    if len(absent):
        notes.append(f"note: {_queries(len(absent))} judged but missing from some run left out for every run")
    if len(undefined):
        notes.append(f"note: {_queries(len(undefined))} where {metric} is undefined for some run left out for every "
                     f"run ({len(kept)} compared)")
    if kept.empty:
        raise InputError(f"no query where every run defines {metric}: nothing to compare")
    if strata is None:
        return kept, np.full(len(kept), 1.0 / len(kept)), notes
    return kept, query_weights(pd.Index(kept.index.astype(str)), strata).to_numpy(np.float64), notes


def _holes(evaluation: Evaluation, frames: Mapping[str, pd.DataFrame], metric: str, depth: int,
           matrix: pd.DataFrame, weights: np.ndarray) -> tuple[dict[str, int], dict[str, tuple[float, float]]]:
    """Per run with holes in its top ``depth``: their number, and the run's weighted mean over the compared
    queries (``matrix``, as judged) with every hole not relevant and with its own holes relevant (module
    docstring)."""
    queries = matrix.index
    top = graded_top_k(frames, evaluation.qrels, depth, evaluation.contract.ties)
    holes = top[~top["judged"] & top["query_id"].isin(queries.astype(str))]
    if holes.empty:
        return {}, {}
    grade, keys = top_grade(evaluation), holes[["query_id", "doc_id"]].drop_duplicates()
    systems = set(holes["system"])
    with_holes = {name: frames[name] for name in matrix.columns if name in systems}

    def weighted_mean(scored: PerQuery, name: str) -> float:
        values = scored.analysed(name, metric).reindex(queries).fillna(matrix[name])
        return float(weights @ values.to_numpy(np.float64))

    none = evaluation.with_qrels(filled_qrels(evaluation.qrels, keys, np.zeros(len(keys), bool), grade))
    low = per_query_values(none, with_holes, [metric])
    bounds = {}
    for name, frame in with_holes.items():
        own = holes.loc[holes["system"] == name, ["query_id", "doc_id"]]
        filled = evaluation.with_qrels(filled_qrels(evaluation.qrels, own, np.ones(len(own), bool), grade))
        high = per_query_values(filled, {name: frame}, [metric])
        judged = float(weights @ matrix[name].to_numpy(np.float64))
        bounds[name] = (min(weighted_mean(low, name), judged), max(weighted_mean(high, name), judged))
    return {name: int((holes["system"] == name).sum()) for name in with_holes}, bounds


# ------------------------------------------------------------------------------------------------ the text
def _queries(count: int) -> str:
    return f"{count} query" if count == 1 else f"{count} queries"


def _p(value: float) -> str:
    return f"{value:.4g}"


def _text(result: ManyComparisons) -> str:
    family = (f"every run against {result.baseline}" if result.baseline
              else f"every pair of the {len(result.runs)} runs")
    weighting = ", traffic-weighted" if result.weighted else ""
    lines = [f"{len(result.runs)} runs on {result.metric} ({result.queries} queries{weighting}"
             + (f", exploratory ({result.exploratory_reason})" if result.exploratory else "")
             + f"): {family}, {len(result.pairs)} pairs in the family",
             f"  correction {CORRECTION_NAMES[result.correction]}, {result.permutations} permutations, seed "
             f"{result.seed}, alpha {result.alpha:g}", ""]
    header = ["run"] + (["group"] if result.letters else []) + [result.metric]
    header += [result.judged_measure] if result.judged_measure else []
    header += ["holes", "range over the holes"] if result.unjudged else []
    versus = {pair.a: pair for pair in result.pairs} if result.baseline else {}
    header += (["difference", "adjusted p"] + (["raw p"] if result.raw is not None else []) + ["verdict"]
               if result.baseline else [])
    columns = "".join(dict.fromkeys("".join(result.letters or ())))
    rows = [header]
    for k, run in enumerate(result.runs):
        row = [run] + ([_aligned(result.letters[k], columns)] if result.letters else []) + [number(result.means[k])]
        row += [f"{result.judged[k]:.3f}"] if result.judged is not None else []
        if result.unjudged:
            low, high = result.bounds.get(run, (result.means[k], result.means[k]))
            row += [str(result.unjudged.get(run, 0)), f"[{number(low)}, {number(high)}]" if run in result.bounds
                    else ""]
        if result.baseline:
            pair = versus.get(run)
            raw = [] if result.raw is None else [_p(pair.raw_p) if pair else ""]
            row += (["baseline", "", *raw, ""] if pair is None
                    else [number(pair.difference, sign=True), _p(pair.p), *raw, pair.verdict])
        rows.append(row)
    lines += ["  " + line for line in text_table(rows)]
    if result.letters:
        lines += ["  (runs that share a letter are not distinguishable)", ""]
        significant = result.significant
        lines.append(f"significant pairs (adjusted p < {result.alpha:g}): {len(significant)} of {len(result.pairs)}")
        shown = [p for k, p in enumerate(significant) if k < SHOWN_PAIRS or not p.established]
        if shown:
            table = [["higher", "lower", "difference", "adjusted p"] + (["raw p"] if result.raw is not None else [])
                     + ["verdict"]]
            table += [[p.a, p.b, number(p.difference, sign=True), _p(p.p)] + ([_p(p.raw_p)] if p.raw_p is not None
                                                                             else []) + [p.verdict] for p in shown]
            lines += ["  " + line for line in text_table(table)]
        if len(shown) < len(significant):
            lines.append(f"  ... {len(significant) - len(shown)} more {ESTABLISHED} pairs (every pair in --format "
                         "json, the matrix in --format tsv)")
    lines += ["", result.anova.to_text()]
    if result.weighted:
        lines.append(UNWEIGHTED_ANOVA)
    if result.overridden:
        lines.append("CONTRACT OVERRIDDEN: " + ", ".join(result.overridden))
    return "\n".join(lines)


UNWEIGHTED_ANOVA = ("  the ANOVA weighs every query the same (it has no traffic-weighted form); the means, the tests "
                    "and the groups above are traffic-weighted")


def _aligned(letters: str, columns: str) -> str:
    """The letters of a run at their column (``a c``), so that a group reads down the column."""
    return "".join(c if c in letters else " " for c in columns).rstrip()
