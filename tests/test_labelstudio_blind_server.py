"""Blind judging and getting annotators in, against a real Label Studio server (`pytest -m labelstudio`).

Annotators are made by `scripts/label-studio.sh add-annotator` on the tests' one server (a user and an organization
of their own each: the design `push --shared-server` accepts, not blind against typed URLs, see
tests/test_labelstudio_isolation.py) and grade with their own tokens; push and pull run with `--annotators`; the
last test gives an annotator a server of their own. The browser test logs in as an annotator with
the password add-annotator generated (Debian's Chromium through Playwright; never a downloaded browser).
"""

import csv
import re
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError

from evalset import labelstudio
from evalset.agreement import analyse_agreement
from evalset.io.annotations import read_labels
from evalset.io.poolfiles import read_pool_pairs
from tests.conftest import grade_annotation
from tests.support import browser
from tests.test_labelstudio_server import GUIDELINE_PATH, _make_pool, cli

pytestmark = pytest.mark.labelstudio

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "label-studio.sh"


def script(*args, timeout=300):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def pool3(shared_data, tmp_path_factory) -> Path:
    return _make_pool(shared_data, tmp_path_factory.mktemp("blind") / "dl19-3", 3)


@pytest.fixture(scope="module")
def team(label_studio) -> dict[str, dict[str, str]]:
    """Two annotators made by add-annotator on the test server: their rows of the annotators file, by e-mail."""
    suffix = uuid.uuid4().hex[:6]
    emails = [f"blind-a-{suffix}@example.org", f"blind-b-{suffix}@example.org"]
    made = script("add-annotator", *emails, "--data-dir", label_studio.data_dir)
    assert made.returncode == 0, made.stderr
    path = Path(label_studio.data_dir) / "evalset-annotators.tsv"
    with path.open(newline="") as handle:
        rows = {row["email"]: row for row in csv.DictReader(handle, delimiter="\t")}
    for row in rows.values():  # nothing secret reached stdout
        assert row["password"] not in made.stdout and row["token"] not in made.stdout
    return {email: {**rows[email], "file": str(path)} for email in emails}


def _env(label_studio, team):
    return {**label_studio.env(), "LABEL_STUDIO_ANNOTATORS": next(iter(team.values()))["file"]}


def _client(label_studio, row) -> LabelStudio:
    return LabelStudio(base_url=label_studio.url, api_key=row["token"])


def _tasks(client, title):
    project = labelstudio.find_project(client, title)
    return project, sorted(labelstudio.export_snapshot(client, project.id), key=lambda task: task["id"])


def _push(label_studio, team, pool, title):
    result = cli("push", pool, "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2, "--annotators",
                 ",".join(team), "--shared-server", env=_env(label_studio, team))
    assert result.exit_code == 0, result.output
    return result


