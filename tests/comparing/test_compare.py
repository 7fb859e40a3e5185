"""`evalset compare` tells the truth by default: the verdict states what it rests on (judged@k, holes, missing
queries, strata, the split) and withholds what the data cannot decide.

The figures are TREC DL 2019's: a set judged from the depth-10 pool of the eight BM25 runs against the BERT
re-ranker that was not in it; the full NIST judgments; a run lacking two judged queries; the demo's stratified set.
"""

import csv
import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from click.testing import CliRunner

from evalset.cli import main
from tests.conftest import REPO

DL19 = REPO / "data" / "dl19"
RUNS = DL19 / "runs"
BM25 = ("bm25base_p", "bm25base_ax_p", "bm25base_prf_p", "bm25base_rm3_p",
        "bm25tuned_p", "bm25tuned_ax_p", "bm25tuned_prf_p", "bm25tuned_rm3_p")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def plain_run(path: Path) -> dict[str, dict[str, float]]:
    opener = gzip.open if path.suffix == ".gz" else open
    run: dict[str, dict[str, float]] = {}
    with opener(path, "rt") as handle:
        for line in handle:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return run


def plain_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, grade = line.split()
        qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels


def top(run: dict[str, float], k: int) -> list[str]:
    return [d for d, _ in sorted(run.items(), key=lambda item: (item[1], item[0]), reverse=True)[:k]]


def ndcg10(qrels, run) -> dict[str, float]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut"})
    return {q: v["ndcg_cut_10"] for q, v in evaluator.evaluate(run).items()}


@pytest.fixture(scope="module")
def bm25_pool_qrels(tmp_path_factory):
    nist = plain_qrels(DL19 / "nist.qrels")
    pooled = {(q, d) for name in BM25 for q, docs in plain_run(RUNS / f"{name}.run.gz").items() for d in top(docs, 10)}
    reduced = {q: {d: g for d, g in docs.items() if (q, d) in pooled} for q, docs in nist.items()}
    path = tmp_path_factory.mktemp("qrels") / "bm25-pool.qrels"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in reduced.items() for d, g in docs.items()))
    return path, reduced


def compare_json(*args) -> dict:
    result = invoke("compare", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)[0]


