"""Collections by ir_datasets id (issue 67): ``--qrels irds:ID`` is read by ir_datasets' own code from its cache,
filled from ../shared/data in the layout it reads (scripts/irds_home.py), with no network: a download it tries goes
to a dead loopback proxy."""

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
