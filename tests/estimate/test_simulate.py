"""The one simulation (evalset.estimate.simulate): its loop tallies each draw of a design's ``simulate_one`` by key, in
order; its harness gives each column's bias, RMSE, coverage and width with their Monte Carlo errors, worked by hand;
and each design simulated by it gives the figures its own loop and harness gave before (measured on the same draws
on 2026-12-06, to 1e-12), the query slice, the document sample and the hole sample."""

import numpy as np
import pytest

from evalset.estimate.simulate import KINDS, SUMMARY, TOLERANCE, Tally, Validation, coverage_error, simulate
from evalset.estimate.slicevalidation import simulate_slices
from evalset.estimate.sources import read_grades
from evalset.io.trec import read_qrels, read_runs


def hand_tally() -> Tally:
    """Two columns (truth 0.5 and 0), four draws, one interval ``a``: worked by hand below."""
    tally = Tally(np.array([0.5, 0.0]), ["run", "difference"])
    for estimate, low, high in [([0.6, 0.1], [0.4, -0.1], [0.8, 0.3]),
                                ([0.4, -0.2], [0.3, -0.25], [0.5, -0.15]),  # the first column's truth at the high end
                                ([0.5, 0.1], [0.5 + TOLERANCE / 2, 0.05], [0.7, 0.15]),  # ... at the low end, rounded
                                ([0.7, 0.0], [0.6, -0.1], [0.8, 0.1])]:
        tally.add(np.array(estimate), {"a": (np.array(low), np.array(high))})
    return tally


def test_the_figures_of_each_column_are_those_worked_by_hand():
    figures = hand_tally().figures().set_index("name")
    first, second = figures.loc["run"], figures.loc["difference"]
    # errors 0.1, -0.1, 0, 0.2: bias 0.05, their sd sqrt(0.0125), RMSE sqrt(0.015)
    assert first["bias"] == pytest.approx(0.05)
    assert first["bias_mc"] == pytest.approx(np.sqrt(0.0125) / 2)
    assert first["rmse"] == pytest.approx(np.sqrt(0.015))
    squared = np.array([0.01, 0.01, 0.0, 0.04])
    assert first["rmse_mc"] == pytest.approx(squared.std() / (2 * np.sqrt(0.015) * 2))
    assert first["coverage_a"] == 0.75  # the last draw's interval [0.6, 0.8] misses 0.5
    assert first["coverage_a_mc"] == pytest.approx(np.sqrt(0.75 * 0.25 / 4))
    assert first["width_a"] == pytest.approx((0.4 + 0.2 + 0.2 + 0.2) / 4, abs=1e-9)
    assert first["estimate_mean"] == pytest.approx(0.55) and first["truth"] == 0.5
    # errors 0.1, -0.2, 0.1, 0: no bias; covered by the first and the last draws
    assert second["bias"] == pytest.approx(0.0, abs=1e-15)
    assert second["rmse"] == pytest.approx(np.sqrt(0.015))
    assert second["coverage_a"] == 0.5 and second["coverage_a_mc"] == pytest.approx(0.25)
    assert second["width_a"] == pytest.approx((0.4 + 0.1 + 0.1 + 0.2) / 4)


def test_the_standard_error_over_the_spread_is_the_draws_mean_error_over_their_estimates_sd():
    tally = Tally(np.array([0.0, 0.0]))
    for estimate, se in [([1.0, 2.0], [1.0, 0.5]), ([-1.0, 2.0], [3.0, 0.5])]:
        tally.add(np.array(estimate), {}, {"se": np.array(se)})
    # the first column's estimates spread by 1 (sd of 1 and -1) at a mean error of 2; the second does not move
    ratio = tally.se_ratio("se")
    assert ratio[0] == 2.0 and np.isnan(ratio[1])


def test_a_tally_given_whole_is_the_tally_of_its_draws():
    tally = hand_tally()
    low, high = tally.ends("a")
    whole = Tally.of(tally.truth, tally.estimate(), {"a": (low, high)}, tally.labels)
    assert whole.figures().equals(tally.figures())
    assert coverage_error(0.95, 500) == pytest.approx(0.00975, abs=1e-5)


def test_the_loop_tallies_each_draw_of_the_design_by_key_in_order_with_its_extra_figures():
    seen = []

    def simulate_one(draw):
        seen.append(draw)
        return {"p@10": (np.array([draw, -draw]), {"a": (np.array([draw - 1, -draw - 1]), np.array([draw + 1, 0]))},
                         {"size": 10 * draw}),
                "ap": (np.array([0.5]), {"a": (np.array([0.0]), np.array([1.0]))}, {})}

    tallies = simulate(simulate_one, [3, 1, 2], {"p@10": np.array([2.5, -2.5]), "ap": np.array([0.5])},
                       progress=lambda draws: iter(list(draws)[:2]))  # progress may even cut the draws
    assert seen == [3, 1]
    assert tallies["p@10"].estimate().tolist() == [[3, -3], [1, -1]]
    assert tallies["p@10"].extra("size").tolist() == [30, 10]
    figures = tallies["p@10"].figures()
    assert figures["coverage_a"].tolist() == [0.5, 0.5]  # 2.5 in [2, 4], not in [0, 2]; -2.5 in [-4, 0] only
    assert figures["bias"].tolist() == [-0.5, 0.5] and tallies["ap"].figures()["rmse"].tolist() == [0.0]


def test_a_tally_of_no_draw_is_a_bug_not_a_figure():
    with pytest.raises(ValueError, match="no draw"):
        Tally(np.zeros(2)).figures()


DL19_FEW = 6  # the first six of DL19's runs by name, on which the designs below were measured


