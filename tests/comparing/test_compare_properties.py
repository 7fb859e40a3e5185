"""Properties of every verdict `compare` prints, on generated hostile inputs: shallow pools, a new run full of holes,
constant per-query columns, tiny query sets, singleton strata, identical runs, tied scores.

Each property runs the library call the command makes (:func:`evalset.comparing.compare_runs`,
:func:`evalset.comparing.many.compare_many`) on small qrels and runs that hypothesis draws; the examples each ran
are listed in docs/compare.md. A failure hypothesis finds is kept below as a plain regression test.
"""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st

from evalset.comparing import compare_runs
from evalset.comparing.many import compare_many
from evalset.contract import ContractOptions
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.metrics.measures import measure_bounds

DOCS = [f"d{i}" for i in range(14)]
METRICS = ["ndcg@5", "p@5", "ap", "rr", "ndcg@10"]


@st.composite
def designs(draw):
    """Qrels judged from a shallow pool, a baseline, a candidate, a metric, strata (sometimes of one query) and a
    seed. The candidate is drawn as the baseline is (``random``), ranks the judged documents by grade (``better``),
    does so behind unjudged documents (``holes``: a new run full of holes), does so against a baseline that ranks
    them the other way, both judged through (``judged``: a difference the tests can establish), or is the
    baseline itself or a copy with two documents swapped (``identical``, ``swapped``)."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 14)))]
    mode = draw(st.sampled_from(["judged", "random", "better", "judged", "holes", "identical", "swapped"]))
    qrels, runs = [], {"base": [], "cand": []}
    for query in queries:
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=10))
        grades = {doc: draw(st.integers(0, 3)) for doc in judged}
        qrels += [(query, doc, grade) for doc, grade in grades.items()]
        for name in runs:
            ranked = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=12))
            scores = draw(st.lists(st.integers(0, 4), min_size=len(ranked), max_size=len(ranked)))  # ties
            if mode == "judged":  # a fully judged pool: the candidate ranks by grade, the baseline against it
                ranked = sorted(grades, key=grades.get, reverse=name == "cand") or ranked[:1]
                scores = list(range(len(ranked), 0, -1))
            elif name == "cand" and mode in ("better", "holes"):
                unjudged = [doc for doc in DOCS if doc not in grades] if mode == "holes" else []
                ranked = unjudged[:draw(st.integers(0, 5))] + sorted(grades, key=grades.get, reverse=True)
                scores = list(range(len(ranked), 0, -1))
            runs[name] += [(query, doc, float(score)) for doc, score in zip(ranked, scores, strict=True)]
    frames = {name: pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]) for name, rows in runs.items()}
    if mode in ("identical", "swapped"):
        frames["cand"] = frames["base"].copy()
        if mode == "swapped" and len(frames["cand"]) > 1:
            frames["cand"].loc[[0, 1], "score"] = frames["cand"].loc[[1, 0], "score"].to_numpy()
    strata = None
    if draw(st.booleans()) and len(queries) >= 2:
        cut = draw(st.integers(1, len(queries) - 1))
        strata = pd.DataFrame({"query_id": queries, "stratum": ["head"] * cut + ["tail"] * (len(queries) - cut),
                               "stratum_share": [0.7] * cut + [0.3] * (len(queries) - cut)})
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "grade"])
    return qrels, frames, draw(st.sampled_from(METRICS)), strata, mode, draw(st.integers(0, 2 ** 16))


def run_compare(qrels, frames, metric, strata, seed, **options):
    """The comparison, or None where the input is refused with one line (no judged query, no relevant document)."""
    try:
        evaluation = Evaluation.on_qrels(qrels, ContractOptions(missing="zero"))
        return compare_runs(evaluation, frames, metric, permutations=199, seed=seed, strata=strata,
                            **options).results[0]
    except InputError:
        return None


@given(designs())
def test_no_verdict_rests_on_holes_an_interval_holding_0_or_a_zero_width_interval(design):
    qrels, frames, metric, strata, _, seed = design
    result = run_compare(qrels, frames, metric, strata, seed)
    assume(result is not None)
    event(f"rule: {result.rule}")
    if result.established:
        assert not (result.hole_bound or {}).get("could_flip", False)
        assert not result.ci_low <= 0 <= result.ci_high
        assert result.ci_low < result.ci_high
        assert result.permutation_p < result.threshold and result.n >= 2
        assert all(row["n"] >= 2 for row in result.strata) or result.weighting == "uniform"


@given(designs())
def test_no_interval_leaves_the_range_of_a_difference(design):
    qrels, frames, metric, strata, _, seed = design
    result = run_compare(qrels, frames, metric, strata, seed, bound_holes=False)
    assume(result is not None)
    low, high = measure_bounds(metric)
    width = high - low
    for a, b in [(result.ci_low, result.ci_high)] + [(r["ci_low"], r["ci_high"]) for r in result.strata]:
        if not math.isnan(a):
            assert -width - 1e-12 <= a <= b <= width + 1e-12


@given(designs())
def test_identical_runs_are_never_established(design):
    qrels, frames, metric, strata, _, seed = design
    frames = {"base": frames["base"], "cand": frames["base"].copy()}
    result = run_compare(qrels, frames, metric, strata, seed, bound_holes=False)
    assume(result is not None)
    assert not result.established
    assert result.mean_difference == 0 or (result.n == 0 and result.rule == "no queries")


@given(designs())
def test_swapping_baseline_and_candidate_flips_the_sign_and_keeps_the_verdict(design):
    qrels, frames, metric, strata, _, seed = design
    forward = run_compare(qrels, frames, metric, strata, seed)
    assume(forward is not None)
    backward = run_compare(qrels, {"cand": frames["cand"], "base": frames["base"]}, metric, strata, seed)
    assert backward.mean_difference == pytest.approx(-forward.mean_difference, abs=1e-12, nan_ok=True)
    assert (backward.ci_low, backward.ci_high) == pytest.approx((-forward.ci_high, -forward.ci_low), abs=1e-12,
                                                                nan_ok=True)
    assert backward.permutation_p == forward.permutation_p or math.isnan(forward.permutation_p)
    assert (backward.established, backward.rule) == (forward.established, forward.rule)
    if forward.established:
        assert ("better" in forward.verdict) == ("worse" in backward.verdict)


@given(designs(), st.randoms(use_true_random=False))
def test_reordering_queries_or_lines_changes_nothing(design, random):
    qrels, frames, metric, strata, _, seed = design
    result = run_compare(qrels, frames, metric, strata, seed, bound_holes=False)
    assume(result is not None)

    def shuffled(frame):
        order = list(range(len(frame)))
        random.shuffle(order)
        return frame.iloc[order].reset_index(drop=True)

    again = run_compare(shuffled(qrels), {name: shuffled(f) for name, f in frames.items()}, metric,
                        None if strata is None else shuffled(strata), seed, bound_holes=False)
    assert again.to_dict() == result.to_dict()


@given(designs())
def test_many_runs_never_establish_identical_runs_or_a_pair_its_holes_could_flip(design):
    qrels, frames, metric, _, _, seed = design
    frames = {**frames, "copy": frames["base"].copy()}
    try:
        evaluation = Evaluation.on_qrels(qrels, ContractOptions(missing="zero"))
        result = compare_many(evaluation, frames, metric, permutations=199, seed=seed)
    except InputError:
        assume(False)
    for pair in result.pairs:
        event(f"rule: {pair.rule}")
        if {pair.a, pair.b} == {"base", "copy"}:
            assert pair.rule != "established"
        if pair.rule == "established":
            assert not pair.low <= 0 <= pair.high and pair.p < result.alpha


# ------------------------------------------------------------------------- regressions the properties found
def test_the_traffic_weighted_interval_does_not_depend_on_the_order_of_the_strata_lines():
    """Found by the reordering property: the bootstrap within strata resampled in the strata file's line order
    (on DL19, reversed lines moved the interval from [-0.0292, +0.0095] to [-0.0290, +0.0089])."""
    from evalset.io.trec import read_run
    from tests.conftest import REPO

    dl19 = REPO / "data" / "dl19"
    runs = {name: read_run(dl19 / "runs" / f"{name}.run.gz") for name in ("bm25base_p", "bm25tuned_p")}
    topics = pd.read_csv(dl19 / "topics.tsv", sep="\t", names=["query_id", "query"], dtype=str)
    head = topics.index % 3 == 0
    topics = topics.assign(stratum=np.where(head, "head", "tail"), stratum_share=np.where(head, 0.7, 0.3))
    evaluation = Evaluation.on_qrels(dl19 / "nist.qrels")
    forward, backward = (compare_runs(evaluation, runs, permutations=999, strata=strata).results[0]
                         for strata in (topics, topics.iloc[::-1]))
    assert (forward.ci_low, forward.ci_high) == (backward.ci_low, backward.ci_high)
    assert (round(forward.ci_low, 4), round(forward.ci_high, 4)) == (-0.0287, 0.0092)


def test_bca_on_tied_differences_is_the_mirror_of_the_swapped_comparison():
    """For the swap property: BCa's bias correction counts resamples below the estimate, so with tied differences
    the interval of (a, b) need not be the mirror of (b, a)'s unless both are drawn in one orientation."""
    from evalset.stats.paired import compare_paired

    base = pd.Series([0.0, 0.0, 0.0, 0.5, 0.5], index=list("abcde"))
    cand = pd.Series([0.5, 0.5, 0.0, 0.5, 1.0], index=list("abcde"))
    forward, backward = compare_paired(base, cand, seed=3), compare_paired(cand, base, seed=3)
    assert (backward.ci_low, backward.ci_high) == (-forward.ci_high, -forward.ci_low)
    assert np.isfinite(forward.ci_low)
