"""`evalset holes`: the holes of a comparison, the range of its difference with the holes filled
(checked against pytrec_eval on qrels filled by hand), whether the verdict could flip, and the pool folder that
push and judge read.

The scenario is the one the holes are for: a set judged from the depth-10 pool of the eight BM25 runs of TREC DL
2019 (the NIST judgments of those pairs only), and a neural run (idst_bert_p1) that was not in that pool.
"""

import gzip
import hashlib
import json
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from click.testing import CliRunner

from evalset import labelstudio
from evalset.cli import main
from evalset.io.poolfiles import read_tasks
from evalset.labelstudio import pool_tasks
from tests.conftest import REPO

BM25 = ("bm25base_p", "bm25base_ax_p", "bm25base_prf_p", "bm25base_rm3_p",
        "bm25tuned_p", "bm25tuned_ax_p", "bm25tuned_prf_p", "bm25tuned_rm3_p")


def read_plain_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with gzip.open(path, "rt") as handle:
        for line in handle:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return run


def plain_top(run: dict[str, dict[str, float]], k: int) -> dict[str, list[str]]:
    """trec_eval's order: score descending, then doc id descending."""
    return {q: [d for d, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)[:k]]
            for q, docs in run.items()}


@pytest.fixture(scope="module")
def dl19(shared_data, tmp_path_factory):
    root = shared_data / "dl19"
    runs = {name: root / "runs" / "official_top100" / f"{name}.run.gz" for name in (*BM25, "idst_bert_p1")}
    nist = {}
    for line in (root / "qrels.txt").read_text().splitlines():
        qid, _, doc, grade = line.split()
        nist.setdefault(qid, {})[doc] = int(grade)
    pooled = {(q, d) for name in BM25 for q, docs in plain_top(read_plain_run(runs[name]), 10).items() for d in docs}
    reduced = {q: {d: g for d, g in docs.items() if (q, d) in pooled} for q, docs in nist.items()}
    path = tmp_path_factory.mktemp("qrels") / "bm25-pool.qrels"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in reduced.items() for d, g in docs.items()))
    return {"root": root, "runs": runs, "qrels": reduced, "qrels_path": path, "nist": root / "qrels.txt"}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def holes_run(dl19, tmp_path_factory):
    out = tmp_path_factory.mktemp("holes") / "pool"
    result = invoke("holes", "--qrels", dl19["qrels_path"], dl19["runs"]["bm25base_p"], dl19["runs"]["idst_bert_p1"],
                    "-o", out, "--queries", dl19["root"] / "topics.tsv", "--corpus",
                    dl19["root"] / "passages.jsonl.gz", "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)[0], out


@pytest.mark.slow
def test_the_holes_are_the_unjudged_documents_of_either_top_10(dl19, holes_run):
    document, out = holes_run
    tops = {name: plain_top(read_plain_run(dl19["runs"][name]), 10) for name in ("bm25base_p", "idst_bert_p1")}
    expected = {(q, d) for top in tops.values() for q, docs in top.items() if q in dl19["qrels"] for d in docs
                if d not in dl19["qrels"][q]}
    pool = pd.read_csv(out / "pool.tsv", sep="\t", dtype=str)
    assert set(zip(pool["query_id"], pool["doc_id"], strict=True)) == expected
    assert len(expected) == 230  # 220 in the 42 queries compared, 10 in the one the reduced qrels leave undefined
    assert all(pool["pair_id"] == [hashlib.sha256(f"{q}\t{d}".encode()).hexdigest()[:16]
                                   for q, d in zip(pool["query_id"], pool["doc_id"], strict=True)])
    holes = document["holes"]
    assert holes["holes"] == 220 and holes["queries_with_holes"] == 41
    assert holes["pool"] == {"folder": str(out), "depth": 10, "pairs": 230, "queries": 42}
    assert {row["query_id"]: row["holes_baseline"] for row in holes["per_query"]} == dict.fromkeys(
        (row["query_id"] for row in holes["per_query"]), 0)  # the baseline was in the pool: no hole


@pytest.mark.slow
def test_the_pool_folder_is_what_push_and_judge_read(holes_run):
    _, out = holes_run
    tasks = pool_tasks(out)  # what `evalset push` sends to Label Studio
    assert len(tasks) == 230 and tasks.attrs["without_text"] == 0
    assert tasks["query"].str.len().min() > 0 and tasks["text"].str.len().min() > 0
    assert len(read_tasks(out / "tasks.jsonl")) == 230  # what `evalset judge` reads
    manifest = json.loads((out / "pool.json").read_text())
    assert manifest["counts"]["pairs"] == 230 and manifest["depth"] == 10
    assert manifest["settles"][0]["baseline"] == "bm25base_p" and manifest["settles"][0]["could_flip"] is True
    sources = pd.read_csv(out / "pool_sources.tsv", sep="\t", dtype=str)
    assert set(sources["system"]) == {"idst_bert_p1"}


@pytest.mark.labelstudio
def test_evalset_push_puts_the_holes_in_a_real_label_studio(holes_run, label_studio, monkeypatch):
    _, out = holes_run
    title = f"holes {uuid.uuid4().hex[:8]}"
    result = CliRunner().invoke(main, ["push", str(out), "--guideline", str(REPO / "guidelines" / "relevance-v2.md"),
                                       "--project", title], env=label_studio.env())
    assert result.exit_code == 0, result.output
    for name, value in label_studio.env().items():
        monkeypatch.setenv(name, value)
    client = labelstudio.connect()
    pushed = labelstudio.project_pair_ids(client, labelstudio.find_project(client, title).id)
    pool = pd.read_csv(out / "pool.tsv", sep="\t", dtype=str)
    assert sorted(pushed.elements()) == sorted(pool["pair_id"])  # 230 tasks, one per hole


def pytrec_differences(dl19, qrels) -> dict[str, float]:
    values = {}
    for name in ("bm25base_p", "idst_bert_p1"):
        run = read_plain_run(dl19["runs"][name])
        values[name] = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return {q: values["idst_bert_p1"][q]["ndcg_cut_10"] - values["bm25base_p"][q]["ndcg_cut_10"]
            for q in values["bm25base_p"]}


def test_the_bounds_equal_pytrec_eval_on_qrels_with_the_holes_filled(dl19, holes_run):
    document, _ = holes_run
    rows = {row["query_id"]: row for row in document["holes"]["per_query"]}
    tops = {name: plain_top(read_plain_run(dl19["runs"][name]), 10) for name in ("bm25base_p", "idst_bert_p1")}
    holes_of = {name: {(q, d) for q, docs in top.items() if q in dl19["qrels"] for d in docs
                       if d not in dl19["qrels"][q]} for name, top in tops.items()}
    base, cand = holes_of["bm25base_p"], holes_of["idst_bert_p1"]
    fills = {"none": set(), "all": base | cand, "baseline": base, "candidate": cand, "baseline_only": base - cand,
             "candidate_only": cand - base}
    per_fill = {}
    for name, relevant in fills.items():
        filled = {q: dict(docs) for q, docs in dl19["qrels"].items()}
        for q, d in base | cand:
            filled[q][d] = 3 if (q, d) in relevant else 0  # 3: the largest grade of the qrels
        per_fill[name] = pytrec_differences(dl19, filled)
        assert [rows[q][f"fill_{name}"] for q in rows] == pytest.approx([per_fill[name][q] for q in rows], abs=1e-6)
    low = {q: min(per_fill[f][q] for f in fills) for q in rows}
    high = {q: max(per_fill[f][q] for f in fills) for q in rows}
    assert [rows[q]["low"] for q in rows] == pytest.approx([low[q] for q in rows], abs=1e-6)
    assert [rows[q]["high"] for q in rows] == pytest.approx([high[q] for q in rows], abs=1e-6)
    holes = document["holes"]
    assert holes["mean_low"] == pytest.approx(np.mean(list(low.values())), abs=1e-6)
    assert holes["mean_high"] == pytest.approx(np.mean(list(high.values())), abs=1e-6)
    # judged on the BM25 pool, the neural run looks worse; with its holes relevant it would be far better
    assert holes["mean_difference"] == pytest.approx(-0.1158, abs=5e-5)
    assert holes["mean_low"] == pytest.approx(-0.1158, abs=5e-5)
    assert holes["mean_high"] == pytest.approx(0.4280, abs=5e-5)
    assert (holes["outcome"], holes["outcome_low"], holes["outcome_high"]) == (
        "candidate worse", "candidate worse", "candidate better")
    assert holes["could_flip"] is True


def test_the_table_says_what_to_judge(dl19, tmp_path):
    result = invoke("holes", "--qrels", dl19["qrels_path"], dl19["runs"]["bm25base_p"], dl19["runs"]["idst_bert_p1"],
                    "-o", tmp_path / "holes")
    assert result.exit_code == 0, result.output
    assert "judge these 230 documents (42 queries) to settle this comparison" in result.output
    assert "  could flip        YES: judge the holes before trusting this verdict" in result.output
    assert sorted(p.name for p in (tmp_path / "holes").iterdir()) == ["pool.json", "pool.tsv", "pool_sources.tsv"]


def test_a_comparison_without_holes_writes_nothing_and_says_so(dl19, tmp_path):
    result = invoke("holes", "--qrels", dl19["nist"], dl19["runs"]["bm25base_p"], dl19["runs"]["idst_bert_p1"],
                    "-o", tmp_path / "holes")
    assert result.exit_code == 0, result.output
    assert "no holes: every document in the top 10 is judged; this comparison cannot move, no pool written" \
        in result.output
    assert "  could flip        no: no fill of the holes changes the verdict" in result.output
    assert not (tmp_path / "holes").exists()


@pytest.mark.parametrize("extra, message", [
    (("--queries", "TOPICS"), "tasks.jsonl needs both the query texts and the document texts: give --queries and "
                              "--corpus together"),
    (("--depth", "0"), "Invalid value for '--depth': must be an integer in [1, 1000000], got 0"),
])
def test_bad_input_is_one_line_and_writes_nothing(dl19, tmp_path, extra, message):
    extra = [str(dl19["root"] / "topics.tsv") if item == "TOPICS" else item for item in extra]
    result = invoke("holes", "--qrels", dl19["qrels_path"], dl19["runs"]["bm25base_p"], dl19["runs"]["idst_bert_p1"],
                    "-o", tmp_path / "holes", *extra)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"evalset: error: {message}"]
    assert not (tmp_path / "holes").exists()


