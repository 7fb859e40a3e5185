"""The hole sample's leave-one-group-out simulation (evalset.estimate.documents.holevalidation): on a small set whose
figures are worked by hand (a run without a hole, every hole drawn, a per-run fraction), its determinism, its refusals,
the command, and TREC DL 2019 with groups left out."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.estimate.documents.holevalidation import simulate_holes
from evalset.metrics import evaluate
from tests.support.options import refusal

QUERIES = ["q1", "q2", "q3", "q4"]


def run(docs: list[str]) -> pd.DataFrame:
    """A run ranking ``docs`` on every query."""
    rows = [(q, d, float(10 - i)) for q in QUERIES for i, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


# Three groups; at depth 3 group A alone brought d5 and d6 into the pool and C alone d4, while B's run b1 shares
# every pair of its top 3 with another group: it has no hole. d7 and d8 are judged deeper.
RUNS = {"a1": run(["d1", "d3", "d5"]), "a2": run(["d2", "d5", "d6"]), "b1": run(["d1", "d2", "d3"]),
        "c1": run(["d1", "d2", "d4"])}
GROUPS = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
GRADES = {"q1": [2, 0, 1, 2, 3, 0, 1, 0], "q2": [1, 1, 0, 0, 2, 1, 0, 2], "q3": [0, 2, 2, 1, 0, 0, 1, 1],
          "q4": [3, 0, 1, 0, 1, 2, 0, 0]}
QRELS = pd.DataFrame([(q, f"d{i + 1}", g) for q, grades in GRADES.items() for i, g in enumerate(grades)],
                     columns=["query_id", "doc_id", "grade"])
NOISY = QRELS.assign(judge="llm", grade=[2, 1, 1, 2, 2, 0, 0, 0, 1, 0, 0, 1, 3, 1, 0, 2, 0, 2, 2, 0, 0, 1, 1, 1,
                                         3, 0, 2, 0, 1, 2, 0, 1])
MEASURES = ["p@3", "ndcg@3"]


def simulate(**options):
    settings = {"depth": 3, "fraction": 0.5, "draws": 50, "seed": 1, "measures": MEASURES, **options}
    return simulate_holes(RUNS, QRELS, settings.pop("llm", NOISY), settings.pop("groups", GROUPS), **settings)


def rows(result) -> pd.DataFrame:
    return result.columns.set_index(["run", "measure", "kind"])


def summary(result) -> pd.DataFrame:
    """The one summary (one interval, "this set") beside the design's own figures, by measure and kind."""
    return result.table.merge(result.beside, on=["measure", "kind"]).set_index(["measure", "kind"])


def test_differences_that_repeat_the_run_means_are_said_where_every_draw_shows_it():
    """P@3's best run has no hole: its estimate is the same in every draw, and a note says the differences repeat
    the run means; nDCG@3's best run has its ideal estimated (no note); one draw cannot tell (none)."""
    repeat = [line for line in simulate().caveats if "repeat" in line]
    assert repeat == ["note: p@3's paired differences repeat its run means: no hole moves the best run's estimate (the "
                      "same in every draw), so a difference's coverage and width are its run's"]
    once = simulate(draws=1).caveats
    assert not [line for line in once if "repeat" in line]
    assert once[-1].startswith("note: a coverage over 1 draw is within about")


def test_a_run_without_a_hole_is_said_its_error_the_frozen_one_and_left_out_of_coverage():
    result = simulate()
    table = rows(result)
    assert table.loc[("b1", "p@3", "means"), ["holes", "best", "truth", "bias", "rmse"]].tolist() == [
        0, "a1", pytest.approx(2 / 3), 0.0, 0.0]
    assert np.isnan(table.loc[("b1", "ndcg@3", "means"), "coverage_set"])
    assert ("note: b1 (B) has no hole in its top 3 on the set without its group: its estimate is the set's own "
            "score (no draw)") in result.to_text()
    summed = summary(result)
    assert summed.loc[("p@3", "means"), ["runs", "with_holes", "columns"]].tolist() == [4, 3, 3]
    # by hand: without A's pairs a1 loses d5 (relevant on q1, q2, q4), a2 loses d5 and d6 (5 relevant pairs)
    assert table.loc[("a1", "p@3", "means"), ["holes", "best", "truth", "frozen_error"]].tolist() == [
        4, "b1", pytest.approx(0.75), pytest.approx(-0.25)]
    assert table.loc[("a2", "p@3", "differences"), "frozen_error"] == pytest.approx(-5 / 12)
    assert table.loc[("c1", "p@3", "means"), ["holes", "best"]].tolist() == [4, "a1"]
    assert table.loc[("a1", "p@3", "means"), ["share", "rmse", "coverage_set"]].tolist() == pytest.approx(
        [0.48, 0.03934, 1.0], abs=1e-5)
    assert summed.loc[("p@3", "means"), ["rmse_worst_run", "least", "coverage_least", "below"]].tolist() == [
        "c1", "c1", 0.92, 1]
    assert summed.loc[("ndcg@3", "means"), ["rmse_worst_run", "coverage_least", "below"]].tolist() == ["a2", 0.92, 1]
    # beside: the share weighted by holes (a2's 8 count twice a1's 4), the bias test, the best run's z (P@3 of a run
    # without a hole is its set's score in every draw: 0, not 0 / 0)
    assert summed.loc[("p@3", "means"), ["share", "share_weighted"]].tolist() == pytest.approx([0.489, 0.486],
                                                                                               abs=1e-3)
    assert summed.loc[("p@3", "means"), ["bias_chi2", "bias_p", "best_z_max"]].tolist() == pytest.approx(
        [2.664, 0.447, 0.0], abs=1e-3)
    assert summed.loc[("ndcg@3", "means"), "completeness_max"] == pytest.approx(0.0331, abs=1e-4)


