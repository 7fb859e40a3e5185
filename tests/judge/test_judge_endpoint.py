"""`evalset judge` against an endpoint that is dead, malformed, keyless, failing or gone mid-run.

The endpoint is checked once before the first pair; a run stops (exit 2) rather than spending every pair's
retries on an endpoint that does not answer; only what the model said is final in the journal, so a rerun after
the endpoint is back asks the unanswered pairs again without --retry-failed. All against real sockets: the
loopback test server, or a port bound and closed (nothing listens there: connections are refused).
"""

import re
import socket
import sqlite3
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.judge import EndpointUnreachable, Journal, JudgeSettings, read_template
from evalset.judge.journal import Answer
from tests.judge.test_judge_server import FAST, GUIDELINE, pair_of, run_judge
from tests.support.openai_server import Behaviour, JudgeServer


def dead_url() -> str:
    """The URL of a port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def judge_cli(pool_dir, out, *options):
    return CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(GUIDELINE), "-o", str(out),
                                     *options])


def journal_rows(path):
    with sqlite3.connect(path) as db:
        return db.execute("SELECT pair_id, status, reason FROM answers").fetchall()


@pytest.fixture
def no_openai_env(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.slow
def test_a_refused_port_stops_in_seconds_with_one_line_and_exit_2(pool_dir, tmp_path, no_openai_env):
    url = dead_url()
    started = time.monotonic()
    result = judge_cli(pool_dir, tmp_path / "labels.tsv", "--model", "m", "--limit", "18", "--base-url", url)
    elapsed = time.monotonic() - started
    assert result.exit_code == 2, result.output
    assert re.fullmatch(rf"evalset: error: cannot reach the endpoint {re.escape(url)} \(--base-url\): connection "
                        r"refused \(4 attempts over 3\.\d s\); nothing was asked\. Start the server or fix the URL, "
                        r"then run the same command again\n", result.output)
    assert 3.0 <= elapsed < 8.0  # 4 attempts over 3.5 s, not minutes of retries per pair
    assert not (tmp_path / "labels.tsv").exists()
    assert not (tmp_path / "labels.tsv.journal.sqlite").exists()  # nothing asked: no empty journal left behind


@pytest.mark.slow
def test_a_dead_endpoint_in_batch_mode_is_refused_the_same_way(pool_dir, tmp_path, no_openai_env):
    url = dead_url()
    result = judge_cli(pool_dir, tmp_path / "labels.tsv", "--model", "m", "--limit", "5", "--batch",
                       "--base-url", url)
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"evalset: error: cannot reach the endpoint {url} (--base-url): connection "
                                    f"refused (4 attempts over ")


def test_a_malformed_base_url_is_refused_at_once_before_the_journal_is_made(pool_dir, tmp_path, no_openai_env):
    started = time.monotonic()
    result = judge_cli(pool_dir, tmp_path / "labels.tsv", "--model", "m", "--base-url", "notaurl")
    assert result.exit_code == 2 and time.monotonic() - started < 2.0
    assert result.output.splitlines() == ["evalset: error: --base-url 'notaurl' is not an http(s) URL with a host "
                                          "(for example http://127.0.0.1:8000/v1 or https://api.openai.com/v1)"]
    assert list(tmp_path.iterdir()) == []


def test_openai_without_a_key_is_refused_up_front(pool_dir, tmp_path, no_openai_env):
    result = judge_cli(pool_dir, tmp_path / "labels.tsv", "--model", "gpt-4o-mini")
    assert result.exit_code == 2
    assert result.output.splitlines() == ["evalset: error: OPENAI_API_KEY is not set, and https://api.openai.com/v1 "
                                          "needs a key: export OPENAI_API_KEY=... (a server that needs no key, such "
                                          "as a local vLLM: --base-url)"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_server_that_needs_a_key_stops_the_run_before_the_first_pair_saying_the_key_is_unset(
        pool_dir, tmp_path, no_openai_env):
    with JudgeServer(Behaviour(api_key="sk-right")) as server:
        result = judge_cli(pool_dir, tmp_path / "labels.tsv", "--model", "judge-test", "--limit", "5",
                           "--base-url", server.base_url)
        assert server.chat_records() == [] and [r.path for r in server.records] == ["/v1/models"]
    assert result.exit_code == 2
    assert result.output.splitlines() == ["evalset: error: the endpoint refused the job (HTTP 401: Incorrect API key "
                                          "provided: unused; OPENAI_API_KEY is not set); nothing was asked"]
    # "unused": the placeholder sent when no key is set


@pytest.mark.slow
def test_the_model_is_checked_once_before_the_first_pair(pool_dir, tmp_path, no_openai_env):
    with JudgeServer(Behaviour(models=("judge-test",), any_model=False)) as server:
        listed = run_judge(pool_dir, tmp_path / "listed.tsv", server, limit=3)
        assert [r.path for r in server.records[:1]] == ["/v1/models"] and len(server.chat_records()) == 3
        unknown = judge_cli(pool_dir, tmp_path / "unknown.tsv", "--model", "gpt-nope", "--limit", "3",
                            "--base-url", server.base_url)
        probe = server.chat_records()[3:]
    assert listed.stats.endpoint == f"{server.base_url} lists the model judge-test"
    assert unknown.exit_code == 2
    assert unknown.output.splitlines() == ["evalset: error: the endpoint refused the job (HTTP 404: The model "
                                           "`gpt-nope` does not exist or you do not have access to it.; it lists 1 "
                                           "models: judge-test); nothing was asked"]
    assert len(probe) == 1 and probe[0].body["max_completion_tokens"] == 1  # one one-token request, no pair


def test_a_server_answering_a_bare_404_is_refused_naming_the_url_and_asking_for_the_apis_root(pool_dir, tmp_path,
                                                                                             no_openai_env):
    """A web server at the address (no OpenAI API there: every path a bare 404) is not "cannot connect": the line
    names the URL and asks whether it is the API's root; nothing is asked, no journal is left."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class NotFound(BaseHTTPRequestHandler):
        def answer(self):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = answer

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        result = judge_cli(pool_dir, tmp_path / "labels.tsv", "--model", "m", "--limit", "3", "--base-url", url)
    finally:
        server.shutdown()
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"evalset: error: the endpoint refused the job (HTTP 404: Error code: 404; {url} (--base-url) has no chat "
        "completions route or no model m: is it the API's root (for example .../v1), and is --model right?); "
        "nothing was asked"]
    assert list(tmp_path.iterdir()) == []


