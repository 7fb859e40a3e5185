"""A frozen set and a new system, from the command line: a set judged from the depth-10 pool of DL19's eight BM25
runs, a BERT re-ranker with 220 holes in its top 10, a quarter of its holes graded (NIST's grades standing in for
the annotators), and its full-judgment score estimated; then the inputs that must be refused."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.io.poolfiles import read_pool_pairs
from evalset.io.trec import read_qrels
from tests.conftest import REPO

DL19 = REPO / "data" / "dl19"
RUNS = DL19 / "runs"
LLM = DL19 / "llm_labels" / "llama-3-70b.fourprompts.qrels"


def cli(*args, code=0):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


def nist_grades(pairs: pd.DataFrame, path: Path) -> Path:
    """NIST's grades of ``pairs`` (``query_id, doc_id``), as the annotators' qrels."""
    nist = read_qrels(DL19 / "nist.qrels")
    wanted = nist.merge(pairs[["query_id", "doc_id"]].astype(str), on=["query_id", "doc_id"])
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in wanted[["query_id", "doc_id", "grade"]].itertuples(
        index=False)))
    return path


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    root = tmp_path_factory.mktemp("holes")
    cli("pool", *sorted(RUNS.glob("bm25*.run.gz")), "-k", 10, "-o", root / "bm25-pool")
    set_qrels = nist_grades(read_pool_pairs(root / "bm25-pool" / "pool.tsv"), root / "bm25-pool.qrels")
    cli("freeze", set_qrels, "--queries", DL19 / "topics.tsv", "--guideline", "relevance-v2", "--name", "bm25",
        "--sets-dir", root / "sets", "--plan", "bm25base_p:idst_bert_p1")
    frozen = root / "sets" / "bm25" / "v1"
    runs = [RUNS / "bm25base_p.run.gz", RUNS / "idst_bert_p1.run.gz"]
    cli("holes", "--set", frozen, *runs, "-o", root / "holes")
    cli("estimate", "select", "holes", root / "holes", "--budget", "25%", "--seed", 3, "--set", frozen,
        "-o", root / "sample")
    drawn = nist_grades(read_pool_pairs(root / "sample" / "pool.tsv"), root / "sample.qrels")
    every_hole = nist_grades(read_pool_pairs(root / "holes" / "pool.tsv"), root / "holes.qrels")
    return root, frozen, runs, drawn, every_hole


@pytest.mark.slow  # DL19 pooled, frozen, compared, sampled and estimated: about 2 s
def test_a_quarter_of_the_holes_gives_the_score_every_hole_judged_would(workflow):
    root, frozen, runs, drawn, every_hole = workflow
    full = root / "full.qrels"
    full.write_text((frozen / "qrels.txt").read_text() + every_hole.read_text())
    truth = cli("score", "--qrels", full, *runs, "-m", "ndcg@10")
    assert truth.splitlines()[1:3] == ["bm25base_p    0.5591   1.0000", "idst_bert_p1  0.8516   1.0000"]
    out = cli("estimate", "run", "holes", "--set", frozen, "--sample", root / "sample", "--human", drawn,
              "--llm", LLM, runs[0], runs[1])
    assert len(drawn.read_text().splitlines()) == 50  # of the 230 holes' pool
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines if line.startswith(("bm25base_p ", "idst_bert_p1 "))][:3] == [
        ["bm25base_p", "0.5543"], ["idst_bert_p1", "0.8641"], ["idst_bert_p1", "-"]]
    assert "  verdict      established: candidate better (\"this set\" interval at 0.95 excludes 0)" in lines


@pytest.mark.slow
def test_a_sample_that_does_not_match_the_set_or_the_runs_is_refused(workflow, tmp_path):
    root, frozen, runs, drawn, _ = workflow
    estimate = ["estimate", "run", "holes", "--set", frozen, "--human", drawn, "--llm", LLM,
                runs[0], runs[1]]
    cli("estimate", "select", "documents", root / "holes", "--budget", "60%", "-o", tmp_path / "no-set")
    assert "the sample was drawn for no set, not this one" in cli(*estimate, "--sample", tmp_path / "no-set", code=2)
    out = cli(*estimate, "--sample", root / "sample", RUNS / "p_bert.run.gz", code=2)
    assert "holes in the top 10 that the sample could not draw (not in its pool): p_bert (" in out
    assert "holds 791 pairs the set judges" in cli("estimate", "select", "holes", root / "bm25-pool", "--budget", "25%",
                                                    "--set", frozen, "-o", tmp_path / "x", code=2)
    assert "give one of a budget (--budget" in cli(
        "estimate", "select", "holes", root / "holes", "--set", frozen, "-o", tmp_path / "y", code=2)
    undrawn = tmp_path / "undrawn.qrels"
    hole = next(line for line in (root / "holes.qrels").read_text().splitlines() if line not in drawn.read_text())
    undrawn.write_text(drawn.read_text() + hole + "\n")
    assert "which was not sampled (1 such grades)" in cli(*[undrawn if a == drawn else a for a in estimate],
                                                          "--sample", root / "sample", code=2)
    partial = tmp_path / "partial-llm.qrels"
    partial.write_text("".join(line + "\n" for line in LLM.read_text().splitlines()
                               if not line.startswith(drawn.read_text().split()[0] + " ")))
    assert "the LLM must grade every pooled pair" in cli(*[partial if a == LLM else a for a in estimate],
                                                         "--sample", root / "sample", code=2)


@pytest.mark.slow  # DL19 pooled and frozen (the module's fixture), two samples sized and one estimated
def test_a_sample_sized_for_a_precision_reaches_it_on_the_run_with_holes(workflow, tmp_path):
    """estimate select holes --precision 0.01: the BM25 run has no hole (nothing to judge, said), the re-ranker's 230
    holes are drawn at 70.1%; the estimate's "this set" interval then has a standard error of 0.0067 (half-width
    0.0132 / 1.96), within 0.01, and holds the every-hole score (0.8516)."""
    root, frozen, runs, _, _ = workflow
    sized = tmp_path / "sized"
    out = cli("estimate", "select", "holes", root / "holes", "--set", frozen, "--precision", 0.01, *[x for run in runs
              for x in ("--runs", run)], "--llm", LLM, "-m", "ndcg@10", "-m", "P(rel=2)@10", "--seed", 3, "-o", sized)
    assert out.splitlines()[:4] == [
        "230 pairs in the pool; budget 161.211 judgments expected; drawn 165 (seed 3)",
        "sized per run for a standard error of 0.01 (predicted before any hole is graded; a hole takes the largest "
        "share of the runs retrieving it):",
        "  bm25base_p: no hole in its top 10: nothing to judge",
        "  idst_bert_p1: 70.1% of its 230 holes"]
    record = pd.read_json(sized / "sample.json", typ="series")
    assert record["source"]["precision"] == 0.01
    assert record["source"]["runs"]["idst_bert_p1"]["se"] == pytest.approx(0.01)
    drawn = nist_grades(read_pool_pairs(sized / "pool.tsv"), tmp_path / "sized.qrels")
    lines = cli("estimate", "run", "holes", "--set", frozen, "--sample", sized, "--human", drawn,
                "--llm", LLM, runs[0], runs[1]).splitlines()
    row = next(line.split() for line in lines if line.startswith("idst_bert_p1 "))
    assert row[:4] == ["idst_bert_p1", "0.8571", "[0.8439,", "0.8702]"]


@pytest.mark.slow
def test_a_precision_the_holes_cannot_reach_or_runs_that_do_not_match_the_pool_are_refused(workflow, tmp_path):
    root, frozen, runs, _, _ = workflow
    base = ["estimate", "select", "holes", root / "holes", "--set", frozen, "--llm", LLM, "-o", tmp_path / "s"]
    both = ["--runs", runs[0], "--runs", runs[1]]
    assert cli(*base, *both, "--precision", 0.0001, code=2) == (
        "evalset: error: a precision of 0.0001 cannot be reached by a sample of the holes: every run needs 95% of its "
        "holes or more (100% the least); judge the holes' pool itself, or give a looser precision\n")
    assert cli(*base, "--runs", RUNS / "p_bert.run.gz", "--precision", 0.01, code=2).startswith(
        f"evalset: error: {root / 'holes' / 'pool.tsv'}: 78 pairs of the pool are not holes of the runs given in "
        "their top 10 (156493 8273011 first)")
    assert cli(*base, *both, "--runs", RUNS / "p_bert.run.gz", "--precision", 0.01, code=2).endswith(
        "holes of the runs given that the pool lacks: p_bert (88); pool these runs' holes (evalset holes --set SET "
        "... -o DIR) and draw from that pool\n")
    assert "give one of a budget (--budget" in cli(*base, *both, "--precision", 0.01, "--budget", 20, code=2)
    assert not (tmp_path / "s").exists()


@pytest.mark.slow
def test_score_on_the_set_says_each_runs_holes_and_what_they_could_cost(workflow, tmp_path):
    """score --set: BM25 has no hole in its top 10, the re-ranker 230 of 430; with every one of them at grade 3 it
    would score what `score --qrels` gives on the set's qrels plus those 230 pairs at grade 3."""
    root, frozen, runs, _, _ = workflow
    lines = cli("score", "--set", frozen, *runs).splitlines()
    start = lines.index("holes: the pairs of each run's top 10 the set does not judge (counted not relevant above)")
    assert lines[start + 1:start + 4] == [
        "run           holes               ndcg@10 as judged  every hole grade 3",
        "bm25base_p    0 of 430            0.6741             0.6741",
        "idst_bert_p1  230 of 430 (53.5%)  0.5582             0.9053"]
    assert lines[start + 4].startswith("a run's full-judgment score lies between the two; estimate it from a graded "
                                       f"sample of its holes: evalset holes --set {frozen} BASELINE RUN -o DIR")
    holes = read_pool_pairs(root / "holes" / "pool.tsv")
    filled = tmp_path / "filled.qrels"
    filled.write_text((frozen / "qrels.txt").read_text() + "".join(
        f"{q} 0 {d} 3\n" for q, d in holes[["query_id", "doc_id"]].itertuples(index=False)))
    # the set weights by traffic over one stratum: the plain mean is the same
    assert cli("score", "--qrels", filled, runs[1], "-m", "ndcg@10").splitlines()[1].split()[:2] == [
        "idst_bert_p1", "0.9053"]


