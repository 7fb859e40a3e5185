"""Blind judging holds against any URL: annotator B, logged in with their own browser and holding their own token,
asks every URL pattern of Label Studio 1.23.2 with every guessed id, and finds nothing of annotator A's work
(tests/support/leaks.py says what counts).

Two designs, each on servers of its own started for this module by scripts/label-studio.sh:
- one Label Studio server per annotator (``start-team``): what ``push --annotators`` requires;
- one server, each annotator in an organization of their own (``add-annotator``, ``push --shared-server``): the
  test finds the leaks an annotator can open there, so the same test fails on it.
"""

import csv
import re
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest

from evalset import labelstudio
from evalset.io.annotations import read_labels
from evalset.labelstudio.blind import connect_annotator
from tests.conftest import _free_port, grade_annotation
from tests.support import browser, leaks
from tests.test_labelstudio_blind_server import script
from tests.test_labelstudio_server import GUIDELINE_PATH, cli

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

MARK = uuid.uuid4().hex[:6]
COMMENT_A, DRAFT_A = f"comment-of-a-{MARK}", f"draft-of-a-{MARK}"


@pytest.fixture(scope="module")
def pool_small(shared_data, tmp_path_factory) -> Path:
    """The depth-2 pool of two DL19 runs for the first topic: four pairs, so every id is guessed."""
    folder = tmp_path_factory.mktemp("isolation") / "dl19-1"
    topics = folder.with_suffix(".topics.tsv")
    topics.write_text((shared_data / "dl19" / "topics.tsv").read_text().splitlines()[0] + "\n")
    runs = shared_data / "dl19" / "runs" / "official_top100"
    made = cli("pool", runs / "bm25base_p.run.gz", runs / "idst_bert_p1.run.gz", "--depth", 2, "--queries", topics,
               "--corpus", shared_data / "dl19" / "passages.jsonl.gz", "-o", folder)
    assert made.exit_code == 0, made.output
    return folder


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as handle:
        return {row["email"]: row for row in csv.DictReader(handle, delimiter="\t")}


@pytest.fixture(scope="module")
def designs(tmp_path_factory):
    """Both designs' annotators files (``start-team`` of A and B; one server with add-annotator of A and B); every
    server stopped at the end."""
    root = tmp_path_factory.mktemp("designs")
    emails = [f"a-{MARK}@example.org", f"b-{MARK}@example.org"]
    team = root / "team"
    shared = root / "shared"
    try:
        started = script("start-team", *emails, "--data-dir", team, "--port", _free_port(), timeout=1200)
        assert started.returncode == 0, started.stderr[-3000:]
        assert started.stdout == f"export LABEL_STUDIO_ANNOTATORS={team}/evalset-annotators.tsv\n"
        one = script("start", "--port", _free_port(), "--data-dir", shared, timeout=1200)
        assert one.returncode == 0, one.stderr[-3000:]
        assert script("add-annotator", *emails, "--data-dir", shared).returncode == 0
        yield {"a server each": (team / "evalset-annotators.tsv", started.stderr),
               "one server, an organization each": (shared / "evalset-annotators.tsv", one.stderr)}
    finally:
        script("stop", "--data-dir", team, timeout=180)
        script("stop", "--data-dir", shared, timeout=180)


def _grade_as_a_and_b(rows, title):
    """A grades two tasks with a comment and leaves a draft on a third; B grades one. Returns A's objects by
    server: (kind, id) of A's project, tasks, annotations and draft."""
    (email_a, row_a), (email_b, row_b) = rows.items()
    owned = set()
    for email, row in ((email_a, row_a), (email_b, row_b)):
        client = connect_annotator(None, labelstudio.read_annotators(row["file"])[email])[0]
        user = client.users.whoami().id
        project = labelstudio.find_project(client, labelstudio.annotator_title(title, email))
        tasks = sorted(labelstudio.export_snapshot(client, project.id), key=lambda task: task["id"])
        if email == email_b:
            client.annotations.create(**grade_annotation(tasks[0]["id"], user, 1))
            continue
        owned |= {("project", project.id)} | {("task", task["id"]) for task in tasks}
        for task, grade in zip(tasks[:2], (3, 2), strict=True):
            owned.add(("annotation", client.annotations.create(**grade_annotation(task["id"], user, grade,
                                                                                  COMMENT_A)).id))
        draft = httpx.post(f"{row['url']}/api/tasks/{tasks[2]['id']}/drafts",
                           headers={"Authorization": f"Token {row['token']}"}, timeout=60,
                           json={"result": grade_annotation(tasks[2]["id"], user, 0, DRAFT_A)["result"],
                                 "lead_time": 1.0})
        assert draft.status_code == 201, draft.text
        owned.add(("draft", draft.json()["id"]))
    return owned