def test_an_endpoint_without_a_models_route_is_checked_with_one_small_request(pool_dir, tasks, tmp_path):
    with JudgeServer(Behaviour(models=None)) as server:
        result = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=4)
        paths = [record.path for record in server.records]
        chat = server.chat_records()
    assert paths[:2] == ["/v1/models", "/v1/chat/completions"] and len(chat) == 5
    assert chat[0].body["messages"] == [{"role": "user", "content": "Answer OK."}]
    assert sorted(pair_of(record, tasks) for record in chat[1:]) == sorted(t["pair_id"] for t in tasks[:4])
    assert result.stats.endpoint == f"{server.base_url} answered a one-token request for judge-test"
    assert len(result.labels) == 4 and result.stats.requests == 4


@pytest.mark.slow
def test_an_endpoint_that_goes_away_mid_run_stops_the_run_instead_of_spending_every_retry(pool_dir, tmp_path):
    settings = JudgeSettings(model="judge-test", base_url=dead_url(), check_endpoint=False, concurrency=4,
                             unreachable_after=5, unreachable_seconds=1.0, **FAST)
    from evalset.judge.job import judge_pool

    started = time.monotonic()
    with pytest.raises(EndpointUnreachable) as stopped:
        judge_pool(pool_dir, GUIDELINE, tmp_path / "labels.tsv", settings, limit=40, progress=False)
    assert time.monotonic() - started < 3.0  # 40 pairs x 7 attempts would take far longer
    assert str(stopped.value).startswith(f"the endpoint {settings.base_url} stopped answering: no usable answer "
                                         "to the last ")
    assert "(last: connection refused); stopped. The 0 pairs judged this run are in the journal" in str(stopped.value)
    assert not (tmp_path / "labels.tsv.journal.sqlite").exists()  # nothing answered: no empty journal left


@pytest.mark.slow
def test_connections_dropped_are_counted_as_connection_errors_not_timeouts(pool_dir, tmp_path):
    with JudgeServer(Behaviour(faults={"disconnect": 0.2})) as server:
        result = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=40, concurrency=4)
        dropped = sum(record.fault == "disconnect" for record in server.chat_records())
    assert dropped > 0 and result.stats.connection_errors == dropped and result.stats.timeouts == 0
    assert len(result.labels) == 40


@pytest.mark.slow
def test_a_server_failing_with_500_leaves_nothing_final_and_the_rerun_judges_every_pair(pool_dir, tasks, tmp_path):
    out = tmp_path / "labels.tsv"
    with JudgeServer(Behaviour(faults={"server_error": 1.0})) as server:
        failing = judge_cli(pool_dir, out, "--model", "judge-test", "--limit", "6", "-s", "max_retries=1",
                            "--base-url", server.base_url)
        assert failing.exit_code == 2, failing.output
        assert journal_rows(str(out) + ".journal.sqlite") == []  # no transport failure is final: nothing journaled
        failures = pd.read_csv(tmp_path / "labels.failures.tsv", sep="\t", dtype=str)
        server.behaviour.faults = {}  # the server is back
        back = judge_cli(pool_dir, out, "--model", "judge-test", "--limit", "6", "--base-url", server.base_url)
    lines = failing.output.splitlines()
    assert lines[0] == "pairs 6: judged 0, failed 6 (0 answered by an earlier run, taken from the journal)"
    assert lines[1] == ("not answered 6 of the failed (the endpoint gave no answer: errors or refusals to the end): "
                        "not in the journal, so the next run asks them again")
    assert lines[-1] == (f"evalset: error: no pair was judged: all 6 pairs asked this run failed (6 got no answer "
                         f"from the endpoint and are asked again by the next run; 0 were answered unusably); see "
                         f"{tmp_path / 'labels.failures.tsv'}")
    assert set(failures["reason"]) == {"gave up after 2 transient errors (last: HTTP 500)"}
    assert back.exit_code == 0, back.output
    assert back.output.splitlines()[0] == ("pairs 6: judged 6, failed 0 (0 answered by an earlier run, taken from "
                                           "the journal)")
    assert [row[1] for row in journal_rows(str(out) + ".journal.sqlite")] == ["judged"] * 6


