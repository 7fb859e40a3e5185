"""Issue 48 for `evalset estimate --design documents`: no figure the data cannot support. On TREC DL 2019's depth-10
pool of the 37 runs (2,495 pairs over 43 queries), NIST's grades as the humans, Llama-3-70B's as the judge:

- a sample of 250 judgments expected (seed 3: 265 drawn, 6.2 a query) gave Horvitz-Thompson's P@10 of
  ms_duet_passage as 1.1879 [0.6867, 1.6891] (its truth under NIST's full grades 0.7163), without a word: the
  estimate and both intervals are now clipped to [0, 1], named, and a comparison resting on an interval that left
  the range carries no verdict;
- a sample of 100 judgments expected (seed 3: 107 drawn, 2.5 a query) gave UNH_exDL_bm25's nDCG@10 as -0.0135, and a
  sample of ONE pair (budget 2, seed 3) was accepted and gave p_bert's nDCG@10 as 1.5712 (bm25base_p's truth
  0.5264): both are now refused, one line, exit 2, below the design's minimum of 3 drawn pairs a query on average
  (:data:`evalset.estimate.documents.sample.MINIMUM_PER_QUERY`). `estimate select` no longer draws such a sample; the
  two records here are written as it wrote them before it refused them.
"""

import json
import re
from dataclasses import replace

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.estimate.documents.estimate import estimate_documents
from evalset.estimate.documents.sample import inclusion_probabilities, poisson_sample
from evalset.io.samplerecord import read_sample, record_texts
from evalset.io.trec import read_runs
from tests.estimate.documents.test_docreport import _rows as rows
from tests.support.dl19files import drawn_sample, invoke, write_qrels

pytestmark = pytest.mark.slow  # the pool and its draw: 2 s

