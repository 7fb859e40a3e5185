"""A measure's terms over a pool of documents under a contract: what the document-sampled design reads from the
metrics engine (:mod:`evalset.estimate.documents`), so that it writes no gain, discount, cutoff or spelling.

Conventions
-----------
- :func:`document_terms` parses a measure as ``evalset score`` does (:func:`~evalset.metrics.measures.parse_measure`)
  and binds its :class:`~evalset.metrics.decomposition.Decomposition` to the contract, the measure's own parameters
  applied (``P(rel=2)@10``, ``nDCG(dcg='exp-log2')@10``, ``judged_only``). Every convention is honoured or the
  measure is refused with one line: a measure the registry declares no decomposition for, and a pairwise numerator
  (AP) under ``ties=expected``. ``missing`` and ``undefined`` are the caller's (a mean's queries): a normaliser of 0
  marks the query undefined (:meth:`DocumentTerms.ratio` gives NaN).
- :func:`rank_pool` ranks each run as the engine does (:func:`~evalset.metrics.ranking.order_run` under the tie
  rule, a repeated document once) and holds each place as the index of its pair in the pool (``N``, one past the
  pool, for a document outside it or no document). The pool is the documents that are or would be judged: under
  ``unjudged=condensed`` a document outside it leaves the ranking before the ranks are counted. Under
  ``ties=expected`` each place keeps its tie group's first place and size (documents of one query with one score).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalset.contract import EvaluationContract, UnjudgedPolicy
from evalset.errors import InputError
from evalset.metrics.decomposition import (
    Decomposition,
    discount_area,
    discount_area_slope,
    gain,
    group_mean,
    pairwise_numerator,
    within,
)
from evalset.metrics.measures import MEASURES, Measure, parse_measure
from evalset.metrics.ranking import TieRule, order_run, position_in_group


@dataclass(frozen=True)
class PoolRanking:
    """The runs' rankings as pool indexes: ``position[run, query, place]`` (``N`` outside the pool or no
    document), each place's tie group (``start``, ``size``; itself alone under a strict rule), the runs' ``names``."""

    names: tuple[str, ...]
    position: np.ndarray
    start: np.ndarray
    size: np.ndarray

    @property
    def depth(self) -> int:
        return self.position.shape[2]


def rank_pool(runs: Mapping[str, pd.DataFrame], pairs: pd.DataFrame, query_ids: Sequence[str], ties: TieRule,
              unjudged: UnjudgedPolicy) -> PoolRanking:
    """Each run's ranking under the tie rule and the ``unjudged`` convention as indexes into ``pairs`` (``query_id,
    doc_id``, str, in pool order) over ``query_ids`` (module docstring)."""
    index = pd.Series(np.arange(len(pairs)), index=pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]]))
    code = {query: number for number, query in enumerate(query_ids)}
    frames = []
    for run in runs.values():
        frame = order_run(run, ties).to_frame()
        frame = frame[frame["query_id"].astype(str).isin(code)]
        keys = pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])
        found = index.reindex(keys).to_numpy(dtype=np.float64)
        if unjudged == "condensed":
            frame, found = frame[~np.isnan(found)], found[~np.isnan(found)]
        query = frame["query_id"].astype(str).map(code).to_numpy(dtype=np.int64)
        place = position_in_group(query)
        first, size = _tie_groups(query, place, frame["score"].to_numpy(dtype=np.float64))
        frames.append((query, place, np.where(np.isnan(found), len(pairs), found).astype(np.int64), first, size))
    depth = max((int(f[1].max()) + 1 for f in frames if len(f[1])), default=1)
    shape = (len(frames), len(query_ids), depth)
    position = np.full(shape, len(pairs), dtype=np.int64)
    start = np.broadcast_to(np.arange(depth), shape).copy()
    size = np.ones(shape, dtype=np.int64)
    for number, (query, place, found, first, group) in enumerate(frames):
        position[number, query, place] = found
        if ties == "expected":
            start[number, query, place], size[number, query, place] = first, group
    return PoolRanking(tuple(runs), position, start, size)


def _tie_groups(query: np.ndarray, place: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's tie group (its query's rows with its score, contiguous in an ordered run): its first place and
    its size."""
    if len(query) == 0:
        return place, place
    new_group = np.r_[True, (query[1:] != query[:-1]) | (score[1:] != score[:-1])]
    starts = np.flatnonzero(new_group)
    group = np.cumsum(new_group) - 1
    return place[starts][group], np.diff(np.r_[starts, len(query)])[group]


