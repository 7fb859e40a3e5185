"""The calibrated prediction against a hand computation: 1/pi-weighted shares of the other queries' sample, the
cell shrunk toward the best judge's cell (pseudo-count 10), that toward the overall shares (pseudo-count 2)."""

import numpy as np
import pytest

from evalset.estimate.calibration import best_judges, calibrated_distribution

# pairs: (query, judge a, judge b, human grade, pi, sampled)
PAIRS = [(0, 1, 1, 1, 0.5, True), (0, 0, 1, 0, 0.25, True), (0, 1, 0, 1, 1.0, True),
         (1, 1, 1, 0, 0.5, True), (1, 0, 0, 0, 0.5, False),
         (2, 1, 1, 0, 0.5, False), (2, 0, 0, 0, 0.5, False)]


def arrays():
    table = np.array([row[:4] for row in PAIRS])
    pi = np.array([row[4] for row in PAIRS])
    sampled = np.array([row[5] for row in PAIRS])
    return table[:, 0], table[:, 1:3], table[:, 3], pi, sampled


def test_the_prediction_of_a_pair_is_the_shrunk_weighted_share_of_the_other_queries():
    query, llm, grade, pi, sampled = arrays()
    predicted, best = calibrated_distribution(llm, query, 3, sampled, grade, pi, np.array([0, 1]))
    # query 2 learns from the sample of queries 0 and 1, weights 1/pi = 2, 4, 1, 2
    overall = np.array([4 + 2, 2 + 1]) / 9
    # judge a agrees on weights 2 + 4 + 1 of 9, judge b on 2 of 9: a is the best judge
    assert best[2] == 0
    judge_cell = (3 * np.array([2, 3]) / 5 + 2 * overall) / (3 + 2)  # a = 1: pairs 0, 2, 3 (grades 1, 1, 0)
    cell = (2 * np.array([2, 2]) / 4 + 10 * judge_cell) / (2 + 10)  # (a, b) = (1, 1): pairs 0 and 3
    np.testing.assert_allclose(predicted[5], cell, atol=1e-12)
    judge_cell = (1 * np.array([1, 0]) + 2 * overall) / (1 + 2)  # a = 0: pair 1 (grade 0)
    np.testing.assert_allclose(predicted[6], judge_cell, atol=1e-12)  # (0, 0): no sampled pair of another query
    np.testing.assert_allclose(predicted.sum(axis=1), 1.0)


def test_a_query_never_learns_from_its_own_sample():
    query, llm, grade, pi, sampled = arrays()
    before, _ = calibrated_distribution(llm, query, 3, sampled, grade, pi, np.array([0, 1]))
    flipped = grade.copy()
    flipped[:3] = 1 - flipped[:3]  # query 0's own human grades change
    after, _ = calibrated_distribution(llm, query, 3, sampled, flipped, pi, np.array([0, 1]))
    np.testing.assert_array_equal(after[:3], before[:3])
    assert not np.allclose(after[3:], before[3:])


def test_with_no_sample_elsewhere_the_prediction_is_zero_and_the_best_judge_the_first():
    query, llm, grade, pi, _ = arrays()
    only_query_0 = query == 0
    predicted, best = calibrated_distribution(llm, query, 3, only_query_0, grade, pi, np.array([0, 1]))
    assert predicted[:3].sum() == pytest.approx(0.0) and predicted[3:].sum(axis=1) == pytest.approx(np.ones(4))
    assert best[0] == 0 and best_judges(llm, query, 3, only_query_0, grade, pi)[0] == 0