@pytest.mark.parametrize("design", ["a server each", "one server, an organization each"])
def test_annotator_b_finds_nothing_of_a_by_any_url_on_servers_of_their_own_and_a_servers_organizations_leak(
        designs, design, pool_small, tmp_path):
    annotators, started = designs[design]
    rows = {email: {**row, "file": str(annotators)} for email, row in _rows(annotators).items()}
    (email_a, row_a), (email_b, row_b) = rows.items()
    env = {"LABEL_STUDIO_ANNOTATORS": str(annotators), "LABEL_STUDIO_URL": "", "LABEL_STUDIO_API_KEY": ""}
    title = f"iso {MARK}"
    shared = design != "a server each"
    pushed = cli("push", pool_small, "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2,
                 "--annotators", f"{email_a},{email_b}", *(["--shared-server"] if shared else []), env=env)
    assert pushed.exit_code == 0, pushed.output
    owned = _grade_as_a_and_b(rows, title)
    owner = leaks.Owner(row_a["url"], frozenset(owned), (email_a, COMMENT_A, DRAFT_A))
    ids = max(number for _, number in owned) + 2
    requests = leaks.probe_urls(leaks.url_patterns(), ids)
    shots = browser.artefacts_dir(tmp_path)
    with browser.launch() as chromium:
        page = browser.new_page(chromium)
        browser.log_in(page, row_b["url"], email_b, row_b["password"])
        answers = [leaks.ask_in_browser(page, row_b["url"], requests, "B's browser session")]
        page.goto(f"{row_b['url']}/projects/")
        page.get_by_text(labelstudio.annotator_title(title, email_b)).wait_for()
        browser.save_screenshot(page, f"isolation-b-projects-{'shared' if shared else 'own'}", shots)
        assert labelstudio.annotator_title(title, email_a) not in page.inner_text("body")
        [session] = [cookie["value"] for cookie in page.context.cookies() if cookie["name"] == "sessionid"]
    answers.append(leaks.ask_with_headers(row_b["url"], {"Authorization": f"Token {row_b['token']}"}, requests,
                                          "B's token"))
    if not shared:  # B's session and token presented to A's server
        answers += [leaks.ask_with_headers(row_a["url"], {"Cookie": f"sessionid={session}"}, requests,
                                           "B's session cookie"),
                    leaks.ask_with_headers(row_a["url"], {"Authorization": f"Token {row_b['token']}"}, requests,
                                           "B's token")]
    found = [leak for answer in answers for leak in leaks.leaks_in(answer, requests, owner)]
    asked = sum(len(answer.bodies) for answer in answers)
    print(f"\n{design}: {len(requests)} URLs (ids 1 to {ids}) x {len(answers)} ways = {asked} requests; "
          f"{len(found)} show A's work")
    for leak in found[:12]:
        print(f"  {leak}")
    servers = sorted(annotators.parent.glob("*/evalset-server.pid")) or [annotators.parent / "evalset-server.pid"]
    for pid_file in servers:
        megabytes = subprocess.run(["ps", "-o", "rss=", "-g", pid_file.read_text().strip()], capture_output=True,
                                   text=True).stdout.split()
        print(f"  {pid_file.parent.name}: {sum(map(int, megabytes)) // 1024} MB after the push and the probe")
    # B's session and token work: B reads B's own project on B's server (the probe is not blind by failing)
    for own in answers[:2]:
        assert own.bodies["/api/current-user/whoami"][0] == 200 and email_b in own.bodies["/api/current-user/whoami"][1]
    for elsewhere in answers[2:]:  # on A's server B's session and token are nobody's
        assert elsewhere.bodies["/api/current-user/whoami"][0] in (302, 401, 403), elsewhere.asked_by
    if not shared:
        assert found == []
        assert re.search(rf"{re.escape(email_a)}: a server of their own, {row_a['url']}, started in [\d.]+ s, \d+ MB",
                         started)
        return
    leaked = {(leak.asked_by, re.sub(r"\d+", "N", leak.path)) for leak in found}
    for path in ("/api/annotations/N/", "/api/tasks/?project=N&fields=all", "/api/projects/N/summary/",
                 "/api/projects/N/next/", "/api/tasks/N/drafts"):
        assert ("B's browser session", path) in leaked and ("B's token", path) in leaked, path


def test_push_refuses_annotators_on_one_server_and_pull_warns(designs, pool_small, tmp_path):
    annotators, _ = designs["one server, an organization each"]
    emails = ",".join(_rows(annotators))
    env = {"LABEL_STUDIO_ANNOTATORS": str(annotators), "LABEL_STUDIO_URL": "", "LABEL_STUDIO_API_KEY": ""}
    title = f"refused {MARK}"
    refused = cli("push", pool_small, "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2,
                  "--annotators", emails, env=env)
    assert refused.exit_code == 2
    assert refused.output.count("\n") == 1 and "are on one Label Studio server" in refused.output
    assert "scripts/label-studio.sh start-team; or accept it with --shared-server" in refused.output
    accepted = cli("push", pool_small, "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2,
                   "--annotators", emails, "--shared-server", env=env)
    assert accepted.exit_code == 0, accepted.output
    assert "warning: not blind:" in accepted.output and "each in their own organization" in accepted.output
    pulled = cli("pull", "--project", title, "--pool", pool_small, "--guideline", GUIDELINE_PATH,
                 "-o", tmp_path / "labels.tsv", "--annotators", emails, env=env)
    assert pulled.exit_code == 0, pulled.output
    assert "warning: not blind:" in pulled.output
    assert read_labels(tmp_path / "labels.tsv").empty
