"""Gold tasks against a real Label Studio server (run alone with `pytest -m labelstudio tests/quality`).

A DL19 pool of 100 unjudged pairs (six rankllm runs, NIST-judged pairs left out) is pushed with 20% gold taken
from NIST's qrels (plus five pool pairs given a gold grade: judged once, counted as labels and as gold checks).
Three annotators grade every task through the SDK: careful (the gold grade, one off on every sixth gold task),
random (seeded uniform grades) and constant (always 1). Pull flags the random and the constant annotator, not the
careful one; its figures are a plain-Python accuracy and MAE and scikit-learn's linear kappa on the same answers.
"""

import itertools
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from evalset import labelstudio
from evalset.cli import main
from evalset.io.annotations import read_labels
from evalset.io.poolfiles import read_pool_pairs
from evalset.io.trec import read_qrels
from evalset.pooling import pair_id
from tests.conftest import grade_annotation

pytestmark = pytest.mark.labelstudio

REPO = Path(__file__).resolve().parents[2]
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
SCALE = [0, 1, 2, 3]


def cli(*args, env=None):
    result = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_gold_tasks_mixed_blind_flag_the_random_and_the_constant_annotator_not_the_careful_one(
        label_studio, ls_client, shared_data, tmp_path):
    dl19 = shared_data / "dl19"
    pool = tmp_path / "pool"
    cli("pool", dl19 / "runs" / "rankllm", "--depth", 20, "--exclude-judged", dl19 / "qrels.txt", "--budget", 100,
        "--queries", dl19 / "topics.tsv", "--corpus", dl19 / "passages.jsonl.gz", "-o", pool)
    pairs = read_pool_pairs(pool / "pool.tsv")
    assert len(pairs) == 100
    # gold: NIST's grades, and five pool pairs with a gold grade of their own (one task each, labels and checks)
    nist = read_qrels(dl19 / "qrels.txt")
    extra = pairs.head(5).assign(grade=[0, 1, 2, 3, 1])
    gold_file = tmp_path / "gold.qrels"
    gold_file.write_text((dl19 / "qrels.txt").read_text()
                         + "".join(f"{r.query_id} 0 {r.doc_id} {r.grade}\n" for r in extra.itertuples()))
    gold = {pair_id(q, d): g for q, d, g in zip(nist["query_id"], nist["doc_id"], nist["grade"], strict=True)}
    gold.update({r.pair_id: r.grade for r in extra.itertuples()})

    # push: 100 pool tasks + 19 gold-only = 119; (5 + 19) / 119 = 20.2% >= 20% (18 would give 19.5%); 24 gold
    # tasks, at least the 20 gold answers a verdict needs (GoldPolicy)
    title = f"gold {uuid.uuid4().hex[:8]}"
    push = ["push", pool, "--guideline", GUIDELINE, "--project", title, "--overlap", 3, "--gold", gold_file,
            "--gold-rate", 0.2, "--seed", 11]
    first = cli(*push, env=label_studio.env())
    print(first)
    assert "119 tasks (pool and gold), 0 already there, 119 added" in first
    assert "gold: 24 gold task(s) of 119 (20.2%; rate asked 0.2, seed 11): 5 pool pair(s) with a gold grade, " \
           "19 gold-only pair(s) of 9260 available, mixed in blind" in first
    project = labelstudio.find_project(ls_client, title)
    tasks = sorted(labelstudio.export_snapshot(ls_client, project.id), key=lambda task: task["id"])
    assert len(tasks) == 119
    # blind: every task carries the same fields and nothing else; a gold grade is nowhere in a task (its place in
    # the project counts pool and gold tasks alike)
    assert all(set(task["data"]) == {"pair_id", "query", "text", "progress"} for task in tasks)
    assert [task["data"]["progress"] for task in tasks] == [f"Pair {n} of 119" for n in range(1, 120)]
    assert all(not task.get("meta") for task in tasks)
    gold_only = [task for task in tasks if task["data"]["pair_id"] not in set(pairs["pair_id"])]
    assert len(gold_only) == 19 and all(task["data"]["pair_id"] in gold for task in gold_only)
    # blind order: a query's tasks, gold or not, stay together (gold hides inside its query's run)
    queries = [task["data"]["query"] for task in tasks]
    runs = 1 + sum(a != b for a, b in itertools.pairwise(queries))
    assert runs == len(set(queries))
    positions = [tasks.index(task) for task in gold_only]
    assert positions != list(range(positions[0], positions[0] + 19))  # spread, not one block

    # three annotators grade every task
    suffix = uuid.uuid4().hex[:6]
    users = {name: ls_client.users.create(username=f"{name}-{suffix}", email=f"{name}-{suffix}@example.org")
             for name in ("careful", "random", "constant")}
    rng = np.random.default_rng(5)
    given = {name: {} for name in users}
    gold_seen = 0
    for task in tasks:
        pid = task["data"]["pair_id"]
        if pid in gold:
            gold_seen += 1
            careful = gold[pid] if gold_seen % 6 else (gold[pid] + 1 if gold[pid] < 3 else 2)
        else:
            careful = int(pid, 16) % 4
        grades = {"careful": careful, "random": int(rng.integers(0, 4)), "constant": 1}
        for name in users:
            given[name][pid] = grades[name]
    assert gold_seen == 24
    ids = {task["data"]["pair_id"]: task["id"] for task in tasks}
    with ThreadPoolExecutor(6) as workers:  # 357 API calls: in parallel, or the test takes minutes
        list(workers.map(lambda entry: ls_client.annotations.create(**grade_annotation(*entry)),
                         [(ids[pid], user.id, given[name][pid]) for name, user in users.items() for pid in ids]))

    # pull: labels of the 100 pool pairs only (the 5 gold pool pairs included), the gold report per annotator
    labels_path, report_path = tmp_path / "labels.tsv", tmp_path / "gold-report.json"
    pulled = cli("pull", "--project", title, "--pool", pool, "--guideline", GUIDELINE, "-o", labels_path,
                 "--gold", gold_file, "--gold-report", report_path, env=label_studio.env())
    print(pulled)
    labels = read_labels(labels_path)
    assert len(labels) == 3 * 100
    assert set(zip(labels["query_id"], labels["doc_id"], strict=True)) == set(zip(pairs["query_id"],
                                                                                 pairs["doc_id"], strict=True))
    assert "119 tasks, 357 annotations, 300 labels written" in pulled
    assert "0 on pairs not in the pool, 57 on gold-only tasks (gold checks only)" in pulled
    report = {row["annotator"]: row for row in json.loads(report_path.read_text())["annotators"]}
    assert set(report) == {user.email for user in users.values()}
    for name, user in users.items():
        checked = [pid for pid in given[name] if pid in gold]
        grades, truth = [given[name][pid] for pid in checked], [gold[pid] for pid in checked]
        row = report[user.email]
        assert row["gold_seen"] == 24
        assert row["accuracy"] == pytest.approx(sum(a == b for a, b in zip(grades, truth, strict=True)) / 24)
        assert row["mae"] == pytest.approx(sum(abs(a - b) for a, b in zip(grades, truth, strict=True)) / 24)
        assert row["kappa_linear"] == pytest.approx(cohen_kappa_score(grades, truth, weights="linear",
                                                                      labels=SCALE), abs=1e-12)
    verdicts = {name: report[user.email]["verdict"] for name, user in users.items()}
    assert verdicts == {"careful": "passed", "random": "flagged", "constant": "flagged"}
    assert report[users["careful"].email]["kappa_linear"] > 0.8
    assert report[users["constant"].email]["kappa_linear"] == 0.0

    # a second push adds nothing
    again = cli(*push, env=label_studio.env())
    print(again)
    assert "119 tasks (pool and gold), 119 already there, 0 added" in again
    assert len(labelstudio.project_pair_ids(ls_client, project.id)) == 119
