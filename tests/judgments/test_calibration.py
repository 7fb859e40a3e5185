"""The calibrated prediction against a hand computation: 1/pi-weighted shares of the other queries' sample, a
combination cell shrunk toward its parent (pseudo-count 10), a judge's cell toward the overall shares
(pseudo-count 2); the model of each query chosen by its cross-validated error on the other queries."""

import itertools

import numpy as np
import pytest

from evalset.judgments.calibration import calibrated_distribution, candidate_models

# pairs: (query, judge a, judge b, human grade, pi, sampled)
PAIRS = [(0, 1, 1, 1, 0.5, True), (0, 0, 1, 0, 0.25, True), (0, 1, 0, 1, 1.0, True),
         (1, 1, 1, 0, 0.5, True), (1, 0, 0, 0, 0.5, False),
         (2, 1, 1, 0, 0.5, False), (2, 0, 0, 0, 0.5, False)]
SCALE = np.array([0, 1])


def arrays():
    table = np.array([row[:4] for row in PAIRS])
    pi = np.array([row[4] for row in PAIRS])
    sampled = np.array([row[5] for row in PAIRS])
    return table[:, 0], table[:, 1:3], table[:, 3], pi, sampled


def test_the_candidates_are_each_judge_the_sum_and_the_combination_over_each():
    names = [m.name for m in candidate_models(arrays()[1], ("a", "b"))]
    assert names == ["a", "b", "sum of grades", "combination over a", "combination over b",
                     "combination over sum of grades"]
    assert [m.name for m in candidate_models(arrays()[1][:, :1], ("a",))] == ["a"]


def test_the_prediction_of_a_pair_is_the_shrunk_weighted_share_of_the_other_queries():
    query, llm, grade, pi, sampled = arrays()
    over_a = candidate_models(llm, ("a", "b"))[3]  # the prototype's: the combination over judge a
    predicted, choice = calibrated_distribution(llm, query, 3, sampled, grade, pi, SCALE, [over_a])
    # query 2 learns from the sample of queries 0 and 1, weights 1/pi = 2, 4, 1, 2
    overall = np.array([4 + 2, 2 + 1]) / 9
    judge_cell = (3 * np.array([2, 3]) / 5 + 2 * overall) / (3 + 2)  # a = 1: pairs 0, 2, 3 (grades 1, 1, 0)
    cell = (2 * np.array([2, 2]) / 4 + 10 * judge_cell) / (2 + 10)  # (a, b) = (1, 1): pairs 0 and 3
    np.testing.assert_allclose(predicted[5], cell, atol=1e-12)
    judge_cell = (1 * np.array([1, 0]) + 2 * overall) / (1 + 2)  # a = 0: pair 1 (grade 0)
    np.testing.assert_allclose(predicted[6], judge_cell, atol=1e-12)  # (0, 0): no sampled pair of another query
    np.testing.assert_allclose(predicted.sum(axis=1), 1.0)
    assert choice.tolist() == [0, 0, 0]


def loss(llm, query, grade, pi, sampled, model, left_out):
    """The cross-validated error of ``model`` for query ``left_out`` by brute force: for each sampled pair of
    another query, refit without that query and ``left_out`` (their pairs unsampled) and score the prediction."""
    total = 0.0
    for d in np.flatnonzero(sampled & (query != left_out)):
        kept = sampled & (query != left_out) & (query != query[d])
        p, _ = calibrated_distribution(llm, query, 3, kept, grade, pi, SCALE, [model])
        total += (1 - pi[d]) / pi[d] * (float(grade[d] >= 1) - p[d, 1]) ** 2
    return total


def test_each_query_takes_the_candidate_of_least_cross_validated_error_on_the_others():
    rng = np.random.default_rng(5)
    query = np.repeat(np.arange(3), 8)
    grade = rng.integers(0, 2, size=24)
    llm = np.c_[np.where(rng.random(24) < 0.8, grade, 1 - grade), rng.integers(0, 2, size=24)]  # a good, b noise
    pi = rng.uniform(0.3, 0.9, size=24)
    sampled = rng.random(24) < pi
    models = candidate_models(llm, ("a", "b"))
    _, choice = calibrated_distribution(llm, query, 3, sampled, grade, pi, SCALE, models)
    for q in range(3):
        errors = [loss(llm, query, grade, pi, sampled, model, q) for model in models]
        assert choice[q] == int(np.argmin(errors)), (q, errors)
    assert models[choice[0]].name != "b"


def test_a_query_never_learns_from_its_own_sample():
    query, llm, grade, pi, sampled = arrays()
    before, choice = calibrated_distribution(llm, query, 3, sampled, grade, pi, SCALE)
    for flipped in itertools.product([0, 1], repeat=3):  # query 0's own human grades change
        changed = grade.copy()
        changed[:3] = flipped
        after, again = calibrated_distribution(llm, query, 3, sampled, changed, pi, SCALE)
        np.testing.assert_array_equal(after[:3], before[:3])
        assert again[0] == choice[0]


def test_with_no_sample_elsewhere_the_prediction_is_zero():
    query, llm, grade, pi, _ = arrays()
    only_query_0 = query == 0
    predicted, _ = calibrated_distribution(llm, query, 3, only_query_0, grade, pi, SCALE)
    assert predicted[:3].sum() == pytest.approx(0.0) and predicted[3:].sum(axis=1) == pytest.approx(np.ones(4))


def test_split_by_stratum_a_hole_learns_from_the_holes_of_other_queries_shrunk_toward_its_judges_grade():
    """stratified_models: the LLM grades 1 everywhere; the judged pairs (stratum 0) are grade 1, the holes
    (stratum 1) grade 0. A hole of query 2 predicts from the other queries' sampled holes, shrunk toward the cell
    of its judge's grade with the stratum's pseudo-count."""
    from evalset.judgments.calibration import stratified_models

    query = np.repeat([0, 1, 2], 4)
    hole = np.tile([0, 0, 1, 1], 3)
    llm = np.ones((12, 1), dtype=np.int64)
    grade = np.where(hole == 1, 0, 1)
    sampled, pi = np.ones(12, dtype=bool), np.ones(12)
    models = stratified_models(candidate_models(llm), hole[:, None], pseudo_count=2.0)
    assert [model.name for model in models] == ["judge 0 by stratum"]
    predicted, _ = calibrated_distribution(llm, query, 3, sampled, grade, pi, np.array([0, 1]), models)
    # the judge's cell over queries 0 and 1: 4 of 8 grade 1; the holes' cell: 4 holes, all 0 -> (4 * 1 + 2 * 0.5) / 6
    assert predicted[10] == pytest.approx([5 / 6, 1 / 6])
    assert predicted[8] == pytest.approx([1 / 6, 5 / 6])  # a judged pair: (4 * 0 + 2 * 0.5) / 6 of grade 0
