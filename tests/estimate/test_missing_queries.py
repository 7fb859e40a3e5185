"""Issue 48: a judged query a run lacks is no silent zero in `evalset estimate`, under either design. The one rule of
every analysis (:func:`evalset.evaluation.missing_queries`): refused, one line naming the run's file and the count,
unless `-c missing=zero` (they score 0) or `-c missing=skip` (they are left out of that run's estimate and of its
comparisons); chosen, the output says how many.

On TREC DL 2019 (NIST's grades as the humans, Llama-3-70B's as the judge) bm25tuned_p without two of the queries
of the slice of docs/estimate.md (104861 and 1063750): its human-only nDCG@10 printed 0.3259 against 0.4067 with
every query, without a word.
"""

import gzip
import json
from pathlib import Path

import pytest

from tests.support.dl19files import LLAMA, NIST, drawn_sample, invoke

pytestmark = pytest.mark.slow  # the pools: 2 s each

LACKED = ("104861", "1063750")
BASELINE = "data/dl19/runs/bm25base_p.run.gz"


def without(queries, folder: Path) -> Path:
    """bm25tuned_p's run without the lines of ``queries``, under its own name."""
    path = folder / "bm25tuned_p.run.gz"
    with gzip.open("data/dl19/runs/bm25tuned_p.run.gz", "rt") as lines:
        kept = [line for line in lines if line.split()[0] not in queries]
    with gzip.open(path, "wt") as out:
        out.writelines(kept)
    return path


@pytest.fixture(scope="module")
def sliced(tmp_path_factory):
    """docs/estimate.md's slice: 10 of the depth-10 pool's 43 queries (seed 3), NIST's grades of them, and the run
    lacking two of them."""
    root = tmp_path_factory.mktemp("missing-slice")
    assert invoke("pool", "--spec", "pools/dl19-demo.toml", "-o", root / "pool").exit_code == 0
    assert invoke("estimate", "select", "slice", root / "pool", "--size", 10, "--seed", 3, "-o",
                  root / "slice").exit_code == 0
    chosen = set(json.loads((root / "slice" / "slice.json").read_text())["slice"])
    assert set(LACKED) <= chosen
    human = root / "human.qrels"
    human.write_text("".join(line for line in Path(NIST).read_text().splitlines(keepends=True)
                             if line.split()[0] in chosen))
    return root / "slice", human, without(LACKED, root)


def slice_estimate(sliced, *options):
    folder, human, run = sliced
    return invoke("estimate", "run", "slice", BASELINE, run, "--llm", LLAMA, "--human", human, "--slice", folder,
                  "--compare", "bm25base_p:bm25tuned_p", *options)


def test_the_slice_design_refuses_a_run_lacking_queries_unless_chosen(sliced):
    run = sliced[2]
    refused = slice_estimate(sliced)
    assert refused.exit_code == 2
    assert refused.output == (f"evalset: error: {run}: run bm25tuned_p lacks 2 of the 43 judged queries: give "
                              "-c missing=zero (they score 0, as a system that returned nothing) or -c missing=skip "
                              "(they are left out of the comparison)\n")


def test_the_slice_design_scores_them_zero_or_leaves_them_out_and_says_so(sliced):
    zero = slice_estimate(sliced, "-c", "missing=zero", "--format", "json")
    skip = slice_estimate(sliced, "-c", "missing=skip", "--format", "json")
    assert zero.exit_code == 0 and skip.exit_code == 0, (zero.output, skip.output)
    zero, skip = json.loads(zero.output), json.loads(skip.output)
    assert "note: bm25tuned_p lacks 2 of the 43 queries of the set: they score 0 (-c missing=zero)" in zero["notes"]
    assert ("note: bm25tuned_p lacks 2 of the 43 queries of the set: left out of its estimate and its comparisons "
            "(-c missing=skip)") in skip["notes"]
    tuned = {name: next(r for r in document["runs"] if r["run"] == "bm25tuned_p")
             for name, document in (("zero", zero), ("skip", skip))}
    # the 8 slice queries it answered sum to 3.2586: over the 10 with two zeros, or over the 8
    assert tuned["zero"]["human_mean"] == pytest.approx(0.3259, abs=1e-4)
    assert (tuned["zero"]["n"], tuned["zero"]["N"]) == (10, 33)
    assert tuned["skip"]["human_mean"] == pytest.approx(tuned["zero"]["human_mean"] * 10 / 8, abs=1e-12)
    assert (tuned["skip"]["n"], tuned["skip"]["N"]) == (8, 33)
    base = {name: next(r for r in document["runs"] if r["run"] == "bm25base_p") for name, document in
            (("zero", zero), ("skip", skip))}
    assert base["skip"]["estimate"] == base["zero"]["estimate"] and base["skip"]["n"] == 10  # the other run: all
    (difference,) = skip["comparisons"]
    assert (difference["n"], difference["N"], difference["rule"]) == (8, 33, "interval holds 0")
    text = slice_estimate(sliced, "-c", "missing=skip").output.splitlines()
    assert next(line for line in text if line.startswith("bm25tuned_p ")).split()[1:4] == [
        "0.4073", "[0.2794,", "0.5352]"]  # the human-only mean of its 8 queries, said beside it
    assert "(8 q)" in next(line for line in text if line.startswith("bm25tuned_p "))
    assert "  human-only (8 q)  " in "\n".join(text)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    data = drawn_sample(tmp_path_factory.mktemp("missing-sample"), 250, 3)
    return {**data, "run": without(LACKED, data["root"])}


