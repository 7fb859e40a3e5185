"""`evalset judge` against a real OpenAI-compatible HTTP server on 127.0.0.1 (tests.support.openai_server).

Every assertion about what was sent is made on the server's side, from the requests it recorded.
"""

import asyncio
import collections
import hashlib
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.io.annotations import read_labels
from evalset.judge import Journal, JudgeSettings, read_template
from evalset.judge.batch import submit_batch
from evalset.judge.job import judge_pool
from evalset.judge.prompt import DEFAULT_TEMPLATE
from tests.conftest import REPO
from tests.support.openai_server import Behaviour, JudgeServer

GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
FAST = {"backoff_base": 0.01, "backoff_cap": 0.05}


def run_judge(pool_dir, out, server, limit, **settings):
    options = {**FAST, "concurrency": 8, "timeout": 5.0, **settings}
    batch = options.pop("batch", False)
    return judge_pool(pool_dir, GUIDELINE, out, JudgeSettings(model="judge-test", base_url=server.base_url,
                                                              **options),
                      limit=limit, batch=batch, poll_seconds=0.05, progress=False)


def pair_of(record, tasks):
    """The task a request was about (its query and passage appear in the user message)."""
    user = record.user_message
    return next(task["pair_id"] for task in tasks
                if f"<query>\n{task['query']}\n</query>" in user and f"<passage>\n{task['text']}\n</passage>" in user)


def test_every_prompt_holds_the_guideline_verbatim_the_query_and_the_passage(pool_dir, tasks, guideline, tmp_path):
    with JudgeServer() as server:
        result = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=30)
        sent = server.chat_records()
    assert len(sent) == 30
    by_pair = {task["pair_id"]: task for task in tasks}
    for record in sent:
        task = by_pair[pair_of(record, tasks)]
        assert guideline.body.strip() in record.prompt
        assert task["query"] in record.user_message and task["text"] in record.user_message
        assert record.body["temperature"] == 0 and record.body["model"] == "judge-test"
        assert record.body["response_format"]["json_schema"]["schema"]["properties"]["grade"]["enum"] == [0, 1, 2, 3]
    assert sorted(pair_of(record, tasks) for record in sent) == sorted(t["pair_id"] for t in tasks[:30])
    assert result.stats.requests == 30 and result.stats.judged == 30


@pytest.mark.slow
def test_labels_follow_the_labels_table_with_kind_llm_and_the_prompt_sha256(pool_dir, tasks, tmp_path):
    with JudgeServer() as server:
        run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=20)
        served = {pair_of(record, tasks): record.grade for record in server.chat_records()}
    labels = read_labels(tmp_path / "labels.tsv")
    assert list(labels.columns) == ["query_id", "doc_id", "annotator", "kind", "grade", "source", "labeled_at",
                                    "comment"]
    assert set(labels["kind"]) == {"llm"} and set(labels["annotator"]) == {"llm:judge-test"}
    template_sha = hashlib.sha256(DEFAULT_TEMPLATE.read_bytes()).hexdigest()
    guideline_sha = hashlib.sha256(GUIDELINE.read_bytes()).hexdigest()
    assert set(labels["source"]) == {f"model=judge-test;prompt=relevance-judge-v1@sha256:{template_sha};"
                                     f"guideline=relevance-v2@sha256:{guideline_sha}"}
    expected = [(t["query_id"], t["doc_id"], served[t["pair_id"]]) for t in tasks[:20]]  # judging order
    assert list(zip(labels["query_id"], labels["doc_id"], labels["grade"], strict=True)) == expected


