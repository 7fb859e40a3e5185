"""Many systems at once: the randomised Tukey HSD against an independent reference (Carterette 2012's procedure
written out below, one permutation at a time), the two-way ANOVA against statsmodels, Holm and Bonferroni by hand,
and the compact letter display on hand cases."""

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate_runs
from evalset.stats.multiple import (
    all_pairs,
    baseline_pairs,
    compact_letters,
    corrected_pair_p_values,
    max_statistic_p_values,
    pair_matrix,
    two_way_anova,
)
from evalset.stats.paired import permutation_p_values

DL19 = Path(__file__).resolve().parents[2] / "data" / "dl19"


@pytest.fixture(scope="module")
def dl19_matrix() -> pd.DataFrame:
    """nDCG@10 of the 37 official DL19 runs on the 43 judged queries (queries x runs)."""
    runs = {path.name.removesuffix(".run.gz"): read_run(path) for path in sorted((DL19 / "runs").glob("*.run.gz"))}
    tables = evaluate_runs(runs, read_qrels(DL19 / "nist.qrels"), ["ndcg@10"])
    return pd.DataFrame({name: table["ndcg@10"] for name, table in tables.items()})


def reference_max_statistic(matrix: np.ndarray, pairs, permutations: int, seed: int, weights=None) -> np.ndarray:
    """Carterette's randomised test, one permutation at a time: shuffle each query's values across the systems,
    take the largest difference of (weighted) means over the family, and count how often it reaches each
    observed difference."""
    rng = np.random.default_rng(seed)
    n, runs = matrix.shape
    weights = np.full(n, 1 / n) if weights is None else weights
    means = weights @ matrix
    observed = np.array([abs(means[i] - means[j]) for i, j in pairs])
    largest = np.empty(permutations)
    for b in range(permutations):
        shuffled = np.array([row[rng.permutation(runs)] for row in matrix])
        m = weights @ shuffled
        largest[b] = max(abs(m[i] - m[j]) for i, j in pairs)
    return np.array([(1 + np.sum(largest >= d - 1e-12)) / (1 + permutations) for d in observed])


def within_monte_carlo_error(ours, ours_n, reference, reference_n):
    p = (ours + reference) / 2
    bound = 4 * np.sqrt(p * (1 - p) * (1 / ours_n + 1 / reference_n)) + 2 / reference_n
    return np.abs(ours - reference) <= bound


# ------------------------------------------------------------------------------------------------ Tukey HSD
@pytest.mark.slow
def test_randomised_tukey_on_the_37_dl19_runs_equals_the_reference_within_monte_carlo_error(dl19_matrix):
    x = dl19_matrix.to_numpy()
    assert x.shape == (43, 37)
    pairs = all_pairs(37)
    assert len(pairs) == 666
    ours = max_statistic_p_values(x, pairs, 9999, np.random.default_rng(20191))
    reference = reference_max_statistic(x, pairs, 2000, seed=7)
    agree = within_monte_carlo_error(ours, 10000, reference, 2000)
    assert agree.all(), np.abs(ours - reference).max()
    assert np.abs(ours - reference).max() < 0.03
    assert ((ours < 0.05) == (reference < 0.05)).mean() > 0.97  # the same verdicts but at the edge
    # the largest difference of all reaches no permutation; the adjusted p never falls below the smallest possible
    means = x.mean(axis=0)
    assert ours[np.argmax(np.abs(means[pairs[:, 0]] - means[pairs[:, 1]]))] == pytest.approx(1 / 10000)
    assert ours.min() >= 1 / 10000 and ours.max() <= 1


def test_the_same_seed_gives_the_same_p_values_and_a_pair_of_equal_runs_has_p_1(dl19_matrix):
    x = dl19_matrix.iloc[:, :6].to_numpy()
    pairs = all_pairs(6)
    first = max_statistic_p_values(x, pairs, 999, np.random.default_rng(1))
    assert np.array_equal(first, max_statistic_p_values(x, pairs, 999, np.random.default_rng(1)))
    twin = np.column_stack([x, x[:, 0]])
    p = max_statistic_p_values(twin, all_pairs(7), 999, np.random.default_rng(1))
    assert p[list(map(tuple, all_pairs(7))).index((0, 6))] == 1.0