def document_estimate(sample, *options):
    return invoke("estimate", "run", "documents", "--sample", sample["sample"], "--human", sample["human"],
                  "--llm", sample["llm"], BASELINE, sample["run"], "--compare",
                  "bm25base_p:bm25tuned_p", *options)


def test_the_document_design_follows_the_same_rule(sample):
    refused = document_estimate(sample)
    assert refused.exit_code == 2
    assert refused.output == (f"evalset: error: {sample['run']}: run bm25tuned_p lacks 2 of the 43 judged queries: "
                              "give -c missing=zero (they score 0, as a system that returned nothing) or -c "
                              "missing=skip (they are left out of the comparison)\n")
    zero = document_estimate(sample, "-c", "missing=zero", "--format", "json")
    skip = document_estimate(sample, "-c", "missing=skip", "--format", "json")
    assert zero.exit_code == 0 and skip.exit_code == 0, (zero.output, skip.output)
    zero, skip = json.loads(zero.output), json.loads(skip.output)
    assert "note: bm25tuned_p lacks 2 of the 43 queries of the set: they score 0 (-c missing=zero)" in zero["notes"]
    assert ("note: bm25tuned_p lacks 2 of the 43 queries of the set: left out of its estimate and its comparisons "
            "(-c missing=skip)") in skip["notes"]
    rows = {name: {r["name"]: r for r in document["rows"]} for name, document in (("zero", zero), ("skip", skip))}
    # the same per-query estimates: the 41 it answered summed over 43 queries, or averaged over 41; this draw leaves
    # one query without an estimated gain (undefined, left out of every mean): 42 and 40
    assert "note: ndcg@10: 1 of 43 queries undefined (no gain estimated) and left out of its means (undefined=skip)" \
        in zero["notes"]
    assert rows["skip"]["bm25tuned_p"]["estimate"] == pytest.approx(rows["zero"]["bm25tuned_p"]["estimate"] * 42 / 40,
                                                                    rel=1e-12)
    figures = ("estimate", "se_set", "se_new", "set_low", "set_high", "new_low", "new_high")
    assert [rows["skip"]["bm25base_p"][f] for f in figures] == pytest.approx(  # the run lacking none: unchanged
        [rows["zero"]["bm25base_p"][f] for f in figures], rel=1e-12)
    assert zero["settings"]["lacking"] == skip["settings"]["lacking"] == {"bm25tuned_p": 2}
    assert [c["rule"] for c in skip["comparisons"]] == ["interval holds 0"]


def test_a_validation_scores_them_zero_only_when_chosen(sliced):
    run = sliced[2]
    common = (BASELINE, run, "--human", NIST, "--llm", LLAMA)
    assert invoke("estimate", "validate", "slice", *common, "--resamples", 5, "--size", 10).exit_code == 2
    zero = invoke("estimate", "validate", "slice", *common, "--resamples", 5, "--size", 10, "-c", "missing=zero")
    assert zero.exit_code == 0 and ("note: bm25tuned_p lacks 2 of the 43 queries of the set: they score 0 "
                                    "(-c missing=zero)") in zero.output
    skip = invoke("estimate", "validate", "slice", *common, "--resamples", 5, "--size", 10, "-c", "missing=skip")
    assert skip.exit_code == 2 and "-c missing=skip is for an estimate" in skip.output
    documents = invoke("estimate", "validate", "documents", *common, "--resamples", 2, "--budget", 500)
    assert documents.exit_code == 2 and "run bm25tuned_p lacks 2 of the 43 judged queries" in documents.output
