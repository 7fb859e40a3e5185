"""The LLM as a calibrated prediction (of the document design, and of an ensemble of judges): each pooled pair's
distribution over the human grades, learnt from the human sample of the *other* queries, by the model of cells
that predicts the other queries best.

Conventions
-----------
- A **model** is a chain of cell codings of the pairs, coarse to fine, each with a pseudo-count: the prediction
  starts from the overall shares ``p0`` and at each level is ``p = (n s + a p_parent) / (n + a)``, ``s`` the
  shares of the pair's cell at that level, ``n`` its count, ``a`` the level's pseudo-count. The candidates
  (:func:`candidate_models`): each judge's grade alone (pseudo-count :data:`JUDGE_PSEUDO_COUNT`); the sum of the
  judges' grades alone; and the combination of every judge's grade (:data:`CELL_PSEUDO_COUNT`) shrunk toward
  each of those (the prototype's combination shrunk toward the best judge is one of them). With one judge, the
  one candidate. Sparse combination cells (4^3 = 64 of them with three judges) are why a fixed combination could
  lose to its best member: the choice below cannot, up to its own noise.
- The **shares** of a set of sampled pairs are the 1/pi-weighted shares of each human grade among them (what the
  whole pool's shares are, estimated without bias by Horvitz-Thompson); their **count** ``n`` is the number of
  sampled pairs in it (the pseudo-counts are in the same unit: sampled pairs).
- For a pair of query ``q`` the prediction is **cross-fitted**: the model and its shares are learnt on the sampled
  pairs of the queries other than ``q``, so that ``q``'s own human grades never fit its predictions and the
  difference estimator of :mod:`evalset.estimate.documents.estimators` stays unbiased given the other queries' sample.
  The model for ``q`` is the candidate of least **cross-validated error** on the other queries: for each sampled
  pair ``d`` of a query ``q' != q``, the prediction learnt leaving out both ``q`` and ``q'``, its loss the ranked
  probability score ``sum_j (1[g >= j] - P(grade >= j))^2`` over the positive grades (the squared errors of every
  level's indicator; their sum is the linear gain's), weighted by ``(1 - pi) / pi`` (a pair's share of the
  sampling variance: a pair sampled for certain costs none), or by the ``cost`` given (the ensemble of a human
  slice, whose pairs are all graded, weighs each alike). Of equal errors, the first candidate.
- A cell with no sampled pair of the other queries is its parent; with no sample of another query at all, every
  share is 0 (the prediction 0: Horvitz-Thompson's estimator).
- The human grades are the integers of ``scale`` (ascending); a pair's prediction of a quantity ``f(grade)`` is its
  expectation ``sum_g p(g) f(g)`` (the expected gain; for a binary measure the probability of grade >= rel).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

CELL_PSEUDO_COUNT = 10.0
"""The pseudo-count of a combination cell's shrinkage toward its parent (the issue's prototype)."""
JUDGE_PSEUDO_COUNT = 2.0
"""The pseudo-count of a single judge's (or the grades' sum's) cell toward the overall shares (the prototype)."""


@dataclass(frozen=True)
class Model:
    """A candidate: its name and its levels, coarse to fine, as (cell code of every pair, pseudo-count)."""

    name: str
    levels: tuple[tuple[np.ndarray, float], ...]


def _codes(values: np.ndarray) -> np.ndarray:
    return np.unique(values, axis=0, return_inverse=True)[1].reshape(-1)


def candidate_models(llm: np.ndarray, judges: tuple[str, ...] | None = None) -> list[Model]:
    """The candidates (module docstring) for the judges' grades ``llm`` (pairs x judges), simplest first."""
    llm = np.asarray(llm)
    names = judges or tuple(f"judge {j}" for j in range(llm.shape[1]))
    singles = [Model(names[j], ((_codes(llm[:, j]), JUDGE_PSEUDO_COUNT),)) for j in range(llm.shape[1])]
    if llm.shape[1] == 1:
        return singles
    total = Model("sum of grades", ((_codes(llm.sum(axis=1)), JUDGE_PSEUDO_COUNT),))
    combination = (_codes(llm), CELL_PSEUDO_COUNT)
    return [*singles, total, *(Model(f"combination over {m.name}", (*m.levels, combination))
                               for m in [*singles, total])]


def stratified_models(models: list[Model], strata: np.ndarray, pseudo_count: float) -> list[Model]:
    """Each of ``models`` with its finest cell split by the pairs' strata (``strata``: pairs x levels of codes,
    coarse to fine), one level each with ``pseudo_count``: a pair learns from pairs of its judges' grades *and* of
    its stratum, shrunk toward its judges' grades alone."""
    strata = np.asarray(strata).reshape(len(models[0].levels[0][0]), -1)
    split = []
    for model in models:
        finest = model.levels[-1][0]
        levels = tuple((_codes(np.c_[finest, strata[:, :depth + 1]]), pseudo_count) for depth in range(strata.shape[1]))
        split.append(Model(f"{model.name} by stratum", (*model.levels, *levels)))
    return split