def test_with_every_hole_drawn_the_estimate_is_the_truth_and_the_pools_gap_is_its_completeness():
    """Every hole drawn, the estimate is the truth the design can reach: the run's score on the set with its own
    holes judged. nDCG@3's ideal under the full judgments also counts a2's hole d6 (relevant on q2 and q4), which
    a1's design never holds: the full judgments' score is 0.033 under a1's truth, the row's completeness, which no
    draw could remove and which the bias and coverage do not count."""
    result = simulate(fraction=0.999999, draws=20)
    table = rows(result)
    drawn = result.columns[result.columns["holes"] > 0]
    assert drawn["share"].tolist() == [1.0] * len(drawn)
    assert drawn["rmse"].max() < 1e-6 and (drawn["coverage_set"] == 1.0).all()
    own = float(evaluate(RUNS["a1"], QRELS[QRELS["doc_id"] != "d6"], ["ndcg@3"])["ndcg@3"].mean())
    full = float(evaluate(RUNS["a1"], QRELS, ["ndcg@3"])["ndcg@3"].mean())
    assert table.loc[("a1", "ndcg@3", "means"), ["truth", "mean_estimate", "completeness"]].tolist() == pytest.approx(
        [own, own, full - own], abs=1e-6)
    assert full - own == pytest.approx(-0.0331, abs=1e-4)
    assert table.loc[("a1", "p@3", "means"), "completeness"] == 0.0  # a sum over a1's own documents
    assert table.loc[("a2", "ndcg@3", "means"), "completeness"] == 0.0  # a2 holds every hole of its group


def test_a_fraction_rule_gives_each_run_its_own_share():
    asked = {}

    def by_run(holes, design):
        asked[design.run] = (len(holes.holes), int(design.hole.sum()), design.best, len(design.known))
        return {design.run: {"a1": 0.25, "a2": 0.75, "c1": 0.5}[design.run]}

    result = simulate(fraction=None, fractions=by_run, draws=40)
    assert asked == {"a1": (4, 4, "b1", 28), "a2": (8, 8, "b1", 32), "c1": (4, 4, "a1", 32)}
    shares = result.columns.drop_duplicates("run").set_index("run")
    assert shares["fraction"].dropna().to_dict() == {"a1": 0.25, "a2": 0.75, "c1": 0.5}
    assert shares.loc[["a1", "a2", "c1"], "share"].tolist() == pytest.approx([0.25, 0.75, 0.5], abs=0.08)
    assert result.to_text().startswith("leave-one-group-out: 40 draws of each run's fraction (3 groups, 4 runs, "
                                       "16 holes in their top 3, 4 queries; seed 1; calibrated LLM: llm)")


def test_the_same_inputs_give_byte_identical_output_and_another_seed_other_draws():
    first, again, other = simulate(), simulate(), simulate(seed=2)
    assert first.to_text() == again.to_text()
    assert json.dumps(first.to_dict()) == json.dumps(again.to_dict())
    assert json.dumps(first.to_dict()) != json.dumps(other.to_dict())
    document = json.loads(json.dumps(first.to_dict(), allow_nan=False))
    assert len(document["columns"]) == 16 and document["table"][0]["measure"] == "p@3"


def test_without_an_llm_it_is_horvitz_thompsons_estimate():
    result = simulate(llm=None)
    assert result.settings["estimator"] == "Horvitz-Thompson, no LLM"
    assert rows(result).loc[("a1", "p@3", "means"), ["bias", "rmse"]].tolist() == pytest.approx([-0.0033, 0.15],
                                                                                              abs=1e-4)


