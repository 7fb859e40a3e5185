"""The one decision module: each rule on its own evidence, and the invariants of :func:`decide` over any evidence."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalset.stats.verdicts import (
    ESTABLISHED,
    NO_VERDICT,
    NOT_ESTABLISHED,
    RULES,
    WORDS,
    Evidence,
    HoleBound,
    bounded,
    decide,
    minimum_permutations,
    minimum_resamples,
)
from tests.conftest import CHEAP

PLAIN = dict(estimate=0.2, threshold=0.05, p=0.001, low=0.1, high=0.3, interval="BCa interval", n=20,
             permutations=9999, resamples=9999)


def test_clear_evidence_is_established_and_says_what_it_rests_on():
    verdict = decide(Evidence(**PLAIN))
    assert verdict.established and verdict.rule == "established"
    assert verdict.text == "established: candidate better (p = 0.001 < 0.05)"
    assert decide(Evidence(**{**PLAIN, "estimate": -0.2, "low": -0.3, "high": -0.1})).text == (
        "established: candidate worse (p = 0.001 < 0.05)")


@pytest.mark.parametrize("change, rule, text", [
    ({"split": "dev"}, "dev split", "exploratory (dev split, p = 0.001): the dev split is for tuning, never "
                                    "established"),
    ({"kind": "exploratory"}, "exploratory", "exploratory (p = 0.001): a lead for a planned comparison, never "
                                             "established"),
    ({"n": 0}, "no queries", "no verdict: no query has a value for both runs"),
    ({"n": 1}, "few queries", "no verdict: a difference on 1 query cannot be told from chance"),
    ({"strata": {"head": 5, "tail": 1}}, "few queries",
     "no verdict: stratum tail (1 query) cannot carry an interval (a stratum needs 2 queries or more: merge it "
     "with a neighbour in the queries file)"),
    ({"permutations": 19, "threshold": 0.025, "p": 0.05}, "too few flips",
     "no verdict: 19 sign flips cannot reach p < 0.025 (the smallest p they give is 0.05); give at least 40"),
    ({"resamples": 1}, "too few resamples",
     "no verdict: 1 resamples cannot place the ends of a 0.95 interval (none falls beyond them); give at least 40"),
    ({"design": "the sample holds 1 pair"}, "design", "no verdict: the sample holds 1 pair"),
    ({"clipped": "the estimate 1.1879 left the measure's range, clipped to [0, 1]"}, "outside range",
     "no verdict: the estimate 1.1879 left the measure's range, clipped to [0, 1]"),
    ({"low": 0.139, "high": 0.139}, "zero width",
     "no verdict: the BCa interval has zero width (+0.1390): every resample gave the same difference, which says "
     "nothing of its spread"),
    ({"p": math.nan, "low": math.nan, "high": math.nan}, "undefined",
     "no verdict: neither a p-value nor an interval is defined"),
    ({"holes": HoleBound(220, "the candidate's top 10", True)}, "holes could flip",
     "not established: 220 unjudged documents in the candidate's top 10 could flip it (judge them, or a sample of "
     "them: evalset holes -o DIR)"),
    ({"p": 0.2}, "p at threshold", "not established (p = 0.2 >= 0.05)"),
    ({"low": -0.01}, "interval holds 0", "not established (p = 0.001, BCa interval at 0.95 holds 0)"),
])
def test_each_rule_fires_on_its_evidence(change, rule, text):
    verdict = decide(Evidence(**{**PLAIN, **change}))
    assert (verdict.rule, verdict.text) == (rule, text)
    assert not verdict.established


def test_holes_kept_as_judged_or_that_cannot_flip_leave_the_verdict():
    for holes in (HoleBound(220, "the candidate's top 10", True, "accepted"), HoleBound(3, "the two runs' top 10",
                                                                                        False)):
        assert decide(Evidence(**PLAIN, holes=holes)).established


def test_an_interval_alone_decides_by_its_side():
    verdict = decide(Evidence(0.1, 0.05, low=0.02, high=0.2, interval="PPI++ interval"))
    assert verdict.text == "established: candidate better (PPI++ interval at 0.95 excludes 0)"
    assert decide(Evidence(0.1, 0.05, low=-0.02, high=0.2, interval="PPI++ interval")).text == (
        "not established (PPI++ interval at 0.95 holds 0)")


def test_the_minimum_draws_are_the_fewest_that_can_reach_the_threshold():
    assert minimum_permutations(0.025) == 40 and 1 / (40 + 1) < 0.025 <= 1 / (39 + 1)
    assert minimum_permutations(0.05) == 20 and minimum_permutations(0.05 / 3) == 60
    assert minimum_resamples(0.05) == 40 and minimum_resamples(0.025) == 80


def test_an_estimate_outside_the_range_is_clipped_and_named():
    clipped = bounded(1.1879, 0.6867, 1.6891, (0.0, 1.0), "ms_duet_passage")
    assert (clipped.estimate, clipped.low, clipped.high) == (1.0, 0.6867, 1.0)
    assert clipped.clipped == ("the estimate 1.1879 and the interval [0.6867, 1.6891] of ms_duet_passage left the "
                               "measure's range, clipped to [0, 1]")
    assert bounded(0.5, 0.4, 0.6, (0.0, 1.0)).clipped == ""


def test_the_docs_table_is_the_rules_in_order():
    from tests.conftest import REPO
    names = {rule.name for rule in RULES}
    page = (REPO / "docs" / "compare.md").read_text()
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in page.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in names]
    assert rows == [[rule.name, rule.evidence, f"`{rule.prints}`"] for rule in RULES]


# ------------------------------------------------------------------------------------------------ properties
finite = st.floats(-1, 1, allow_nan=False)
maybe = st.one_of(st.just(math.nan), finite)
evidence = st.builds(
    Evidence, estimate=finite, threshold=st.sampled_from([0.05, 0.025, 0.05 / 36, 0.01]),
    kind=st.sampled_from(["planned", "exploratory"]), split=st.sampled_from([None, "test", "dev"]),
    p=st.one_of(st.just(math.nan), st.floats(0, 1)), low=maybe, high=maybe,
    n=st.one_of(st.none(), st.integers(0, 60)),
    strata=st.dictionaries(st.sampled_from(["head", "torso", "tail"]), st.integers(1, 9), max_size=3),
    permutations=st.one_of(st.none(), st.integers(1, 20000)), resamples=st.one_of(st.none(), st.integers(1, 20000)),
    holes=st.one_of(st.none(), st.builds(HoleBound, st.integers(0, 300), st.just("the top 10"), st.booleans(),
                                         st.sampled_from(["bounded", "accepted", "condensed"]))),
    clipped=st.sampled_from(["", "the estimate left the range"]), design=st.sampled_from(["", "too small"]))


@CHEAP
@given(evidence)
def test_established_only_on_evidence_that_excludes_no_difference(e):
    verdict = decide(e)
    assert verdict.word in WORDS and verdict.text.startswith(verdict.word)
    if verdict.established:
        assert e.kind == "planned" and e.split != "dev" and not e.clipped and not e.design
        assert e.n is None or e.n >= 2
        assert all(size >= 2 for size in e.strata.values())
        assert not (e.holes and e.holes.could_flip and e.holes.policy == "bounded")
        assert math.isnan(e.p) or e.p < e.threshold
        if not math.isnan(e.low):
            assert not e.low <= 0 <= e.high and e.low != e.high
        assert not (math.isnan(e.p) and math.isnan(e.low))


@CHEAP
@given(evidence)
def test_an_abstention_names_its_reason_and_no_verdict_is_a_difference(e):
    verdict = decide(e)
    if verdict.word == NO_VERDICT:
        assert len(verdict.text) > len("no verdict: ")
    if verdict.word in (NO_VERDICT, NOT_ESTABLISHED):
        assert not verdict.established
    assert (verdict.word == ESTABLISHED) == verdict.established
