"""Frozen sets: merge rules, immutable versions, verify/diff, and scoring under the recorded contract."""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.contract import ContractOptions, EvaluationContract
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.io.guideline import read_guideline
from evalset.io.queries import read_queries
from evalset.io.setfolder import SetContract, load_set, verify_set
from evalset.io.trec import read_qrels, read_run
from evalset.judgments import MergePolicy
from evalset.metrics import evaluate
from evalset.sets import diff_versions, freeze, merge_grades, set_contract
from tests.support.options import not_one_of, refusal

REPO = Path(__file__).resolve().parents[1]
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def labels(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "kind", "grade"]).assign(
        source="test", labeled_at="", comment="")


# ------------------------------------------------------------------------------------------------ merge rules
PAIRS = labels([
    ("q", "a", "ann", "human", 2), ("q", "a", "bob", "human", 3),                              # median tie
    ("q", "b", "ann", "human", 1), ("q", "b", "bob", "human", 1), ("q", "b", "cat", "human", 3),  # 1 by both rules
    ("q", "c", "ann", "human", 0), ("q", "c", "bob", "human", 3),                              # gap 3
    ("q", "d", "ann", "human", 2), ("q", "d", "gpt", "llm", 0),                                # LLM left out
])


def test_median_merge_finds_ties_and_large_gaps():
    merged = merge_grades(PAIRS, "median", max_gap=2)
    assert merged.qrels.to_dict("list") == {"query_id": ["q", "q"], "doc_id": ["b", "d"], "grade": [1, 2]}
    assert sorted(set(merged.unresolved["doc_id"])) == ["a", "c"]
    assert merged.counts["llm_labels_left_out"] == 1


def test_majority_and_priority_merges():
    majority = merge_grades(PAIRS, "majority", max_gap=None)
    assert dict(zip(majority.qrels["doc_id"], majority.qrels["grade"], strict=True)) == {"b": 1, "d": 2}
    priority = merge_grades(PAIRS, "annotator-priority", priority=["bob"], max_gap=None)
    assert dict(zip(priority.qrels["doc_id"], priority.qrels["grade"], strict=True)) == {"a": 3, "b": 1, "c": 3,
                                                                                         "d": 2}


def test_adjudication_settles_unresolved_pairs_and_llm_grades_join_when_allowed():
    decided = labels([("q", "a", "judge", "human", 2), ("q", "c", "judge", "human", 1)])
    merged = merge_grades(PAIRS, "median", adjudication=decided)
    assert merged.counts["unresolved"] == 0 and merged.counts["adjudicated"] == 2
    assert dict(zip(merged.qrels["doc_id"], merged.qrels["grade"], strict=True))["c"] == 1
    with_llm = merge_grades(PAIRS, "median", allow_llm=True, max_gap=None)
    assert "d" in set(with_llm.unresolved["doc_id"])  # 2 vs 0: an even split


def test_unresolved_pairs_block_the_freeze(tmp_path):
    queries = pd.DataFrame({"query_id": ["q"], "query": ["a query"]})
    with pytest.raises(InputError, match="2 pairs have unresolved disagreement"):
        freeze(PAIRS, queries, read_guideline(GUIDELINE), "t", tmp_path)
    assert not (tmp_path / "t" / "v1").exists()


def test_grades_off_the_scale_and_unknown_queries_are_refused(tmp_path):
    queries = pd.DataFrame({"query_id": ["q"], "query": ["a query"]})
    with pytest.raises(InputError, match="not on the scale"):
        freeze(labels([("q", "a", "ann", "human", 4)]), queries, read_guideline(GUIDELINE), "t", tmp_path)
    with pytest.raises(InputError, match="not in the queries file"):
        freeze(labels([("z", "a", "ann", "human", 1)]), queries, read_guideline(GUIDELINE), "t", tmp_path)


# ------------------------------------------------------------------------- one annotator judging a pair twice
def write_table(path, rows):
    """A labels table: rows of (query, doc, annotator, grade, labeled_at), kind human; line 2 is the first row."""
    header = "query_id\tdoc_id\tannotator\tkind\tgrade\tsource\tlabeled_at\tcomment\n"
    path.write_text(header + "".join(f"{q}\t{d}\t{a}\thuman\t{g}\ttest\t{t}\t\n" for q, d, a, g, t in rows))
    return path


def freeze_cli(tmp_path, *args):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst query\nq2\tsecond query\n")
    return invoke("freeze", *args, "--queries", topics, "--guideline", GUIDELINE, "--name", "s",
                  "--sets-dir", tmp_path / "sets")


CONFLICT = [("q1", "d1", "ann", 1, "2026-01-02T10:00:00Z"),   # line 2
            ("q1", "d2", "ann", 0, "2026-01-02T10:00:00Z"),   # line 3
            ("q1", "d1", "ann", 3, "2026-01-01T10:00:00Z"),   # line 4: a later line, an earlier time
            ("q2", "d1", "ann", 2, "2026-01-02T10:00:00Z"),   # line 5
            ("q2", "d1", "ann", 2, "2026-01-03T10:00:00Z")]   # line 6: an exact repeat


def test_one_annotators_conflicting_grades_are_refused_by_freeze_naming_both_lines(tmp_path):
    table = write_table(tmp_path / "labels.tsv", CONFLICT)
    result = freeze_cli(tmp_path, table)
    assert result.exit_code == 2, result.output
    assert (f"{table}:4: annotator ann gives query q1 document d1 two different grades ({table}:2 grade 1, "
            f"{table}:4 grade 3); --conflicting-grades latest|first says which judgment stands") in result.output
    assert not (tmp_path / "sets" / "s" / "v1").exists()


@pytest.mark.parametrize(("rule", "grade"), [("latest", 1), ("first", 3)])
def test_conflicting_grades_option_settles_by_labeled_at_and_counts_in_freeze(tmp_path, rule, grade):
    result = freeze_cli(tmp_path, write_table(tmp_path / "labels.tsv", CONFLICT), "--conflicting-grades", rule)
    assert result.exit_code == 0, result.output
    assert f"note: 1 conflicting judgments settled by --conflicting-grades {rule}\n" in result.output
    assert "from 3 labels by 1 annotator" in result.output
    frozen = load_set(tmp_path / "sets" / "s" / "v1")
    assert {key: frozen.manifest["merge"][key] for key in
            ("conflicting_grades", "conflicting_grades_settled", "collapsed_duplicates", "unjudged")} == {
        "conflicting_grades": rule, "conflicting_grades_settled": 1, "collapsed_duplicates": 1, "unjudged": 0}
    assert dict(zip(frozen.qrels["query_id"] + "/" + frozen.qrels["doc_id"], frozen.qrels["grade"],
                    strict=True)) == {"q1/d1": grade, "q1/d2": 0, "q2/d1": 2}
    assert len(frozen.labels) == 3  # labels.tsv holds the judgments that stand
    repeat = frozen.labels[frozen.labels["query_id"] == "q2"]["labeled_at"].item()
    assert repeat == ("2026-01-03T10:00:00Z" if rule == "latest" else "2026-01-02T10:00:00Z")