@dataclass(frozen=True)
class DocumentTerms:
    """One measure bound to a contract (module docstring): ``measure``, ``contract`` (its own parameters applied)
    and ``form``, its registered decomposition."""

    measure: Measure
    contract: EvaluationContract
    form: Decomposition

    def __str__(self) -> str:
        return str(self.measure)

    @property
    def ranking(self) -> tuple[str, str]:
        """The conventions its ranking depends on: ``(ties, unjudged)`` (a key of :func:`rank_pool`'s results)."""
        return self.contract.ties, self.contract.unjudged

    def quantity(self, scale: np.ndarray) -> np.ndarray:
        """The quantity at each grade of ``scale``: its gain under the contract, or whether it is relevant."""
        scale = np.asarray(scale)
        if self.form.quantity == "gain":
            return gain(scale, self.contract.gain)
        return (scale >= self.contract.rel_level).astype(np.float64)

    def levels(self, scale: np.ndarray) -> list[tuple[np.ndarray, float]]:
        """The normaliser's counts: for each, the indicator over ``scale`` of the grades it counts and its step
        (nDCG: grade >= j and ``gain(j) - gain(j')``; AP: relevant and 1; none without a normaliser)."""
        scale = np.asarray(scale)
        if self.form.normaliser == "relevant":
            return [(self.quantity(scale), 1.0)]
        if self.form.normaliser == "none":
            return []
        gain = self.quantity(scale)
        return [((scale >= scale[j]).astype(np.float64), float(gain[j] - (gain[j - 1] if j else 0.0)))
                for j in np.flatnonzero(scale > 0)]

    def area_cutoff(self, depth: int) -> int:
        """The last rank the normaliser's area reaches: the cutoff, or ``depth`` (the longest list) without one."""
        return self.measure.cutoff or depth

    def area(self, counts: np.ndarray, depth: int) -> np.ndarray:
        """A count's share of the normaliser: the discounts' area below it (nDCG), the count itself (AP)."""
        if self.form.normaliser == "relevant":
            return np.asarray(counts, dtype=np.float64)
        return discount_area(counts, self.area_cutoff(depth))

    def area_slope(self, counts: np.ndarray, depth: int) -> np.ndarray:
        """The derivative of :meth:`area` in the count."""
        if self.form.normaliser == "relevant":
            return np.ones(np.shape(counts))
        return discount_area_slope(counts, self.area_cutoff(depth))

    def weights(self, ranking: PoolRanking) -> np.ndarray:
        """A linear numerator's weight of each place (runs x queries x places), its tie group's mean under
        ``ties=expected``."""
        place = np.arange(ranking.depth)
        weight = self.form.weight(place, self.measure.cutoff)
        if self.contract.ties != "expected":
            return np.broadcast_to(weight, ranking.position.shape)
        return group_mean(np.broadcast_to(weight, ranking.position.shape), ranking.start, ranking.size)

    def numerator(self, x: np.ndarray, ranking: PoolRanking) -> tuple[np.ndarray, np.ndarray]:
        """The numerator per run and query from the quantity ``x`` at each place, and its slope in each place's."""
        if self.form.numerator == "linear":
            weight = self.weights(ranking)
            return (x * weight).sum(axis=2), weight
        return pairwise_numerator(x, self._rank_weight(np.arange(ranking.depth)))

    def cross(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The numerator's coefficient of ``x_a x_b`` for two different 0-based places (arrays alike): 0 for a linear
        numerator; AP's, the rank weight of the later place within the cutoff."""
        if self.form.numerator == "linear":
            return np.zeros(np.broadcast(first, second).shape)
        return self._rank_weight(np.maximum(first, second))

    def _rank_weight(self, place: np.ndarray) -> np.ndarray:
        """AP's weight of a 0-based place: ``1 / rank`` within the cutoff, 0 beyond."""
        return within(place, self.measure.cutoff) / (place + 1.0)

    def sorted_numerator(self, values: np.ndarray, query: np.ndarray, queries: int) -> np.ndarray:
        """Per query (``query``: each value's query code): the linear numerator over the query's ``values`` sorted
        from the highest (nDCG's ideal of fractional gains)."""
        order = np.lexsort((-values, query))
        ranked, rank_query = values[order], query[order]
        place = np.arange(len(ranked)) - np.searchsorted(rank_query, np.arange(queries))[rank_query]
        return np.bincount(rank_query, weights=ranked * self.form.weight(place, self.measure.cutoff),
                           minlength=queries)

    def bounds(self, scale: np.ndarray, depth: int) -> tuple[float, float]:
        """The range of its values over the grades of ``scale``: the registry's, or for an unbounded linear
        measure (DCG) the highest quantity times the weights of every place up to the cutoff."""
        low, high = self.measure.kind.bounds
        if np.isfinite(high):
            return low, high
        weight = self.form.weight(np.arange(self.measure.cutoff or depth), self.measure.cutoff)
        return low, float(self.quantity(scale).max(initial=0.0) * weight.sum())

    def ratio(self, numerator: np.ndarray, normaliser: np.ndarray) -> np.ndarray:
        """The value per run and query: the numerator over the normaliser (per query), NaN where that is 0."""
        return np.divide(numerator, normaliser[None, :], out=np.full(numerator.shape, np.nan),
                         where=normaliser[None, :] > 0)


def document_terms(text: str, contract: EvaluationContract) -> DocumentTerms:
    """The measure ``text`` (any spelling ``evalset score`` takes) bound to ``contract`` (module docstring);
    a measure or convention the decomposition does not cover is refused with one line."""
    measure = parse_measure(text)
    form = measure.kind.decomposition
    if form is None:
        known = ", ".join(kind.spelling for kind in MEASURES.values() if kind.decomposition is not None)
        raise InputError(f"{measure} does not decompose over a query's documents, so a document sample cannot "
                         f"estimate it; the measures that do: {known}")
    applied = measure.contract(contract)
    if form.numerator == "pairwise" and applied.ties == "expected":
        raise InputError(f"{measure} cannot be estimated from a document sample under ties=expected: the "
                         "expectation of its pairwise numerator over the orders of a tie group is not derived; "
                         "use ties=trec, run or docid")
    return DocumentTerms(measure, applied, form)
