"""`evalset estimate` end to end, through real components: a small DL19 pool, a random human slice drawn by
`evalset estimate select`, pushed to a real Label Studio and graded there by two annotators (NIST's grades, one
annotator a grade off on some pairs), pulled back, an LLM judge (the loopback OpenAI-compatible test server, run
by `evalset judge`) grading the WHOLE pool, then `evalset estimate --format json`.

What it proves: the estimate reads the slice, the pulled labels and the judge's labels as they are written; it
merges the two annotators by their lower median; its human-only means are pytrec_eval's mean nDCG@10 on the slice
under the grades the annotators entered, its LLM-only means pytrec_eval's mean over every query under the grades
the judge gave, and its PPI++ estimates (run means and a paired difference) are ppi_py's
``ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam_optim_mode="element")`` on those per-query values.
Run alone with `pytest -m labelstudio tests/test_estimate_end_to_end.py`.
"""

import json
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import ppi_py
import pytest
import pytrec_eval
from click.testing import CliRunner

from evalset import labelstudio
from evalset.cli import main
from evalset.io.annotations import read_labels
from evalset.io.poolfiles import read_pool_pairs, read_tasks
from evalset.io.trec import read_qrels
from tests.conftest import grade_annotation
from tests.support.dl19files import llm_grade
from tests.support.openai_server import Behaviour, JudgeServer

pytestmark = pytest.mark.labelstudio

REPO = Path(__file__).resolve().parents[1]
DL19 = REPO / "data" / "dl19"
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
RUNS = ("bm25base_p", "p_bert", "ICT-BERT2", "UNH_exDL_bm25")
SLICE_SIZE, SEED = 5, 7
BASELINE, CANDIDATE = "bm25base_p", "p_bert"


def cli(*args, env=None):
    result = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert result.exit_code == 0, result.output
    return result


def _ndcg10(qrels: dict[str, dict[str, int]], run_path: Path) -> dict[str, float]:
    """pytrec_eval's nDCG@10 per query of ``qrels`` (trec_eval's tie rule: score, then doc id descending)."""
    run = pd.read_csv(run_path, sep=r"\s+", header=None, names=["q", "z", "d", "rank", "score", "tag"], dtype=str)
    trec_run = {q: dict(zip(g["d"], g["score"].astype(float), strict=True)) for q, g in run.groupby("q")}
    values = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(trec_run)
    return {q: values[q]["ndcg_cut_10"] for q in qrels}