# ------------------------------------------------------------------------------------------------ holes
def test_on_the_bm25_pool_the_verdict_is_withheld_and_names_the_holes_and_their_bound(bm25_pool_qrels):
    path, reduced = bm25_pool_qrels
    document = compare_json("--qrels", path, RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz")
    assert round(document["mean_difference"], 4) == -0.1158 and round(document["permutation_p"], 4) == 0.0141
    assert not document["established"]
    assert document["verdict"] == ("not established: 220 unjudged documents in the candidate's top 10 could flip "
                                   "it (judge them, or a sample of them: evalset holes -o DIR)")
    bound = document["hole_bound"]
    assert (bound["unjudged"], bound["baseline"], bound["candidate"]) == (220, 0, 220)
    assert (round(bound["mean_low"], 4), round(bound["mean_high"], 4)) == (-0.1158, 0.4280)
    # judged@10 of the candidate, by hand over the 42 compared queries (query 1 undefined is left out)
    bert = plain_run(RUNS / "idst_bert_p1.run.gz")
    compared = [q for q in reduced if any(g > 0 for g in reduced[q].values())]
    judged = np.mean([sum(d in reduced[q] for d in top(bert[q], 10)) / 10 for q in compared])
    assert document["judged_at_k"] == {"k": 10, "baseline": 1.0, "candidate": pytest.approx(judged)}
    assert document["holes"]["could_flip"] and "pool" not in document["holes"]


def test_the_text_says_judged_at_k_the_bound_and_why_the_verdict_is_withheld(bm25_pool_qrels):
    result = invoke("compare", "--qrels", bm25_pool_qrels[0], RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "  judged@10         baseline 1.0000, candidate 0.4762" in lines
    assert ("  holes             220 unjudged documents in the candidate's top 10: the mean difference could be "
            "anywhere in [-0.1158, +0.4280] (low end: candidate worse; high end: candidate better)") in lines


@pytest.mark.parametrize("option, said", [
    (("--accept-holes",), "not bounded (--accept-holes): the verdict counts the unjudged documents as not relevant"),
    (("-c", "unjudged=condensed"), "not bounded (unjudged = condensed): the verdict rests on the judged documents "
                                  "only"),
])
def test_accepting_the_holes_keeps_the_verdict_as_judged_and_says_so(bm25_pool_qrels, option, said):
    document = compare_json("--qrels", bm25_pool_qrels[0], RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz",
                            *option)
    assert document["hole_bound"]["text"] == said
    if option == ("--accept-holes",):
        assert document["established"] and document["verdict"] == "established: candidate worse (p = 0.0141 < 0.05)"


def test_with_the_full_nist_judgments_the_verdict_is_unchanged():
    document = compare_json("--qrels", DL19 / "nist.qrels", RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz")
    assert document["established"] and round(document["mean_difference"], 4) == 0.2586
    assert document["verdict"] == "established: candidate better (p = 0.0001 < 0.05)"
    assert document["judged_at_k"] == {"k": 10, "baseline": 1.0, "candidate": 1.0}
    assert document["hole_bound"] is None and document["missing"] is None and document["tests_disagree"] == ""


# ------------------------------------------------------------------------------------------------ missing queries
@pytest.fixture(scope="module")
def lacking_run(tmp_path_factory):
    """bm25tuned_p without queries 104861 and 1037798, where bm25base_p scores 0.8238 and 0.3057."""
    path = tmp_path_factory.mktemp("runs") / "bm25tuned_missing.run"
    with gzip.open(RUNS / "bm25tuned_p.run.gz", "rt") as lines:
        path.write_text("".join(line for line in lines if line.split()[0] not in {"104861", "1037798"}))
    return path


def test_a_run_missing_judged_queries_is_refused_naming_the_run_and_the_count(lacking_run):
    result = invoke("compare", "--qrels", DL19 / "nist.qrels", RUNS / "bm25base_p.run.gz", lacking_run)
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"evalset: error: {lacking_run}: run bm25tuned_missing lacks 2 of the 43 judged queries: give -c missing=zero "
        "(they score 0, as a system that returned nothing) or -c missing=skip (they are left out of the comparison)"]


def test_on_a_set_the_missing_advice_names_the_sets_policy_and_the_override_the_other_needs(strata_set,
                                                                                          lacking_run):
    """Issue 51: on a missing=zero set the refusal advised -c missing=skip, which the set's contract then refused."""
    path, _, _ = strata_set
    refused = invoke("compare", "--set", path, "--split", "all", RUNS / "bm25base_p.run.gz", lacking_run)
    assert refused.exit_code == 2
    assert refused.output.splitlines() == [
        f"evalset: error: {lacking_run}: run bm25tuned_missing lacks 2 of the 43 judged queries: give -c missing=zero "
        "(the set's contract: they score 0, as a system that returned nothing), or -c missing=skip with "
        "--override-contract (they are left out of the comparison; the output says the contract was overridden)"]
    for advised in (["-c", "missing=zero"], ["-c", "missing=skip", "--override-contract"]):
        followed = invoke("compare", "--set", path, "--split", "all", RUNS / "bm25base_p.run.gz", lacking_run,
                          *advised, "--permutations", "99")
        assert followed.exit_code == 0, followed.output


def test_missing_zero_gives_the_old_figures_with_a_note_and_says_the_tests_disagree(lacking_run):
    result = CliRunner().invoke(main, ["compare", "--qrels", str(DL19 / "nist.qrels"), str(RUNS / "bm25base_p.run.gz"),
                                       str(lacking_run), "-c", "missing=zero", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)[0]
    assert round(document["mean_difference"], 4) == -0.0318 and round(document["permutation_p"], 3) == 0.107
    assert (round(document["ci_low"], 4), round(document["ci_high"], 4)) == (-0.1067, -0.0052)
    assert [loss["difference"] for loss in document["largest_losses"][:2]] == pytest.approx([-0.8238, -0.3057],
                                                                                             abs=1e-4)
    assert document["missing"] == {"policy": "zero", "baseline": 0, "candidate": 2,
                                   "text": "bm25tuned_missing lacks 2 of the 43 judged queries: scored 0 "
                                           "(-c missing=zero)"}
    assert ("bm25tuned_missing vs bm25base_p: bm25tuned_missing lacks 2 of the 43 judged queries: scored 0 "
            "(-c missing=zero)") in result.stderr
    assert document["tests_disagree"].startswith("the BCa interval says significant, the permutation test and the "
                                                 "paired t-test do not: the differences are skewed")
    assert document["tests_disagree"].endswith("a difference is established only where the permutation test, the "
                                               "primary test, and the interval both exclude it")
    assert document["verdict"] == "not established (p = 0.107 >= 0.05)"


def test_missing_skip_leaves_the_queries_out_of_the_comparison(lacking_run):
    document = compare_json("--qrels", DL19 / "nist.qrels", RUNS / "bm25base_p.run.gz", lacking_run,
                            "-c", "missing=skip")
    qrels, base = plain_qrels(DL19 / "nist.qrels"), plain_run(RUNS / "bm25base_p.run.gz")
    tuned = plain_run(lacking_run)
    a, b = ndcg10(qrels, base), ndcg10(qrels, tuned)
    assert document["n"] == 41 == len(b)
    assert document["mean_difference"] == pytest.approx(np.mean([b[q] - a[q] for q in b]), abs=1e-12)
    assert document["missing"]["policy"] == "skip"


def test_the_t_test_can_be_the_primary_test_and_the_interval_percentile(lacking_run):
    document = compare_json("--qrels", DL19 / "nist.qrels", RUNS / "bm25base_p.run.gz", lacking_run,
                            "-c", "missing=zero", "--decide", "t+percentile")
    assert document["primary_test"] == "t" and document["ci_method"] == "percentile"
    assert document["verdict"] == f"not established (t-test p = {document['ttest_p']:.4g} >= 0.05)"
    assert document["rule"] == "p at threshold"
    assert "where the paired t-test, the primary test, and the interval" in document["tests_disagree"] or (
        document["tests_disagree"] == "")


# ------------------------------------------------------------------------------------------------ strata
@pytest.fixture(scope="module")
def strata_set(tmp_path_factory):
    """The demo's stratified DL19 set: short (<= 4 words) and long topics, with the Excite log's traffic shares;
    and the same queries with a dev split of five topics."""
    out = tmp_path_factory.mktemp("strata")
    subprocess.run([sys.executable, REPO / "scripts" / "dl19_strata.py", "--log",
                    REPO / "data" / "querylog" / "excite-small.log", "--topics", DL19 / "topics.tsv", "-o",
                    out / "strata.tsv"], check=True, capture_output=True)
    result = invoke("freeze", DL19 / "nist.qrels", "--queries", out / "strata.tsv", "--guideline",
                    REPO / "guidelines" / "relevance-v2.md", "--name", "strata", "--sets-dir", out / "sets",
                    "--plan", "bm25base_p:idst_bert_p1")
    assert result.exit_code == 0, result.output
    queries = pd.read_csv(out / "strata.tsv", sep="\t", dtype=str)
    queries.loc[queries.index[:5], "split"] = "dev"
    queries.to_csv(out / "strata-dev.tsv", sep="\t", index=False, quoting=csv.QUOTE_NONE)
    result = invoke("freeze", DL19 / "nist.qrels", "--queries", out / "strata-dev.tsv", "--guideline",
                    REPO / "guidelines" / "relevance-v2.md", "--name", "strata-dev", "--sets-dir", out / "sets",
                    "--plan", "bm25base_p:idst_bert_p1")
    assert result.exit_code == 0, result.output
    return out / "sets" / "strata" / "v1", out / "sets" / "strata-dev" / "v1", queries


def test_per_stratum_and_traffic_weighted_differences_equal_a_hand_computation(strata_set):
    path, _, queries = strata_set
    document = compare_json("--set", path, RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz")
    qrels = plain_qrels(DL19 / "nist.qrels")
    base, bert = (ndcg10(qrels, plain_run(RUNS / f"{name}.run.gz")) for name in ("bm25base_p", "idst_bert_p1"))
    by_query = queries.set_index("query_id")
    strata = {}
    for stratum, group in by_query.groupby("stratum"):
        differences = [bert[q] - base[q] for q in group.index]
        strata[stratum] = (float(group["stratum_share"].iloc[0]), np.mean(differences), len(differences))
    weighted = sum(share * mean for share, mean, _ in strata.values()) / sum(s for s, _, _ in strata.values())
    assert document["weighting"] == "traffic"
    assert document["mean_difference"] == pytest.approx(weighted, abs=1e-12)
    assert round(document["mean_difference"], 3) == 0.195  # score's traffic-weighted lead
    rows = {row["stratum"]: row for row in document["strata"]}
    for stratum, (share, mean, n) in strata.items():
        assert rows[stratum]["mean_difference"] == pytest.approx(mean, abs=1e-12)
        assert (rows[stratum]["share"], rows[stratum]["n"]) == (pytest.approx(share), n)
        assert rows[stratum]["ci_low"] < mean < rows[stratum]["ci_high"]
    uniform = document["other_weighting"]
    assert uniform["weighting"] == "uniform"
    assert uniform["mean_difference"] == pytest.approx(np.mean([bert[q] - base[q] for q in base]), abs=1e-12)
    assert document["established"] and document["strata_disagree"] == ""
    assert document["ci_low"] < document["mean_difference"] < document["ci_high"]


def test_the_dev_split_is_exploratory_and_never_established(strata_set):
    _, path, _ = strata_set
    dev = compare_json("--set", path, "--split", "dev", RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz")
    assert dev["kind"] == "exploratory" and not dev["established"] and dev["split"] == "dev"
    assert dev["verdict"].startswith("exploratory (dev split, p = ")
    assert dev["verdict"].endswith("the dev split is for tuning, never established")
    test = compare_json("--set", path, RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz")
    assert test["established"] and test["kind"] == "planned" and test["threshold"] == 0.05  # dev is not counted


def test_queries_with_strata_stratify_a_comparison_on_qrels_as_the_set_does(strata_set, tmp_path):
    path, _, queries = strata_set
    on_set = compare_json("--set", path, RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz")
    queries.to_csv(tmp_path / "strata.tsv", sep="\t", index=False)
    on_qrels = compare_json("--qrels", DL19 / "nist.qrels", RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz",
                            "--queries", tmp_path / "strata.tsv", "--planned", "1")
    assert on_qrels["weighting"] == "traffic"
    for key in ("mean_difference", "permutation_p", "t", "ttest_p", "ci_low", "ci_high"):
        assert on_qrels[key] == pytest.approx(on_set[key], abs=1e-12), key
    assert on_qrels["strata"] == on_set["strata"]


@pytest.mark.parametrize("content, line, message", [
    ("query_id\tquery\tstratum\tstratum_share\n156493\tq\tshort\tx\n", ":2",
     "query 156493: a stratum and a traffic share (stratum_share) >= 0 are needed, got 'x'"),
    ("query_id\tquery\tstratum\tstratum_share\n156493\tq\tshort\t1\n", "",
     "42 judged queries have no stratum here (e.g. 1037798, 104861, 1063750)"),
    ("query_id\tquery\tstratum\tstratum_share\n156493\tq\tshort\t0.5\n", "",  # issue 74: renormalised silently
     "the strata's traffic shares sum to 0.5, not 1: fix stratum_share (each stratum's share of the whole traffic)"),
])
def test_strata_that_cannot_weigh_the_comparison_are_one_line_naming_the_file(tmp_path, content, line, message):
    (tmp_path / "q.tsv").write_text(content)
    result = invoke("compare", "--qrels", DL19 / "nist.qrels", RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz",
                    "--queries", tmp_path / "q.tsv")
    assert result.exit_code == 2
    assert result.output.splitlines() == [f"evalset: error: {tmp_path / 'q.tsv'}{line}: {message}"]


def test_compare_says_what_score_says_of_its_inputs(tmp_path, shared_data):
    """Repeated documents and repeated qrels lines: compare's notes are score's (evaluation.input_notes)."""
    from click.testing import CliRunner

    from evalset.cli import main

    dl19 = shared_data / "dl19"
    run = gzip.decompress((dl19 / "runs" / "official_top100" / "bm25base_p.run.gz").read_bytes()).decode()
    (tmp_path / "a.run").write_text(run)
    (tmp_path / "dup.run").write_text(run + "".join(run.splitlines(keepends=True)[:3]))
    qrels = (dl19 / "qrels.txt").read_text()
    (tmp_path / "q.qrels").write_text(qrels + "".join(qrels.splitlines(keepends=True)[:2]))
    runs = [str(tmp_path / "a.run"), str(tmp_path / "dup.run")]
    said = {command: CliRunner().invoke(main, [command, "--qrels", str(tmp_path / "q.qrels"), *runs]).stderr
            for command in ("score", "compare")}
    expected = ["note: the qrels: 2 repeated lines collapsed",  # once, the judgments' (issue 74: not a run's)
                "note: dup: 3 repeated documents counted once"]
    assert said["score"].splitlines() == expected
    assert said["compare"].splitlines()[:2] == expected