def test_one_annotator_in_two_files_is_one_annotator_for_the_rule(tmp_path):
    first = write_table(tmp_path / "a.tsv", [("q1", "d1", "ann", 1, ""), ("q1", "d2", "bob", 0, "")])
    second = write_table(tmp_path / "b.tsv", [("q1", "d1", "ann", 2, "")])
    refused = freeze_cli(tmp_path, first, second)
    assert refused.exit_code == 2
    assert f"({first}:2 grade 1, {second}:2 grade 2)" in refused.output
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    (tmp_path / "x" / "judge.qrels").write_text("q1 0 d1 1\nq1 0 d2 -1\n")
    (tmp_path / "y" / "judge.qrels").write_text("q1 0 d2 2\nq1 0 d1 0\n")
    qrels = [tmp_path / "x" / "judge.qrels", tmp_path / "y" / "judge.qrels"]
    assert f"({qrels[0]}:1 grade 1, {qrels[1]}:2 grade 0)" in freeze_cli(tmp_path, *qrels).output
    settled = freeze_cli(tmp_path, *qrels, "--conflicting-grades", "latest")  # no time: the later file stands
    assert settled.exit_code == 0, settled.output
    assert "note: 2 conflicting judgments settled by --conflicting-grades latest" in settled.output
    frozen = load_set(tmp_path / "sets" / "s" / "v1")
    assert frozen.qrels.to_dict("list") == {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "grade": [0, 2]}


def test_freeze_refuses_conflicting_grades_in_a_frame_naming_its_rows(tmp_path):
    queries = pd.DataFrame({"query_id": ["q"], "query": ["a query"]})
    twice = labels([("q", "a", "ann", "human", 2), ("q", "b", "ann", "human", 1), ("q", "a", "ann", "human", 0)])
    with pytest.raises(InputError, match=r"two different grades \(row 1 grade 2, row 3 grade 0\)"):
        freeze(twice, queries, read_guideline(GUIDELINE), "t", tmp_path)
    with pytest.raises(InputError, match=r"two different grades \(row 1 grade 2, row 3 grade 0\)"):
        merge_grades(twice)  # the merge no longer lets the last judgment win
    target = freeze(twice, queries, read_guideline(GUIDELINE), "t", tmp_path, conflicting_grades="first")
    assert read_qrels(target.path / "qrels.txt")["grade"].tolist() == [2, 1]


# ------------------------------------------------------------------------------------------------ DL19 set
@pytest.fixture(scope="module")
def dl19_set(tmp_path_factory, shared_data):
    sets = tmp_path_factory.mktemp("sets")
    result = invoke("freeze", shared_data / "dl19" / "qrels.txt", "--queries", shared_data / "dl19" / "topics.tsv",
                    "--guideline", GUIDELINE, "--name", "dl19", "--sets-dir", sets,
                    "--plan", "bm25base_p:idst_bert_p1")
    assert result.exit_code == 0, result.output
    assert "9260 judgments over 43 queries" in result.output
    return sets / "dl19" / "v1"


@pytest.fixture(scope="module")
def dl19_set_9(tmp_path_factory, shared_data):
    """DL19 frozen under trec_eval 9's rules, as NIST published its figures (scores compared as 32-bit floats)."""
    sets = tmp_path_factory.mktemp("sets")
    result = invoke("freeze", shared_data / "dl19" / "qrels.txt", "--queries", shared_data / "dl19" / "topics.tsv",
                    "--guideline", GUIDELINE, "--name", "dl19", "--sets-dir", sets, "-c", "trec_eval_version=9")
    assert result.exit_code == 0, result.output
    return sets / "dl19" / "v1"


