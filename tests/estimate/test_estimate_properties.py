"""Properties of every figure and verdict `evalset estimate` gives, under both designs, on small generated inputs:
few queries, thin or full samples, judges that agree or not, runs with ties, a run lacking a query, identical runs.

- No estimate or interval outside the measure's range (a run's mean in its range; a paired difference in
  ``[-w, w]``): the figure is clipped and named instead.
- No ``established`` verdict whose interval holds 0 or has zero width.
- Identical runs are never ``established`` to differ.
- The document design refuses a sample below its minimum (3 drawn pairs a query on average, 2 queries).

Each property runs the library call the command makes: :func:`evalset.estimate.estimate_runs` (the query slice,
PPI++) and :func:`evalset.estimate.documents.report.sample_report` (the document sample) on inputs hypothesis draws,
under the suite's hypothesis profile (tests/conftest.py).
"""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.estimate import estimate_runs, grades_of, select_slice
from evalset.estimate.documents.report import sample_report
from evalset.estimate.documents.sample import MINIMUM_PER_QUERY
from evalset.io.samplerecord import SampleRecord
from evalset.stats.family import ComparisonFamily

DOCS = [f"d{i}" for i in range(8)]
CONTRACT = EvaluationContract(missing="zero")  # a whole contract: its conventions chosen, a lacking query scores 0


@st.composite
def runs_over(draw, pools: dict[str, list[str]]):
    """Two runs over the pools' queries (ties, a document outside the pool, sometimes a query left out), the
    second sometimes the first itself."""
    frames = {}
    for name in ("a", "b"):
        rows = []
        for number, (query, docs) in enumerate(pools.items()):
            if name == "b" and number and draw(st.integers(0, 9)) == 0:
                continue  # a query this run lacks (never all of them: such a run is refused)
            ranked = draw(st.lists(st.sampled_from([*docs, "elsewhere"]), unique=True, min_size=1, max_size=8))
            scores = draw(st.lists(st.integers(0, 3), min_size=len(ranked), max_size=len(ranked)))
            rows += [(query, doc, float(score)) for doc, score in zip(ranked, scores, strict=True)]
        frames[name] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    identical = draw(st.booleans())
    if identical:
        frames["b"] = frames["a"].copy()
    return frames, identical


@st.composite
def slice_designs(draw):
    """Queries with a pool each, every pair graded by the LLM and the slice's by humans, two runs, a metric."""
    pools = {f"q{i}": draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=2, max_size=6))
             for i in range(draw(st.integers(4, 9)))}
    pairs = [(query, doc) for query, docs in pools.items() for doc in docs]
    human = [draw(st.integers(0, 3)) for _ in pairs]
    agree = draw(st.sampled_from(["same", "near", "unrelated"]))
    llm = [g if agree == "same" else min(3, max(0, g + draw(st.integers(-1, 1)))) if agree == "near"
           else draw(st.integers(0, 3)) for g in human]
    size = draw(st.integers(2, len(pools) - 1))
    runs, identical = draw(runs_over(pools))
    metric = draw(st.sampled_from(["ndcg@5", "p@5", "rr", "ap", "ndcg@10"]))
    return pools, pairs, human, llm, size, runs, identical, metric, draw(st.integers(0, 2 ** 16))


def table(pairs, grades, annotator):
    return pd.DataFrame([(q, d, annotator, g) for (q, d), g in zip(pairs, grades, strict=True)],
                        columns=["query_id", "doc_id", "annotator", "grade"])


def within(value, low, high):
    return math.isnan(value) or low - 1e-12 <= value <= high + 1e-12


def check_verdict(verdict, rule, low, high, identical):
    """An established verdict rests on an interval of some width that excludes 0; identical runs never get one."""
    if rule == "established":
        assert verdict.startswith("established: candidate")
        assert low != high and not low <= 0 <= high, (verdict, low, high)
        assert not identical, verdict
    else:
        assert not verdict.startswith("established")


@pytest.mark.slow  # 40 examples of two scorings and ppi_py each: 12 s
@given(slice_designs())
def test_the_query_slice_gives_no_figure_outside_the_range_and_no_verdict_it_cannot_support(design):
    pools, pairs, human, llm, size, runs, identical, metric, seed = design
    record = select_slice(list(pools), size=size, seed=seed)
    in_slice = [pair[0] in record.slice for pair in pairs]
    human_grades = grades_of(table([p for p, kept in zip(pairs, in_slice, strict=True) if kept],
                                   [g for g, kept in zip(human, in_slice, strict=True) if kept], "human"))
    try:
        estimate = estimate_runs(runs, human_grades, grades_of(table(pairs, llm, "llm")), record, metrics=[metric],
                                 contract=CONTRACT, pairs=[("a", "b")])
    except InputError as error:  # too few slice queries with a defined value: refused, one line
        assert "\n" not in error.message
        assume(False)
    for row in estimate.runs.itertuples():
        for value in (row.estimate, row.low, row.high, row.human_mean, row.human_low, row.human_high):
            assert within(value, 0, 1), (row.run, value)
    for row in estimate.comparisons.itertuples():
        for value in (row.estimate, row.low, row.high, row.human_mean, row.human_low, row.human_high):
            assert within(value, -1, 1), value
        check_verdict(row.verdict, row.rule, row.low, row.high, identical)
        if identical:  # every per-query difference 0; the variance floor still gives the interval its width
            assert row.estimate == 0


