"""Push and pull against a real Label Studio server on 127.0.0.1 (run alone with `pytest -m labelstudio`)."""

import json
import subprocess
import threading
import uuid
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval
from click.testing import CliRunner

from evalset import labelstudio
from evalset.cli import main
from evalset.io.annotations import read_labels
from evalset.io.guideline import read_guideline
from evalset.io.poolfiles import read_pool_pairs, read_tasks
from evalset.io.trec import read_qrels, write_qrels
from tests.conftest import grade_annotation

pytestmark = pytest.mark.labelstudio

REPO = Path(__file__).resolve().parents[1]
GUIDELINE_PATH = REPO / "guidelines" / "relevance-v2.md"
GUIDELINE = read_guideline(GUIDELINE_PATH)


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def _make_pool(shared_data: Path, folder: Path, topics: int | None) -> Path:
    dl19 = shared_data / "dl19"
    lines = (dl19 / "topics.tsv").read_text().splitlines()
    queries = folder.with_suffix(".topics.tsv")
    queries.write_text("\n".join(lines[:topics] if topics else lines) + "\n")
    result = cli("pool", dl19 / "runs" / "official_top100", "--depth", 10, "--queries", queries,
                 "--corpus", dl19 / "passages.jsonl.gz", "-o", folder)
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture(scope="module")
def pools(shared_data, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pools")
    return {name: _make_pool(shared_data, root / name, topics) for name, topics in
            (("dl19-3", 3), ("dl19-5", 5), ("dl19-43", None))}


def _title(what: str) -> str:
    return f"{what} {uuid.uuid4().hex[:8]}"


def _pair_counts(ls_client, title) -> Counter:
    project = labelstudio.find_project(ls_client, title)
    return labelstudio.pair_id_counts(labelstudio.export_snapshot(ls_client, project.id))


def test_push_twice_adds_nothing_and_a_grown_pool_adds_only_its_new_pairs(label_studio, ls_client, pools):
    title = _title("dl19 depth 10")
    three, five = read_tasks(pools["dl19-3"] / "tasks.jsonl"), read_tasks(pools["dl19-5"] / "tasks.jsonl")
    assert set(three["pair_id"]) < set(five["pair_id"])
    first = cli("push", pools["dl19-3"], "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2,
                env=label_studio.env())
    assert first.exit_code == 0, first.output
    assert f"{len(three)} added" in first.output
    assert label_studio.api_key not in first.output
    assert "warning: --overlap 2 in one shared project: on Label Studio Community every annotator of a project sees " \
           "the others' grades" in first.output
    described = labelstudio.find_project(ls_client, title)
    assert described.description.startswith(f"{len(three)} pairs to grade, by the relevance guideline v2 ")
    assert described.skip_queue == "REQUEUE_FOR_OTHERS"
    grown = cli("push", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2,
                env=label_studio.env())
    assert grown.exit_code == 0, grown.output
    assert f"{len(three)} already there, {len(five) - len(three)} added" in grown.output
    again = cli("push", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2,
                env=label_studio.env())
    assert again.exit_code == 0, again.output
    assert f"{len(five)} already there, 0 added" in again.output

    project = labelstudio.find_project(ls_client, title)
    tasks = labelstudio.export_snapshot(ls_client, project.id)
    assert len(tasks) == len(five) == 321  # every pooled pair of the first 5 topics has its passage text
    assert Counter(task["data"]["pair_id"] for task in tasks) == Counter(five["pair_id"])
    assert all(set(task["data"]) == {"pair_id", "query", "text", "progress"} for task in tasks)
    # judging order: the first push's pairs in pool order, then the new pairs in pool order
    by_id = [task["data"]["pair_id"] for task in sorted(tasks, key=lambda task: task["id"])]
    # each task's place in the project, counted by the push that added it
    assert [task["data"]["progress"] for task in sorted(tasks, key=lambda task: task["id"])] == \
        [f"Pair {n} of {len(three)}" for n in range(1, len(three) + 1)] + \
        [f"Pair {n} of {len(five)}" for n in range(len(three) + 1, len(five) + 1)]
    order_3 = read_pool_pairs(pools["dl19-3"] / "pool.tsv")["pair_id"].tolist()
    order_5 = read_pool_pairs(pools["dl19-5"] / "pool.tsv")["pair_id"].tolist()
    assert by_id[:len(three)] == order_3
    assert by_id[len(three):] == [pair for pair in order_5 if pair not in set(order_3)]
    assert project.maximum_annotations == 2
    assert project.description == labelstudio.project_description(GUIDELINE, 321)  # its count brought up to date
    assert project.label_config.strip() == labelstudio.labeling_config(GUIDELINE).strip()
    assert "Worked examples" in project.expert_instruction


def test_a_guideline_whose_examples_grade_pool_pairs_is_refused_in_one_line_and_nothing_is_created(
        label_studio, ls_client, pools):
    title = _title("answer key")
    refused = cli("push", pools["dl19-5"], "--guideline", REPO / "guidelines" / "relevance-v1.md", "--project", title,
                  env=label_studio.env())
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines() == [
        f"evalset: error: {REPO / 'guidelines' / 'relevance-v1.md'}:101: the worked example of query 156493, document "
        f"6139386 (grade 3) is a pair of the pool {pools['dl19-5']} being pushed, and 3 other examples too: annotators "
        "would read its grade in the instructions; use a guideline whose examples are outside the pool"]
    assert labelstudio.find_project(ls_client, title) is None


def test_a_push_killed_with_the_server_completes_on_the_next_push(label_studio, ls_client, pools):
    title = _title("killed push")
    expected = read_tasks(pools["dl19-43"] / "tasks.jsonl")["pair_id"]
    killed = []

    def kill_during_the_next_batch(done, total):
        if done >= 600 and not killed:
            killed.append(done)
            threading.Timer(0.05, label_studio.kill).start()

    with pytest.raises(labelstudio.LabelStudioError, match=r"not answering|HTTP 5"):
        labelstudio.push(ls_client, pools["dl19-43"], GUIDELINE, title, batch_size=100, progress=False,
                         on_batch=kill_during_the_next_batch)
    assert killed
    label_studio.start()
    partial = _pair_counts(ls_client, title)  # what the crash left: whole batches, no pair twice
    assert 600 <= sum(partial.values()) < len(expected) and max(partial.values()) == 1
    result = cli("push", pools["dl19-43"], "--guideline", GUIDELINE_PATH, "--project", title,
                 env=label_studio.env())
    assert result.exit_code == 0, result.output
    counts = _pair_counts(ls_client, title)
    assert len(expected) == 2494
    assert counts == Counter({pair: 1 for pair in expected})



def test_two_annotators_overlap_and_pull_returns_both_grades_that_score_round_trips(
        label_studio, ls_client, pools, shared_data, tmp_path):
    title = _title("two annotators")
    assert cli("push", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2,
               env=label_studio.env()).exit_code == 0
    suffix = uuid.uuid4().hex[:6]
    ann_a = ls_client.users.create(username=f"ann-a-{suffix}", email=f"ann-a-{suffix}@example.org")
    ann_b = ls_client.users.create(username=f"ann-b-{suffix}", email=f"ann-b-{suffix}@example.org")
    project = labelstudio.find_project(ls_client, title)
    tasks = sorted(labelstudio.export_snapshot(ls_client, project.id), key=lambda task: task["id"])
    pairs = read_pool_pairs(pools["dl19-5"] / "pool.tsv").set_index("pair_id")
    nist = read_qrels(shared_data / "dl19" / "qrels.txt").set_index(["query_id", "doc_id"])["grade"]

    def where(task):
        row = pairs.loc[task["data"]["pair_id"]]
        return row["query_id"], row["doc_id"]

    grade_a = {where(task): int(nist.get(where(task), 0)) for task in tasks[:6]}
    grade_b = {where(task): (int(nist.get(where(task), 0)) + 1) % 4 for task in tasks[3:9]}
    comment = 'on topic\tbut "old"\nsecond line'
    for number, task in enumerate(tasks[:6]):
        ls_client.annotations.create(**grade_annotation(task["id"], ann_a.id, grade_a[where(task)],
                                           comment=comment if number == 0 else None))
    for task in tasks[3:9]:
        ls_client.annotations.create(**grade_annotation(task["id"], ann_b.id, grade_b[where(task)]))
    ls_client.annotations.create(**grade_annotation(tasks[9]["id"], ann_a.id, cancelled=True))
    ls_client.annotations.create(**grade_annotation(tasks[10]["id"], ann_b.id, comment="cannot decide"))

    output = tmp_path / "labels.tsv"
    pulled = cli("pull", "--project", title, "--pool", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "-o", output,
                 env=label_studio.env())
    assert pulled.exit_code == 0, pulled.output
    assert "1 skipped/cancelled, 1 without a grade" in pulled.output
    labels = read_labels(output)
    assert len(labels) == 12 and set(labels["kind"]) == {"human"}
    by_annotator = {email: {(row.query_id, row.doc_id): row.grade for row in group.itertuples()}
                    for email, group in labels.groupby("annotator")}
    assert by_annotator == {ann_a.email: grade_a, ann_b.email: grade_b}
    overlap = set(grade_a) & set(grade_b)
    assert len(overlap) == 3
    for pair in overlap:
        both = labels[(labels["query_id"] == pair[0]) & (labels["doc_id"] == pair[1])]
        assert sorted(both["annotator"]) == sorted([ann_a.email, ann_b.email])
    assert labels.loc[labels["comment"] != "", "comment"].tolist() == [comment]
    assert labels["labeled_at"].str.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$").all()

    again = tmp_path / "labels-again.tsv"
    assert cli("pull", "--project", title, "--pool", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "-o", again,
               env=label_studio.env()).exit_code == 0
    assert again.read_bytes() == output.read_bytes()

    # round trip: annotator A's pulled labels as qrels score a run exactly as the grades A submitted do
    qrels_path = tmp_path / "a.qrels"
    write_qrels(labels[labels["annotator"] == ann_a.email][["query_id", "doc_id", "grade"]], qrels_path)
    run_path = sorted((shared_data / "dl19" / "runs" / "official_top100").iterdir())[0]
    scored = cli("score", "--qrels", qrels_path, run_path, "-m", "ndcg@10", "--per-query", "--format", "json")
    assert scored.exit_code == 0, scored.output
    ours = {row["query_id"]: row["value"] for row in json.loads(scored.stdout)["per_query"]
            if row["metric"] == "ndcg@10" and row["value"] is not None}
    expected_qrels = {}
    for (query_id, doc_id), grade in grade_a.items():
        expected_qrels.setdefault(query_id, {})[doc_id] = grade
    run = pd.read_csv(run_path, sep=r"\s+", header=None, names=["q", "z", "d", "rank", "score", "tag"], dtype=str)
    trec_run = {q: dict(zip(g["d"], g["score"].astype(float), strict=True)) for q, g in run.groupby("q")}
    reference = pytrec_eval.RelevanceEvaluator(expected_qrels, {"ndcg_cut.10"}).evaluate(trec_run)
    defined = {q: values["ndcg_cut_10"] for q, values in reference.items() if max(expected_qrels[q].values()) > 0}
    assert ours.keys() == defined.keys() and defined
    for query_id, value in defined.items():
        assert ours[query_id] == pytest.approx(value, abs=1e-12)


def test_markup_in_a_document_arrives_as_text_and_the_config_shows_it_with_text(label_studio, ls_client, tmp_path):
    folder = tmp_path / "pool"
    folder.mkdir()
    markup = '<script>alert("x")</script><b>bold</b> &amp; <img src=x onerror=alert(1)> </div>'
    (folder / "pool.tsv").write_text("pair_id\tquery_id\tdoc_id\torder\nabc123\tq1\td1\t0\n")
    (folder / "tasks.jsonl").write_text(json.dumps({"pair_id": "abc123", "query_id": "q1", "doc_id": "d1",
                                                    "query": "what is <b>html</b>", "text": markup}) + "\n")
    title = _title("markup")
    result = labelstudio.push(ls_client, folder, GUIDELINE, title, progress=False)
    [task] = labelstudio.export_snapshot(ls_client, result.project_id)
    assert task["data"] == {"pair_id": "abc123", "query": "what is <b>html</b>", "text": markup,
                            "progress": "Pair 1 of 1"}
    project = labelstudio.find_project(ls_client, title)
    root = ET.fromstring(project.label_config)
    # the task's texts in Text tags; its place (push's own words) in a Header, which shows its value as text too
    assert {tag.get("value"): tag.tag for tag in root.iter() if tag.get("value", "").startswith("$")} == {
        "$query": "Text", "$text": "Text", "$progress": "Header"}


def test_wrong_token_server_down_unknown_project_fail_clearly_and_write_nothing(label_studio, ls_client, pools,
                                                                                tmp_path):
    output = tmp_path / "labels.tsv"
    wrong = {**label_studio.env(), "LABEL_STUDIO_API_KEY": "0" * 40}
    title = _title("never made")
    pushed = cli("push", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "--project", title, env=wrong)
    assert pushed.exit_code == 2 and "cannot log in to Label Studio at" in pushed.output
    assert "answered and refused the API key in LABEL_STUDIO_API_KEY (HTTP 401)" in pushed.output
    assert "0" * 40 not in pushed.output
    assert labelstudio.find_project(ls_client, title) is None
    pulled = cli("pull", "--project", title, "--pool", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "-o", output,
                 env=wrong)
    assert pulled.exit_code == 2 and "refused the API key" in pulled.output

    down = {**label_studio.env(), "LABEL_STUDIO_URL": f"http://127.0.0.1:{_closed_port()}"}
    for args in (("push", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "--project", title),
                 ("pull", "--project", title, "--pool", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "-o", output)):
        result = cli(*args, env=down)
        assert result.exit_code == 2 and "is not answering" in result.output, result.output

    unknown = cli("pull", "--project", title, "--pool", pools["dl19-5"], "--guideline", GUIDELINE_PATH, "-o", output,
                  env=label_studio.env())
    assert unknown.exit_code == 2 and f"no project titled {title!r}" in unknown.output
    assert not output.exists() and list(tmp_path.iterdir()) == []


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_script_reports_its_server_and_refuses_a_taken_port(label_studio, tmp_path):
    script = REPO / "scripts" / "label-studio.sh"
    status = subprocess.run(["bash", script, "status", "--data-dir", label_studio.data_dir], capture_output=True,
                            text=True, timeout=60)
    assert status.returncode == 0 and f"http://127.0.0.1:{label_studio.port}" in status.stdout
    taken = subprocess.run(["bash", script, "start", "--port", str(label_studio.port), "--data-dir",
                            tmp_path / "other"], capture_output=True, text=True, timeout=600)
    assert taken.returncode == 1
    assert f"port {label_studio.port} on 127.0.0.1 is taken" in taken.stderr and taken.stdout == ""
    assert not (tmp_path / "other" / "evalset-server.pid").exists()


def test_a_grade_skipped_after_submission_is_kept_and_a_revision_is_reported_with_both_grades(
        label_studio, ls_client, pools, tmp_path):
    title = _title("revisions")
    assert cli("push", pools["dl19-3"], "--guideline", GUIDELINE_PATH, "--project", title,
               env=label_studio.env()).exit_code == 0
    suffix = uuid.uuid4().hex[:6]
    annotator = ls_client.users.create(username=f"ann-r-{suffix}", email=f"ann-r-{suffix}@example.org")
    project = labelstudio.find_project(ls_client, title)
    tasks = sorted(labelstudio.export_snapshot(ls_client, project.id), key=lambda task: task["id"])[:3]
    made = [ls_client.annotations.create(**grade_annotation(task["id"], annotator.id, grade))
            for task, grade in zip(tasks, (2, 1, 3), strict=True)]
    first = tmp_path / "first.tsv"
    args = ["pull", "--project", title, "--pool", pools["dl19-3"], "--guideline", GUIDELINE_PATH]
    assert cli(*args, "-o", first, env=label_studio.env()).exit_code == 0
    threading.Event().wait(1.2)  # later than the delay that tells an update from the submission itself
    ls_client.annotations.update(made[0].id, result=grade_annotation(tasks[0]["id"], annotator.id, 0)["result"])
    ls_client.annotations.update(made[1].id, was_cancelled=True)  # Skip on a submitted task: the grade stays in it
    second = tmp_path / "second.tsv"
    pulled = cli(*args, "-o", second, "--previous", first, env=label_studio.env())
    assert pulled.exit_code == 0, pulled.output
    pairs = read_pool_pairs(pools["dl19-3"] / "pool.tsv").set_index("pair_id")
    revised, skipped = (pairs.loc[task["data"]["pair_id"]] for task in tasks[:2])
    assert f"kept: {annotator.email} graded {skipped.query_id}/{skipped.doc_id} 1, then skipped it" in pulled.output
    assert "revised: 2 grades were updated after their first submission" not in pulled.output
    assert "revised: 1 grade was updated after its first submission" in pulled.output
    assert "grades changed since the previous pull" in pulled.output and "1 revised, 0 withdrawn" in pulled.output
    line = next(line for line in pulled.output.splitlines() if f" {revised.doc_id} " in line and "revised" in line)
    assert "2 -> 0" in line
    labels = read_labels(second).set_index("doc_id")["grade"]
    assert (labels[revised.doc_id], labels[skipped.doc_id]) == (0, 1)  # the new grade; the skipped one kept
    same = cli(*args, "-o", first, "--previous", first, env=label_studio.env())
    assert same.exit_code == 2 and "--previous" in same.output  # an output may not overwrite an input
