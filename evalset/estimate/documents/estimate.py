"""The document design's estimate: run means and paired differences over the pool's queries from a document
sample graded by humans, every pooled pair graded by the LLM judges (the calibrated control variate), or by
Horvitz-Thompson's estimator without them.

Conventions
-----------
- Inputs are frames: ``pairs`` (every pooled pair: ``query_id, doc_id, pi, sampled``), ``human`` (``query_id,
  doc_id, grade`` of exactly the sampled pairs), ``llm`` (``query_id, doc_id, judge, grade``: each judge grades
  every pooled pair; ``None`` for Horvitz-Thompson), ``runs`` (name -> run frame as
  :func:`evalset.io.trec.read_run` returns). A frame's ``attrs["source"]``, when set, names it in errors. Bad
  input is one :class:`~evalset.errors.InputError`: a ``pi`` outside (0, 1], a human grade of an unsampled pair or
  of a pair outside the pool, a sampled pair without one, a pooled pair a judge did not grade, a pair given twice.
- The set is the pool's queries (a retrieved document outside the pool has no grade: 0, or under
  ``unjudged=condensed`` it leaves the ranking). Every convention of the contract is the engine's
  (:func:`evalset.metrics.documents.document_terms`; the JSON's ``applied`` holds each measure's own): a query
  whose estimated normaliser is 0 (no gain, no relevant pair) is undefined, left out of the means under
  ``undefined=skip`` (said in a note) and 0 under ``zero``. A query a run lacks follows
  the missing-queries rule (:class:`evalset.estimate.inputs.Missing`): refused unless the contract's ``missing``
  was chosen (``chosen``, naming the run's file from ``sources``); ``zero``, it scores 0; ``skip``, it is left out
  of that run's mean and of its differences. The grade scale is the grades of the human sample and the judges
  together, with 0.
- A sample below the design's minimum (:func:`evalset.estimate.documents.sample.check_sample_size`: fewer than
  :data:`~evalset.estimate.documents.sample.MINIMUM_PER_QUERY` drawn pairs a query on average, or fewer than 2 queries)
  is refused.
- Per query, the estimators of :mod:`evalset.estimate.documents.estimators` with the predictions of
  :mod:`evalset.judgments.calibration`; a paired difference is the difference of the two runs' per-query
  estimates (the pairs both runs retrieve share their residual, which cancels in the difference).
- Two intervals of the mean over the ``Q`` queries, both at ``level``:
  **this set** (the fixed queries; the uncertainty is which pairs were sampled): the estimate ``± q se``,
  ``se^2 = sum over sampled d of (1 - pi) / pi^2 z_d^2 / Q^2`` with ``z_d`` the linearised residual (of the
  difference of the runs' residuals, for a paired difference), never below a quarter of the column's **floor**
  (what it could vary by, from every pair that could differ, drawn or not), and ``q`` Student's t on
  Satterthwaite's effective degrees of freedom of the terms it rests on (:mod:`evalset.estimate.documents.variance`).
  The normal quantile and no floor (before) took a variance of 0 at face value and ignored how few pairs carry a
  column: on DL19 (Llama-3-70B, 200 draws, B = 2,150) P@10's run means covered 0.928 (0.957 now), and the
  interval of ``TUA1-1 - test1`` (true P@10 difference 0) excluded 0 in 29% of the draws at B = 2,150 (0 now),
  19% with a standard error of exactly 0 (none of the pairs separating them drawn);
  **new queries** (the queries a random draw of the same population: adds the between-query variance): Student's t
  on the per-query estimates, ``Q - 1`` degrees of freedom.
- **The range.** An estimate or an interval outside the measure's range (:meth:`evalset.metrics.documents.
  DocumentTerms.bounds`; a paired difference's is ``[-w, w]``, ``w`` its width) is clipped to it and named
  (:func:`evalset.stats.verdicts.bounded`): the row's ``clipped`` says what; a warning names the estimates that
  left the range, a note the rows whose intervals alone did. An unbiased estimator of a thin sample can leave the
  range (Horvitz-Thompson's P@10 of a run 1.19 from 265 drawn pairs over 43 queries); the figure then says more
  about the sample than about the run, and no verdict rests on it (:mod:`evalset.estimate.documents.report`).
- "This set"'s variance estimate is heavy-tailed when the sample is small (it rests on the few sampled relevant
  pairs): below :data:`SMALL_SAMPLE` sampled pairs per query the output says so and points to "new queries"; so
  it does for Horvitz-Thompson's estimator, whose "this set" interval of run means under-covered (the benchmark).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_METRIC, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.estimators import Sample, estimate_measure, expanded_floor
from evalset.estimate.documents.rules import DOCUMENT_SAMPLE, STRATUM_PSEUDO_COUNT, DesignRules
from evalset.estimate.documents.sample import check_sample_size
from evalset.estimate.documents.variance import (
    column_weights,
    columns_of,
    floor_variance,
    sampled_variance,
    with_floor,
)
from evalset.estimate.inputs import Missing, chosen_conventions, missing_rule, query_values
from evalset.io.samplerecord import refuse_ungraded, sampled_grades
from evalset.judgments.calibration import Model, calibrated_distribution, candidate_models, stratified_models
from evalset.metrics.documents import DocumentTerms, PoolRanking, document_terms, rank_pool
from evalset.render import number, records, text_table
from evalset.stats.quantiles import around, two_sided
from evalset.stats.verdicts import NO_VERDICT, bounded

SMALL_SAMPLE = 15.0
"""Sampled pairs per query below which "this set"'s variance estimate is unreliable. Measured on DL19 (Llama-3-70B,
200 draws, scripts/bench_document_sample.py): the mean width of nDCG@10's "this set" interval of run means against
"new queries"' was 1.24 vs 0.28 at 7 pairs per query (B = 300), 0.24 vs 0.20 at 11.6 (B = 500), 0.15 vs 0.17 at
16.3 (B = 700), 0.11 vs 0.15 at 23 (B = 1,000): below about 15 the variance estimate is heavy-tailed (a few
sampled pairs of small pi dominate it) and "this set" is no longer the narrower interval."""


@dataclass(frozen=True)
class DocumentPool:
    """What stays fixed across samples of one pool: its pairs and queries, the judges' grades, the runs (their
    rankings as pool indexes made once per tie rule and ``unjudged`` convention a measure asks for), the design's
    rules (:mod:`evalset.estimate.documents.rules`) and, where they split the calibration, the pairs' strata."""

    pairs: pd.DataFrame
    query_ids: tuple[str, ...]
    query: np.ndarray
    llm: np.ndarray | None
    judges: tuple[str, ...]
    runs: Mapping[str, pd.DataFrame]
    contract: EvaluationContract
    rules: DesignRules = DOCUMENT_SAMPLE
    strata: np.ndarray | None = None
    _rankings: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def names(self) -> list[str]:
        return list(self.runs)

    def ranking(self, conventions: tuple[str, str]) -> PoolRanking:
        """The runs' rankings under ``(ties, unjudged)`` (:func:`evalset.metrics.documents.rank_pool`)."""
        if conventions not in self._rankings:
            self._rankings[conventions] = rank_pool(self.runs, self.pairs, self.query_ids, *conventions)
        return self._rankings[conventions]

    @cached_property
    def models(self) -> list[Model] | None:
        """The calibration's candidate models (:func:`evalset.judgments.calibration.candidate_models`), each split by
        stratum under the design's rule: the pool's cells, learnt afresh on every sample (None without a judge)."""
        if self.llm is None:
            return None
        models = candidate_models(self.llm, self.judges)
        return stratified_models(models, self.strata, STRATUM_PSEUDO_COUNT) if self.rules.stratified else models

    def estimate(self, terms: DocumentTerms, sample: Sample,
                 answered: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The per-query estimates of ``terms``' measure (runs x queries), their linearised residuals (runs x
        pairs) and the queries each run's mean is over: ``answered`` (default every one) less, under
        ``undefined=skip``, the queries whose estimated normaliser is 0 (undefined; 0 under ``zero``)."""
        values, z = estimate_measure(terms, self.ranking(terms.ranking), sample, self.rules.normaliser_floor,
                                     self.rules.ratio)
        answered = np.ones(values.shape, dtype=bool) if answered is None else answered
        if self.contract.undefined == "skip":
            answered = answered & ~np.isnan(values)
        return np.nan_to_num(values), z, answered

    def floor(self, terms: DocumentTerms, sample: Sample) -> Floor:
        """The floor's terms of "this set"'s variance (:mod:`evalset.estimate.documents.variance`): the runs' weights
        of each term, its variance of the quantity, its ``pi`` and its query code: a pair's
        (:func:`~evalset.estimate.documents.variance.column_weights`), or under the expanded estimator of a ratio
        with a prediction each pair and grade's change (:func:`~evalset.estimate.documents.estimators.
        expanded_floor`)."""
        ranking = self.ranking(terms.ranking)
        if self.rules.ratio == "expanded" and terms.form.normaliser != "none" and sample.predicted is not None:
            return expanded_floor(terms, ranking, sample)
        return (*column_weights(terms, ranking, sample), sample.pi, sample.query)

    def sample(self, pi: np.ndarray, sampled: np.ndarray, grade: np.ndarray, scale: np.ndarray | None = None,
               use_llm: bool = True) -> Sample:
        """The sample with its calibrated predictions (none when ``use_llm`` is false or there is no judge)."""
        if scale is None:
            seen = [grade[sampled]] + ([] if self.llm is None else [self.llm.ravel()])
            scale = np.union1d(np.concatenate(seen).astype(np.int64), [0])
        predicted = None
        if use_llm and self.llm is not None:
            predicted, _ = calibrated_distribution(self.llm, self.query, len(self.query_ids), sampled, grade, pi,
                                                   scale, self.models)
        return Sample(self.query, len(self.query_ids), pi, sampled, grade, np.asarray(scale), predicted)


Floor = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""The floor's terms (:meth:`DocumentPool.floor`): the columns' weights of each term, its variance of the quantity,
its ``pi`` and its query code."""


def _source(frame: pd.DataFrame, default: str) -> str:
    return str(frame.attrs.get("source", default))


def _require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{name} lacks the column(s) {', '.join(missing)}", _source(frame, name))


def prepare_pool(pairs: pd.DataFrame, llm: pd.DataFrame | None, runs: Mapping[str, pd.DataFrame],
                 contract: EvaluationContract | None = None, rules: DesignRules = DOCUMENT_SAMPLE,
                 strata: np.ndarray | None = None) -> DocumentPool:
    """The pool's fixed part, its judges' grades checked to cover every pooled pair (module docstring), under the
    design's ``rules`` (``strata``: pairs x levels of stratum codes where they split the calibration)."""
    if rules.stratified and strata is None:
        raise ValueError(f"{rules.name}: its calibration is split by stratum; give the pairs' strata")
    contract = contract or EvaluationContract()
    _require(pairs, ["query_id", "doc_id"], "pairs")
    keys = pairs[["query_id", "doc_id"]].astype(str).reset_index(drop=True)
    twice = keys.duplicated()
    if twice.any():
        row = keys[twice].iloc[0]
        raise InputError(f"the pair {row['query_id']} {row['doc_id']} is given twice", _source(pairs, "pairs"))
    query_ids = tuple(sorted(keys["query_id"].unique()))
    query = pd.Index(query_ids).get_indexer(keys["query_id"])
    grades, judges = None, ()
    if llm is not None:
        _require(llm, ["query_id", "doc_id", "judge", "grade"], "llm")
        judges = tuple(sorted(llm["judge"].astype(str).unique()))
        index = pd.MultiIndex.from_frame(keys)
        grades = np.zeros((len(keys), len(judges)), dtype=np.int64)
        for column, judge in enumerate(judges):
            rows = llm[llm["judge"].astype(str) == judge]
            refuse_ungraded(keys, rows, f"judge {judge}", _source(llm, "llm"))
            table = pd.Series(rows["grade"].to_numpy(),
                              index=pd.MultiIndex.from_arrays([rows["query_id"].astype(str),
                                                               rows["doc_id"].astype(str)]))
            table = table[~table.index.duplicated()]
            grades[:, column] = table.reindex(index).to_numpy(dtype=np.int64)
    return DocumentPool(keys, query_ids, query, grades, judges, dict(runs), contract, rules, strata)


def sample_arrays(pool: DocumentPool, pairs: pd.DataFrame, human: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """``pi``, ``sampled`` and the human grade (0 where unsampled) per pooled pair, checked (module docstring)."""
    _require(pairs, ["pi", "sampled"], "pairs")
    _require(human, ["query_id", "doc_id", "grade"], "human")
    pi = pairs["pi"].to_numpy(dtype=np.float64)
    bad = ~((pi > 0) & (pi <= 1))
    if bad.any():
        row = pool.pairs.iloc[int(np.flatnonzero(bad)[0])]
        raise InputError(f"the pair {row['query_id']} {row['doc_id']} has pi {float(pi[bad][0]):g}: an inclusion "
                         "probability is in (0, 1]", _source(pairs, "pairs"))
    sampled = pairs["sampled"].to_numpy().astype(bool)
    grade = sampled_grades(pool.pairs, sampled, human, _source(human, "human"))
    return pi, sampled, grade


def mean_intervals(values: np.ndarray, z: np.ndarray, factor: np.ndarray, pi: np.ndarray, level: float,
                   pairs: Sequence[tuple[int, int]] = (), answered: np.ndarray | None = None,
                   query: np.ndarray | None = None,
                   floor: Floor | None = None,
                   rules: DesignRules = DOCUMENT_SAMPLE) -> dict[str, np.ndarray]:
    """Means over queries of ``values`` (columns x queries) and of the paired differences (``pairs`` of column
    indexes: candidate minus baseline), with the standard errors and quantiles of both intervals (module
    docstring): ``z`` the linearised residuals (columns x pairs), ``factor`` each pair's ``(1 - pi) / pi^2`` where
    sampled (0 elsewhere), ``pi`` its inclusion probability, ``floor`` the floor's terms (:meth:`DocumentPool.floor`;
    ``None``: no floor);
    ``answered`` (columns x queries, with ``query``, each pair's query code): the queries each column's mean is
    over (a difference's: those both runs answered; default every one). ``z`` is the "this set" quantile per
    column (the design's ``rules``: Student's t on ``df_set`` degrees of freedom, or the normal's), ``t`` the "new
    queries" one."""

    if answered is not None and not answered.all():
        return _masked_intervals(values, z, factor, pi, level, pairs, answered, query, floor, rules)
    queries = values.shape[1]
    used = np.flatnonzero(factor)  # the sampled pairs with pi < 1: the others add nothing
    per_query = columns_of(values, pairs)
    residual = columns_of(z[:, used], pairs)
    set_variance, df = sampled_variance(residual, factor[used], pi[used])
    estimate = per_query.mean(axis=1)
    if floor is not None:
        weights = columns_of(floor[0], pairs)
        set_variance, df = with_floor(set_variance, df, *floor_variance(weights, floor[1], floor[2]),
                                      (residual != 0).sum(axis=1), rules)
        alike = ~np.any(weights != 0, axis=1) & (np.arange(len(estimate)) >= len(values))
        estimate = np.where(alike, 0.0, estimate)  # two runs that weigh every pair alike: exactly 0
    student = two_sided(level, queries - 1)
    return {"estimate": estimate, "se_set": np.sqrt(set_variance) / queries,
            "se_new": per_query.std(axis=1, ddof=1) / np.sqrt(queries), "z": set_quantile(df, level, rules),
            "t": np.full(len(per_query), student), "df_set": df}


def set_quantile(df: np.ndarray, level: float, rules: DesignRules = DOCUMENT_SAMPLE) -> np.ndarray:
    """"This set"'s quantile at ``level`` per column: Student's t on its ``df`` (the normal's where infinite), or
    the normal's where the design's ``rules`` say so."""
    if rules.quantile == "normal":
        return np.full(len(df), two_sided(level))
    return two_sided(level, np.asarray(df, dtype=float))


def _masked_intervals(values: np.ndarray, z: np.ndarray, factor: np.ndarray, pi: np.ndarray, level: float,
                      pairs: Sequence[tuple[int, int]], answered: np.ndarray, query: np.ndarray,
                      floor: Floor | None, rules: DesignRules) -> dict[str, np.ndarray]:
    """:func:`mean_intervals` with each column over its own queries (``answered``), one column at a time."""

    used = np.flatnonzero(factor)
    weights, spread, floor_pi, floor_query = floor or (np.zeros_like(z), np.zeros(len(pi)), pi, query)
    rows = [(values[c], z[c], weights[c], answered[c]) for c in range(len(values))]
    rows += [(values[c] - values[b], z[c] - z[b], weights[c] - weights[b], answered[b] & answered[c])
             for b, c in pairs]
    got: dict[str, list[float]] = {"estimate": [], "se_set": [], "se_new": [], "df_set": [], "t": []}
    for per_query, residual, weight, mask in rows:
        count = int(mask.sum())
        kept = per_query[mask]
        inside = mask[query]
        kept_residual = (residual * inside)[None, used]
        variance, df = sampled_variance(kept_residual, factor[used], pi[used])
        floor_weight = weight * mask[floor_query]
        variance, df = with_floor(variance, df, *floor_variance(floor_weight[None, :], spread, floor_pi),
                                  (kept_residual != 0).sum(axis=1), rules)
        alike = floor is not None and len(got["estimate"]) >= len(values) and not np.any(floor_weight)
        got["estimate"].append(0.0 if alike and count else float(kept.mean()) if count else math.nan)
        got["se_set"].append(math.sqrt(float(variance[0])) / count if count else math.nan)
        got["df_set"].append(float(df[0]))
        got["se_new"].append(float(kept.std(ddof=1)) / math.sqrt(count) if count > 1 else math.nan)
        got["t"].append(two_sided(level, count - 1) if count > 1 else math.nan)
    result = {name: np.asarray(column, dtype=float) for name, column in got.items()}
    return {**result, "z": set_quantile(result["df_set"], level, rules)}


def bounded_rows(table: pd.DataFrame, limits: tuple[float, float]) -> tuple[pd.DataFrame, list[str]]:
    """``table``'s rows (one measure's: :class:`DocumentEstimate`'s columns) with every estimate and interval
    outside the measure's range ``limits`` (a difference's: ``[-w, w]``) clipped to it, ``clipped`` naming what was
    (``""``: nothing; :func:`evalset.stats.verdicts.bounded`), and the notes that say so: a warning naming the
    estimates that left the range, a note naming the rows whose intervals alone did."""
    width = limits[1] - limits[0]
    rows, outside, wide = [], [], []
    for row in table.itertuples():
        within = (-width, width) if row.kind == "difference" else limits
        what = f"{row.name} on {row.measure}"
        this = bounded(row.estimate, row.set_low, row.set_high, within, f'{what} ("this set")')
        new = bounded(math.nan, row.new_low, row.new_high, within, f'{what} ("new queries")')
        rows.append((this.estimate, this.low, this.high, new.low, new.high,
                     "; ".join(text for text in (this.clipped, new.clipped) if text)))
        if this.estimate != row.estimate and not math.isnan(row.estimate):
            outside.append(f"{row.name} ({number(row.estimate, 4)})")
        elif rows[-1][-1]:
            wide.append(str(row.name))
    if not rows:
        return table.assign(clipped=""), []
    columns = ["estimate", "set_low", "set_high", "new_low", "new_high", "clipped"]
    bounded_table = table.assign(**dict(zip(columns, map(list, zip(*rows, strict=True)), strict=True)))
    measure, spans = table["measure"].iloc[0], f"[{limits[0]:g}, {limits[1]:g}]"
    if (table["kind"] == "difference").any():
        spans += f" (a difference's [{-width:g}, {width:g}])"
    notes = []
    if outside:
        several = len(outside) > 1
        notes.append(f"warning: {measure}: the estimate{'s' if several else ''} of {_listed(outside)} left the "
                     f"measure's range {spans} and {'were' if several else 'was'} clipped to it: an unbiased "
                     f"estimator can leave the range on a thin sample, and {NO_VERDICT} rests on such a figure")
    if wide:
        notes.append(f"note: {measure}: intervals clipped to the measure's range {spans} for {_listed(wide)}")
    return bounded_table, notes


def _listed(names: list[str], shown: int = 5) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


@dataclass(frozen=True)
class DocumentEstimate:
    """Per measure, each run's mean and each paired difference with both intervals (``table``: one row each,
    ``kind`` ``run`` or ``difference``), the settings, and the ``caveats``."""

    table: pd.DataFrame
    settings: dict[str, Any]
    caveats: list[str] = field(default_factory=list)
    missing: Missing | None = None

    def left_out(self, baseline: str, candidate: str) -> frozenset[str]:
        """The queries left out of the paired difference (under ``-c missing=skip``: those either run lacks)."""
        return self.missing.of_pair(baseline, candidate) if self.missing is not None else frozenset()

    def to_text(self) -> str:
        s = self.settings
        lines = [f"document sample: {s['sampled']} human-graded of {s['pairs']} pooled pairs over {s['queries']} "
                 f"queries ({s['estimator']}); level {s['level']:.4g}; this set: {s['this_set']}; new queries: "
                 f"Student's t on {s['queries'] - 1} df"]
        for measure, rows in self.table.groupby("measure", sort=False):
            header = [str(measure), "estimate", "this set", "new queries"]
            body = [[row.name, number(row.estimate, 4, sign=row.kind == "difference"),
                     f"[{number(row.set_low, 4)}, {number(row.set_high, 4)}]",
                     f"[{number(row.new_low, 4)}, {number(row.new_high, 4)}]"] for row in rows.itertuples()]
            lines += ["", *text_table([header, *body])]
        return "\n".join([*lines, *self.caveats])

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "rows": records(self.table),
                "notes": self.caveats}


def estimate_documents(pairs: pd.DataFrame, human: pd.DataFrame, llm: pd.DataFrame | None,
                       runs: Mapping[str, pd.DataFrame], *, measures: Sequence[str] = (DEFAULT_METRIC,),
                       contract: EvaluationContract | None = None,
                       comparisons: Sequence[tuple[str, str]] | None = None, level: float = 0.95,
                       chosen: Collection[str] | None = None,
                       sources: Mapping[str, object] | None = None, rules: DesignRules = DOCUMENT_SAMPLE,
                       strata: np.ndarray | None = None) -> DocumentEstimate:
    """Run means and paired differences (``comparisons``, baseline and candidate; default every pair of runs)
    from a document sample (module docstring); ``llm=None``: Horvitz-Thompson's estimator, no judge. ``chosen``:
    the contract's conventions the user chose (the missing-queries rule; default: every one when ``contract`` is
    given), ``sources``: run name -> its file, named when a run lacking queries is refused; ``rules`` the design's
    (:mod:`evalset.estimate.documents.rules`; ``strata`` per pair where they split the calibration)."""
    given = contract
    contract = contract or EvaluationContract()
    parsed = [document_terms(m, contract) for m in measures]
    pool = prepare_pool(pairs, llm, runs, contract, rules, strata)
    pi, sampled, grade = sample_arrays(pool, pairs, human)
    check_sample_size(int(sampled.sum()), len(pool.query_ids), source=pairs.attrs.get("source"))
    missing = pool_missing(pool, runs, contract, chosen_conventions(given, chosen), sources)
    sample = pool.sample(pi, sampled, grade)
    names = pool.names
    comparisons = list(comparisons) if comparisons is not None else list(itertools.combinations(names, 2))
    unknown = sorted({n for pair in comparisons for n in pair} - set(names))
    if unknown:
        pair = next(pair for pair in comparisons if unknown[0] in pair)
        raise InputError(f"no run named {unknown[0]} to compare in {pair[0]}:{pair[1]} (runs: {', '.join(names)})")
    index = [(names.index(b), names.index(c)) for b, c in comparisons]
    labels = names + [f"{c} - {b}" for b, c in comparisons]
    kinds = ["run"] * len(names) + ["difference"] * len(comparisons)
    answered = np.array([[query not in missing.left_out.get(name, ()) for query in pool.query_ids] for name in names])
    frames, ranges, clipped = [], {}, []
    for measure in parsed:
        values, z, over = pool.estimate(measure, sample, answered)
        got = mean_intervals(values, z, sample.variance_factor, sample.pi, level, index, over, sample.query,
                             pool.floor(measure, sample), pool.rules)
        ranges[str(measure)] = measure.bounds(sample.scale, pool.ranking(measure.ranking).depth)
        undefined = int((~over & answered).any(axis=0).sum())
        if undefined:
            clipped.append(f"note: {measure}: {undefined} of {len(pool.query_ids)} queries undefined (no "
                           f"{'relevant pair' if measure.form.normaliser == 'relevant' else 'gain'} estimated) and "
                           "left out of its means (undefined=skip)")
        (set_low, set_high), (new_low, new_high) = (around(got["estimate"], got["se_set"], got["z"]),
                                                    around(got["estimate"], got["se_new"], got["t"]))
        frame, notes = bounded_rows(pd.DataFrame({
            "measure": str(measure), "kind": kinds, "name": labels, "estimate": got["estimate"],
            "se_set": got["se_set"], "set_low": set_low, "set_high": set_high, "se_new": got["se_new"],
            "new_low": new_low, "new_high": new_high}), ranges[str(measure)])
        frames.append(frame)
        clipped += notes
    table = pd.concat(frames, ignore_index=True)
    per_query = sampled.sum() / len(pool.query_ids)
    caveats = missing.notes()
    if per_query < SMALL_SAMPLE:
        caveats.append(f"warning: {per_query:.1f} sampled pairs per query (under {SMALL_SAMPLE:g}): the \"this set\" "
                       "variance is unreliable at this size (heavy-tailed); rely on the \"new queries\" interval")
    if llm is None:
        caveats.append("note: without an LLM (Horvitz-Thompson) the \"this set\" interval of run means "
                       "under-covered on TREC DL 2019 (nominal 0.95; at 1,000 judgments nDCG@10 0.69, P@10 0.90, "
                       "AP 0.38: the ratios' bias, and a variance estimate right on average but heavy-tailed): "
                       "rely on \"new queries\"")
    caveats += clipped
    settings = {"measures": [str(m) for m in parsed], "pairs": len(pi), "sampled": int(sampled.sum()),
                "expected_sample": float(pi.sum()), "queries": len(pool.query_ids), "level": level,
                "estimator": "Horvitz-Thompson, no LLM" if llm is None else
                f"difference estimator, calibrated LLM: {', '.join(pool.judges)}",
                "judges": list(pool.judges), "design": rules.name, "this_set": rules.this_set,
                "contract": contract.to_dict(),
                "applied": {str(m): m.contract.to_dict() for m in parsed},
                "ranges": {name: list(limits) for name, limits in ranges.items()}, "missing": missing.policy,
                "lacking": {run: count for run, count in missing.counts.items() if count}}
    return DocumentEstimate(table, settings, caveats, missing)


def pool_missing(pool: DocumentPool, runs: Mapping[str, pd.DataFrame], contract: EvaluationContract,
             chosen: Collection[str], sources: Mapping[str, object] | None) -> Missing:
    """The missing-queries rule on the pool's queries (module docstring): the runs scored by the evaluation room on
    the pooled pairs, only to count the queries each lacks."""
    queries = list(pool.query_ids)
    qrels = pool.pairs.assign(grade=0)
    return missing_rule(query_values(runs, qrels, queries, "p@1", contract, chosen), queries, sources)