@st.composite
def document_designs(draw):
    """A pool over 2 to 5 queries, each pair with its pi and draw (pi = 1: drawn), its human grade (read where
    drawn) and a judge's grade (or none: Horvitz-Thompson), two runs, a measure."""
    pools = {f"q{i}": draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=3, max_size=8))
             for i in range(draw(st.integers(2, 5)))}
    pairs = [(query, doc) for query, docs in pools.items() for doc in docs]
    pi = [draw(st.sampled_from([1.0, 0.9, 0.6, 0.3, 0.1, 0.02])) for _ in pairs]
    drawn = [p == 1.0 or draw(st.sampled_from([True, True, True, False])) for p in pi]
    human = [draw(st.integers(0, 3)) for _ in pairs]
    judge = draw(st.sampled_from(["none", "same", "near", "unrelated"]))
    llm = None if judge == "none" else [
        g if judge == "same" else min(3, max(0, g + draw(st.integers(-1, 1)))) if judge == "near"
        else draw(st.integers(0, 3)) for g in human]
    runs, identical = draw(runs_over(pools))
    measure = draw(st.sampled_from(["ndcg@3", "p@3", "ap", "dcg@3", "ndcg@10"]))
    return pools, pairs, pi, drawn, human, llm, runs, identical, measure


@given(document_designs())
def test_the_document_sample_gives_no_figure_outside_the_range_and_no_verdict_it_cannot_support(design):
    pools, pairs, pi, drawn, human, llm, runs, identical, measure = design
    frame = pd.DataFrame(pairs, columns=["query_id", "doc_id"])
    record = SampleRecord(float(sum(pi)), None, 0, 10, 0.3, {}, frame.assign(
        pair_id=[f"p{i}" for i in range(len(pairs))], prior=1.0, pi=pi, sampled=drawn))
    graded = frame[np.array(drawn)].assign(grade=np.array(human)[np.array(drawn)])
    judges = None if llm is None else frame.assign(judge="llm", grade=llm)
    try:
        report = sample_report(runs, record, graded, judges, record_path="generated", files={"human": [], "llm": []},
                               metrics=[measure], pairs=[("a", "b")], family=ComparisonFamily.of(1),
                               contract=CONTRACT)
    except InputError as error:
        assert sum(drawn) < MINIMUM_PER_QUERY * len(pools), error.message  # the only refusal: below the minimum
        assert "is too small for the design's estimators" in error.message
        return
    assert sum(drawn) >= MINIMUM_PER_QUERY * len(pools)
    low, high = report.estimate.settings["ranges"][measure]
    for row in report.estimate.table.itertuples():
        span = (low - high, high - low) if row.kind == "difference" else (low, high)
        for value in (row.estimate, row.set_low, row.set_high, row.new_low, row.new_high):
            assert within(value, *span), (row.name, value, span, row.clipped)
    for row in report.comparisons.itertuples():
        for value in (row.estimate, row.set_low, row.set_high, row.new_low, row.new_high):
            assert within(value, low - high, high - low), value
        rests = (row.set_low, row.set_high) if row.interval == "this set" else (row.new_low, row.new_high)
        check_verdict(row.verdict, row.rule, *rests, identical)
        if identical:
            assert row.estimate == 0 and row.rule == "zero width"


@pytest.mark.parametrize("drawn, refused", [(5, True), (6, False)])
def test_the_minimum_is_three_drawn_pairs_a_query_on_average(drawn, refused):
    pairs = [(q, d) for q in ("q0", "q1") for d in DOCS[:5]]
    frame = pd.DataFrame(pairs, columns=["query_id", "doc_id"])
    sampled = np.arange(len(pairs)) % 5 < 3  # three of each query's five
    sampled[np.flatnonzero(sampled)[drawn:]] = False
    record = SampleRecord(5.0, None, 0, 10, 0.3, {}, frame.assign(pair_id=[f"p{i}" for i in range(10)], prior=1.0,
                                                                  pi=0.5, sampled=sampled))
    runs = {"a": frame.assign(score=1.0)}
    call = lambda: sample_report(runs, record, frame[sampled].assign(grade=1), None,  # noqa: E731
                                 record_path="r", files={"human": [], "llm": []}, metrics=["p@3"], pairs=[],
                                 family=ComparisonFamily.of(0), contract=CONTRACT)
    if refused:
        with pytest.raises(InputError, match=r"5 drawn pairs over 2 queries \(2\.50 a query\) is too small"):
            call()
    else:
        assert call().estimate.settings["sampled"] == 6