@pytest.mark.slow
def test_scoring_the_frozen_dl19_set_reproduces_nist(dl19_set_9, dl19_set, shared_data):
    nist = json.loads((shared_data / "dl19" / "nist_summaries.json").read_text())
    runs = sorted((shared_data / "dl19" / "runs" / "official_full").glob("*.run.gz"))
    # NIST published them with trec_eval 9 (TUA1-1's map 0.4723, 0.4724 under 10): the set records the version, and
    # a command on it follows it without being told
    assert json.loads((dl19_set_9 / "manifest.json").read_text())["contract"]["trec_eval_version"] == 9
    result = invoke("score", "--set", dl19_set_9, *runs, "-m", "ndcg@10", "-m", "map", "-m", "P_100", "--format",
                    "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["contract"]["rel_level"] == 1 and document["set"]["split"] == "test"
    assert document["contract"]["trec_eval_version"] == 9
    assert f"{document['runs']['TUA1-1']['map']['mean']:.4f}" == "0.4723"
    ten = json.loads(invoke("score", "--set", dl19_set, runs[0], "-m", "map", "--format", "json").stdout)
    assert ten["contract"]["trec_eval_version"] == 10
    refused = invoke("score", "--set", dl19_set, runs[0], "-c", "trec_eval_version=9")
    assert refused.exit_code == 2 and "trec_eval_version=9 (set: 10); add --override-contract" in refused.output
    for name, scores in document["runs"].items():
        published = nist[name]["trec_eval"]
        assert scores["ndcg@10"]["weighted_mean"] == pytest.approx(published["ndcg_cut_10"], abs=5e-5)
        assert scores["map"]["mean"] == pytest.approx(published["map"], abs=5e-5)
        assert scores["P_100"]["mean"] == pytest.approx(published["P_100"], abs=5e-5)


@pytest.mark.slow
def test_a_contradicting_option_needs_override_and_is_reported(dl19_set, shared_data):
    run = shared_data / "dl19" / "runs" / "official_full" / "p_bert.run.gz"
    message = ("these options contradict the set's contract: rel_level=2 (set: 1); add --override-contract to score "
               "anyway")
    with pytest.raises(InputError) as refused_here:
        Evaluation.on_set(dl19_set, options=ContractOptions(rel_level=2, gain="linear"))
    assert str(refused_here.value) == message
    refused = invoke("score", "--set", dl19_set, run, "-c", "rel_level=2")
    assert refused.exit_code == 2 and refused.output == f"evalset: error: {message}\n"
    allowed = invoke("score", "--set", dl19_set, run, "-m", "p@10", "-c", "rel_level=2", "--override-contract")
    assert allowed.exit_code == 0 and "CONTRACT OVERRIDDEN: rel_level=2 (set: 1)" in allowed.output
    assert "0.6488" in allowed.output  # NIST passages-eval P_10 of p_bert
    overridden = Evaluation.on_set(dl19_set, options=ContractOptions(rel_level=2), override_contract=True)
    assert overridden.contract.rel_level == 2 and overridden.overridden == ("rel_level=2 (set: 1)",)


@pytest.mark.slow
def test_a_condensed_set_records_the_convention_and_scores_under_it(tmp_path, shared_data):
    root = shared_data / "dl19"
    result = invoke("freeze", root / "qrels.txt", "--queries", root / "topics.tsv", "--guideline", GUIDELINE,
                    "--name", "j", "--sets-dir", tmp_path, "-c", "unjudged=condensed")
    assert result.exit_code == 0, result.output
    frozen = load_set(tmp_path / "j" / "v1")
    assert frozen.manifest["contract"]["unjudged"] == "condensed"
    run_file = root / "runs" / "official_full" / "p_bert.run.gz"
    expected = evaluate(read_run(run_file), read_qrels(root / "qrels.txt"), ["ap"],
                        EvaluationContract(unjudged="condensed"))["ap"].mean()
    scored = json.loads(invoke("score", "--set", tmp_path / "j" / "v1", run_file, "-m", "ap", "--split", "all",
                               "--format", "json").stdout)
    assert scored["contract"]["unjudged"] == "condensed"
    assert scored["runs"]["p_bert"]["ap"]["mean"] == pytest.approx(expected, abs=1e-12)
    refused = invoke("score", "--set", tmp_path / "j" / "v1", run_file, "-c", "unjudged=nonrelevant")
    assert refused.output == ("evalset: error: these options contradict the set's contract: unjudged=nonrelevant "
                              "(set: condensed); add --override-contract to score anyway\n")


def test_a_set_frozen_before_the_unjudged_convention_verifies_and_scores_as_before(tmp_path, dl19_set, shared_data):
    """A manifest without the ``unjudged`` key (written before it existed, recorded in its versions.tsv) reads as
    ``nonrelevant``: it verifies, and scores exactly as a set that records the default."""
    old = tmp_path / "dl19" / "v1"
    shutil.copytree(dl19_set.parent, old.parent)
    manifest_path = old / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["contract"].pop("unjudged") == "nonrelevant"
    manifest_path.chmod(0o644)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    manifest_path.chmod(0o444)
    digest = hashlib.sha256(manifest_path.read_bytes()).hexdigest()
    line = (old.parent / "versions.tsv").read_text().split("\t")
    (old.parent / "versions.tsv").write_text("\t".join([*line[:2], digest]) + "\n")
    assert invoke("verify", old).output == f"OK {old}: every file matches its manifest hash\n"
    assert load_set(old).contract.evaluation == EvaluationContract()
    run_file = shared_data / "dl19" / "runs" / "official_full" / "p_bert.run.gz"
    before, now = (invoke("score", "--set", path, run_file, "-m", "ndcg@10", "-m", "ap").output
                   for path in (old, dl19_set))
    assert before.replace(str(old), "SET") == now.replace(str(dl19_set), "SET")
    assert "unjudged=nonrelevant" in before


def test_load_set_is_one_call(dl19_set):
    frozen = load_set(dl19_set)
    assert len(frozen.qrels) == 9260 and len(frozen.queries) == 43
    assert frozen.contract.headline == "ndcg@10" and frozen.contract.evaluation.ties == "trec"
    assert frozen.planned == [("bm25base_p", "idst_bert_p1")]
    assert frozen.manifest["guideline"]["sha256"] == read_guideline(GUIDELINE).sha256


@pytest.mark.slow
def test_versions_verify_diff_and_are_never_rewritten(tmp_path, shared_data):
    qrels = read_qrels(shared_data / "dl19" / "qrels.txt")
    changed = qrels.copy()
    changed.loc[0, "grade"] = 3 - changed.loc[0, "grade"]
    path = tmp_path / "changed.txt"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in changed.itertuples(index=False)))
    common = ["--queries", shared_data / "dl19" / "topics.tsv", "--guideline", GUIDELINE, "--name", "s",
              "--sets-dir", tmp_path / "sets"]
    assert invoke("freeze", shared_data / "dl19" / "qrels.txt", *common).exit_code == 0
    v1 = tmp_path / "sets" / "s" / "v1"
    before = {p.name: p.read_bytes() for p in v1.iterdir()}
    assert invoke("freeze", path, *common).exit_code == 0
    v2 = tmp_path / "sets" / "s" / "v2"
    assert {p.name: p.read_bytes() for p in v1.iterdir()} == before  # v1 untouched
    assert load_set(v2).manifest["parent"] == "v1"
    difference = invoke("diff", v1, v2)
    assert "0 added, 0 removed, 1 changed" in difference.output
    assert f"{qrels.loc[0, 'doc_id']}" in difference.output
    assert invoke("verify", v1).exit_code == 0 and invoke("verify", v2).exit_code == 0
    refused = invoke("freeze", path, *common, "--version", "1")
    assert refused.exit_code != 0 and "never rewritten" in refused.output
    qrels_file = v1 / "qrels.txt"
    qrels_file.chmod(0o644)
    content = bytearray(qrels_file.read_bytes())
    content[10] = ord("9") if content[10] != ord("9") else ord("8")
    qrels_file.write_bytes(bytes(content))
    failed = invoke("verify", v1)
    assert failed.exit_code == 1 and f"FAILED {qrels_file}: content changed" in failed.output


