"""Per-annotator quality without gold: leave-one-out consensus agreement (checked by a plain-Python consensus and
scikit-learn's kappas) and Dawid-Skene's confusion matrices (crowd-kit's errors_), on a simulated crowd of a
careful, a random and a constant annotator beside two good ones."""

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene
from sklearn.metrics import cohen_kappa_score

from evalset.quality import annotator_quality, leave_one_out_consensus, write_confusion_plot

SCALE = [0, 1, 2, 3]


@pytest.fixture(scope="module")
def crowd():
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 4, 300)
    rows = []

    def noisy(grade, p):
        return int(grade) if rng.random() < p else int(rng.integers(0, 4))

    for i, grade in enumerate(truth):
        given = {"careful": noisy(grade, 0.95), "good1": noisy(grade, 0.85), "good2": noisy(grade, 0.85),
                 "random": int(rng.integers(0, 4)), "constant": 1}
        rows += [(f"q{i // 30}", f"d{i}", name, "human", g) for name, g in given.items()
                 if not (name == "good2" and i % 7 == 0)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "kind", "grade"])


def test_the_consensus_is_the_lower_median_of_the_others(crowd):
    table = leave_one_out_consensus(crowd, SCALE)
    by_pair = {key: dict(zip(g["annotator"], g["grade"], strict=True))
               for key, g in crowd.groupby(["query_id", "doc_id"])}
    for row in table.sample(200, random_state=1).itertuples():
        others = sorted(g for name, g in by_pair[(row.query_id, row.doc_id)].items() if name != row.annotator)
        assert row.consensus == others[(len(others) - 1) // 2] and row.others == len(others)


def test_each_annotators_kappas_equal_scikit_learn_against_that_consensus(crowd):
    quality = annotator_quality(crowd, SCALE)
    loo = leave_one_out_consensus(crowd, SCALE)
    for row in quality.table.itertuples():
        mine = loo[loo["annotator"] == row.annotator]
        assert row.pairs == len(mine) == (crowd["annotator"] == row.annotator).sum()
        if row.annotator == "constant":  # one grade only: agreement at chance, kappa 0, as scikit-learn says
            assert row.kappa == 0.0 and row.kappa_quadratic == 0.0
        assert row.kappa == pytest.approx(cohen_kappa_score(mine["consensus"], mine["grade"], labels=SCALE))
        quadratic = cohen_kappa_score(mine["consensus"], mine["grade"], labels=SCALE, weights="quadratic")
        assert row.kappa_quadratic == pytest.approx(quadratic)
        assert row.exact == pytest.approx((mine["consensus"] == mine["grade"]).mean())


def test_the_careless_annotators_come_first_and_the_careful_one_last(crowd):
    table = annotator_quality(crowd, SCALE).table
    assert list(table["annotator"]) == ["constant", "random", "good2", "good1", "careful"]
    figures = table.set_index("annotator")["kappa_quadratic"]
    assert figures["random"] < 0.1 and figures["careful"] > 0.55


def test_the_confusion_matrices_are_crowd_kits_errors_transposed(crowd):
    quality = annotator_quality(crowd, SCALE)
    frame = pd.DataFrame({"task": crowd["query_id"] + " " + crowd["doc_id"], "worker": crowd["annotator"],
                          "label": crowd["grade"]}).sort_values(["task", "worker"])
    errors = DawidSkene(n_iter=100, tol=1e-5).fit(frame).errors_
    for name, matrix in quality.confusions.items():
        expected = errors.xs(name, level="worker").reindex(index=SCALE, columns=SCALE, fill_value=0.0).to_numpy().T
        np.testing.assert_allclose(matrix, expected, atol=1e-9)
        np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-6)
    assert np.diag(quality.confusions["careful"]).min() > 0.8
    assert quality.confusions["constant"][:, 1].min() > 0.95  # always grade 1, whatever the truth


@pytest.mark.slow
def test_text_json_and_plot(crowd, tmp_path):
    quality = annotator_quality(crowd, SCALE)
    lines = quality.to_text().split("\n")
    assert lines[1].split()[:6] == ["annotator", "kind", "pairs", "exact", "kappa", "kappa_quadratic"]
    assert len(lines) == 2 + 5
    data = quality.to_dict()
    assert [a["annotator"] for a in data["annotators"]] == list(quality.table["annotator"])
    assert data["dawid_skene"]["class"] == "DawidSkene" and len(data["annotators"][0]["confusion"]) == 4
    write_confusion_plot(quality, tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