def dl19_few() -> dict:
    runs = read_runs(["data/dl19/runs"])
    return {name: runs[name] for name in sorted(runs)[:DL19_FEW]}


def one_validation(result, design: str, intervals: tuple[str, ...], columns: int) -> None:
    """Every design's validation is one result type: its summary, and each column's figures with their Monte Carlo
    errors (an interval's ``coverage_NAME``; the hole sample's one interval, "this set", unnamed), in one JSON."""
    assert isinstance(result, Validation) and result.design == design
    assert len(result.columns) == columns
    for interval in intervals:
        suffix = f"_{interval}" if interval else ""
        assert {"truth", "bias", "bias_mc", "rmse", "rmse_mc", f"coverage{suffix}", f"coverage{suffix}_mc",
                f"width{suffix}", f"width{suffix}_mc"} <= set(result.columns.columns)
    document = result.to_dict()
    assert list(document) == ["design", "settings", "table", "beside", "columns", "notes"]
    assert document["design"] == design and len(document["columns"]) == columns
    assert list(result.table.columns) == SUMMARY and set(result.table["kind"]) == set(KINDS)
    header = "measure  kind                interval"
    assert [line for line in result.to_text().splitlines() if line.startswith(header)], result.to_text()


def test_the_query_slice_tallied_by_the_harness_gives_its_figures_of_before():
    result = simulate_slices(dl19_few(), read_grades(["data/dl19/nist.qrels"], "human"),
                             read_grades(["data/dl19/llm_labels/llama-3-70b.fourprompts.qrels"], "llm"),
                             slice_size=10, draws=30, metrics=["ndcg@10"], seed=7)
    one_validation(result, "slice", ("ppi", "ppi_normal", "human"), columns=6 + 15)
    rows = result.table.set_index(["kind", "interval"])
    before = {"means": (0.9888888888888889, 0.9722222222222222, 0.9944444444444446, 0.2596393441234779,
                        0.33808036458530816),
              "differences": (0.9755555555555556, 0.9622222222222223, 0.9755555555555556, 0.1694169577497631,
                              0.2525978443124083)}
    for kind, (ppi, normal, human, width_ppi, width_human) in before.items():
        assert [rows.loc[(kind, interval), "coverage"] for interval in ("PPI++ (t)", "PPI++ (normal)", "human-only")
                ] == pytest.approx([ppi, normal, human], abs=1e-12)
        assert [rows.loc[(kind, "PPI++ (t)"), "width"], rows.loc[(kind, "human-only"), "width"]] == pytest.approx(
            [width_ppi, width_human], abs=1e-12)
    assert result.beside["outside_range"].tolist() == [0.0, 0.0]


def test_the_document_sample_tallied_by_the_harness_gives_its_figures_of_before():
    from evalset.estimate.documents.validation import simulate_documents

    judge = read_qrels("data/dl19/llm_labels/llama-3-70b.fourprompts.qrels").assign(judge="llama")
    result = simulate_documents(dl19_few(), read_qrels("data/dl19/nist.qrels"), judge, budget=1000, draws=8,
                                measures=["ndcg@10", "p@10"], compare_slices=False, seed=7)
    one_validation(result, "documents", ("set", "new"), columns=2 * (6 + 15))
    rows = result.table.set_index(["measure", "kind", "interval"])
    before = {("ndcg@10", "means"): (0.9375, 1.0, 0.08920442457397615, 0.16292191311095636),
              ("ndcg@10", "differences"): (0.95, 1.0, 0.1002738699831298, 0.14962865728121455),
              ("p@10", "means"): (0.9791666666666666, 1.0, 0.08882953853825545, 0.18241598560312972),
              ("p@10", "differences"): (0.9833333333333334, 0.9916666666666667, 0.11603550618760382,
                                        0.1521096269077721)}
    for (measure, kind), (this_set, new, width_set, width_new) in before.items():
        assert [rows.loc[(measure, kind, '"this set"'), "coverage"], rows.loc[(measure, kind, '"new queries"'),
                "coverage"], rows.loc[(measure, kind, '"this set"'), "width"],
                rows.loc[(measure, kind, '"new queries"'), "width"]] == pytest.approx(
            [this_set, new, width_set, width_new], abs=1e-12)
    assert rows.loc[("ndcg@10", "means", '"this set"'), "rmse"] == pytest.approx(0.021622166572344326, abs=1e-12)
    assert result.beside.set_index(["measure", "kind"]).loc[("ndcg@10", "means"), "tau"] == pytest.approx(
        0.8166666666666667, abs=1e-12)


def test_the_hole_sample_tallied_by_the_harness_gives_its_figures_of_before():
    """The figures of issue 64's estimator (the expanded ratio, truth the run's score with its own holes judged,
    the variance's floor below 6 drawn units and blended above)."""
    from tests.estimate.documents.test_hole_validation import simulate as simulate_holes

    result = simulate_holes()
    one_validation(result, "holes", ("set",), columns=len(result.columns))
    run = result.columns.set_index(["run", "measure", "kind"])
    assert tuple(run.loc[("a2", "ndcg@3", "differences"), ["coverage_set", "width_set", "bias", "rmse"]]
                 ) == pytest.approx((1.0, 0.33705937141581765, 0.002148500066778689, 0.06623126082185751), abs=1e-12)
    summary = result.table.set_index(["measure", "kind"])
    assert tuple(summary.loc[("p@3", "means"), ["coverage", "width"]]) == pytest.approx(
        (0.9733333333333333, 0.3415004433208357), abs=1e-12)
    assert tuple(summary.loc[("ndcg@3", "differences"), ["coverage", "width"]]) == pytest.approx(
        (1.0, 0.23096183761802624), abs=1e-12)