def test_a_transport_failure_an_older_journal_holds_as_final_is_asked_again(pool_dir, tasks, guideline, tmp_path):
    template = read_template()
    with Journal(tmp_path / "labels.tsv.journal.sqlite", "judge-test", template.sha256, guideline.sha256) as journal:
        journal.record(Answer(tasks[0]["pair_id"], "failed", None, "gave up after 7 transient errors (last: "
                              "APIConnectionError)", 7, 0, 0, "2026-01-01T00:00:00Z"))
        journal.record(Answer(tasks[1]["pair_id"], "failed", None, "invalid answer 3 times (last: not JSON)", 3, 0, 0,
                              "2026-01-01T00:00:00Z"))
    with JudgeServer() as server:
        result = run_judge(pool_dir, tmp_path / "labels.tsv", server, limit=3)
        asked = sorted(pair_of(record, tasks) for record in server.chat_records())
    assert asked == sorted([tasks[0]["pair_id"], tasks[2]["pair_id"]])  # the model's unusable answers stay final
    assert result.stats.already_answered == 1 and list(result.failures["pair_id"]) == [tasks[1]["pair_id"]]


@pytest.mark.slow
def test_progress_shows_judged_failed_and_retrying_counts_on_stderr(pool_dir, tmp_path, capfd):
    from evalset.judge.job import judge_pool

    with JudgeServer() as server:
        judge_pool(pool_dir, GUIDELINE, tmp_path / "labels.tsv", JudgeSettings(model="judge-test",
                   base_url=server.base_url, **FAST), limit=5, progress=True, progress_delay=0)
        quiet = judge_pool(pool_dir, GUIDELINE, tmp_path / "quiet.tsv", JudgeSettings(model="judge-test",
                           base_url=server.base_url, **FAST), limit=5, progress=True)
    captured = capfd.readouterr()
    assert captured.out == ""
    assert "5/5" in captured.err and "judged=5 failed=0 retrying=0" in captured.err
    assert captured.err.count("5/5") == 1 and quiet.stats.judged == 5  # a run shorter than 2 s shows no bar


def test_a_guideline_whose_worked_examples_grade_pairs_of_the_pool_is_refused_before_anything_is_asked(
        pool_dir, tmp_path, no_openai_env):
    from evalset.io.guideline import read_guideline
    from evalset.io.poolfiles import read_pool_pairs

    version_1 = read_guideline(GUIDELINE.parent / "relevance-v1.md")
    pairs = read_pool_pairs(pool_dir / "pool.tsv")
    [first, *more] = version_1.examples_among(zip(pairs["query_id"], pairs["doc_id"], strict=True))
    result = CliRunner().invoke(main, ["judge", str(pool_dir), "--guideline", str(version_1.path), "--model", "m",
                                       "-o", str(tmp_path / "labels.tsv"), "--base-url", dead_url()])
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"evalset: error: {version_1.path}:{first.line}: the worked example of query {first.query_id}, document "
        f"{first.doc_id} (grade {first.grade}) is a pair of the pool {pool_dir} being judged, and {len(more)} other "
        f"example{'s' * (len(more) != 1)} too: the judge would read its grade in its prompt; use a guideline whose "
        "examples are outside the pool\n")
    assert list(tmp_path.iterdir()) == []


def test_judge_probe_refuses_the_same_guideline_as_judge(pool_dir, tmp_path, no_openai_env):
    # issue 74: judge probe accepted relevance-v1.md on a pool holding its worked examples, which judge refuses
    human = tmp_path / "human.qrels"
    human.write_text("".join(f"{q} 0 {d} 0\n" for q, d in (line.split("\t")[1:3] for line in
                                                          (pool_dir / "pool.tsv").read_text().splitlines()[1:])))
    result = CliRunner().invoke(main, ["judge", "probe", str(pool_dir), "--guideline", "relevance-v1", "--human",
                                       str(human), "--model", "m", "-o", str(tmp_path / "probe.json"), "--base-url",
                                       dead_url()])
    assert result.exit_code == 2, result.output
    assert ("is a pair of the pool" in result.output and "being probed" in result.output
            and "the judge would read its grade in its prompt" in result.output)