RUNS = ("ms_duet_passage", "bm25base_p", "UNH_exDL_bm25")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The pool, a sample of 250 judgments expected drawn with seed 3 over every pooled pair, as it was drawn then
    (265 pairs), its human qrels (NIST's grades of the drawn pairs) and the judge's qrels of every pooled pair."""
    return drawn_sample(tmp_path_factory.mktemp("thin"), 250, 3, whole_pool=True)


def runs_args(*names):
    return [f"data/dl19/runs/{name}.run.gz" for name in names]


def older_record(data, folder, budget, seed):
    """The record `estimate select documents POOL --budget BUDGET --seed SEED` wrote before the minimum (the design's
    pi and draw, from the pool's priors), with the human qrels of its drawn pairs."""
    record = read_sample(data["sample"])
    pi = inclusion_probabilities(record.pairs["prior"].to_numpy(), budget)
    record = replace(record, budget=float(budget), seed=seed,
                     pairs=record.pairs.assign(pi=pi, sampled=poisson_sample(pi, seed)))
    folder.mkdir()
    for name, text in record_texts(record, "0.1.0").items():
        (folder / name).write_text(text)
    drawn = list(zip(record.drawn["query_id"], record.drawn["doc_id"], strict=True))
    return folder, write_qrels(folder.parent / f"{folder.name}.qrels", drawn, data["nist"]), len(drawn)


def test_an_estimate_outside_the_range_is_clipped_named_and_carries_no_verdict(data):
    common = ("estimate", "run", "documents", "--sample", data["sample"], "--human", data["human"], "--no-llm",
              *runs_args(*RUNS), "-m", "p@10", "--compare", "bm25base_p:ms_duet_passage",
              "--compare", "UNH_exDL_bm25:bm25base_p")
    result = invoke(*common)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(data["drawn"]) == 265
    # before: ms_duet_passage  1.1879  [0.6867, 1.6891]  [0.6667, 1.7091] (truth 0.7163), and nothing said
    # "this set" on Student's t at its effective degrees of freedom (documents/variance.py): before, the normal's
    # [0.6867, 1.6891] and bm25base_p's [0.4953, 0.7861]
    assert rows(result.output)["ms_duet_passage"] == (1.0, 0.5813, 1.0, 0.6667, 1.0)
    assert rows(result.output)["bm25base_p"] == (0.6407, 0.4916, 0.7897, 0.4725, 0.8088)  # inside: untouched
    assert ("warning: p@10: the estimate of ms_duet_passage (1.1879) left the measure's range [0, 1] (a "
            "difference's [-1, 1]) and was clipped to it: an unbiased estimator can leave the range on a thin "
            "sample, and no verdict rests on such a figure") in lines
    # the difference's interval at 1 - 0.05 / 2 reaches past +1: no verdict; the other pair keeps its own
    assert ("  verdict      no verdict: the interval [-0.0360, 1.1305] of \"this set\" at 0.975 left the measure's "
            "range, clipped to [-1, 1]; the interval [-0.0536, 1.1481] of \"new queries\" at 0.975 left the "
            "measure's range, clipped to [-1, 1]") in lines
    assert "  verdict      established: candidate better (\"new queries\" interval at 0.975 excludes 0)" in lines
    document = json.loads(invoke(*common, "--format", "json").output)
    (duet,) = [row for row in document["rows"] if row["name"] == "ms_duet_passage"]
    assert duet["clipped"] == (
        "the estimate 1.1879 and the interval [0.5813, 1.7946] of ms_duet_passage on p@10 (\"this set\") left the "
        "measure's range, clipped to [0, 1]; the interval [0.6667, 1.7091] of ms_duet_passage on p@10 (\"new "
        "queries\") left the measure's range, clipped to [0, 1]")
    assert [(c["rule"], c["new_high"]) for c in document["comparisons"]] == [("outside range", 1.0),
                                                                            ("established", pytest.approx(0.6244,
                                                                                                          abs=1e-4))]
    assert all(0 <= row[key] <= 1 for row in document["rows"] if row["kind"] == "run"
               for key in ("estimate", "set_low", "set_high", "new_low", "new_high"))


@pytest.mark.parametrize("budget, drawn, message", [
    (100, 107, "a document sample of 107 drawn pairs over 43 queries (2.49 a query) is too small for the design's "
               "estimators: they need at least 3 a query on average (129 here); draw a larger sample (estimate "
               "select documents POOL --budget B)"),
    (2, 1, "a document sample of 1 drawn pair over 43 queries (0.02 a query) is too small for the design's "
           "estimators: they need at least 3 a query on average (129 here)"),
])
def test_a_sample_below_the_minimum_is_refused_with_one_line(data, tmp_path, budget, drawn, message):
    # before: at 100 judgments UNH_exDL_bm25's nDCG@10 printed -0.0135; at one pair p_bert's printed 1.5712
    folder, human, count = older_record(data, tmp_path / f"sample-{budget}", budget, 3)
    assert count == drawn
    result = invoke("estimate", "run", "documents", "--sample", folder, "--human", human, "--llm", data["llm"],
                    *runs_args("UNH_exDL_bm25", "p_bert", "bm25base_p"))
    assert result.exit_code == 2
    assert result.output.startswith(f"evalset: error: {folder}: {message}")
    assert len(result.output.strip().splitlines()) == 1
    pairs = read_sample(folder).frame()
    graded = pd.read_csv(human, sep=" ", header=None, names=["query_id", "it", "doc_id", "grade"], dtype=str)
    with pytest.raises(InputError, match=re.escape(message)):
        estimate_documents(pairs, graded.assign(grade=graded["grade"].astype(int)), None,
                           read_runs(["data/dl19/runs/bm25base_p.run.gz"]))


def test_select_draws_no_sample_below_the_minimum(data, tmp_path):
    result = invoke("estimate", "select", "documents", data["root"] / "pool", "--budget", 100, "--seed", 3, "-o",
                    tmp_path / "small")
    assert result.exit_code == 2 and not (tmp_path / "small").exists()
    assert result.output.strip() == (  # its frame: the 2,494 pairs with text
        "evalset: error: a document sample of 108 drawn pairs over 43 queries (2.51 a query) is too small for the "
        "design's estimators: they need at least 3 a query on average (129 here); drawn with seed 3 at a budget of "
        "100: give a larger budget (a draw's size varies around it)")