@pytest.mark.slow
def test_diff_rescores_runs_under_each_version(tmp_path, shared_data):
    root = shared_data / "dl19"
    qrels = read_qrels(root / "qrels.txt")
    first_query = qrels["query_id"].iloc[0]
    fewer = qrels[qrels["query_id"] != first_query]  # v2 drops every judgment of one query
    path = tmp_path / "fewer.txt"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in fewer.itertuples(index=False)))
    common = ["--queries", root / "topics.tsv", "--guideline", GUIDELINE, "--name", "s", "--sets-dir", tmp_path]
    assert invoke("freeze", root / "qrels.txt", *common).exit_code == 0
    assert invoke("freeze", path, *common).exit_code == 0
    run = read_run(root / "runs" / "official_full" / "p_bert.run.gz")
    diff = diff_versions(tmp_path / "s" / "v1", tmp_path / "s" / "v2", {"p_bert": run})
    assert (diff.changes["change"] == "removed").sum() == (qrels["query_id"] == first_query).sum()
    before, after = evaluate(run, qrels, ["ndcg@10"])["ndcg@10"], evaluate(run, fewer, ["ndcg@10"])["ndcg@10"]
    row = diff.scores.iloc[0]
    assert row["run"] == "p_bert"
    assert row["old"] == pytest.approx(before.mean()) and row["new"] == pytest.approx(after.mean())
    assert row["change"] == pytest.approx(after.mean() - before.mean())
    printed = invoke("diff", tmp_path / "s" / "v1", tmp_path / "s" / "v2", "--runs", root / "runs" / "official_full" /
                     "p_bert.run.gz")
    assert printed.output.splitlines()[-1].split() == [
        "p_bert", f"{before.mean():.4f}", f"{after.mean():.4f}", f"{after.mean() - before.mean():+.4f}"]


@pytest.mark.slow
def test_a_freeze_killed_mid_way_leaves_no_version_and_the_next_one_succeeds(tmp_path, shared_data):
    root = shared_data / "dl19"
    command = [sys.executable, "-m", "evalset", "freeze", str(root / "qrels.txt"), "--queries",
               str(root / "topics.tsv"), "--guideline", str(GUIDELINE), "--name", "k", "--sets-dir",
               str(tmp_path / "sets"), *[a for f in sorted((root / "llm_labels").glob("*.qrels"))
                                         for a in ("--llm", str(f))]]
    set_dir = tmp_path / "sets" / "k"
    for _ in range(20):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        caught = False
        while process.poll() is None:
            if set_dir.is_dir() and any(p.name.startswith(".build-") for p in set_dir.iterdir()):
                os.kill(process.pid, signal.SIGKILL)
                caught = True
                break
            time.sleep(0.001)
        process.wait()
        if caught:
            break
        for version in set_dir.glob("v*"):  # it finished first: start again
            version.chmod(0o755)
            for f in version.iterdir():
                f.unlink()
            version.rmdir()
    assert caught, "the freeze was never caught mid-build"
    assert not list(set_dir.glob("v*"))
    assert subprocess.run(command, capture_output=True, check=False).returncode == 0
    assert [p.name for p in set_dir.iterdir() if p.name != "versions.tsv"] == ["v1"]  # stale build removed
    assert verify_set(set_dir / "v1").problems == ()


# ------------------------------------------------------------------------------------------------ strata
def test_per_stratum_and_traffic_weighted_means_equal_a_hand_computation(tmp_path, shared_data):
    root = shared_data / "dl19"
    topics = read_queries(root / "topics.tsv").head(5)
    queries = topics.assign(stratum=["head", "head", "tail", "tail", "tail"], frequency=[90, 60, 3, 2, 1],
                            stratum_share=[0.7, 0.7, 0.3, 0.3, 0.3], weight=[0.35, 0.35, 0.1, 0.1, 0.1],
                            split=["test", "test", "test", "test", "dev"])
    queries.to_csv(tmp_path / "queries.tsv", sep="\t", index=False)
    qrels = read_qrels(root / "qrels.txt")
    subset = qrels[qrels["query_id"].isin(topics["query_id"])]
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in subset.itertuples(index=False)))
    assert invoke("freeze", tmp_path / "q.txt", "--queries", tmp_path / "queries.tsv", "--guideline", GUIDELINE,
                  "--name", "strat", "--sets-dir", tmp_path / "sets").exit_code == 0
    run = root / "runs" / "official_full" / "p_bert.run.gz"
    result = invoke("score", "--set", tmp_path / "sets" / "strat" / "v1", run, "--format", "json")
    entry = json.loads(result.stdout)["runs"]["p_bert"]["ndcg@10"]

    values = evaluate(read_run(run), subset, ["ndcg@10"])
    ids = topics["query_id"].tolist()
    head = (values.loc[ids[0], "ndcg@10"] + values.loc[ids[1], "ndcg@10"]) / 2
    tail = (values.loc[ids[2], "ndcg@10"] + values.loc[ids[3], "ndcg@10"]) / 2  # ids[4] is in the dev split
    assert entry["strata"]["head"]["mean"] == pytest.approx(head)
    assert entry["strata"]["tail"]["mean"] == pytest.approx(tail)
    assert entry["weighted_mean"] == pytest.approx(0.7 * head + 0.3 * tail)
    assert entry["defined"] == 4


@pytest.mark.slow
def test_compare_on_a_set_logs_every_comparison_and_counts_its_planned_ones_in_the_threshold(dl19_set, shared_data):
    runs = shared_data / "dl19" / "runs" / "official_full"
    planned = json.loads(invoke("compare", "--set", dl19_set, runs / "bm25base_p.run.gz", runs / "idst_bert_p1.run.gz",
                                "--format", "json").stdout)[0]
    assert planned["kind"] == "planned" and planned["established"] and planned["threshold"] == 0.05
    other = json.loads(invoke("compare", "--set", dl19_set, runs / "bm25base_p.run.gz", runs / "p_bert.run.gz",
                              "--format", "json").stdout)[0]
    assert other["kind"] == "exploratory" and not other["established"]
    again = json.loads(invoke("compare", "--set", dl19_set, runs / "bm25base_p.run.gz", runs / "idst_bert_p1.run.gz",
                              "--format", "json").stdout)[0]
    assert again["threshold"] == 0.05  # the set's one planned comparison: the look at p_bert is logged, not counted
    log = (dl19_set.parent / "comparisons.jsonl").read_text().splitlines()
    assert len(log) == 3 and json.loads(log[1])["candidate"] == "p_bert"


