"""Agreement statistics against worked examples with known answers and independent references: scikit-learn's
cohen_kappa_score, statsmodels' asymptotic standard error, Krippendorff's published alpha, a brute-force view
of the query bootstrap, and tau_AP by hand."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from evalset.agreement import agreement_report, analyse_agreement, landis_koch
from evalset.agreement.kappa import asymptotic_se, disagreement_weights, kappa_from_confusion
from evalset.errors import InputError
from evalset.stats.rankings import tau_ap

SCALE = [0, 1, 2, 3]


def grades_frame(table: dict[str, list], query_of=None, kinds=None) -> pd.DataFrame:
    """Long grades from {annotator: [grade or None per item]}; item i is document d<i> of query query_of(i)."""
    query_of = query_of or (lambda i: "q1")
    rows = [{"query_id": query_of(i), "doc_id": f"d{i}", "annotator": name, "kind": (kinds or {}).get(name, "human"),
             "grade": grade}
            for name, column in table.items() for i, grade in enumerate(column) if grade is not None]
    return pd.DataFrame(rows)


def confusion_items(confusion: np.ndarray, scale=SCALE) -> tuple[np.ndarray, np.ndarray]:
    """The two annotators' grade vectors a confusion matrix stands for (one item per count)."""
    a, b = [], []
    for i, j in itertools.product(range(len(scale)), repeat=2):
        a += [scale[i]] * int(confusion[i, j])
        b += [scale[j]] * int(confusion[i, j])
    return np.array(a), np.array(b)


def sklearn_kappa(confusion: np.ndarray, scale, kind: str) -> float:
    """scikit-learn's ``cohen_kappa_score`` on the judgments a confusion matrix stands for (labels = the full
    scale, each cell one weighted sample); NaN where our kappa is undefined (see evalset.agreement.kappa)."""
    confusion = np.asarray(confusion)
    if math.isnan(float(kappa_from_confusion(confusion, disagreement_weights(len(scale), kind)))):
        return math.nan
    a, b = np.nonzero(confusion)
    values = np.asarray(scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(values[a], values[b], labels=list(scale),
                                       weights=None if kind == "unweighted" else kind,
                                       sample_weight=confusion[a, b]))


def test_two_annotator_binary_example_75_percent_observed_50_percent_chance_gives_kappa_one_half():
    # 8 items: both say relevant on 3, both say not relevant on 3, one disagreement each way.
    # Observed agreement 6/8 = 0.75; each annotator says relevant half the time, so chance = 0.5*0.5*2 = 0.5;
    # kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5.
    grades = grades_frame({"ann": [1, 1, 1, 1, 0, 0, 0, 0], "bob": [1, 1, 1, 0, 1, 0, 0, 0]})
    report = agreement_report(grades, [0, 1], resamples=50)
    (pair,) = report.pairs
    assert pair.n == 8 and pair.raw_agreement == 0.75
    assert pair.kappas["unweighted"].value == pytest.approx(0.5)
    assert pair.confusion == [[3, 1], [1, 3]]
    assert pair.kappas["unweighted"].reading == "moderate"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["unweighted", "linear", "quadratic"])
def test_kappa_equals_scikit_learn_with_the_full_scale_as_labels(seed, kind):
    rng = np.random.default_rng(seed)
    confusion = rng.integers(0, 25, size=(4, 4))
    confusion[1, :] = confusion[:, 1] = 0  # grade 1 never used: the weights must still span the scale 0..3
    confusion[0, 0] += 1
    a, b = confusion_items(confusion)
    expected = cohen_kappa_score(a, b, labels=SCALE, weights=None if kind == "unweighted" else kind)
    assert float(kappa_from_confusion(confusion, disagreement_weights(4, kind))) == pytest.approx(expected, abs=1e-12)
    assert sklearn_kappa(confusion, SCALE, kind) == pytest.approx(expected, abs=1e-12)
    if kind != "unweighted":  # weights over the grades that occur only would give another value
        assert cohen_kappa_score(a, b, weights=kind) != pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(("kind", "wt"), [("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")])