@pytest.mark.slow
def test_with_429s_500s_malformed_and_off_scale_answers_every_pair_ends_judged_or_failed(pool_dir, tasks,
                                                                                          tmp_path):
    always_off_scale = {(t["query"], t["text"]): 9 for t in tasks[:3]}
    always_500 = {(t["query"], t["text"]): "server_error" for t in tasks[3:5]}
    behaviour = Behaviour(faults={"rate_limit": 0.20, "server_error": 0.05, "malformed": 0.05, "out_of_scale": 0.02,
                                  "timeout": 0.01, "broken_body": 0.01},
                          retry_after=0.02, hang=1.0, grades=always_off_scale, fault_for=always_500)
    with JudgeServer(behaviour) as server:
        result = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=150, concurrency=16, timeout=0.4,
                           max_retries=6, max_invalid=2)
        sent = server.chat_records()
    asked = {t["pair_id"]: t for t in tasks[:150]}
    labels, failures = read_labels(tmp_path / "labels.tsv"), pd.read_csv(tmp_path / "labels.failures.tsv",
                                                                          sep="\t", dtype=str)
    labelled = {(q, d) for q, d in zip(labels["query_id"], labels["doc_id"], strict=True)}
    failed = set(failures["pair_id"])
    assert len(labels) + len(failures) == 150
    assert labelled.isdisjoint({(asked[p]["query_id"], asked[p]["doc_id"]) for p in failed})
    # the server's view: per pair, the valid answers it gave and how often it was asked
    valid = collections.defaultdict(list)
    asked_times, transient, unusable = collections.Counter(), collections.Counter(), collections.Counter()
    faults = collections.Counter()
    for record in sent:
        pair = pair_of(record, tasks)
        asked_times[pair] += 1
        transient[pair] += record.status in (429, 500) or record.fault == "timeout"
        unusable[pair] += record.status == 200 and record.fault != "timeout" and record.grade not in (0, 1, 2, 3)
        faults[record.fault] += 1
        if record.status == 200 and record.fault is None and record.grade in (0, 1, 2, 3):
            valid[pair].append(record.grade)
    by_key = {(t["query_id"], t["doc_id"]): p for p, t in asked.items()}
    for query_id, doc_id, grade in zip(labels["query_id"], labels["doc_id"], labels["grade"], strict=True):
        assert grade == valid[by_key[(query_id, doc_id)]][-1]  # the grade the server gave, never an invented one
    assert all(not valid[pair] for pair in failed)
    assert failed >= {t["pair_id"] for t in tasks[:5]}
    reasons = dict(zip(failures["pair_id"], failures["reason"], strict=True))
    assert all("grade 9 is not on the scale" in reasons[t["pair_id"]] for t in tasks[:3])
    assert all("gave up after 7 transient errors (last: HTTP 500)" in reasons[t["pair_id"]] for t in tasks[3:5])
    # bounded: per pair at most 1 + 6 transient failures and 1 + 2 unusable answers
    assert max(transient.values()) <= 7 and max(unusable.values()) <= 3
    assert [unusable[t["pair_id"]] for t in tasks[:3]] == [3, 3, 3]
    assert [asked_times[t["pair_id"]] for t in tasks[3:5]] == [7, 7]
    assert result.stats.requests == len(sent)
    assert faults["rate_limit"] == result.stats.rate_limited > 0
    assert faults["timeout"] == result.stats.timeouts > 0
    assert faults["malformed"] > 0 and faults["out_of_scale"] > 0
    # issue 74: the breakdown is of the errors met, the retries fewer by those that ended a pair
    stats = result.stats
    errors = (stats.rate_limited + stats.server_errors + stats.timeouts + stats.connection_errors
              + stats.invalid_answers)
    ended = sum(1 for reason in reasons.values() if reason.startswith(("gave up", "invalid answer")))
    assert stats.retries == errors - ended
    assert f"retries {stats.retries:,} after {errors:,} errors (429: {stats.rate_limited:,}," in result.to_text()


def test_retry_after_is_honoured(pool_dir, tasks, tmp_path):
    with JudgeServer(Behaviour(faults={"rate_limit": 0.3}, retry_after=0.25)) as server:
        run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=20, concurrency=4)
        sent = server.chat_records()
    by_pair = collections.defaultdict(list)
    for record in sent:
        by_pair[pair_of(record, tasks)].append(record)
    gaps = [later.at - earlier.at for records in by_pair.values()
            for earlier, later in itertools.pairwise(records) if earlier.status == 429]
    assert gaps and min(gaps) >= 0.25


