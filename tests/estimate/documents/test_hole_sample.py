"""A frozen set and a new system's holes: which pairs are holes, the design's draw, and an estimate whose
expectation over every draw is the score under full judgments (enumerated on a small set)."""

import itertools

import numpy as np
import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.estimate.documents.holes import draw_holes, estimate_holes
from evalset.holes import find_holes
from evalset.metrics import evaluate

# Three queries; the set judges four pairs of each, the runs' top 3 hold two pairs it does not judge (the holes).
TRUTH = pd.DataFrame([
    ("q1", "a", 2), ("q1", "b", 0), ("q1", "c", 1), ("q1", "d", 0), ("q1", "h1", 2), ("q1", "h2", 0),
    ("q2", "a", 1), ("q2", "b", 1), ("q2", "c", 0), ("q2", "d", 0), ("q2", "h1", 1), ("q2", "h2", 2),
    ("q3", "a", 0), ("q3", "b", 2), ("q3", "c", 0), ("q3", "d", 1), ("q3", "h1", 0), ("q3", "h2", 1),
], columns=["query_id", "doc_id", "grade"])
FROZEN = TRUTH[~TRUTH["doc_id"].str.startswith("h")].reset_index(drop=True)
LLM = TRUTH.assign(judge="llm", grade=[2, 0, 2, 1, 2, 1, 1, 2, 0, 0, 1, 2, 0, 2, 1, 1, 1, 1])