@pytest.mark.parametrize("case, message", [
    ("no group", "groups.tsv: run c1 has no group (1 such run): give every run's group"),
    ("one group", "the runs are of 1 group: leaving a group out needs runs of at least 2 groups"),
    ("llm misses a pair", "llm.qrels: judge llm has no grade of the pooled pair q2 d7 (1 such pairs)"),
    ("no hole", "no run of any group has a hole in its top 3 on the set without its group"),
    ("no fraction", "give one of a fraction of each run's holes or a rule giving each run its fraction"),
    ("every hole", "fraction must be a number in (0, 1), got 1.0"),
    ("unknown group", "no run of the group D to leave out (groups: A, B, C)"),
])
def test_bad_inputs_are_one_input_error_naming_what_is_wrong(case, message):
    groups = pd.Series(GROUPS)
    groups.attrs["source"] = "groups.tsv"
    llm = NOISY[~((NOISY["query_id"] == "q2") & (NOISY["doc_id"] == "d7"))].copy()
    llm.attrs["source"] = "llm.qrels"
    options = {
        "no group": {"groups": groups.drop("c1")}, "one group": {"groups": dict.fromkeys(GROUPS, "A")},
        "llm misses a pair": {"llm": llm}, "no fraction": {"fraction": None}, "every hole": {"fraction": 1.0},
        "unknown group": {"left_out": ["A", "D"]}}.get(case, {})
    if case == "no hole":
        same = {name: run(["d1", "d2", "d3"]) for name in RUNS}
        with pytest.raises(InputError) as error:
            simulate_holes(same, QRELS, NOISY, GROUPS, depth=3, fraction=0.5, draws=2, measures=MEASURES)
    else:
        with pytest.raises(InputError) as error:
            simulate(**options)
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    """The small set frozen (its qrels the full judgments), its runs, groups and LLM grades as files."""
    root = tmp_path_factory.mktemp("holesim")
    (root / "full.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS.itertuples(index=False)))
    (root / "llm.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g, _ in NOISY.itertuples(index=False)))
    (root / "topics.tsv").write_text("".join(f"{q}\tquery {q}\n" for q in QUERIES))
    (root / "groups.tsv").write_text("runid\tparticipant\ttype\n" + "".join(
        f"{name}\t{group}\tauto\n" for name, group in GROUPS.items() if name != "c1"))
    (root / "runs").mkdir()
    for name, frame in RUNS.items():
        (root / "runs" / f"{name}.run").write_text("".join(
            f"{q} Q0 {d} {rank} {score} {name}\n"
            for rank, (q, d, score) in enumerate(frame.itertuples(index=False), start=1)))
    frozen = CliRunner().invoke(main, ["freeze", str(root / "full.qrels"), "--queries", str(root / "topics.tsv"),
                                       "--guideline", "relevance-v2", "--name", "small", "--sets-dir",
                                       str(root / "sets")])
    assert frozen.exit_code == 0, frozen.output
    (root / "all.tsv").write_text("run\tgroup\n" + "".join(f"{n}\t{g}\n" for n, g in GROUPS.items()))
    return root


def command(root, *more: str) -> list[str]:
    return ["estimate", "validate", "holes", "--set", str(root / "sets" / "small" / "v1"),
            str(root / "runs"), "--llm", str(root / "llm.qrels"), "--resamples", "30", "-m", "p@3", "-m", "ndcg@3",
            "--depth", "3", *more]


def test_the_command_prints_the_table_and_its_json_is_the_same_each_time(small_set):
    text = CliRunner().invoke(main, command(small_set, "--groups", str(small_set / "all.tsv"),
                                            "--fraction", "50%"))
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith("leave-one-group-out: 30 draws of 50% of each run's holes (3 groups, 4 runs, 16 "
                                  "holes in their top 3, 4 queries; seed 20191; calibrated LLM: llm.qrels)")
    assert "note: b1 (B) has no hole in its top 3" in text.stdout
    outputs = [CliRunner().invoke(main, command(small_set, "--groups", str(small_set / "all.tsv"),
                                                "--fraction", "0.5", "--format", "json")) for _ in range(2)]
    assert outputs[0].exit_code == 0 and outputs[0].stdout == outputs[1].stdout
    assert json.loads(outputs[0].stdout)["settings"]["fraction"] == 0.5


@pytest.mark.parametrize("case", ["no group", "percentage", "no set", "no fraction", "a sample too"])
def test_bad_command_lines_are_one_line_exit_2(small_set, case):
    groups = str(small_set / "groups.tsv")
    if case == "percentage":
        assert refusal(["estimate", "validate", "holes"], "--fraction", "150%") == (
            "must be a number in (0, 1), or a percentage (25%), got 150%")
        return
    args, message = {
        "no group": (command(small_set, "--groups", groups, "--fraction", "25%"),
                     f"{groups}: run c1 has no group (1 such run): give every run's group"),
        "no set": (["estimate", "validate", "holes", "r", "--resamples", "5", "--groups", groups,
                    "--fraction", "25%", "--llm", "l"],
                   "Missing option '--set'"),
        "no fraction": (command(small_set, "--groups", groups), "give one of --fraction P"),
        "a sample too": (command(small_set, "--groups", groups, "--fraction", "25%", "--budget", "10"),
                         "No such option '--budget'"),
    }[case]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"evalset: error: {message}"), result.output


@pytest.mark.slow  # DL19's 37 runs read and pooled, 2 groups' 7 runs x 20 draws
def test_on_dl19_two_groups_left_out():
    """TU-Vienna and TUA1 left out of DL19's depth-10 pool: TU-Vienna's holes and frozen-only errors are those of
    tests/estimate/documents/test_hole_sample.py (found there by other code), TUA1's one run has no hole."""
    from evalset.io.groups import read_run_groups
    from evalset.io.trec import read_qrels, read_run
    from tests.conftest import REPO

    dl19 = REPO / "data" / "dl19"
    runs = {path.name.removesuffix(".run.gz"): read_run(path) for path in sorted((dl19 / "runs").glob("*.run.gz"))}
    llm = read_qrels(dl19 / "llm_labels" / "llama-3-70b.fourprompts.qrels").assign(judge="llama-3-70b")
    result = simulate_holes(runs, read_qrels(dl19 / "nist.qrels"), llm, read_run_groups(dl19 / "run_metadata.tsv"),
                            fraction=0.25, draws=20, seed=55, left_out=["TU-Vienna", "TUA1"])
    table = rows(result)
    ndcg = result.columns[(result.columns["measure"] == "ndcg@10") & (result.columns["kind"] == "means")]
    assert ndcg.set_index("run")["holes"].to_dict() == {
        "TUW19-p1-f": 56, "TUW19-p1-re": 40, "TUW19-p2-f": 38, "TUW19-p2-re": 32, "TUW19-p3-f": 57, "TUW19-p3-re": 40,
        "TUA1-1": 0}
    assert set(ndcg["best"]) == {"idst_bert_p1"}
    assert table.loc[("TUW19-p3-f", "ndcg@10", "means"), "frozen_error"] == pytest.approx(-0.0424, abs=1e-4)
    assert table.loc[("TUA1-1", "ndcg@10", "means"), ["bias", "rmse"]].tolist() == [0.0, 0.0]
    summed = summary(result)
    assert summed.loc[("ndcg@10", "means"), ["runs", "with_holes"]].tolist() == [7, 6]
    # a quarter of the holes: the RMSE under a quarter of the frozen set's, both means over the runs (20 draws: a
    # figure, not a rate)
    assert summed.loc[("ndcg@10", "means"), ["rmse", "frozen_rmse"]].tolist() == pytest.approx([0.00530, 0.02284],
                                                                                              abs=1e-5)
    assert summed.loc[("ndcg@10", "means"), "frozen_rmse"] == pytest.approx(ndcg["frozen_error"].abs().mean())
    assert summed.loc[("p(rel=2)@10", "means"), ["rmse", "coverage"]].tolist() == pytest.approx(
        [0.00824, 0.98333], abs=1e-5)
    # the best run has no hole: P@10's differences are its runs' estimates less a known score, and say so
    repeat = [line for line in result.caveats if "paired differences repeat" in line]
    assert repeat == ["note: p(rel=2)@10's paired differences repeat its run means: no hole moves the best run's "
                      "estimate (the same in every draw), so a difference's coverage and width are its run's"]


def test_sized_for_a_precision_each_run_draws_the_share_estimate_select_gives_it():
    """--precision: the simulation's share of a run's holes is holesizing's, from the same design (the set
    without the run's group, the run and the best run beside it)."""
    from evalset.estimate.documents.holesizing import size_holes
    from evalset.estimate.documents.holevalidation import sized_by
    from evalset.holes import find_holes
    from evalset.pooling.contributions import pool_of_runs, reduced_qrels, unique_contributions

    result = rows(simulate(fraction=None, fractions=sized_by(0.1), draws=20))
    frozen = reduced_qrels(QRELS, unique_contributions(pool_of_runs(RUNS, QRELS, 3).top, GROUPS), ["A"])["A"]
    pair = {"b1": RUNS["b1"], "a1": RUNS["a1"]}
    sized = size_holes(find_holes(frozen, pair, 3), NOISY, pair, precision=0.1, measures=MEASURES)
    expected = sized.set_index("run").loc["a1", "fraction"]
    assert 0.05 < expected < 1
    assert result.loc[("a1", "p@3", "means"), "fraction"] == pytest.approx(expected)
