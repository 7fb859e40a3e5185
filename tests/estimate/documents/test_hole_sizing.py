"""A sample of a set's holes sized for a precision (evalset/estimate/documents/holesizing.py): per run the share of
its holes whose predicted standard error is the precision, never below the least share, none for a run without holes; a
hole takes the largest share of the runs that retrieve it; a precision no sample can reach is refused."""

import numpy as np
import pytest

from evalset.errors import InputError
from evalset.estimate.documents.holes import draw_holes
from evalset.estimate.documents.holesizing import MIN_FRACTION, hole_probabilities, size_holes
from evalset.holes import find_holes
from tests.estimate.documents.test_hole_sample import FROZEN, LLM, RUNS, run

HOLES = find_holes(FROZEN, RUNS, depth=3)


def sized(precision, runs=RUNS, holes=HOLES):
    return size_holes(holes, LLM, runs, precision=precision, measures=["p@3", "dcg@3"]).set_index("run")


def test_the_predicted_standard_error_at_the_share_is_the_precision_and_a_run_without_holes_judges_none():
    loose, tight = sized(0.5), sized(0.1)
    assert loose.loc["old"].to_dict() == {"holes": 0, "fraction": 0.0, "se": 0.0}
    assert loose.loc["new", "fraction"] == pytest.approx(0.4303, abs=1e-4)
    assert tight.loc["new", "fraction"] == pytest.approx(0.9497, abs=1e-4)
    assert loose.loc["new", "se"] == pytest.approx(0.5) and tight.loc["new", "se"] == pytest.approx(0.1)
    # the share solves (1 - f) / f S^2 = precision^2 for one S^2: both give the same S^2
    unit = [precision ** 2 * f / (1 - f) for precision, f in ((0.5, loose.loc["new", "fraction"]),
                                                               (0.1, tight.loc["new", "fraction"]))]
    assert unit[0] == pytest.approx(unit[1])


def test_a_loose_precision_still_draws_the_least_share():
    assert sized(10.0).loc["new", "fraction"] == MIN_FRACTION


def test_a_hole_takes_the_largest_share_of_the_runs_that_retrieve_it():
    runs = {**RUNS, "other": run({"q1": ["h1", "a", "b"], "q2": ["a", "b", "c"], "q3": ["b", "d", "a"]})}
    holes = find_holes(FROZEN, runs, depth=3)
    shares = sized(0.3, runs, holes)
    assert shares.loc["other", "holes"] == 1 and shares.loc["new", "holes"] == 6
    pi = hole_probabilities(holes, shares.reset_index())
    first = holes.holes.index[(holes.holes["query_id"] == "q1") & (holes.holes["doc_id"] == "h1")][0]
    assert pi[first] == max(shares.loc["new", "fraction"], shares.loc["other", "fraction"])
    assert np.delete(pi, first) == pytest.approx(np.full(5, shares.loc["new", "fraction"]))
    design = draw_holes(holes, probabilities=pi, seed=2)
    assert design.loc[design["hole"], "pi"].to_numpy() == pytest.approx(pi)


def test_a_precision_only_every_hole_reaches_is_refused_and_so_is_one_not_above_zero():
    with pytest.raises(InputError, match=r"a precision of 0.01 cannot be reached by a sample of the holes: every run "
                                         r"needs 95% of its holes or more \(100% the least\)"):
        sized(0.01)
    with pytest.raises(InputError, match="precision"):
        sized(0.0)