def test_two_annotators_in_an_overlap_2_push_cannot_see_each_other_and_pull_gathers_both(
        label_studio, ls_client, team, pool3, tmp_path):
    (email_a, row_a), (email_b, row_b) = team.items()
    title = f"blind {uuid.uuid4().hex[:8]}"
    pushed = _push(label_studio, team, pool3, title)
    assert "212 tasks for 2 annotators, each task in the projects of 2" in pushed.output
    assert f"{email_a}: project '{title} [{email_a}]'" in pushed.output and "212 added" in pushed.output
    assert row_a["token"] not in pushed.output and row_b["token"] not in pushed.output
    again = _push(label_studio, team, pool3, title)
    assert again.output.count("212 already there, 0 added") == 2

    client_a, client_b = _client(label_studio, row_a), _client(label_studio, row_b)
    project_a, tasks_a = _tasks(client_a, title + f" [{email_a}]")
    project_b, tasks_b = _tasks(client_b, title + f" [{email_b}]")
    # A's token lists A's projects only (A's organization), and nothing of B's project by id
    assert [project.title for project in client_a.projects.list()] == [project_a.title]
    assert labelstudio.find_project(ls_client, project_a.title) is None  # not even in the admin's organization
    for request in (lambda: client_a.projects.get(project_b.id),
                    lambda: client_a.tasks.get(tasks_b[0]["id"]),
                    lambda: labelstudio.export_snapshot(client_a, project_b.id)):
        with pytest.raises((ApiError, labelstudio.LabelStudioError), match=r"404|No Project|No Task"):
            request()

    # both grade the same six pairs (B disagrees on two), each with their own token
    by_pair_b = {task["data"]["pair_id"]: task for task in tasks_b}
    user_a, user_b = client_a.users.whoami().id, client_b.users.whoami().id
    grades_a = [3, 2, 1, 0, 2, 1]
    grades_b = [3, 2, 1, 0, 1, 0]
    for task, grade_a, grade_b in zip(tasks_a[:6], grades_a, grades_b, strict=True):
        client_a.annotations.create(**grade_annotation(task["id"], user_a, grade_a))
        client_b.annotations.create(**grade_annotation(by_pair_b[task["data"]["pair_id"]]["id"], user_b, grade_b))
    # B's grades stay out of A's view: A's project holds A's annotations only
    seen_by_a = [annotation for task in labelstudio.export_snapshot(client_a, project_a.id)
                 for annotation in task["annotations"]]
    assert len(seen_by_a) == 6 and {annotation["completed_by"] for annotation in seen_by_a} == {user_a}

    output = tmp_path / "labels.tsv"
    pulled = cli("pull", "--project", title, "--pool", pool3, "--guideline", GUIDELINE_PATH, "-o", output,
                 "--annotators", ",".join(team), env=_env(label_studio, team))
    assert pulled.exit_code == 0, pulled.output
    assert "424 tasks, 12 annotations, 12 labels written" in pulled.output
    labels = read_labels(output)
    pairs = read_pool_pairs(pool3 / "pool.tsv").set_index("pair_id")
    expected = {}
    for task, grade_a, grade_b in zip(tasks_a[:6], grades_a, grades_b, strict=True):
        pair = tuple(pairs.loc[task["data"]["pair_id"], ["query_id", "doc_id"]])
        expected[(email_a, *pair)], expected[(email_b, *pair)] = grade_a, grade_b
    assert {(row.annotator, row.query_id, row.doc_id): row.grade for row in labels.itertuples()} == expected
    assert labels["source"].str.match(rf"^label-studio:({project_a.id}|{project_b.id})/\d+/\d+$").all()
    again_path = tmp_path / "again.tsv"
    assert cli("pull", "--project", title, "--pool", pool3, "--guideline", GUIDELINE_PATH, "-o", again_path,
               "--annotators", ",".join(team), env=_env(label_studio, team)).exit_code == 0
    assert again_path.read_bytes() == output.read_bytes()

    agreement = analyse_agreement([str(output)], resamples=200)
    [pair] = agreement.report.pairs
    assert {pair.a, pair.b} == {email_a, email_b} and pair.n == 6 and pair.raw_agreement == pytest.approx(4 / 6)


def test_label_studio_1_23_2_lets_any_user_read_and_change_an_annotation_by_id_and_pull_refuses_a_changed_one(
        label_studio, team, pool3, tmp_path):
    """What the organization boundary does not hold on Label Studio Community 1.23.2 (docs/labelstudio.md): the
    annotation endpoint and the Data Manager's task list check no organization. Should an upgrade close them,
    this test fails: update the docs."""
    (_, row_a), (email_b, row_b) = team.items()
    title = f"leak {uuid.uuid4().hex[:8]}"
    _push(label_studio, team, pool3, title)
    client_b = _client(label_studio, row_b)
    project_b, tasks_b = _tasks(client_b, title + f" [{email_b}]")
    annotation = client_b.annotations.create(**grade_annotation(tasks_b[0]["id"], client_b.users.whoami().id, 2))
    auth_a = {"Authorization": f"Token {row_a['token']}"}
    read = httpx.get(f"{label_studio.url}/api/annotations/{annotation.id}/", headers=auth_a)
    assert read.status_code == 200 and read.json()["result"][0]["value"]["choices"] == ["2"]
    listed = httpx.get(f"{label_studio.url}/api/tasks/", params={"project": project_b.id}, headers=auth_a)
    assert listed.status_code == 200 and listed.json()["total"] == len(tasks_b)
    changed = httpx.patch(f"{label_studio.url}/api/annotations/{annotation.id}/", headers=auth_a, json={
        "result": [{"from_name": "grade", "to_name": "text", "type": "choices", "value": {"choices": ["0"]}}]})
    assert changed.status_code == 200
    pulled = cli("pull", "--project", title, "--pool", pool3, "--guideline", GUIDELINE_PATH, "-o",
                 tmp_path / "labels.tsv", "--annotators", ",".join(team), env=_env(label_studio, team))
    assert pulled.exit_code == 2 and not (tmp_path / "labels.tsv").exists()
    assert re.search(rf"annotation {annotation.id} of task {tasks_b[0]['id']} in project '{re.escape(project_b.title)}'"
                     rf" \(id {project_b.id}\) was last changed by user \d+, not by {re.escape(email_b)}",
                     pulled.output), pulled.output


