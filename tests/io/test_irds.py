"""Collections by ir_datasets id (issue 67): ``--qrels irds:ID`` is read by ir_datasets' own code from its cache,
filled from ../shared/data in the layout it reads (scripts/irds_home.py), with no network: a download it tries goes
to a dead loopback proxy."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("ir_datasets")
sys.path.insert(0, str(REPO / "scripts"))
from irds_home import SHARED, fill

DL19 = "irds:msmarco-passage/trec-dl-2019/judged"
RUNS = SHARED / "runs" / "official_top100"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return fill(tmp_path_factory.mktemp("ir_datasets"))


def evalset(home: Path, *args: str) -> subprocess.CompletedProcess:
    """The command in a process of its own: ir_datasets fixes its cache folder when first imported."""
    dead = "http://127.0.0.1:9"  # the discard port: a download fails at once, on loopback
    env = {**os.environ, "IR_DATASETS_HOME": str(home), "HTTPS_PROXY": dead, "HTTP_PROXY": dead, "NO_PROXY": ""}
    return subprocess.run([sys.executable, "-m", "evalset", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_score_on_an_ir_datasets_id_equals_score_on_its_qrels_file(home):
    by_id = evalset(home, "score", "--qrels", DL19, str(RUNS), "--format", "json")
    by_file = evalset(home, "score", "--qrels", str(SHARED / "qrels.txt"), str(RUNS), "--format", "json")
    assert by_id.returncode == 0, by_id.stderr
    assert by_id.stdout == by_file.stdout
    runs = json.loads(by_id.stdout)["runs"]
    assert len(runs) == 37 and all(list(scores) == ["ndcg@10", "judged@10", "ap", "rr", "p@10"]
                                   and scores["ndcg@10"]["defined"] == 43 for scores in runs.values())
    assert round(runs["ICT-BERT2"]["ndcg@10"]["mean"], 4) == 0.6650


@pytest.mark.parametrize(("dataset", "said"), [
    ("irds:no-such/collection", "ir_datasets has no dataset 'no-such/collection'"),
    ("irds:msmarco-passage", "the dataset has no qrels (relevance judgments)"),
    ("irds:msmarco-passage/trec-dl-2020/judged", "ir_datasets has not got it in its cache"),
])
def test_an_id_it_cannot_read_is_refused_in_one_line(home, dataset, said):
    done = evalset(home, "score", "--qrels", dataset, str(RUNS / "bm25base_p.run.gz"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.splitlines()[0]]
    assert done.stderr.startswith(f"evalset: error: {dataset}: {said}")


def test_a_pool_that_excludes_an_ir_datasets_ids_judgments_records_the_id(home, tmp_path):
    run = str(RUNS / "bm25base_p.run.gz")
    by_id = evalset(home, "pool", run, "-k", "20", "--exclude-judged", DL19, "-o", str(tmp_path / "by_id"))
    by_file = evalset(home, "pool", run, "-k", "20", "--exclude-judged", str(SHARED / "qrels.txt"), "-o",
                      str(tmp_path / "by_file"))
    assert by_id.returncode == 0 and by_file.returncode == 0, by_id.stderr
    assert (tmp_path / "by_id" / "pool.tsv").read_bytes() == (tmp_path / "by_file" / "pool.tsv").read_bytes()
    manifest = json.loads((tmp_path / "by_id" / "pool.json").read_text())
    assert manifest["counts"]["judged_excluded"] == 786
    assert manifest["inputs"]["exclude_judged"] == {"path": DL19, "id": DL19.removeprefix("irds:"),
                                                    "ir_datasets": manifest["inputs"]["exclude_judged"]["ir_datasets"]}


def test_a_pools_topics_and_texts_by_id_are_the_shipped_files(home, tmp_path):
    runs = [str(RUNS / "bm25base_p.run.gz"), str(RUNS / "idst_bert_p1.run.gz")]
    by_id = evalset(home, "pool", *runs, "-k", "10", "--queries", DL19, "--corpus", DL19, "-o", str(tmp_path / "id"))
    by_file = evalset(home, "pool", *runs, "-k", "10", "--queries", str(SHARED / "topics.tsv"), "--corpus",
                      str(SHARED / "passages.jsonl.gz"), "-o", str(tmp_path / "file"))
    assert by_id.returncode == 0 and by_file.returncode == 0, by_id.stderr
    for name in ("pool.tsv", "tasks.jsonl"):  # what judge and push show: the same texts
        assert (tmp_path / "id" / name).read_bytes() == (tmp_path / "file" / name).read_bytes()
    assert len((tmp_path / "id" / "tasks.jsonl").read_text().splitlines()) == 723


def test_a_document_the_store_lacks_is_refused_naming_it(home, tmp_path):
    run = tmp_path / "other.run"
    run.write_text("156493 Q0 8412684 1 2.0 other\n156493 Q0 no-such-passage 2 1.0 other\n")
    done = evalset(home, "pool", str(run), "-k", "10", "--corpus", DL19, "-o", str(tmp_path / "p"))
    assert done.returncode == 2 and not (tmp_path / "p").exists()
    assert done.stderr.splitlines() == [f"evalset: error: {DL19}: 1 of the 2 documents asked for are not in the "
                                        "collection (no-such-passage): the runs are of another collection"]


def test_a_set_frozen_from_an_id_records_it_and_verify_reads_it_again(home, tmp_path):
    guideline = str(REPO / "guidelines" / "relevance-v2.md")
    done = evalset(home, "freeze", "set", DL19, "--queries", DL19, "--guideline", guideline, "--name", "dl19",
                   "--sets-dir", str(tmp_path / "sets"))
    assert done.returncode == 0, done.stderr
    version = tmp_path / "sets" / "dl19" / "v1"
    recorded = json.loads((version / "manifest.json").read_text())["inputs"]
    assert list(recorded) == [DL19] and recorded[DL19]["id"] == DL19.removeprefix("irds:")
    assert set(recorded[DL19]["sha256"]) == {"qrels", "queries"}
    assert (version / "qrels.txt").read_text().count("\n") == 9260
    checked = evalset(home, "verify", str(version), "--format", "json")
    assert checked.returncode == 0 and json.loads(checked.stdout)["collections"] == {
        DL19: {"qrels": "same", "queries": "same"}}
    moved = tmp_path / "moved"  # the collection changed upstream: one grade revised
    fill(moved)
    qrels = moved / "msmarco-passage" / "trec-dl-2019" / "qrels"
    lines = qrels.read_text().splitlines()
    lines[0] = lines[0][:-1] + str(3 - int(lines[0][-1]))
    qrels.write_text("\n".join(lines) + "\n")
    changed = evalset(moved, "verify", str(version))
    assert changed.returncode == 0  # the set holds its own copy: reported, not failed
    assert f"{DL19} (qrels): CHANGED upstream since the set was frozen" in changed.stdout
    assert f"{DL19} (queries): as when the set was frozen" in changed.stdout


@pytest.fixture(scope="module")
def irds_pool(home, tmp_path_factory) -> Path:
    """A pool of one run's top 3 whose topics and texts come from the collection by id (no corpus file beside)."""
    folder = tmp_path_factory.mktemp("irds_pool") / "pool"
    done = evalset(home, "pool", str(RUNS / "bm25base_p.run.gz"), "-k", "3", "--queries", DL19, "--corpus", DL19,
                   "-o", str(folder))
    assert done.returncode == 0, done.stderr
    return folder


