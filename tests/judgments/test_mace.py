"""The numpy MACE gives crowd-kit's MACE's grades, probabilities and parameters bit for bit (LLMJudge's 33 judges
and DL19's four annotators on 12,704 and 9,480 labels, a synthetic table with unsorted names and grades, both
M-steps, several restarts), in a fraction of the time; ``mace`` is fitted by it and the manifest's record says so."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import MACE

from evalset.agreement import apply_scale, load_grades
from evalset.errors import InputError
from evalset.judgments import RULES, aggregate, crowd_frame, crowdkit_version
from evalset.judgments.crowd import FAST_MACE
from evalset.judgments.mace import fit_mace

DL19 = Path(__file__).resolve().parents[2] / "data" / "dl19"
ONE_RUN = {**RULES["mace"].parameters, "n_restarts": 1}


@pytest.fixture(scope="module")
def llmjudge(shared_data):
    """The 33 LLMJudge judges' grades of the first three queries, as crowd-kit's frame."""
    judges = sorted(str(p) for p in (shared_data / "llmjudge" / "llm_submissions").glob("*.txt"))
    grades, _ = apply_scale(load_grades(judges)[0], [0, 1, 2, 3], "drop")
    queries = sorted(grades["query_id"].unique())[:3]
    return crowd_frame(grades[grades["query_id"].isin(queries)]).frame


def dl19():
    """NIST and three LLM judges on DL19's first ten queries."""
    files = [DL19 / "nist.qrels", *sorted((DL19 / "llm_labels").glob("*.qrels"))]
    grades = load_grades([str(f) for f in files])[0]
    return crowd_frame(grades[grades["query_id"].isin(sorted(grades["query_id"].unique())[:10])]).frame


def synthetic():
    """Six grades and four workers that appear in another order than they sort, pairs graded by a few."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"task": rng.integers(0, 300, 2000), "worker": rng.choice(["zed", "amy", "Bob", "k9"], 2000),
                          "label": rng.choice([5, 2, 9, 0, 1, 7], 2000)})
    return frame.drop_duplicates(["task", "worker"]).reset_index(drop=True)


def assert_same_fit(frame, **parameters):
    reference = MACE(**parameters).fit(frame)
    fit = fit_mace(frame, **parameters)
    pd.testing.assert_series_equal(fit.labels, reference.labels_, check_exact=True)
    pd.testing.assert_frame_equal(fit.probas, reference.probas_, check_exact=True)
    assert np.array_equal(fit.spamming, reference.spamming_) and np.array_equal(fit.thetas, reference.thetas_)


@pytest.mark.slow
@pytest.mark.parametrize("table", ["llmjudge", "dl19", "synthetic"])
def test_one_run_of_fifty_em_steps_equals_crowd_kits_bit_for_bit(llmjudge, table):
    """The synthetic table with the plain EM M-step (``method="em"``), the real ones with the rule's ``vb``."""
    frames = {"llmjudge": lambda: llmjudge, "dl19": dl19, "synthetic": synthetic}
    assert_same_fit(frames[table](), **{**ONE_RUN, "method": "em" if table == "synthetic" else "vb"})


@pytest.mark.slow
def test_crowd_kits_restarts_all_start_from_the_same_seed_so_one_run_gives_their_grades(llmjudge):
    """crowd-kit seeds every restart with the same int: three restarts keep the first run, the one fitted here."""
    frame = llmjudge[llmjudge["task"] < 96]
    assert_same_fit(frame, **{**RULES["mace"].parameters, "n_restarts": 3, "n_iter": 5})
    many, one = fit_mace(frame, **{**ONE_RUN, "n_restarts": 10}), fit_mace(frame, **ONE_RUN)
    pd.testing.assert_frame_equal(many.probas, one.probas, check_exact=True)


@pytest.mark.slow
def test_mace_is_fitted_by_the_numpy_port_and_the_record_says_so(llmjudge):
    labels = pd.DataFrame({"query_id": "q", "doc_id": llmjudge["task"].astype(str).str.zfill(4),
                           "annotator": llmjudge["worker"], "grade": llmjudge["label"]})
    result = aggregate(labels[llmjudge["task"] < 96], "mace")
    record = result.record()
    assert record["implementation"] == FAST_MACE == "evalset.judgments.mace.fit_mace"
    assert record["equals"] == f"crowd-kit {crowdkit_version()} MACE" and record["class"] == "MACE"
    assert result.grades["grade"].tolist() == result.model.labels.sort_index().tolist()
    assert result.model.labels.equals(fit_mace(llmjudge[llmjudge["task"] < 96], **RULES["mace"].parameters).labels)
    assert aggregate(labels[llmjudge["task"] < 96], "one-coin").record()["implementation"] == "crowd-kit"


def test_a_random_state_that_is_not_an_int_is_refused():
    frame = pd.DataFrame({"task": [0, 0, 1], "worker": ["a", "b", "a"], "label": [1, 2, 1]})
    with pytest.raises(InputError, match="needs an int random_state"):
        fit_mace(frame, random_state=np.random.RandomState(1))
    with pytest.raises(InputError, match="MACE's method must be one of vb, em, got 'gibbs'"):
        fit_mace(frame, method="gibbs")