def test_slice_graded_in_label_studio_plus_llm_judge_on_every_query_gives_ppi_estimates_pytrec_eval_agrees_with(
        label_studio, ls_client, tmp_path):
    run_paths = {name: DL19 / "runs" / f"{name}.run.gz" for name in RUNS}
    nist = read_qrels(DL19 / "nist.qrels").set_index(["query_id", "doc_id"])["grade"]

    # 1. a small pool over all 43 topics, and a seeded human slice of 5 of them
    pool, slice_dir = tmp_path / "pool", tmp_path / "slice"
    cli("pool", *run_paths.values(), "--depth", 3, "--queries", DL19 / "topics.tsv", "--corpus",
        DL19 / "passages.jsonl.gz", "-o", pool)
    selected = cli("estimate", "select", "slice", pool, "--size", SLICE_SIZE, "--seed", SEED, "-o", slice_dir)
    assert f"{SLICE_SIZE} of 43 queries in the human slice (uniform, seed {SEED}" in selected.output
    record = json.loads((slice_dir / "slice.json").read_text())
    chosen = record["slice"]
    assert len(chosen) == SLICE_SIZE and len(record["queries"]) == 43
    all_pairs = read_pool_pairs(pool / "pool.tsv")
    slice_pairs = read_pool_pairs(slice_dir / "pool.tsv")
    assert len(all_pairs) == 399 and set(slice_pairs["query_id"]) == set(chosen)
    assert len(slice_pairs) == (all_pairs["query_id"].isin(chosen)).sum()

    # 2. the slice in Label Studio, graded in full by two annotators: A gives NIST's grade, B one grade off on
    #    every 7th task (one up, or one down from 3), so the lower median is A's grade except where A gave 3
    title = f"estimate e2e {uuid.uuid4().hex[:8]}"
    cli("push", slice_dir, "--guideline", GUIDELINE, "--project", title, "--overlap", 2, env=label_studio.env())
    suffix = uuid.uuid4().hex[:6]
    ann_a = ls_client.users.create(username=f"est-a-{suffix}", email=f"est-a-{suffix}@example.org")
    ann_b = ls_client.users.create(username=f"est-b-{suffix}", email=f"est-b-{suffix}@example.org")
    project = labelstudio.find_project(ls_client, title)
    tasks = sorted(labelstudio.export_snapshot(ls_client, project.id), key=lambda task: task["id"])
    assert len(tasks) == len(slice_pairs)
    where = slice_pairs.set_index("pair_id")
    grade_a, grade_b = {}, {}
    for number, task in enumerate(tasks):
        row = where.loc[task["data"]["pair_id"]]
        pair = (row["query_id"], row["doc_id"])
        grade_a[pair] = int(nist[pair])  # NIST judged every pair of this pool
        grade_b[pair] = grade_a[pair] if number % 7 else (grade_a[pair] + 1 if grade_a[pair] < 3 else 2)
        ls_client.annotations.create(**grade_annotation(task["id"], ann_a.id, grade_a[pair]))
        ls_client.annotations.create(**grade_annotation(task["id"], ann_b.id, grade_b[pair]))
    disagreements = sum(grade_a[pair] != grade_b[pair] for pair in grade_a)
    merged_human = {pair: min(grade_a[pair], grade_b[pair]) for pair in grade_a}  # lower middle of two
    assert disagreements == len(range(0, len(tasks), 7))
    assert any(merged_human[pair] != grade_a[pair] for pair in grade_a)  # the median rule is exercised

    # 3. `evalset pull`: both annotators' grades of every slice pair, as entered
    human_labels = tmp_path / "human-labels.tsv"
    cli("pull", "--project", title, "--pool", slice_dir, "--guideline", GUIDELINE, "-o", human_labels,
        env=label_studio.env())
    pulled = read_labels(human_labels)
    assert len(pulled) == 2 * len(slice_pairs) and set(pulled["kind"]) == {"human"}
    assert {email: {(r.query_id, r.doc_id): r.grade for r in group.itertuples()}
            for email, group in pulled.groupby("annotator")} == {ann_a.email: grade_a, ann_b.email: grade_b}

    # 4. `evalset judge` on the whole pool (every query), the server answering the grades of _llm_grade
    pool_tasks = read_tasks(pool / "tasks.jsonl").to_dict("records")
    llm_grades = {(t["query_id"], t["doc_id"]): llm_grade(t["pair_id"], int(nist[(t["query_id"], t["doc_id"])]))
                  for t in pool_tasks}
    told = {(t["query"], t["text"]): llm_grades[(t["query_id"], t["doc_id"])] for t in pool_tasks}
    assert len(told) == len(pool_tasks) == 399  # no two pairs share a query and passage text
    llm_labels = tmp_path / "llm-labels.tsv"
    with JudgeServer(Behaviour(grades=told)) as server:
        cli("judge", pool, "--guideline", GUIDELINE, "--model", "judge-test", "-o", llm_labels, "--base-url",
            server.base_url, "-s", "concurrency=16", "--no-progress", env={"OPENAI_API_KEY": "sk-test"})
        assert len(server.chat_records()) == 399
    judged = read_labels(llm_labels)
    assert {(r.query_id, r.doc_id): r.grade for r in judged.itertuples()} == llm_grades
    assert set(judged["kind"]) == {"llm"} and judged["query_id"].nunique() == 43

    # 5. `evalset estimate`
    runs_args = list(run_paths.values())
    estimated = cli("estimate", "run", "slice", *runs_args, "--llm", llm_labels, "--human", human_labels, "--slice",
                    slice_dir,
                    "--compare", f"{BASELINE}:{CANDIDATE}", "--format", "json")
    out = json.loads(estimated.stdout)
    assert out["slice"] == {"design": "uniform", "seed": SEED, "queries": sorted(chosen)}
    settings = out["settings"]
    assert (settings["queries"], settings["slice"], settings["metrics"]) == (43, SLICE_SIZE, ["ndcg@10"])
    assert settings["human"] == [str(human_labels)] and settings["llm"] == [str(llm_labels)]
    assert f"{len(slice_pairs)} pairs had several human grades: their median was used ({disagreements} ties took " \
           "the lower middle grade)" in out["notes"]
    rows = {row["run"]: row for row in out["runs"]}
    assert sorted(rows) == sorted(RUNS) and len(out["runs"]) == len(RUNS)

    # the same figures, independently: pytrec_eval per query, ppi_py on them
    human_qrels, llm_qrels = {}, {}
    for (query_id, doc_id), grade in merged_human.items():
        human_qrels.setdefault(query_id, {})[doc_id] = grade
    for (query_id, doc_id), grade in llm_grades.items():
        llm_qrels.setdefault(query_id, {})[doc_id] = grade
    assert sorted(human_qrels) == sorted(chosen) and all(max(g.values()) > 0 for g in human_qrels.values())
    others = sorted(set(llm_qrels) - set(chosen))
    assert len(others) == 43 - SLICE_SIZE
    per_query = {}
    for name, path in run_paths.items():
        human = _ndcg10(human_qrels, path)
        llm = {q: v if max(llm_qrels[q].values()) > 0 else 0.0 for q, v in _ndcg10(llm_qrels, path).items()}
        y = np.array([human[q] for q in chosen])
        y_hat, y_unlabelled = np.array([llm[q] for q in chosen]), np.array([llm[q] for q in others])
        per_query[name] = (y, y_hat, y_unlabelled)
        row = rows[name]
        assert (row["metric"], row["stratum"], row["n"], row["N"]) == ("ndcg@10", "all", SLICE_SIZE, 43 - SLICE_SIZE)
        assert row["human_mean"] == pytest.approx(y.mean(), abs=1e-12)
        assert row["llm_mean"] == pytest.approx(np.mean(list(llm.values())), abs=1e-12)
        ppi = ppi_py.ppi_mean_pointestimate(y, y_hat, y_unlabelled, lam_optim_mode="element")
        assert row["estimate"] == pytest.approx(float(np.ravel(ppi)[0]), abs=1e-12)
        assert row["low"] < row["estimate"] < row["high"]
        assert row["estimate"] != pytest.approx(row["human_mean"], abs=1e-6)  # lambda > 0: the LLM grades count
    # the human slice and the LLM disagree, so the figures differ: the checks above could fail
    assert any(rows[name]["human_mean"] != pytest.approx(rows[name]["llm_mean"]) for name in RUNS)

    [comparison] = out["comparisons"]
    assert (comparison["baseline"], comparison["candidate"], comparison["n"], comparison["N"]) == (
        BASELINE, CANDIDATE, SLICE_SIZE, 43 - SLICE_SIZE)
    difference = [c - b for b, c in zip(per_query[BASELINE], per_query[CANDIDATE], strict=True)]
    assert comparison["human_mean"] == pytest.approx(difference[0].mean(), abs=1e-12)
    ppi = ppi_py.ppi_mean_pointestimate(*difference, lam_optim_mode="element")
    assert comparison["estimate"] == pytest.approx(float(np.ravel(ppi)[0]), abs=1e-12)