@pytest.mark.slow
def test_the_manifest_records_the_agreement_of_the_annotators(tmp_path, shared_data):
    from sklearn.metrics import cohen_kappa_score

    root = shared_data / "dl19"
    llm = root / "llm_labels" / "llama-3-70b.fourprompts.qrels"
    result = invoke("freeze", root / "qrels.txt", "--llm", llm, "--queries", root / "topics.tsv",
                    "--guideline", GUIDELINE, "--name", "a", "--sets-dir", tmp_path)
    assert result.exit_code == 0 and "9260 LLM labels kept in labels.tsv but not merged" in result.output
    agreement = load_set(tmp_path / "a" / "v1").manifest["agreement"]
    nist, judge = read_qrels(root / "qrels.txt"), read_qrels(llm)
    both = nist.merge(judge, on=["query_id", "doc_id"])
    expected = cohen_kappa_score(both["grade_x"], both["grade_y"], weights="quadratic", labels=[0, 1, 2, 3])
    assert agreement["matrix"]["annotators"] == ["qrels", "llama-3-70b.fourprompts"]
    assert agreement["matrix"]["values"][0][1] == pytest.approx(expected)
    assert agreement["calibration"]["human_range_note"] == "human range unknown: one human annotator only"


# ------------------------------------------------------------------------------ nothing broken is ever frozen
def test_a_label_id_that_qrels_cannot_hold_is_refused_with_its_line_and_leaves_no_version(tmp_path):
    table = write_table(tmp_path / "labels.tsv", [("q1", "d1", "ann", 2, ""), ("19 x", "d1", "ann", 1, "")])
    for _ in range(2):  # a retry adds no version either
        result = freeze_cli(tmp_path, table)
        assert result.exit_code == 2, result.output
        assert result.output == (f"evalset: error: {table}:3: query id '19 x' contains white space, which TREC "
                                 "qrels cannot hold; fix the id and freeze again\n")
    assert not (tmp_path / "sets" / "s").exists() or not list((tmp_path / "sets" / "s").iterdir())


def test_a_query_id_that_qrels_cannot_hold_is_refused_with_the_queries_file_and_line(tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst query\n19 x\tsecond query\n")
    table = write_table(tmp_path / "labels.tsv", [("q1", "d1", "ann", 2, "")])
    result = invoke("freeze", table, "--queries", topics, "--guideline", GUIDELINE, "--name", "s",
                    "--sets-dir", tmp_path / "sets")
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: {topics}:2: query id '19 x' contains white space, which TREC qrels "
                             "cannot hold\n")
    assert not (tmp_path / "sets" / "s" / "v1").exists()


def test_bad_ids_and_grades_in_a_frame_are_named_by_row(tmp_path):
    queries = pd.DataFrame({"query_id": ["q"], "query": ["a query"]})
    guideline = read_guideline(GUIDELINE)
    with pytest.raises(InputError, match=r"^document id '' is empty, .* \(labels row 2\)$"):
        freeze(labels([("q", "a", "ann", "human", 1), ("q", "", "ann", "human", 1)]), queries, guideline, "t",
               tmp_path)
    with pytest.raises(InputError, match=r"^grade 7 is not on the scale .* \(adjudication row 1\)$"):
        freeze(labels([("q", "a", "ann", "human", 1)]), queries, guideline, "t", tmp_path,
               adjudication=labels([("q", "a", "judge", "human", 7)]))
    assert not (tmp_path / "t").exists()


def test_a_grade_off_the_scale_names_the_labels_file_and_line(tmp_path):
    table = write_table(tmp_path / "labels.tsv", [("q1", "d1", "ann", 2, ""), ("q1", "d2", "ann", 9, "")])
    result = freeze_cli(tmp_path, table)
    assert result.exit_code == 2 and result.output.startswith(f"evalset: error: {table}:3: grade 9 is not on the")


def test_an_empty_labels_file_is_refused_naming_it(tmp_path):
    good = write_table(tmp_path / "labels.tsv", [("q1", "d1", "ann", 2, "")])
    header_only = write_table(tmp_path / "header.tsv", [])
    empty = tmp_path / "empty.tsv"
    empty.write_text("")  # no header: read as qrels, which refuse an empty file
    no_judgment = ("no judgments in this file: it is empty or a header alone, or holds only negative (unjudged) "
                   "qrels grades")
    for given, message in (([header_only], no_judgment), ([good, header_only], no_judgment),
                           ([empty], "no judgments: the qrels are empty, blank or comments only (expected lines "
                                     "`qid 0 docid grade`)")):
        result = freeze_cli(tmp_path, *given)
        assert result.exit_code == 2
        assert result.output == f"evalset: error: {given[-1]}: {message}\n"
    assert not (tmp_path / "sets").exists()


def test_labels_that_leave_no_judgment_to_merge_are_refused(tmp_path):
    pooled = tmp_path / "pooled.qrels"
    pooled.write_text("q1 0 d1 -1\n")
    unjudged = freeze_cli(tmp_path, pooled)
    assert unjudged.exit_code == 2 and unjudged.output == (
        f"evalset: error: {pooled}: no judgments: all 1 qrels lines have a negative grade (pooled but not judged, "
        "as trec_eval reads them)\n")
    llm_table = write_table(tmp_path / "llm.tsv", [("q1", "d1", "judge", 2, "")])
    llm_table.write_text(llm_table.read_text().replace("\thuman\t", "\tllm\t"))
    only_llm = freeze_cli(tmp_path, llm_table)
    assert only_llm.exit_code == 2 and "the 1 labels are all LLM labels (kind llm), which are merged only with " \
        "--merge", "llm=yes" in only_llm.output
    assert not (tmp_path / "sets" / "s" / "v1").exists()


def test_one_annotator_grading_a_pair_3_then_0_is_refused_then_counted_when_settled(tmp_path):
    table = write_table(tmp_path / "labels.tsv", [("q1", "d1", "ann", 3, "2026-01-01T10:00:00Z"),
                                                  ("q1", "d1", "ann", 0, "2026-01-02T10:00:00Z")])
    refused = freeze_cli(tmp_path, table)
    assert refused.exit_code == 2 and "two different grades" in refused.output
    settled = freeze_cli(tmp_path, table, "--conflicting-grades", "latest")
    assert settled.exit_code == 0, settled.output
    assert settled.output.splitlines() == [
        f"froze {tmp_path / 'sets' / 's' / 'v1'}: 1 judgment over 2 queries from 1 label by 1 annotator (merge: "
        "median; 1 pair judged more than once, 0 adjudicated)",
        "note: 1 of the 2 queries have no merged judgment: score and compare leave them out as undefined (and "
        "count them)",
        "note: 1 pair judged more than once by one annotator (0 exact repeats collapsed; labels.tsv holds the "
        "judgments that stand)",
        "note: 1 conflicting judgments settled by --conflicting-grades latest"]
    frozen = load_set(tmp_path / "sets" / "s" / "v1")
    assert frozen.qrels["grade"].tolist() == [0]  # the later labeled_at stands
    assert frozen.manifest["merge"]["repeated_by_one_annotator"] == 1