@pytest.mark.slow
def test_a_finished_run_started_again_asks_nothing_and_a_longer_one_only_the_new_pairs(pool_dir, tmp_path):
    with JudgeServer() as server:
        first = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=25)
        again = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "--model",
                                          "judge-test", "-o", str(tmp_path / "labels.tsv"), "--base-url",
                                          server.base_url, "--limit", "25"])
        assert again.exit_code == 0, again.output
        assert len(server.chat_records()) == 25
        assert "requests 0 " in again.output and "25 answered by an earlier run" in again.output
        longer = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=40)
        assert len(server.chat_records()) == 40
    assert longer.stats.requests == 15 and longer.stats.already_answered == 25
    assert longer.labels.head(25).drop(columns="labeled_at").equals(first.labels.drop(columns="labeled_at"))


def test_without_structured_output_support_the_strict_parser_takes_over(pool_dir, tmp_path):
    with JudgeServer(Behaviour(structured=False)) as server:
        result = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=10, concurrency=1)
        sent = server.chat_records()
    assert [record.status for record in sent] == [400] + [200] * 10
    assert all("response_format" not in record.body for record in sent[1:])
    assert len(result.labels) == 10 and result.stats.failed == 0


@pytest.mark.slow
def test_the_key_comes_from_the_environment_and_is_never_written(pool_dir, tmp_path, monkeypatch):
    secret = "sk-test-do-not-write-4242"
    with JudgeServer(Behaviour(api_key=secret)) as server:
        monkeypatch.setenv("OPENAI_API_KEY", secret)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "--model", "m",
                                           "-o", str(tmp_path / "labels.tsv"), "--limit", "5"])
        assert result.exit_code == 0, result.output
        assert {record.authorization for record in server.chat_records()} == {f"Bearer {secret}"}
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
        refused = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "--model", "m",
                                            "-o", str(tmp_path / "other.tsv"), "--limit", "5"])
    assert refused.exit_code == 2 and "sk-wrong" not in refused.output
    assert refused.output.splitlines() == ["evalset: error: the endpoint refused the job (HTTP 401: Incorrect API "
                                           "key provided: ***); nothing was asked"]
    assert secret not in result.output
    for path in tmp_path.iterdir():
        assert secret.encode() not in path.read_bytes(), path


def test_an_endpoint_that_refuses_the_batch_job_is_one_line_and_exit_2(pool_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with JudgeServer(Behaviour(api_key="sk-right")) as server:
        refused = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "--model", "m",
                                            "-o", str(tmp_path / "labels.tsv"), "--limit", "5", "--batch",
                                            "--base-url", server.base_url])
        assert server.files == {} and server.batches == {}  # nothing uploaded, nothing submitted
    assert refused.exit_code == 2, refused.output
    assert refused.output.splitlines() == ["evalset: error: the endpoint refused the job (HTTP 401: Incorrect API key "
                                           "provided: ***); nothing was asked"]  # the key blanked


def test_a_journal_the_disk_refuses_is_one_line_naming_it(pool_dir, tmp_path):
    (tmp_path / "file.txt").write_text("a file where a folder should be\n")
    journal = tmp_path / "file.txt" / "journal.sqlite"
    result = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "--model", "m",
                                       "-o", str(tmp_path / "labels.tsv"), "--journal", str(journal),
                                       "--base-url", "http://127.0.0.1:9/v1"])  # never asked: the journal fails
    assert result.exit_code == 2
    assert result.output.splitlines() == [f"evalset: error: --journal {journal}: cannot write there, "
                                          f"{tmp_path / 'file.txt'} is not a folder"]


