"""An estimate's paired differences become evidence in one place (evalset.estimate.differences): the family gives
each its kind and threshold, its interval is at 1 - threshold, and the one decision module decides on the interval
alone, for every design."""

import pytest

from evalset.estimate.differences import DECIDED, PairedDifference
from evalset.stats.family import ComparisonFamily


def test_the_family_gives_each_difference_its_kind_and_threshold():
    pair = PairedDifference.of("bm25", "bert", "ndcg@10", ComparisonFamily.of(2, planned=4), alpha=0.05,
                               exploratory=False)
    assert (pair.kind, pair.threshold, pair.name) == ("planned", 0.0125, "bert - bm25")
    assert pair.level == pytest.approx(0.9875)
    lead = PairedDifference.of("bm25", "bert", "ndcg@10", ComparisonFamily.of(1), alpha=0.05, exploratory=True)
    assert (lead.kind, lead.threshold) == ("exploratory", 0.05)


@pytest.mark.parametrize(("low", "high", "rule", "verdict"), [
    (0.01, 0.05, "established", "established: candidate better (PPI++ interval at 0.95 excludes 0)"),
    (-0.05, -0.01, "established", "established: candidate worse (PPI++ interval at 0.95 excludes 0)"),
    (-0.01, 0.05, "interval holds 0", "not established (PPI++ interval at 0.95 holds 0)"),
])
def test_the_verdict_rests_on_the_interval_alone(low, high, rule, verdict):
    pair = PairedDifference("a", "b", "p@10", "planned", 0.05)
    decided = pair.decided((low + high) / 2, low, high, interval="PPI++ interval", n=43)
    assert tuple(decided) == DECIDED
    assert decided["rule"] == rule and decided["verdict"].startswith(verdict)
    assert decided["level"] == pytest.approx(0.95) and decided["threshold"] == 0.05


def test_an_exploratory_difference_is_a_lead_never_established():
    decided = PairedDifference("a", "b", "p@10", "exploratory", 0.05).decided(0.03, 0.01, 0.05, n=43,
                                                                              interval='"this set" interval')
    assert decided["rule"] == "exploratory"
    assert decided["verdict"].startswith('exploratory ("this set" interval at 0.95)')
