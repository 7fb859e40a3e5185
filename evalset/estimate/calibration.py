"""The LLM as a calibrated prediction: each pooled pair's distribution over the human grades, learnt from the
human sample of the *other* queries.

Conventions
-----------
- A pair's **cell** is the combination of every judge's grade of it (one grade per judge for every pooled pair);
  its **best-judge cell** is the best judge's grade alone.
- The **shares** of a set of sampled pairs are the 1/pi-weighted shares of each human grade among them (what the
  whole pool's shares are, estimated without bias by Horvitz-Thompson); their **count** ``n`` is the number of
  sampled pairs in it (the pseudo-counts below are in the same unit: sampled pairs).
- For a pair of query ``q`` the prediction is **cross-fitted**: it is learnt on the sampled pairs of the queries
  other than ``q``, so that ``q``'s own human grades never fit its predictions and the difference estimator of
  :mod:`evalset.estimate.docmeasures` stays unbiased given the other queries' sample. The overall shares ``p0``;
  the best-judge cell's ``p_b = (n_b s_b + 2 p0) / (n_b + 2)`` (shrunk toward ``p0``, pseudo-count
  :data:`JUDGE_PSEUDO_COUNT`); the cell's ``p = (n_c s_c + 10 p_b) / (n_c + 10)`` (shrunk toward ``p_b``,
  pseudo-count :data:`CELL_PSEUDO_COUNT`). A cell with no sampled pair of another query is ``p_b``; with no sample
  of another query at all, every share is 0 (the prediction 0: Horvitz-Thompson's estimator).
- The **best judge** for query ``q`` is the judge with the highest 1/pi-weighted share of exact agreement with the
  human grade on the sampled pairs of the other queries (cross-fitted too); of equal shares, the first judge
  column (:func:`evalset.estimate.docestimate.prepare_pool` orders the judges by name).
- The human grades are the integers of ``scale`` (ascending); a pair's prediction of a quantity ``f(grade)`` is its
  expectation ``sum_g p(g) f(g)`` (the expected gain; for a binary measure the probability of grade >= rel).
"""

from __future__ import annotations

import numpy as np

CELL_PSEUDO_COUNT = 10.0
"""The pseudo-count of a cell's shrinkage toward the best judge's cell (the issue's prototype)."""
JUDGE_PSEUDO_COUNT = 2.0
"""The pseudo-count of the best judge's cell's shrinkage toward the overall shares (the issue's prototype)."""


def _leave_one_out(codes: np.ndarray, query: np.ndarray, queries: int, cells: int, grade: np.ndarray,
                   weight: np.ndarray, grades: int) -> tuple[np.ndarray, np.ndarray]:
    """Weighted grade sums (queries x cells x grades) and counts (queries x cells) of the sampled pairs
    (``codes``, ``query``, ``grade``, ``weight`` of them) of every query but the row's own."""
    sums = np.zeros((queries, cells, grades))
    np.add.at(sums, (query, codes, grade), weight)
    counts = np.zeros((queries, cells))
    np.add.at(counts, (query, codes), 1.0)
    return sums.sum(axis=0) - sums, counts.sum(axis=0) - counts


def _shares(sums: np.ndarray) -> np.ndarray:
    total = sums.sum(axis=-1, keepdims=True)
    return np.divide(sums, total, out=np.zeros_like(sums), where=total > 0)


def best_judges(llm: np.ndarray, query: np.ndarray, queries: int, sampled: np.ndarray, grade: np.ndarray,
                pi: np.ndarray) -> np.ndarray:
    """The best judge's column for each query (module docstring): cross-fitted weighted agreement."""
    rows = np.flatnonzero(sampled)
    weight = 1.0 / pi[rows]
    agree = np.zeros((queries, llm.shape[1]))
    np.add.at(agree, query[rows], weight[:, None] * (llm[rows] == grade[rows, None]))
    total = np.bincount(query[rows], weights=weight, minlength=queries)
    other = agree.sum(axis=0) - agree
    other_total = total.sum() - total
    share = np.divide(other, other_total[:, None], out=np.zeros_like(other), where=other_total[:, None] > 0)
    return np.argmax(share, axis=1)  # the first of equal shares


def calibrated_distribution(llm: np.ndarray, query: np.ndarray, queries: int, sampled: np.ndarray,
                            grade: np.ndarray, pi: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's predicted distribution over ``scale`` (pairs x grades) and each query's best judge.

    ``llm``: pairs x judges, the judges' grades; ``query``: each pair's query code in ``range(queries)``;
    ``sampled``, ``grade`` (read where sampled) and ``pi``: the human sample. Module docstring for the rules.
    """
    llm = np.asarray(llm)
    rows = np.flatnonzero(sampled)
    grade_index = np.searchsorted(scale, grade[rows])
    weight = 1.0 / pi[rows]
    grades = len(scale)
    sample_query = query[rows]
    overall, _ = _leave_one_out(np.zeros(len(rows), dtype=np.int64), sample_query, queries, 1, grade_index,
                                weight, grades)
    p0 = _shares(overall)[:, 0, :]  # queries x grades
    best = best_judges(llm, query, queries, sampled, grade, pi)
    _, cell = np.unique(llm, axis=0, return_inverse=True)
    cell = cell.reshape(-1)
    cell_sums, cell_counts = _leave_one_out(cell[rows], sample_query, queries, int(cell.max()) + 1, grade_index,
                                            weight, grades)
    predicted = np.zeros((len(llm), grades))
    for judge in np.unique(best):
        _, judge_code = np.unique(llm[:, judge], return_inverse=True)
        judge_sums, judge_counts = _leave_one_out(judge_code[rows], sample_query, queries,
                                                  int(judge_code.max()) + 1, grade_index, weight, grades)
        shrunk = ((judge_counts[..., None] * _shares(judge_sums) + JUDGE_PSEUDO_COUNT * p0[:, None, :])
                  / (judge_counts[..., None] + JUDGE_PSEUDO_COUNT))  # queries x judge grades x grades
        these = np.flatnonzero(best[query] == judge)
        q, c = query[these], cell[these]
        n = cell_counts[q, c][:, None]
        predicted[these] = ((n * _shares(cell_sums[q, c]) + CELL_PSEUDO_COUNT * shrunk[q, judge_code[these]])
                            / (n + CELL_PSEUDO_COUNT))
    return predicted, best