def test_asymptotic_interval_is_statsmodels_standard_error(kind, wt):
    confusion = np.array([[44, 5, 1, 0], [7, 20, 6, 1], [1, 5, 18, 4], [0, 1, 3, 9]])
    reference = cohens_kappa(confusion, wt=wt) if wt else cohens_kappa(confusion)
    weights = disagreement_weights(4, kind)
    assert asymptotic_se(confusion, weights) == pytest.approx(reference.std_kappa, rel=1e-10)
    a, b = confusion_items(confusion)
    grades = pd.concat([pd.DataFrame({"query_id": "q", "doc_id": [f"d{i}" for i in range(len(a))], "annotator": name,
                                      "kind": "human", "grade": values}) for name, values in (("x", a), ("y", b))])
    estimate = agreement_report(grades, SCALE, resamples=10).pairs[0].kappas[kind]
    assert estimate.value == pytest.approx(reference.kappa, abs=1e-12)
    z = stats.norm.ppf(0.975)
    assert estimate.ci_asymptotic == pytest.approx((reference.kappa - z * reference.std_kappa,
                                                    reference.kappa + z * reference.std_kappa), rel=1e-9)


def test_krippendorff_ordinal_alpha_reproduces_the_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", reliability data of 4 observers x 12
    # units with missing values; the published ordinal alpha is 0.815 (nominal 0.743, interval 0.849).
    data = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    report = agreement_report(grades_frame(data), [1, 2, 3, 4, 5], resamples=10)
    assert round(report.alpha_ordinal, 3) == 0.815


def test_bootstrap_resamples_whole_queries():
    # Two queries: a query-level resample can only be {q1, q1}, {q1, q2} or {q2, q2}, so every bootstrap kappa,
    # and both interval ends, is one of the three kappas of those combined tables. Resampling pairs would not be.
    first = {"x": [0, 1, 2, 3, 3, 0], "y": [0, 1, 2, 2, 3, 1]}
    second = {"x": [0, 0, 1, 3], "y": [2, 0, 3, 0]}
    table = {name: first[name] + second[name] for name in ("x", "y")}
    grades = grades_frame(table, query_of=lambda i: "q1" if i < 6 else "q2")
    report = agreement_report(grades, SCALE, resamples=400, seed=7)
    pair = report.pairs[0]
    assert pair.queries == 2

    def kappa(copies_first, copies_second, kind):
        x = first["x"] * copies_first + second["x"] * copies_second
        y = first["y"] * copies_first + second["y"] * copies_second
        return cohen_kappa_score(x, y, labels=SCALE, weights=None if kind == "unweighted" else kind)

    for kind in ("unweighted", "linear", "quadratic"):
        possible = [kappa(2, 0, kind), kappa(1, 1, kind), kappa(0, 2, kind)]
        low, high = pair.kappas[kind].ci_bootstrap
        assert any(low == pytest.approx(p) for p in possible)
        assert any(high == pytest.approx(p) for p in possible)
        assert low == pytest.approx(min(possible)) and high == pytest.approx(max(possible))


def test_bootstrap_is_seeded():
    rng = np.random.default_rng(3)
    table = {"x": list(rng.integers(0, 4, 200)), "y": list(rng.integers(0, 4, 200))}
    grades = grades_frame(table, query_of=lambda i: f"q{i % 17}")
    one = agreement_report(grades, SCALE, resamples=300, seed=1).pairs[0].kappas["linear"].ci_bootstrap
    same = agreement_report(grades, SCALE, resamples=300, seed=1).pairs[0].kappas["linear"].ci_bootstrap
    other = agreement_report(grades, SCALE, resamples=300, seed=2).pairs[0].kappas["linear"].ci_bootstrap
    assert one == same and one != other


@pytest.mark.parametrize(("kappa", "reading"), [(-0.1, "poor"), (0.0, "slight"), (0.2, "slight"), (0.21, "fair"),
                                                (0.4, "fair"), (0.6, "moderate"), (0.61, "substantial"),
                                                (0.8, "substantial"), (0.81, "almost perfect"), (1.0, "almost perfect"),
                                                (math.nan, "undefined")])