# ----------------------------------------------------------------------------- a version copied alone
def test_a_version_copied_without_versions_tsv_is_unverified_not_ok(tmp_path, capsys):
    table = write_table(tmp_path / "labels.tsv", [("q1", "d1", "ann", 2, ""), ("q2", "d1", "ann", 0, "")])
    assert freeze_cli(tmp_path, table).exit_code == 0
    digest = (tmp_path / "sets" / "s" / "versions.tsv").read_text().split("\t")[2].strip()
    copy = tmp_path / "copy" / "s" / "v1"
    copy.parent.mkdir(parents=True)
    shutil.copytree(tmp_path / "sets" / "s" / "v1", copy)
    unverified = invoke("verify", copy)
    assert unverified.exit_code == 3
    assert unverified.output.startswith(f"UNVERIFIED {copy}: every file matches its manifest hash, but the manifest "
                                        f"could not be checked against the record of versions "
                                        f"({copy.parent / 'versions.tsv'} is absent")
    assert invoke("verify", copy, "--manifest-sha256", digest).output == (
        f"OK {copy}: every file matches its manifest hash\n")
    manifest = copy / "manifest.json"
    manifest.chmod(0o644)
    manifest.write_text(manifest.read_text().replace('"gain": "linear"', '"gain": "exponential"'))
    assert invoke("verify", copy).exit_code == 3  # the edit cannot be seen without a record
    caught = invoke("verify", copy, "--manifest-sha256", digest)
    assert caught.exit_code == 1 and f"FAILED {manifest}: content changed" in caught.output
    frozen = load_set(copy)
    assert frozen.unverified and frozen.contract.evaluation.gain == "exponential"
    assert capsys.readouterr().err.startswith(f"warning: {copy}: UNVERIFIED: the manifest could not be checked")
    (copy.parent / "versions.tsv").write_text(f"v2\t2026-01-01T00:00:00Z\t{digest}\n")  # a record without v1
    assert "versions.tsv does not record v1" in invoke("verify", copy).output


# ----------------------------------------------------------------------------- the headline metric
def test_a_headline_that_names_no_measure_is_refused_by_freeze_verify_and_every_reader(tmp_path, capsys):
    """io is below metrics: a set's reader is handed the measure parser (check_headline); freeze checks the headline
    itself (set_contract for the command, freeze for a contract made elsewhere). The messages are the parser's."""
    unknown = "unknown measure 'bogus'; known: "
    result = freeze_cli(tmp_path, write_table(tmp_path / "l.tsv", [("q1", "d1", "ann", 2, "")]), "-m", "bogus")
    assert result.exit_code == 2 and result.output.startswith(f"evalset: error: {unknown}")
    assert not (tmp_path / "sets" / "s").exists()
    with pytest.raises(InputError, match=unknown):
        set_contract(headline="bogus")
    with pytest.raises(InputError, match=unknown):
        freeze(labels([("q1", "d1", "ann", "human", 2)]), pd.DataFrame({"query_id": ["q1"], "query": ["a query"]}),
               read_guideline(GUIDELINE), "t", tmp_path / "lib", contract=SetContract(headline="bogus"))
    assert SetContract(headline="bogus").headline == "bogus"  # io checks the declared rules alone
    assert freeze_cli(tmp_path, tmp_path / "l.tsv", "-m", "P@5").exit_code == 0
    version, versions = tmp_path / "sets" / "s" / "v1", tmp_path / "sets" / "s" / "versions.tsv"
    manifest = version / "manifest.json"
    manifest.chmod(0o644)
    manifest.write_text(manifest.read_text().replace('"headline": "P@5"', '"headline": "bogus"'))
    versions.write_text(versions.read_text().replace(versions.read_text().split("\t")[2].strip(),
                                                     hashlib.sha256(manifest.read_bytes()).hexdigest()))
    said = f"{manifest}: invalid contract: {unknown}"
    assert invoke("verify", version).output.startswith(f"FAILED {said}")
    assert verify_set(version).problems == ()  # the parser not handed: the declared rules alone
    with pytest.raises(InputError, match="the set fails verification: " + re.escape(said)):
        Evaluation.on_set(version)
    scored = invoke("score", tmp_path / "l.tsv", "--set", version)
    assert scored.exit_code == 2 and f"the set fails verification: {said}" in scored.output


# ------------------------------------------------------------------------- diff across contracts
@pytest.mark.slow
def test_diff_shows_a_contract_change_first_and_scores_each_version_under_its_own(tmp_path, shared_data):
    root = shared_data / "dl19"
    common = ["--queries", root / "topics.tsv", "--guideline", GUIDELINE, "--name", "c", "--sets-dir", tmp_path]
    assert invoke("freeze", root / "qrels.txt", *common).exit_code == 0
    assert invoke("freeze", root / "qrels.txt", *common, "-c", "gain=exponential", "-c", "rel_level=2",
                  "-m", "p@10").exit_code == 0
    assert invoke("freeze", root / "qrels.txt", *common, "-c", "gain=exponential").exit_code == 0
    run_file = root / "runs" / "official_full" / "p_bert.run.gz"
    run, qrels = read_run(run_file), read_qrels(root / "qrels.txt")
    ndcg = evaluate(run, qrels, ["ndcg@10"])["ndcg@10"].mean()
    p10 = evaluate(run, qrels, ["p@10"], EvaluationContract(rel_level=2)).iloc[:, 0].mean()
    ndcg_exp = evaluate(run, qrels, ["ndcg@10"], EvaluationContract(gain="exponential"))["ndcg@10"].mean()
    other = invoke("diff", tmp_path / "c" / "v1", tmp_path / "c" / "v2", "--runs", run_file).output.splitlines()
    assert other[0] == ("CONTRACT CHANGED between v1 and v2: rel_level 1 -> 2, gain linear -> exponential, "
                        "headline ndcg@10 -> p@10; each version is scored under its own contract")
    assert other[1] == "c v1 -> c v2: 0 added, 0 removed, 0 changed"
    assert other[3].split() == ["run", "ndcg@10", "v1", "p@10", "v2"]
    assert other[4].split() == ["p_bert", f"{ndcg:.4f}", f"{p10:.4f}"]
    assert other[5] == "no change column: the headline metrics differ (ndcg@10 in v1, p@10 in v2)"
    same_metric = invoke("diff", tmp_path / "c" / "v1", tmp_path / "c" / "v3", "--runs", run_file).output
    assert same_metric.splitlines()[0].startswith("CONTRACT CHANGED between v1 and v3: gain linear -> exponential;")
    assert same_metric.splitlines()[4].split() == ["p_bert", f"{ndcg:.4f}", f"{ndcg_exp:.4f}",
                                                   f"{ndcg_exp - ndcg:+.4f}"]
    assert "the change comes from the contract change (gain) as well as from the judgments" in same_metric