def test_against_a_baseline_the_statistic_is_the_largest_difference_from_it_and_weights_count():
    rng = np.random.default_rng(3)
    x = rng.random((12, 5)) + np.array([0.0, 0.05, 0.1, 0.3, 0.02])
    weights = rng.random(12)
    weights /= weights.sum()
    pairs = baseline_pairs(5, 0)
    ours = max_statistic_p_values(x, pairs, 4000, np.random.default_rng(11), weights)
    reference = reference_max_statistic(x, pairs, 4000, seed=5, weights=weights)
    assert within_monte_carlo_error(ours, 4001, reference, 4000).all()
    # a baseline family is smaller than every pair: its adjusted p-values are no larger (same permutations)
    every = max_statistic_p_values(x, all_pairs(5), 4000, np.random.default_rng(11), weights)
    assert np.all(ours <= every[[list(map(tuple, all_pairs(5))).index((0, j)) for j in range(1, 5)]] + 1e-12)


def test_undefined_values_and_bad_weights_are_refused():
    with pytest.raises(InputError, match="undefined values"):
        max_statistic_p_values(np.array([[0.1, np.nan], [0.2, 0.3]]), all_pairs(2), 99, np.random.default_rng(0))
    with pytest.raises(InputError, match="summing to 1"):
        max_statistic_p_values(np.ones((2, 2)), all_pairs(2), 99, np.random.default_rng(0), np.array([0.2, 0.2]))
    with pytest.raises(InputError, match="permutations must be a positive integer"):
        max_statistic_p_values(np.ones((2, 2)), all_pairs(2), 0, np.random.default_rng(0))


# ------------------------------------------------------------------------------------------- Holm, Bonferroni
@pytest.mark.slow  # statsmodels' import
def test_holm_and_bonferroni_adjust_the_paired_permutation_p_values_as_by_hand(dl19_matrix):
    x = dl19_matrix.iloc[:, :5].to_numpy()
    pairs = all_pairs(5)
    raw, holm = corrected_pair_p_values(x, pairs, 2999, np.random.default_rng(9), "holm")
    differences = np.array([x[:, j] - x[:, i] for i, j in pairs])
    assert np.array_equal(raw, permutation_p_values(differences, 2999, np.random.default_rng(9)))  # THE test
    m = len(raw)
    order = np.argsort(raw, kind="stable")
    by_hand = np.empty(m)
    running = 0.0
    for rank, k in enumerate(order):  # step-down: max over the smaller ones of min(1, (m - rank) p)
        running = max(running, min(1.0, (m - rank) * raw[k]))
        by_hand[k] = running
    assert holm == pytest.approx(by_hand, abs=1e-15)
    _, bonferroni = corrected_pair_p_values(x, pairs, 2999, np.random.default_rng(9), "bonferroni")
    assert bonferroni == pytest.approx(np.minimum(1.0, m * raw), abs=1e-15)
    assert np.all(holm <= bonferroni)


def test_weighted_raw_p_values_test_the_weighted_mean_difference():
    rng = np.random.default_rng(4)
    x, weights = rng.random((9, 3)), rng.random(9)
    weights /= weights.sum()
    raw, _ = corrected_pair_p_values(x, baseline_pairs(3, 0), 999, np.random.default_rng(2), "holm", weights)
    scaled = np.array([(x[:, j] - x[:, 0]) * weights * 9 for j in (1, 2)])
    assert np.array_equal(raw, permutation_p_values(scaled, 999, np.random.default_rng(2)))
    assert scaled.mean(axis=1) == pytest.approx([weights @ (x[:, j] - x[:, 0]) for j in (1, 2)])


def test_pair_matrix_is_symmetric_with_one_on_the_diagonal():
    matrix = pair_matrix(np.array([0.1, 0.2]), baseline_pairs(3, 1), 3)
    assert np.allclose(matrix, [[1, 0.1, np.nan], [0.1, 1, 0.2], [np.nan, 0.2, 1]], equal_nan=True)