def test_landis_koch_bands(kappa, reading):
    assert landis_koch(kappa) == reading


def test_binarised_kappa_is_scikit_learn_on_thresholded_grades():
    rng = np.random.default_rng(11)
    x = rng.integers(0, 4, 300)
    y = np.clip(x + rng.integers(-1, 2, 300), 0, 3)
    report = agreement_report(grades_frame({"x": list(x), "y": list(y)}, query_of=lambda i: f"q{i % 9}"), SCALE,
                              resamples=20)
    for level in (1, 2, 3):
        assert report.pairs[0].binary[level].value == pytest.approx(cohen_kappa_score(x >= level, y >= level))


def test_tau_ap_by_hand():
    names = ["A", "B", "C", "D"]
    truth = np.array([4.0, 3.0, 2.0, 1.0])
    assert tau_ap(truth, truth, names) == 1.0
    assert tau_ap(truth, -truth, names) == -1.0
    # Estimate B > A > C > D: at position 2 (A) the one run above is wrong (0/1); C: 2/2; D: 3/3.
    # tau_AP = 2/3 * (0 + 1 + 1) - 1 = 1/3, while Kendall's tau is 4/6 for any single adjacent swap.
    assert tau_ap(truth, np.array([3.0, 4.0, 2.0, 1.0]), names) == pytest.approx(1 / 3)
    # The same swap at the bottom (A > B > D > C) costs less: 2/3 * (1 + 1 + 2/3) - 1 = 7/9.
    assert tau_ap(truth, np.array([4.0, 3.0, 1.0, 2.0]), names) == pytest.approx(7 / 9)
    assert stats.kendalltau(truth, [3.0, 4.0, 2.0, 1.0]).statistic == pytest.approx(2 / 3)


@pytest.mark.parametrize("kind", ["unweighted", "linear", "quadratic"])
def test_a_constant_annotator_has_kappa_zero_as_scikit_learn_and_only_zero_over_zero_is_undefined(kind):
    """Issue 29: one rule for agreement, its annotator quality and pull --gold."""
    scale = [0, 1, 2, 3]
    constant, varied = [1] * 6, [0, 1, 2, 3, 1, 2]
    confusion = np.zeros((4, 4))
    for a, b in zip(constant, varied, strict=True):
        confusion[a, b] += 1
    weights = None if kind == "unweighted" else kind
    assert float(kappa_from_confusion(confusion, disagreement_weights(4, kind))) == 0.0 == cohen_kappa_score(
        constant, varied, labels=scale, weights=weights)
    same = np.zeros((4, 4))
    same[2, 2] = 5
    assert math.isnan(float(kappa_from_confusion(same, disagreement_weights(4, kind))))


@pytest.mark.parametrize(("given", "message"), [
    ({"resamples": -1}, "resamples must be an integer in [0, 1000000], got -1"),
    ({"resamples": 10**7}, "resamples must be an integer in [0, 1000000], got 10000000"),
    ({"level": 1.0}, "level must be a number in (0, 1), got 1.0"),
    ({"level": math.nan}, "level must be a number in (0, 1), got nan"),
    ({"seed": -1}, "seed must be a non-negative integer, got -1"),
    ({"top": -1}, "top must be a non-negative integer, got -1"),
    ({"kappa": "cubic"}, "kappa must be one of unweighted, linear, quadratic, got 'cubic'"),
    ({"out_of_scale": "ignore"}, "out_of_scale must be one of error, clip, drop, got 'ignore'"),
    ({"pairs": "none"}, "pairs must be one of all, with-human, got 'none'"),
])
def test_the_analysis_refuses_what_the_command_refuses_before_reading_anything(given, message):
    with pytest.raises(InputError) as raised:
        analyse_agreement(["no-such-labels.tsv"], **given)
    assert str(raised.value) == message


def test_the_statistics_refuse_the_same_rules():
    with pytest.raises(InputError) as raised:
        agreement_report(pd.DataFrame(), SCALE, level=0.0)
    assert str(raised.value) == "level must be a number in (0, 1), got 0.0"