@pytest.mark.slow  # about a second: out of the quick tier (README)
def test_the_freeze_summary_says_which_queries_have_no_judgment_and_what_an_exclusion_keeps_out(tmp_path, shared_data):
    """Issue 29: 52 judgments on 6 of 43 queries said nothing of the 37 others; excluding an LLM without
    --merge llm=yes said '0 labels ... not merged' although it has 9,260."""
    qrels = shared_data / "dl19" / "qrels.txt"
    few = [line for line in qrels.read_text().splitlines() if line.split()[0] in {"19335", "47923"}][:52]
    (tmp_path / "few.qrels").write_text("\n".join(few) + "\n")
    result = invoke("freeze", tmp_path / "few.qrels", "--queries", shared_data / "dl19" / "topics.tsv",
                    "--guideline", GUIDELINE, "--name", "few", "--sets-dir", tmp_path / "sets")
    assert result.exit_code == 0, result.output
    assert "note: 42 of the 43 queries have no merged judgment: score and compare leave them out" in result.output
    llm = shared_data / "dl19" / "llm_labels" / "llama-3-8b.baseline.qrels"
    result = invoke("freeze", qrels, "--llm", llm, "--queries", shared_data / "dl19" / "topics.tsv",
                    "--guideline", GUIDELINE, "--name", "llm", "--sets-dir", tmp_path / "sets",
                    "--merge", "exclude=llama-3-8b.baseline")
    assert result.exit_code == 0, result.output
    assert "note: 9260 labels of llama-3-8b.baseline kept in labels.tsv but not merged" in result.output


def test_grades_revised_upstream_are_counted_by_freeze_listed_by_diff_and_told_by_verify(tmp_path):
    def pulled(grades):
        return pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"],
                             "annotator": ["a@x"] * 3, "kind": "human", "grade": grades,
                             "source": [f"label-studio:7/{task}/{task + 100}" for task in (10, 11, 12)],
                             "labeled_at": "2026-01-01T10:00:00.000000Z", "comment": ""})

    first, later = pulled([2, 1, 3]), pulled([0, 1, 3])
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "query": ["one", "two"]})
    guideline = read_guideline(GUIDELINE)
    v1 = freeze(first, queries, guideline, "s", tmp_path)
    assert "revised_since_parent" not in v1.manifest
    v2 = freeze(later.iloc[:2], queries, guideline, "s", tmp_path)
    assert v2.manifest["revised_since_parent"] == {"revised": 1, "withdrawn": 1}
    assert "note: since v1, 1 of its grades were revised and 1 withdrawn" in v2.to_text()
    listed = diff_versions(v1.path, v2.path).to_text()
    assert "grades changed since v1 (upstream, by each judgment's source): 1 revised, 1 withdrawn" in listed
    assert "2 -> 0" in listed and "3 -> -" in listed
    later_path = tmp_path / "later.tsv"
    later.to_csv(later_path, sep="\t", index=False)
    told = invoke("verify", v1.path, "--labels", later_path)
    assert told.exit_code == 0, told.output
    assert f"OK {v1.path}" in told.output and "grades changed since s v1 was frozen" in told.output
    assert "1 revised, 0 withdrawn" in told.output
    assert "no grade of s v2 changed upstream" in invoke("verify", v2.path, "--labels", later_path).output


@pytest.mark.parametrize(("command", "option", "value", "said"), [
    ("freeze", "--version", 0, "must be a positive integer, got 0"),
    ("freeze", "--version", "v2", "must be a positive integer, got 'v2'"),
    ("freeze", "--merge", "max_gap=-1", "max_gap: must be a non-negative integer, got -1"),
    ("freeze", "--merge", "max_gap=inf", "max_gap: must be a non-negative integer, got 'inf'"),
    ("freeze", "--merge", "mean", "rule: " + not_one_of("mean", "median", "majority", "annotator-priority",
                                                         "dawid-skene", "one-coin", "mace", "glad")),
    ("freeze", "--merge", "llm=true", "llm: " + not_one_of("true", "no", "yes")),
    ("freeze", "--weighting", "queries", not_one_of("queries", "traffic", "uniform")),
    ("freeze", "--conflicting-grades", "last", not_one_of("last", "refuse", "latest", "first")),
    ("diff", "--split", "train", not_one_of("train", "test", "dev", "all")),
])
def test_an_option_off_its_rule_is_refused_naming_it(command, option, value, said):
    assert refusal([command], option, value) == said


@pytest.mark.parametrize(("make", "message"), [
    (lambda: freeze(labels([]), pd.DataFrame(), None, "s", "sets", version=0),
     "version must be a positive integer, got 0"),
    (lambda: MergePolicy(max_gap=-1), "max_gap must be a non-negative integer, got -1"),
    (lambda: MergePolicy(rule="mean"),
     "rule must be one of median, majority, annotator-priority, dawid-skene, one-coin, mace, glad, got 'mean'"),
    (lambda: SetContract(weighting="queries"), "weighting must be one of traffic, uniform, got 'queries'"),
    (lambda: diff_versions("no-v1", "no-v2", split="train"), "split must be one of test, dev, all, got 'train'"),
    (lambda: Evaluation.on_set("no-set", "train"), "split must be one of test, dev, all, got 'train'"),
])
def test_the_library_refuses_what_the_commands_refuse_before_reading_anything(make, message):
    with pytest.raises(InputError) as raised:
        make()
    assert str(raised.value) == message


def test_a_sets_folder_given_for_a_version_names_its_latest_and_a_missing_path_is_no_set(dl19_set, tmp_path):
    folder = dl19_set.parent
    with pytest.raises(InputError, match=re.escape(f"a set's folder, not one of its versions: give {dl19_set} "
                                                   "(its latest)")):
        load_set(folder)
    with pytest.raises(InputError, match="no such set version"):
        load_set(tmp_path / "nope")
    with pytest.raises(InputError, match=re.escape("not a frozen set (no manifest.json)")):
        load_set(tmp_path)