def test_batch_mode_uploads_polls_and_collects_with_re_asks_for_bad_answers(pool_dir, tasks, tmp_path):
    behaviour = Behaviour(faults={"malformed": 0.1, "out_of_scale": 0.1}, grades={(tasks[0]["query"],
                                                                                  tasks[0]["text"]): 7})
    with JudgeServer(behaviour) as server:
        result = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=40, batch=True, max_invalid=2)
        paths = [record.path for record in server.records]
        answered = [r for r in server.records if r.path.startswith("batch:")]
        graded = {pair_of(r, tasks): r.grade for r in answered if r.fault is None}
        unusable = collections.Counter(pair_of(r, tasks) for r in answered if r.grade not in (0, 1, 2, 3))
        again = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=40, batch=True)
        assert len(server.records) == len(paths)  # finished: nothing asked again
    rounds = paths.count("/v1/batches")
    assert paths.count("/v1/files") == rounds and 2 <= rounds <= 3
    failed = list(result.failures["pair_id"])
    assert tasks[0]["pair_id"] in failed and all(unusable[pair] == 3 for pair in failed)
    assert "grade 7 is not on the scale" in result.failures["reason"].iloc[failed.index(tasks[0]["pair_id"])]
    assert len(result.labels) == 40 - len(failed)
    by_key = {(t["query_id"], t["doc_id"]): t["pair_id"] for t in tasks}
    assert all(grade == graded[by_key[(q, d)]] for q, d, grade in
               zip(result.labels["query_id"], result.labels["doc_id"], result.labels["grade"], strict=True))
    assert again.stats.requests == 0 and again.stats.batches == []


def test_a_batch_submitted_before_a_crash_is_collected_not_submitted_again(pool_dir, tasks, guideline, tmp_path):
    from evalset.judge.client import make_client

    template = read_template()
    settings = JudgeSettings(model="judge-test", base_url=None)
    with JudgeServer() as server:
        settings.base_url = server.base_url

        async def submit_only():
            client = make_client(settings)
            try:
                return await submit_batch(client, tasks[:12], guideline, template, settings)
            finally:
                await client.close()

        batch_id = asyncio.run(submit_only())
        journal_path = tmp_path / "labels.tsv.journal.sqlite"
        with Journal(journal_path, "judge-test", template.sha256, guideline.sha256) as journal:
            journal.record_batch(batch_id, 0, [t["pair_id"] for t in tasks[:12]])
        result = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=12, batch=True)
        assert [record.path for record in server.records].count("/v1/batches") == 1
    assert len(result.labels) == 12 and result.stats.batches == []


def judge_command(pool_dir, out, limit: int, concurrency: int, server) -> tuple[list[str], dict[str, str]]:
    """``evalset judge`` as its own process (its command line and environment), to be stopped by a signal."""
    command = [sys.executable, "-c", "from evalset.cli import main; main()", "judge", str(pool_dir),
               "--guideline", str(GUIDELINE), "--model", "judge-test", "-o", str(out), "--limit", str(limit),
               "-s", f"concurrency={concurrency}", "--base-url", server.base_url]
    return command, {**os.environ, "PYTHONPATH": str(REPO)}


def wait_for_requests(server, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(server.chat_records()) < count and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.mark.slow
def test_killed_with_sigkill_half_way_the_restart_asks_only_unanswered_pairs(pool_dir, tasks, tmp_path):
    limit = 120
    with JudgeServer(Behaviour(latency=0.02)) as server:
        command, env = judge_command(pool_dir, tmp_path / "killed.tsv", limit, 4, server)
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        wait_for_requests(server, limit // 2)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert process.returncode == -signal.SIGKILL
        assert not (tmp_path / "killed.tsv").exists()  # no half-written table
        seen_before = len(server.chat_records())
        with sqlite3.connect(tmp_path / "killed.tsv.journal.sqlite") as db:
            answered = {row[0] for row in db.execute("SELECT pair_id FROM answers")}
        assert limit // 4 < len(answered) < limit
        finished = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert finished.returncode == 0, finished.stderr
        after = [pair_of(record, tasks) for record in server.chat_records()[seen_before:]]
        assert len(after) == len(set(after))
        assert not answered & set(after)  # zero requests for pairs already answered
        assert set(after) | answered == {t["pair_id"] for t in tasks[:limit]}
        uninterrupted = run_judge(pool_dir, tmp_path / "straight.tsv", server, limit=limit)
    killed = read_labels(tmp_path / "killed.tsv").drop(columns="labeled_at")
    straight = read_labels(tmp_path / "straight.tsv").drop(columns="labeled_at")
    assert len(killed) == limit and killed.equals(straight)
    assert uninterrupted.stats.requests == limit


@pytest.mark.slow
def test_rpm_spaces_request_starts_evenly(pool_dir, tmp_path):
    with JudgeServer() as server:
        run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=8, concurrency=8, rpm=600)
        starts = sorted(record.at for record in server.chat_records())
    # 600/min = one start every 0.1 s, though 8 may fly. Measured where the server receives them, so each
    # arrival may lag its start a little (a busy machine): the k-th arrives at least 0.1 k - 0.05 s after the
    # first, where without spacing all 8 would arrive within milliseconds.
    since_first = [start - starts[0] for start in starts]
    assert len(starts) == 8 and all(elapsed >= 0.1 * k - 0.05 for k, elapsed in enumerate(since_first))


def test_the_cli_refuses_a_nonpositive_concurrency(pool_dir, tmp_path):
    result = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "--model", "m",
                                       "-o", str(tmp_path / "labels.tsv"), "-s", "concurrency=0"])
    assert result.exit_code == 2
    assert "Invalid value for '-s' / '--client': concurrency: must be an integer in [1, 1000], got 0" in result.output