@pytest.mark.slow
def test_the_graded_sample_of_the_holes_freezes_into_the_sets_next_version(workflow, tmp_path):
    """freeze grow LABELS --sample SAMPLE (a sample of a set's holes): the set's next version holds its 791 judgments
    and the 165 drawn holes' grades, records the sample's design, verifies; the re-ranker then has 65 holes, not 230.
    The other freeze, of a new set, refuses the sample naming freeze grow."""
    root, frozen, runs, _, _ = workflow
    sets = tmp_path / "sets"
    shutil.copytree(frozen.parent, sets / "bm25")
    base = sets / "bm25" / "v1"
    for path in (base, *base.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    sized = tmp_path / "sized"
    cli("estimate", "select", "holes", root / "holes", "--set", base, "--precision", 0.01, "--runs", runs[0], "--runs",
        runs[1], "--llm", LLM, "-m", "ndcg@10", "-m", "P(rel=2)@10", "--seed", 3, "-o", sized)
    drawn = nist_grades(read_pool_pairs(sized / "pool.tsv"), tmp_path / "drawn.qrels")
    part = tmp_path / "part.qrels"
    part.write_text("".join(drawn.read_text().splitlines(keepends=True)[:100]))
    assert cli("freeze", "grow", part, "--sample", sized, code=2) == (
        f"evalset: error: {part}: the sampled pair 1129237 128989 has no human grade (65 such pairs): every sampled "
        "pair must be graded, or the sample is no longer random\n")
    assert cli("freeze", drawn, "--sample", sized, "--queries", DL19 / "topics.tsv", "--guideline", "relevance-v2",
               "--name", "other", "--sets-dir", sets, code=2) == (
        f"evalset: error: a sample of the holes of the set {base}: it grows that set (evalset freeze grow LABELS "
        "--sample SAMPLE), it does not start a new one\n")
    assert cli("freeze", "grow", drawn, "--sample", sized).splitlines() == [
        f"froze {sets / 'bm25' / 'v2'}: 956 judgments over 43 queries from 956 labels by 2 annotators (merge: median; "
        "0 pairs judged more than once, 0 adjudicated)",
        "planned comparisons: bm25base_p:idst_bert_p1 (compare decides these; any other is exploratory)",
        "note: added the graded sample of v1's holes (165 of 230 drawn); its record is the manifest's hole_sample "
        "and holes.tsv"]
    grown = sets / "bm25" / "v2"
    assert cli("verify", grown) == f"OK {grown}: every file matches its manifest hash\n"
    manifest = json.loads((grown / "manifest.json").read_text())
    assert manifest["parent"] == "v1" and manifest["hole_sample"]["source"]["precision"] == 0.01
    assert manifest["hole_sample"]["source"]["runs"]["idst_bert_p1"]["fraction"] == pytest.approx(0.701, abs=1e-3)
    assert manifest["planned_comparisons"] == [["bm25base_p", "idst_bert_p1"]]
    assert "idst_bert_p1  65 of 430 (15.1%)" in cli("score", "--set", grown, *runs)
    assert cli("freeze", "grow", drawn, "--sample", sized, code=2).startswith(
        f"evalset: error: {sized}: {sets / 'bm25' / 'v2'} exists: the sample is frozen already")