def test_the_texts_come_from_the_docs_store_not_the_collection_file(home, tmp_path):
    bare = fill(tmp_path / "bare")  # the store built, then the collection's file removed: only the store is left
    (bare / "msmarco-passage" / "collection.tsv").unlink()
    done = evalset(bare, "pool", str(RUNS / "bm25base_p.run.gz"), "-k", "3", "--corpus", DL19, "--queries",
                   str(SHARED / "topics.tsv"), "-o", str(tmp_path / "pool"))
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "pool" / "tasks.jsonl").read_text().splitlines()) == 129


@pytest.mark.slow
def test_the_judge_grades_a_pool_whose_texts_came_by_id(irds_pool, tmp_path):
    from click.testing import CliRunner

    from evalset.cli import main
    from evalset.io.annotations import read_labels
    from evalset.io.poolfiles import read_tasks
    from tests.support.openai_server import Behaviour, JudgeServer

    with gzip.open(SHARED / "passages.jsonl.gz", "rt", encoding="utf-8") as lines:
        texts = {passage["doc_id"]: passage["text"] for passage in map(json.loads, lines)}
    tasks = read_tasks(irds_pool / "tasks.jsonl")
    assert all(texts[row.doc_id] == row.text for row in tasks.itertuples())  # passages.jsonl's, every one
    told = {(row.query, row.text): 2 if row.doc_id < "5" else 0 for row in tasks.itertuples()}
    with JudgeServer(Behaviour(grades=told)) as server:
        done = CliRunner().invoke(main, ["judge", "grade", str(irds_pool), "--guideline", "relevance-v2", "--model",
                                         "judge-test", "-o", str(tmp_path / "llm.tsv"), "--base-url",
                                         server.base_url, "--no-progress"])
    assert done.exit_code == 0, done.output
    labels = read_labels(tmp_path / "llm.tsv")
    assert len(labels) == 129
    assert dict(zip(labels["doc_id"], labels["grade"], strict=True)) == {
        row.doc_id: 2 if row.doc_id < "5" else 0 for row in tasks.itertuples()}


@pytest.mark.labelstudio
def test_push_sends_the_texts_that_came_by_id(irds_pool, label_studio, ls_client):
    from click.testing import CliRunner

    from evalset import labelstudio
    from evalset.cli import main
    from evalset.io.poolfiles import read_tasks

    title = "irds pool " + os.urandom(4).hex()
    done = CliRunner().invoke(main, ["push", str(irds_pool), "--guideline", str(REPO / "guidelines" /
                                                                              "relevance-v2.md"), "--project", title],
                              env=label_studio.env())
    assert done.exit_code == 0, done.output
    pushed = labelstudio.export_snapshot(ls_client, labelstudio.find_project(ls_client, title).id)
    tasks = read_tasks(irds_pool / "tasks.jsonl").set_index("pair_id")
    assert len(pushed) == 129
    assert all(task["data"]["text"] == tasks.loc[task["data"]["pair_id"], "text"] for task in pushed)