def test_an_output_that_is_an_input_is_refused_before_any_work(dl19, tmp_path):
    folder = tmp_path / "holes"
    folder.mkdir()
    topics = folder / "tasks.jsonl"
    topics.write_bytes((dl19["root"] / "topics.tsv").read_bytes())
    result = invoke("holes", "--qrels", dl19["qrels_path"], dl19["runs"]["bm25base_p"], dl19["runs"]["idst_bert_p1"],
                    "-o", folder, "--queries", topics, "--corpus", dl19["root"] / "passages.jsonl.gz")
    assert result.exit_code == 2
    assert result.output.strip() == (f"evalset: error: -o {folder} holds the input --queries {topics}: writing "
                                     "the folder would destroy the input; choose another output folder")
    assert sorted(p.name for p in folder.iterdir()) == ["tasks.jsonl"]
    result = invoke("holes", "--qrels", dl19["qrels_path"], dl19["runs"]["bm25base_p"], dl19["runs"]["idst_bert_p1"],
                    "-o", dl19["qrels_path"])
    assert result.exit_code == 2 and "Invalid value for '-o' / '--output'" in result.output and "is a file" in \
        result.output


def test_compare_says_its_old_holes_options_are_the_holes_command(dl19, tmp_path):
    for old in (("--holes", tmp_path / "holes"), ("--corpus", dl19["root"] / "passages.jsonl.gz")):
        result = invoke("compare", "--qrels", dl19["qrels_path"], dl19["runs"]["bm25base_p"],
                        dl19["runs"]["idst_bert_p1"], *old)
        assert result.exit_code == 2 and result.output.startswith(f"evalset: error: {old[0]} is now `evalset holes")
    assert not (tmp_path / "holes").exists()