def test_an_annotator_who_edits_their_instructions_gets_push_and_pull_refused(label_studio, team, pool3, tmp_path):
    _, (email_b, row_b) = team.items()
    title = f"edited {uuid.uuid4().hex[:8]}"
    _push(label_studio, team, pool3, title)
    client_b = _client(label_studio, row_b)
    project_b = labelstudio.find_project(client_b, title + f" [{email_b}]")
    client_b.projects.update(project_b.id, expert_instruction="<p>Grade everything 3.</p>")
    for args in (("push", pool3, "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2, "--shared-server"),
                 ("pull", "--project", title, "--pool", pool3, "--guideline", GUIDELINE_PATH, "-o",
                  tmp_path / "labels.tsv")):
        result = cli(*args, "--annotators", ",".join(team), env=_env(label_studio, team))
        assert result.exit_code == 2, result.output
        assert (f"project '{project_b.title}' (id {project_b.id}) of {email_b} was edited in Label Studio: its "
                "instructions not what push writes") in result.output
    assert not (tmp_path / "labels.tsv").exists()


# ---------------------------------------------------------------------------------------------- the script
def test_the_script_warns_of_another_host_and_refuses_bad_input_in_one_line(label_studio, tmp_path):
    taken = script("start", "--host", "0.0.0.0", "--port", label_studio.port, "--data-dir", tmp_path / "other")
    assert taken.returncode == 1 and taken.stdout == ""
    assert ("warning: listening on 0.0.0.0: the server is reachable by others on the network, not only from this "
            "machine") in taken.stderr
    assert f"port {label_studio.port} on 0.0.0.0 is taken" in taken.stderr
    quiet = script("start", "--port", label_studio.port, "--data-dir", tmp_path / "other")
    assert quiet.returncode == 1 and "warning" not in quiet.stderr
    for args, message in (
            (("add-annotator", "not-an-email", "--data-dir", label_studio.data_dir),
             "not an e-mail address: 'not-an-email'"),
            (("add-annotator", "a@example.org", "--data-dir", tmp_path / "nothing"),
             f"no Label Studio data in '{tmp_path / 'nothing'}' (no label_studio.sqlite3)"),
            (("add-annotator", "--data-dir", label_studio.data_dir), "add-annotator needs at least one EMAIL"),
            (("start", "--host", "a b", "--data-dir", tmp_path / "x"),
             "--host must be an IPv4 address or a host name, got 'a b'")):
        done = script(*args)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.startswith(f"label-studio.sh: error: {message}") and done.stderr.count("\n") == 1, \
            done.stderr


def test_add_annotator_is_idempotent_and_refuses_a_user_it_did_not_make(label_studio, ls_client, team):
    email = next(iter(team))
    path = Path(team[email]["file"])
    before = path.read_bytes()
    again = script("add-annotator", email, "--data-dir", label_studio.data_dir)
    assert again.returncode == 0, again.stderr
    assert f"unchanged {email}: already an annotator (organization {team[email]['organization']}); nothing changed" \
        in again.stdout
    assert path.read_bytes() == before and oct(path.stat().st_mode & 0o777) == "0o600"
    stranger = f"stranger-{uuid.uuid4().hex[:6]}@example.org"
    ls_client.users.create(username=stranger, email=stranger)  # a user of the admin's organization
    refused = script("add-annotator", f"new-{uuid.uuid4().hex[:6]}@example.org", stranger, "--data-dir",
                     label_studio.data_dir)
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"{stranger} is already a Label Studio user but not in {path}" in refused.stderr
    assert path.read_bytes() == before  # checked first: the other e-mail was not made either


def test_sign_up_without_an_invite_link_is_refused(label_studio, ls_client):
    """The script starts Label Studio with DISABLE_SIGNUP_WITHOUT_LINK=true: the form still shows, posting it is
    refused (403, and not for want of a CSRF token), and no user is made."""
    email = f"walk-in-{uuid.uuid4().hex[:6]}@example.org"
    with httpx.Client(base_url=label_studio.url) as browser:
        page = browser.get("/user/signup/")
        assert page.status_code == 200
        csrf = browser.cookies["csrftoken"]
        posted = browser.post("/user/signup/", data={"csrfmiddlewaretoken": csrf, "email": email,
                                                     "password": "a-long-password-1"},
                              headers={"Referer": f"{label_studio.url}/user/signup/"})
    assert posted.status_code == 403 and "CSRF" not in posted.text
    assert email not in {user.email for user in ls_client.users.list()}


# --------------------------------------------------------------------------------------------- the browser
def test_in_the_browser_annotator_a_sees_only_their_project_and_not_a_task_of_b(label_studio, team, pool3,
                                                                                 tmp_path):
    (email_a, row_a), (email_b, row_b) = team.items()
    title = f"browser {uuid.uuid4().hex[:8]}"
    _push(label_studio, team, pool3, title)
    client_b = _client(label_studio, row_b)
    project_b, tasks_b = _tasks(client_b, title + f" [{email_b}]")
    client_b.annotations.create(**grade_annotation(tasks_b[0]["id"], client_b.users.whoami().id, 3))
    project_a = labelstudio.find_project(_client(label_studio, row_a), title + f" [{email_a}]")
    shots = browser.artefacts_dir(tmp_path)
    with browser.launch() as chromium:
        page = browser.new_page(chromium)
        browser.log_in(page, label_studio.url, email_a, row_a["password"])

        page.goto(f"{label_studio.url}/projects/")
        page.get_by_text(project_a.title).wait_for()
        browser.save_screenshot(page, "blind-a-projects", shots)
        body = page.inner_text("body")
        assert project_a.title in body and email_b not in body and title + " [" in body

        page.goto(f"{label_studio.url}/projects/{project_a.id}/data")
        page.get_by_text("Tasks: 212 / 212").wait_for()
        browser.save_screenshot(page, "blind-a-data-manager", shots)
        assert "Submitted annotations: 0" in page.inner_text("body")

        page.goto(f"{label_studio.url}/projects/{project_b.id}/data?task={tasks_b[0]['id']}")
        page.get_by_text("No Project matches the given query").first.wait_for()
        browser.save_screenshot(page, "blind-a-task-of-b", shots)
        body = page.inner_text("body")
        assert project_b.title not in body and tasks_b[0]["data"]["text"][:40] not in body
    assert {path.name for path in shots.glob("blind-a-*.png")} >= {
        "blind-a-projects.png", "blind-a-data-manager.png", "blind-a-task-of-b.png"}


@pytest.mark.slow
def test_one_server_per_annotator_shares_nothing_and_pull_gathers_both_servers(label_studio, team, pool3, tmp_path):
    """The strict arrangement of docs/labelstudio.md: annotator A on the test server, annotator C on a server of
    their own (a second start: seconds, its new data directory a copy of the migrated template of
    scripts/label-studio.sh); the annotators files of both joined with ':'."""
    from tests.conftest import _free_port

    email_a, row_a = next(iter(team.items()))
    own = tmp_path / "ls-c"
    port = _free_port()
    started = script("start", "--port", port, "--data-dir", own, timeout=1200)
    assert started.returncode == 0, started.stderr[-2000:]
    try:
        email_c = f"own-c-{uuid.uuid4().hex[:6]}@example.org"
        assert script("add-annotator", email_c, "--data-dir", own).returncode == 0
        with (own / "evalset-annotators.tsv").open(newline="") as handle:
            [row_c] = list(csv.DictReader(handle, delimiter="\t"))
        assert row_c["url"] == f"http://127.0.0.1:{port}"
        env = {**label_studio.env(), "LABEL_STUDIO_URL": "", "LABEL_STUDIO_API_KEY": "",
               "LABEL_STUDIO_ANNOTATORS": f"{row_a['file']}:{own / 'evalset-annotators.tsv'}"}
        title = f"own servers {uuid.uuid4().hex[:8]}"
        pushed = cli("push", pool3, "--guideline", GUIDELINE_PATH, "--project", title, "--overlap", 2,
                     "--annotators", f"{email_a},{email_c}", env=env)
        assert pushed.exit_code == 0, pushed.output
        client_a = _client(label_studio, row_a)
        client_c = LabelStudio(base_url=row_c["url"], api_key=row_c["token"])
        project_a, tasks_a = _tasks(client_a, f"{title} [{email_a}]")
        project_c, tasks_c = _tasks(client_c, f"{title} [{email_c}]")
        grade = client_c.annotations.create(**grade_annotation(tasks_c[0]["id"], client_c.users.whoami().id, 3))
        client_a.annotations.create(**grade_annotation(tasks_a[0]["id"], client_a.users.whoami().id, 2))
        # A's token means nothing on C's server, and C's annotation number on A's server is not C's annotation (its
        # creation time tells: two new servers number their projects, tasks and annotations alike from 1)
        assert httpx.get(f"{row_c['url']}/api/annotations/{grade.id}/",
                         headers={"Authorization": f"Token {row_a['token']}"}).status_code == 401
        mine = httpx.get(f"{row_c['url']}/api/annotations/{grade.id}/",
                         headers={"Authorization": f"Token {row_c['token']}"})
        assert mine.status_code == 200 and mine.json()["task"] == tasks_c[0]["id"]
        there = httpx.get(f"{label_studio.url}/api/annotations/{grade.id}/",
                          headers={"Authorization": f"Token {row_a['token']}"})
        assert there.status_code == 404 or there.json()["created_at"] != mine.json()["created_at"]
        output = tmp_path / "labels.tsv"
        pulled = cli("pull", "--project", title, "--pool", pool3, "--guideline", GUIDELINE_PATH, "-o", output,
                     "--annotators", f"{email_a},{email_c}", env=env)
        assert pulled.exit_code == 0, pulled.output
        labels = read_labels(output)
        assert sorted(zip(labels["annotator"], labels["grade"], strict=True)) == sorted([(email_a, 2), (email_c, 3)])
        assert set(labels["source"].str.split("/").str[0]) == {f"label-studio:{project_a.id}",
                                                               f"label-studio:{project_c.id}"}
    finally:
        script("stop", "--data-dir", own, timeout=120)


def test_a_grade_withdrawn_by_cancel_skip_in_an_annotators_project_is_named_by_pull_with_their_token(
        label_studio, team, pool3, tmp_path):
    (email_a, row_a), (email_b, _) = team.items()
    title = f"blind drafts {uuid.uuid4().hex[:8]}"
    _push(label_studio, team, pool3, title)
    client_a = _client(label_studio, row_a)
    project_a, tasks_a = _tasks(client_a, title + f" [{email_a}]")
    user_a = client_a.users.whoami().id
    first, second = tasks_a[:2]
    for task, grade in ((first, 2), (second, 1)):
        client_a.annotations.create(**grade_annotation(task["id"], user_a, grade))
    # Cancel skip as the labeling view does it, with A's own token: the grade saved as a draft, the annotation deleted
    annotation = client_a.annotations.list(id=first["id"])[0]
    api = httpx.Client(base_url=label_studio.url, headers={"Authorization": f"Token {row_a['token']}"}, timeout=60)
    saved = api.post(f"/api/tasks/{first['id']}/drafts", json={"result": annotation.result, "lead_time": 5.0})
    assert saved.status_code == 201 and api.delete(f"/api/annotations/{annotation.id}").status_code == 204

    output = tmp_path / "labels.tsv"
    pulled = cli("pull", "--project", title, "--pool", pool3, "--guideline", GUIDELINE_PATH, "-o", output,
                 "--annotators", ",".join(team), env=_env(label_studio, team))
    assert pulled.exit_code == 0, pulled.output
    pairs = read_pool_pairs(pool3 / "pool.tsv").set_index("pair_id")
    query_id, doc_id = pairs.loc[first["data"]["pair_id"], ["query_id", "doc_id"]]
    assert "424 tasks, 1 annotation, 1 label written" in pulled.output
    assert (f"  withdrawn: {email_a} submitted {query_id}/{doc_id}, then withdrew it (Skip, then Cancel skip): Label "
            f"Studio deleted the grade and holds 2 as their draft; to restore it, they open task {first['id']} of "
            f"project {project_a.id} and press Submit") in pulled.output.splitlines()
    assert read_labels(output)["annotator"].tolist() == [email_a] and email_b not in pulled.output.split("warning")[1]
