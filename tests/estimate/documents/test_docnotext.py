"""Issue 74, item 9: `pool -> judge -> estimate select documents -> estimate --design documents` on a pool with a
pair that has no text. DL19's corpus has no passage 8732212, which UNH_exDL_bm25 ranks in query 87181's top 10: the
pool lists it in pool.json (missing_text) and leaves it out of tasks.jsonl, so neither `evalset judge` nor an
annotator can grade it. Before, the estimate refused the judge's own labels ("the LLM must grade every pooled pair");
now the draw's frame is the pairs with text, the text-less pair counts as unjudged (as a document outside the pool),
and the draw, the estimate and its JSON say how many were left out."""

import json
from pathlib import Path

import pytest

from evalset.io.poolfiles import read_tasks
from evalset.io.samplerecord import read_sample
from evalset.pooling.pool import pair_id
from tests.support.dl19files import NIST, invoke, llm_grade, qrels_grades, write_qrels
from tests.support.openai_server import Behaviour, JudgeServer

RUNS = ("data/dl19/runs/UNH_exDL_bm25.run.gz", "data/dl19/runs/bm25base_p.run.gz")
QUERIES = ("87181", "1037798", "104861", "1063750", "1103812")
NO_TEXT = ("87181", "8732212")


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """The pool of two runs' top 10 over five topics (one pair without text) and `evalset judge`'s labels of it."""
    root = tmp_path_factory.mktemp("notext")
    lines = Path("data/dl19/topics.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    topics = [line for line in lines if line.split("\t")[0] in QUERIES]
    (root / "topics.tsv").write_text("".join(topics), encoding="utf-8")
    result = invoke("pool", *RUNS, "--depth", 10, "--queries", root / "topics.tsv", "--corpus",
                    "data/dl19/passages.jsonl.gz", "-o", root / "pool")
    assert result.exit_code == 0, result.output
    nist = qrels_grades(NIST)
    tasks = read_tasks(root / "pool" / "tasks.jsonl").to_dict("records")
    told = {(t["query"], t["text"]): llm_grade(t["pair_id"], int(nist.get((t["query_id"], t["doc_id"]), 0)))
            for t in tasks}
    with JudgeServer(Behaviour(grades=told)) as server:
        result = invoke("judge", root / "pool", "--guideline", "guidelines/relevance-v2.md", "--model", "judge-test",
                        "-o", root / "llm.tsv", "--base-url", server.base_url, "--no-progress")
    assert result.exit_code == 0, result.output
    return {"root": root, "nist": nist, "tasks": tasks}


def test_the_pool_reports_the_pair_and_the_judge_grades_every_other(judged):
    manifest = json.loads((judged["root"] / "pool" / "pool.json").read_text())
    assert manifest["missing_text"] == [{"pair_id": pair_id(*NO_TEXT), "query_id": NO_TEXT[0], "doc_id": NO_TEXT[1]}]
    assert NO_TEXT not in {(t["query_id"], t["doc_id"]) for t in judged["tasks"]}
    assert len((judged["root"] / "llm.tsv").read_text().splitlines()) == len(judged["tasks"]) + 1  # and a header


def test_the_estimate_reads_the_judges_labels_and_counts_the_pair_left_out(judged):
    root = judged["root"]
    selected = invoke("estimate", "select", "documents", root / "pool", "--budget", 40, "--seed", 2, "-o",
                      root / "sample")
    assert selected.exit_code == 0, selected.output
    pooled = len(judged["tasks"])
    assert selected.output.splitlines()[0].startswith(f"{pooled} pairs in the pool with text; budget 40 ")
    assert ("left out 1 pooled pair(s) without text (pool.json): nobody can grade them, so they count as unjudged, "
            "as a document outside the pool") in selected.output.splitlines()
    record = read_sample(root / "sample")
    assert len(record.pairs) == pooled and record.source["no_text"] == [pair_id(*NO_TEXT)]
    drawn = list(zip(record.drawn["query_id"], record.drawn["doc_id"], strict=True))
    human = write_qrels(root / "human.qrels", drawn, judged["nist"])
    common = ("estimate", "run", "documents", "--sample", root / "sample", "--human", human, "--llm",
              root / "llm.tsv", *RUNS, "--compare",
              "bm25base_p:UNH_exDL_bm25")
    result = invoke(*common)
    assert result.exit_code == 0, result.output  # before: "the LLM has no grade of the pooled pair 87181 8732212"
    assert result.output.splitlines()[0] == (
        f"sample: {root / 'sample'} (budget 40 judgments expected; drawn and human-graded {len(drawn)}; 1 pooled "
        "pair(s) without text left out of the draw: unjudged); judges: llm.tsv")
    document = json.loads(invoke(*common, "--format", "json").output)
    assert document["record"]["no_text"] == 1 and document["settings"]["pairs"] == pooled