class _Sums:
    """Per query, the 1/pi-weighted grade sums and counts of each cell of one coding over the sampled pairs."""

    def __init__(self, code: np.ndarray, rows: np.ndarray, sample_query: np.ndarray, queries: int,
                 grade_index: np.ndarray, weight: np.ndarray, grades: int) -> None:
        cells = int(code.max()) + 1 if len(code) else 1
        self.sums = np.zeros((queries, cells, grades))
        np.add.at(self.sums, (sample_query, code[rows], grade_index), weight)
        self.counts = np.zeros((queries, cells))
        np.add.at(self.counts, (sample_query, code[rows]), 1.0)
        self.total_sums, self.total_counts = self.sums.sum(axis=0), self.counts.sum(axis=0)

    def without(self, cell: np.ndarray, one: np.ndarray, two: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sums and counts of ``cell`` over the sample of every query but ``one`` and ``two`` (broadcast)."""
        other = two != one
        sums = self.total_sums[cell] - self.sums[one, cell] - np.where(other[..., None], self.sums[two, cell], 0.0)
        counts = self.total_counts[cell] - self.counts[one, cell] - np.where(other, self.counts[two, cell], 0.0)
        return sums, counts


def _shares(sums: np.ndarray) -> np.ndarray:
    total = sums.sum(axis=-1, keepdims=True)
    return np.divide(sums, total, out=np.zeros_like(sums), where=total > 0)


class _Fitted:
    """Every level's sums of one model, and its prediction of pairs leaving out queries."""

    def __init__(self, model: Model, overall: _Sums, make: Callable[[np.ndarray], _Sums]) -> None:
        self.overall = overall
        self.levels = [(code, pseudo, make(code)) for code, pseudo in model.levels]

    def predict(self, pairs: np.ndarray, one: np.ndarray, two: np.ndarray) -> np.ndarray:
        zero = np.zeros_like(pairs)
        p = _shares(self.overall.without(zero, one, two)[0])
        for code, pseudo, sums in self.levels:
            s, n = sums.without(code[pairs], one, two)
            p = (n[..., None] * _shares(s) + pseudo * p) / (n[..., None] + pseudo)
        return p


def calibrated_distribution(llm: np.ndarray, query: np.ndarray, queries: int, sampled: np.ndarray,
                            grade: np.ndarray, pi: np.ndarray, scale: np.ndarray,
                            models: list[Model] | None = None,
                            cost: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's predicted distribution over ``scale`` (pairs x grades) and each query's model (an index into
    ``models``, default :func:`candidate_models`).

    ``llm``: pairs x judges, the judges' grades; ``query``: each pair's query code in ``range(queries)``;
    ``sampled``, ``grade`` (read where sampled) and ``pi``: the human sample; ``cost``: each sampled pair's weight
    in the cross-validated error (default ``(1 - pi) / pi``). Module docstring for the rules.
    """
    llm = np.asarray(llm)
    models = models or candidate_models(llm)
    rows = np.flatnonzero(sampled)
    grade_index = np.searchsorted(scale, grade[rows])
    weight = 1.0 / pi[rows]
    sample_query = query[rows]

    built: dict[int, _Sums] = {}  # the models share codings: each one's sums once

    def make(code: np.ndarray) -> _Sums:
        if id(code) not in built:
            built[id(code)] = _Sums(code, rows, sample_query, queries, grade_index, weight, len(scale))
        return built[id(code)]

    overall = make(np.zeros(len(llm), dtype=np.int64))
    fitted = [_Fitted(model, overall, make) for model in models]
    choice = np.zeros(queries, dtype=np.int64)
    if len(models) > 1 and len(rows):
        cost = (1.0 - pi[rows]) / pi[rows] if cost is None else np.asarray(cost, dtype=np.float64)[rows]
        # Leaving out a query without a sample changes nothing: one such query stands for them all.
        with_sample = np.unique(sample_query)
        without = np.setdiff1d(np.arange(queries), with_sample)
        left = np.concatenate([with_sample, without[:1]])[:, None]  # left-out x scored: the row's query and the
        scored = cost > 0  # a pair of no cost adds nothing to an error (a set's pair judged for certain): not scored
        scored_rows, scored_query, cost = rows[scored], sample_query[scored], cost[scored]
        elsewhere = scored_query[None, :] != left  # the pair's own query is left out too
        cumulative = (grade_index[scored][:, None] >= np.arange(1, len(scale))[None, :]).astype(float)  # x levels
        errors = []
        for model in fitted:
            p = model.predict(np.broadcast_to(scored_rows, (len(left), len(scored_rows))), left, scored_query[None, :])
            above = np.cumsum(p[..., ::-1], axis=-1)[..., ::-1][..., 1:]  # P(grade >= j), j = scale[1:]
            loss = ((cumulative[None] - above) ** 2).sum(axis=-1) * cost[None, :]
            errors.append(np.where(elsewhere, loss, 0.0).sum(axis=1))
        best = np.argmin(np.array(errors), axis=0)  # the first of equal errors
        choice[with_sample] = best[:len(with_sample)]
        choice[without] = best[-1]
    predicted = np.zeros((len(llm), len(scale)))
    for number in np.unique(choice):
        these = np.flatnonzero(choice[query] == number)
        predicted[these] = fitted[number].predict(these, query[these], query[these])
    return predicted, choice