def test_a_copied_or_renamed_version_verifies_says_what_it_is_a_copy_of_and_blocks_no_output(dl19_set, tmp_path,
                                                                                         shared_data, monkeypatch):
    # issue 74: `cp -r sets/dl19/v1 ~/backup-v1` made every output below ~ refused ("lies in the set folder ~")
    # and the copy failed verify ("manifest.json names dl19/v1, but the folder is ...")
    home = tmp_path / "home"
    home.mkdir()
    shutil.copytree(dl19_set, home / "backup-v1")
    alone = invoke("verify", home / "backup-v1")
    assert alone.exit_code == 3, alone.output  # UNVERIFIED: copied without versions.tsv, as before
    assert alone.output.startswith(f"UNVERIFIED {home / 'backup-v1'}: every file matches its manifest hash (a copy "
                                   "of dl19/v1, moved or renamed: its content is what counts), but")
    whole = tmp_path / "shared" / "dl19-2026"  # the whole set folder copied under another name: versions.tsv along
    shutil.copytree(dl19_set.parent, whole)
    verified = invoke("verify", whole / "v1")
    assert verified.exit_code == 0 and verified.output.startswith(f"OK {whole / 'v1'}: every file matches its "
                                                                  "manifest hash (a copy of dl19/v1")
    run = shared_data / "dl19" / "runs" / "official_full" / "p_bert.run.gz"
    assert invoke("score", "--set", home / "backup-v1", run, "-m", "p@10").exit_code == 0
    (home / "project").mkdir()
    monkeypatch.chdir(home / "project")
    sampled = invoke("sample", shared_data / "querylog" / "excite-small.log", "-l", "header=no", "-l", "query=3",
                     "--per-stratum", "5", "-o", home / "project" / "out" / "q.tsv")
    assert sampled.exit_code == 0, sampled.output
    inside = invoke("sample", shared_data / "querylog" / "excite-small.log", "-l", "header=no", "-l", "query=3",
                    "--per-stratum", "5", "-o", whole / "q.tsv")
    assert inside.exit_code == 2 and "lies in the set folder" in inside.output  # a set's folder is still guarded


def test_a_set_with_no_test_query_is_said_at_sample_and_freeze_and_its_error_names_the_splits(tmp_path, shared_data):
    # issue 74: sample's default --holdout 0 puts every query in dev; freeze said nothing and score --set then
    # failed "no queries in split 'test'"
    queries = tmp_path / "queries.tsv"
    sampled = invoke("sample", shared_data / "querylog" / "excite-small.log", "-l", "header=no", "-l", "query=3",
                     "--per-stratum", "3", "-o", queries)
    assert "warning: no query is in the test split (--holdout 0, the default)" in sampled.output
    ids = [line.split("\t")[0] for line in queries.read_text().splitlines()[1:]]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{query} 0 d{i} {i % 2}\n" for query in ids for i in range(2)))
    frozen = invoke("freeze", qrels, "--queries", queries, "--guideline", GUIDELINE, "--name", "s", "--sets-dir",
                    tmp_path / "sets")
    assert frozen.exit_code == 0 and "warning: no query is in the test split" in frozen.output
    run = tmp_path / "r.run"
    run.write_text("".join(f"{query} Q0 d1 1 1 r\n" for query in ids))
    refused = invoke("score", "--set", tmp_path / "sets" / "s" / "v1", run)
    assert refused.exit_code == 2 and refused.output.endswith(
        "the set has no queries in split 'test' (its splits: dev): give --split dev or --split all\n")
    assert invoke("score", "--set", tmp_path / "sets" / "s" / "v1", run, "--split", "dev").exit_code == 0


def test_freeze_echoes_its_plan_and_compare_names_the_nearest_planned_comparison(tmp_path, shared_data):
    # issue 74: a typo in freeze --plan silently made the real comparison exploratory forever
    root = shared_data / "dl19"
    frozen = invoke("freeze", root / "qrels.txt", "--queries", root / "topics.tsv", "--guideline", GUIDELINE,
                    "--name", "dl19", "--sets-dir", tmp_path / "sets", "--plan", "bm25base_p:idst_bert_p11")
    assert ("planned comparisons: bm25base_p:idst_bert_p11 (compare decides these; any other is exploratory)"
            in frozen.output)
    runs = root / "runs" / "official_full"
    compared = invoke("compare", "--set", tmp_path / "sets" / "dl19" / "v1", runs / "bm25base_p.run.gz",
                      runs / "idst_bert_p1.run.gz", "--permutations", "200")
    assert compared.exit_code == 0
    assert ("note: idst_bert_p1 vs bm25base_p is exploratory: the set plans bm25base_p:idst_bert_p11; the nearest is "
            "bm25base_p:idst_bert_p11 (a typo at freeze? the plan cannot change: freeze a new version)"
            in compared.stderr)


def test_unresolved_pairs_are_shown_with_every_grade_counted_and_written_as_an_adjudication_template(tmp_path):
    # issue 74: freeze listed 6 rows of one annotator's grade for 394 pairs, with no "and 388 more"
    (tmp_path / "queries.tsv").write_text("q1\tone\nq2\ttwo\n")
    pairs = [("q1", f"d{i}") for i in range(5)] + [("q2", f"d{i}") for i in range(4)]
    (tmp_path / "a.qrels").write_text("".join(f"{q} 0 {d} 0\n" for q, d in pairs))
    (tmp_path / "b.qrels").write_text("".join(f"{q} 0 {d} 3\n" for q, d in pairs))
    args = [tmp_path / "a.qrels", tmp_path / "b.qrels", "--queries", tmp_path / "queries.tsv", "--guideline",
            GUIDELINE, "--name", "s", "--sets-dir", tmp_path / "sets"]
    refused = invoke("freeze", *args)
    template = tmp_path / "sets" / "s-adjudication.tsv"
    assert refused.exit_code == 2
    assert refused.output.splitlines() == [
        f"evalset: error: 9 pairs have unresolved disagreement (the 9 pairs are in {template}: fill its grade column "
        "and give it to --adjudication), and freeze again:",
        *(f"  {q} {d}: a 0, b 3" for q, d in pairs[:6]), "  ... and 3 more pairs"]
    rows = template.read_text().splitlines()
    assert len(rows) == 10 and rows[1] == "q1\td0\tadjudicator\thuman\t\tadjudication\t\tgrades: a 0, b 3"
    template.write_text("\n".join([rows[0], *(row.replace("\thuman\t\t", "\thuman\t2\t") for row in rows[1:])]))
    frozen = invoke("freeze", *args, "--adjudication", template)
    assert frozen.exit_code == 0, frozen.output
    assert read_qrels(tmp_path / "sets" / "s" / "v1" / "qrels.txt")["grade"].tolist() == [2] * 9