def run(ranked: dict[str, list[str]]) -> pd.DataFrame:
    rows = [(q, d, float(10 - i)) for q, docs in ranked.items() for i, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


RUNS = {"old": run({"q1": ["a", "c", "b"], "q2": ["a", "b", "c"], "q3": ["b", "d", "a"]}),
        "new": run({"q1": ["h1", "a", "h2"], "q2": ["h2", "a", "h1"], "q3": ["h2", "b", "h1"]})}
MEASURES = ["p@3", "dcg@3", "P(rel=2)@3"]


def truth() -> dict[tuple[str, int], float]:
    """Each run's mean of each measure (by its place in MEASURES) under every grade."""
    return {(name, i): float(column.mean()) for name, frame in RUNS.items()
            for i, (_, column) in enumerate(evaluate(frame, TRUTH, MEASURES).items())}


def test_the_holes_are_the_top_k_pairs_the_set_does_not_judge():
    holes = find_holes(FROZEN, RUNS, depth=3)
    assert list(holes.holes.itertuples(index=False, name=None)) == [
        ("q1", "h1", "new"), ("q1", "h2", "new"), ("q2", "h1", "new"), ("q2", "h2", "new"), ("q3", "h1", "new"),
        ("q3", "h2", "new")]
    assert holes.per_run.to_dict(orient="records") == [
        {"run": "old", "pairs": 9, "holes": 0, "queries": 0}, {"run": "new", "pairs": 9, "holes": 6, "queries": 3}]
    assert holes.to_text().splitlines()[2] == "  new: 6 of 9 pairs (66.7%) in 3 queries"


@pytest.mark.parametrize("llm", [None, LLM], ids=["horvitz-thompson", "calibrated llm"])
def test_over_every_draw_the_estimate_averages_to_the_full_judgments_score(llm):
    holes = find_holes(FROZEN, RUNS, depth=3)
    design = draw_holes(holes, fraction=0.75, seed=1)  # at 0.5 a draw's estimate can leave [0, 1]: clipped, biased
    hole_rows = design.index[design["hole"]]
    grades = TRUTH.set_index(["query_id", "doc_id"])["grade"]
    expected = 0.0
    for drawn in itertools.product([False, True], repeat=len(hole_rows)):
        pairs = design.copy()
        pairs.loc[hole_rows, "sampled"] = drawn
        picked = pairs.loc[hole_rows][list(drawn)]
        graded = picked[["query_id", "doc_id"]].assign(
            grade=[int(grades[key]) for key in zip(picked["query_id"], picked["doc_id"], strict=True)])
        table = estimate_holes(holes, pairs, graded, llm, RUNS, measures=MEASURES).table
        estimate = table[table["kind"] == "run"].set_index(["name", "measure"])["estimate"]
        expected = expected + estimate * 0.75 ** sum(drawn) * 0.25 ** (len(drawn) - sum(drawn))
    order = list(dict.fromkeys(table["measure"]))
    got = {(name, order.index(measure)): value for (name, measure), value in expected.items()}
    assert got == pytest.approx(truth(), abs=1e-12)


def test_the_draw_is_seeded_and_holds_the_judged_pairs_for_certain():
    holes = find_holes(FROZEN, RUNS, depth=3)
    first, again = draw_holes(holes, budget=3, seed=7), draw_holes(holes, budget=3, seed=7)
    pd.testing.assert_frame_equal(first, again)
    assert (first.loc[~first["hole"], ["pi", "sampled"]] == [1.0, True]).all().all()
    assert first.loc[first["hole"], "pi"].tolist() == [0.5] * 6


def test_bad_input_is_refused_with_its_cause():
    holes = find_holes(FROZEN, RUNS, depth=3)
    with pytest.raises(InputError, match="no run has a hole in its top 3: every pair is judged"):
        find_holes(TRUTH, RUNS, depth=3)
    with pytest.raises(InputError, match="a budget of 6 judgments for 6 holes: judge them all"):
        draw_holes(holes, budget=6)
    with pytest.raises(InputError, match="give one of a budget"):
        draw_holes(holes)
    design = draw_holes(holes, fraction=0.5, seed=1)
    undrawn = design[design["hole"] & ~design["sampled"]].iloc[:1][["query_id", "doc_id"]].assign(grade=1)
    with pytest.raises(InputError):
        estimate_holes(holes, design, undrawn, None, RUNS, measures=["p@3"])
    drawn = design[design["hole"] & design["sampled"]][["query_id", "doc_id"]].assign(grade=1)
    with pytest.raises(InputError, match="judge llm"):
        estimate_holes(holes, design, drawn, LLM.iloc[:-1], RUNS, measures=["p@3"])


@pytest.mark.slow  # DL19's 37 runs read, 20 estimates
def test_on_dl19_a_quarter_of_a_left_out_groups_holes_puts_its_runs_within_a_hundredth():
    """TREC DL 2019 with TU-Vienna left out of the depth-10 pool (as `evalset reusability` leaves a group out): its
    six runs' holes are NIST-judged, so the truth is known. Frozen only, they are scored 0.009-0.042 nDCG@10 low;
    a quarter of their holes graded (NIST standing in for the annotators) and Llama-3-70B's grades of every pair
    put them within 0.0061 (RMSE over 20 draws of the six runs), the 95% intervals covering 118 of the 120 truths."""
    from evalset.io.trec import read_qrels, read_run
    from evalset.pooling.contributions import pool_of_runs, reduced_qrels, unique_contributions
    from tests.conftest import REPO

    dl19 = REPO / "data" / "dl19"
    nist = read_qrels(dl19 / "nist.qrels")
    runs = {path.name.removesuffix(".run.gz"): read_run(path) for path in sorted((dl19 / "runs").glob("*.run.gz"))}
    meta = pd.read_csv(dl19 / "run_metadata.tsv", sep="\t")
    owner = dict(zip(meta["runid"], meta["participant"], strict=True))
    unique = unique_contributions(pool_of_runs(runs, nist, 10).top, owner)
    frozen = reduced_qrels(nist, unique, ["TU-Vienna"])["TU-Vienna"]
    new = {name: run for name, run in runs.items() if owner[name] == "TU-Vienna"}
    holes = find_holes(frozen, new, depth=10)
    assert holes.per_run.set_index("run")["holes"].to_dict() == {
        "TUW19-p1-f": 56, "TUW19-p1-re": 40, "TUW19-p2-f": 38, "TUW19-p2-re": 32, "TUW19-p3-f": 57, "TUW19-p3-re": 40}
    truth = {name: evaluate(run, nist, ["ndcg@10"])["ndcg@10"].mean() for name, run in new.items()}
    frozen_only = {name: truth[name] - evaluate(run, frozen, ["ndcg@10"])["ndcg@10"].mean()
                   for name, run in new.items()}
    assert max(frozen_only.values()) == pytest.approx(0.0424, abs=1e-4)  # TUW19-p3-f
    llm = read_qrels(dl19 / "llm_labels" / "llama-3-70b.fourprompts.qrels").assign(judge="llama-3-70b")
    grades = nist.set_index(["query_id", "doc_id"])["grade"]
    errors, covered = [], []
    for seed in range(20):
        design = draw_holes(holes, fraction=0.25, seed=seed)
        drawn = design[design["hole"] & design["sampled"]]
        graded = drawn[["query_id", "doc_id"]].assign(
            grade=[int(grades[key]) for key in zip(drawn["query_id"], drawn["doc_id"], strict=True)])
        table = estimate_holes(holes, design, graded, llm, new, comparisons=[]).table.set_index("name")
        for name in new:
            errors.append(table.loc[name, "estimate"] - truth[name])
            covered.append(table.loc[name, "set_low"] <= truth[name] <= table.loc[name, "set_high"])
    assert float(np.sqrt(np.mean(np.square(errors)))) == pytest.approx(0.0061, abs=5e-5)
    assert float(np.mean(covered)) == pytest.approx(0.9833, abs=1e-4)  # 118 of 120: few draws, no rate