# ------------------------------------------------------------------------------------------------ ANOVA
@pytest.mark.slow  # statsmodels' import
def test_two_way_anova_equals_statsmodels(dl19_matrix):
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import AnovaRM, anova_lm

    long = dl19_matrix.rename_axis("topic").reset_index().melt(id_vars="topic", var_name="system",
                                                                value_name="value")
    ours = two_way_anova(dl19_matrix.to_numpy())
    table = AnovaRM(long, "value", "topic", within=["system"]).fit().anova_table
    assert (ours.df_system, ours.df_residual) == (36, 36 * 42) == tuple(table.loc["system", ["Num DF", "Den DF"]])
    assert ours.f_system == pytest.approx(table.loc["system", "F Value"], rel=1e-8)
    assert ours.p_system == pytest.approx(table.loc["system", "Pr > F"], rel=1e-8, abs=1e-300)
    fitted = anova_lm(ols("value ~ C(system) + C(topic)", data=long).fit())
    assert ours.f_topic == pytest.approx(fitted.loc["C(topic)", "F"], rel=1e-8)
    assert ours.ss_topic == pytest.approx(fitted.loc["C(topic)", "sum_sq"], rel=1e-8)
    assert ours.ss_residual == pytest.approx(fitted.loc["Residual", "sum_sq"], rel=1e-8)
    assert ours.ms_residual == pytest.approx(fitted.loc["Residual", "mean_sq"], rel=1e-8)
    assert ours.p_topic == pytest.approx(fitted.loc["C(topic)", "PR(>F)"], rel=1e-6, abs=1e-300)


def test_two_way_anova_of_a_small_matrix_by_hand():
    x = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 5.0]])  # grand mean 2.5
    anova = two_way_anova(x)
    assert anova.ss_system == pytest.approx(2 * ((1.5 - 2.5) ** 2 + (2 - 2.5) ** 2 + (4 - 2.5) ** 2))
    assert anova.ss_topic == pytest.approx(3 * ((2 - 2.5) ** 2 + (3 - 2.5) ** 2))
    assert anova.ss_residual == pytest.approx(np.sum((x - 2.5) ** 2) - anova.ss_system - anova.ss_topic)
    assert (anova.df_system, anova.df_topic, anova.df_residual) == (2, 1, 2)


# ------------------------------------------------------------------------------------------------ letters
def different(runs, pairs):
    matrix = np.zeros((runs, runs), dtype=bool)
    for i, j in pairs:
        matrix[i, j] = matrix[j, i] = True
    return matrix


@pytest.mark.parametrize(("runs", "pairs", "letters"), [
    (3, [], ["a", "a", "a"]),
    (3, [(0, 2)], ["a", "ab", "b"]),
    (3, [(0, 1), (0, 2), (1, 2)], ["a", "b", "c"]),
    (4, [(0, 2), (0, 3), (1, 3)], ["a", "ab", "bc", "c"]),
    (4, [(1, 2)], ["ab", "a", "b", "ab"]),  # not a run of neighbours: 0 and 3 are like both
    (5, [(0, 3), (0, 4), (1, 4)], ["a", "ab", "abc", "bc", "c"]),
    (1, [], ["a"]),
])
def test_compact_letters_on_hand_cases(runs, pairs, letters):
    assert compact_letters(different(runs, pairs)) == letters


def test_two_runs_share_a_letter_if_and_only_if_they_are_not_different():
    rng = np.random.default_rng(0)
    for _ in range(60):
        runs = int(rng.integers(2, 10))
        upper = np.triu(rng.random((runs, runs)) < rng.random(), 1)
        matrix = upper | upper.T
        letters = compact_letters(matrix)
        for i, j in itertools.combinations(range(runs), 2):
            assert bool(set(letters[i]) & set(letters[j])) == (not matrix[i, j]), (matrix, letters)


def test_compact_letters_refuse_an_asymmetric_matrix():
    with pytest.raises(InputError, match="symmetric"):
        compact_letters(np.array([[False, True], [False, False]]))