@pytest.mark.slow
def test_failures_are_final_until_retry_failed_asks_them_again(pool_dir, tasks, tmp_path):
    with JudgeServer(Behaviour(grades={(tasks[0]["query"], tasks[0]["text"]): 5})) as server:
        first = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=6)
        server.behaviour.grades = {}  # the model would now answer on the scale
        again = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=6)
        retried = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=6, retry_failed=True)
    assert list(first.failures["pair_id"]) == [tasks[0]["pair_id"]] and len(first.labels) == 5
    assert again.stats.requests == 0 and len(again.failures) == 1
    assert retried.stats.requests == 1 and len(retried.labels) == 6 and retried.failures.empty


# ------------------------------------------------------------------------------------------------ stopping early
# (issue 74): a run that stops says what the journal holds and that the same command resumes; nothing asked leaves
# no journal behind
def test_nothing_asked_leaves_no_empty_journal_behind(pool_dir, tmp_path):
    result = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "--model", "m",
                                       "-o", str(tmp_path / "labels.tsv"), "--base-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 2 and "nothing was asked" in result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == []


@pytest.mark.slow
def test_ctrl_c_says_how_many_answers_the_journal_holds_and_the_same_command_resumes(pool_dir, tasks, tmp_path):
    limit = 60
    with JudgeServer(Behaviour(latency=0.05)) as server:
        command, env = judge_command(pool_dir, tmp_path / "labels.tsv", limit, 2, server)
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        wait_for_requests(server, limit // 3)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        with sqlite3.connect(tmp_path / "labels.tsv.journal.sqlite") as db:
            held = db.execute("SELECT count(*) FROM answers").fetchone()[0]
        assert process.returncode == 130 and 0 < held < limit
        assert stderr.splitlines()[-1] == (f"evalset: interrupted: {held} answers are in the journal "
                                           f"{tmp_path / 'labels.tsv.journal.sqlite'}: the same command resumes "
                                           "from them")
        finished = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert len(read_labels(tmp_path / "labels.tsv")) == limit


@pytest.mark.slow
def test_a_disk_that_fills_mid_run_is_one_line_saying_what_the_journal_holds(pool_dir, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=160k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root)")
    try:
        (disk / "filler").write_bytes(b"\0" * (80 << 10))  # leaves room for the journal's first answers only
        with JudgeServer() as server:
            result = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "--model", "m",
                                               "-o", str(disk / "labels.tsv"), "--base-url", server.base_url])
        journal = disk / "labels.tsv.journal.sqlite"
        with sqlite3.connect(journal) as db:
            held = db.execute("SELECT count(*) FROM answers").fetchone()[0]
        assert result.exit_code == 2 and held > 0
        assert result.output == (f"evalset: error: cannot write the journal {journal}: database or disk is full; "
                                 f"{held} answers are in it: the same command resumes from them once it can be "
                                 "written\n")
        assert not (disk / "labels.tsv").exists()  # nothing half-written
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
