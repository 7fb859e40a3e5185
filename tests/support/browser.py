"""A headless Chromium driving the real Label Studio of the tests (tests/conftest.py's ``label_studio``).

Debian's Chromium (``/usr/bin/chromium``, scripts/install-chromium.sh), driven by Playwright; no browser is ever
downloaded. The API, for any browser test of Label Studio::

    with launch() as browser:                                  # skips the test when no Chromium/Playwright
        page = new_page(browser, width=1366, height=768)       # a fresh context: its own cookies, its own user
        sign_up(page, url, "ann@example.org", "a password")    # a new user through the signup page (logged in)
        log_in(page, url, *admin_login(server.data_dir))        # or an existing one through the login page
        open_labeling(page, url, project_id)                   # the project's labeling stream, instructions open
        close_instructions(page)                               # the labeling view itself
        annotate(page, label_studio, project_id, email)        # the three: a new annotator at their first task
        save_screenshot(page, "state", artefacts)              # PNG in $EVALSET_ARTEFACTS or the test's tmp_path

Selectors of Label Studio 1.23.2's pages are named once here (``INSTRUCTIONS``, ``LABELING``, ``SUBMIT``,
``TASK_COUNT``, ``PROGRESS``, ``SIDE_PANELS``, ``SKIP``, ``CANCEL_SKIP``, ...).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run")
ARTEFACTS_VARIABLE = "EVALSET_ARTEFACTS"
#: the instructions modal's body (what holds the project's ``expert_instruction``)
INSTRUCTIONS = ".lsf-modal-ls__body"
#: the labeling view of one task (the config's tags are rendered in it)
LABELING = ".lsf-main-view"
SUBMIT = "[data-testid='bottombar-submit-button']"
#: Label Studio's own task counter in the bottom bar (hidden by evalset's labeling config)
TASK_COUNT = ".lsf-current-task__task-count"
#: what evalset's labeling config shows of a task's place in its project (``Pair 4 of 8``)
PROGRESS = ".evalset-progress"
#: Label Studio's side panels (regions, relations, info, history), beside the task or, when narrow, under it
SIDE_PANELS = ".lsf-sidepanels__wrapper, .lsf-tabs-panel, .lsf-outliner"
#: the bottom bar's other buttons: Update (a submitted task), Skip, Cancel skip (a skipped task)
UPDATE = "[data-testid='bottombar-update-button']"
SKIP = "[data-testid='bottombar-skip-button']"
CANCEL_SKIP = "[data-testid='bottombar-unskip-button']"
#: the labeling stream's history: the task before, the task after
PREVIOUS_TASK = "[data-testid='prev-task']"
NEXT_TASK = "[data-testid='next-task']"
TIMEOUT_MS = 60_000


def chromium_path() -> str | None:
    """Debian's Chromium, or None when it is not installed."""
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@contextmanager
def launch() -> Iterator[Browser]:
    """A headless Chromium (Debian's, the flags of CHROMIUM_ARGS), closed on exit. Skips the test, saying why,
    when Playwright or Chromium is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    executable = chromium_path()
    if executable is None:
        pytest.skip("Chromium is not installed: run scripts/install-chromium.sh (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=list(CHROMIUM_ARGS), headless=True)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Browser, width: int = 1366, height: int = 768) -> Page:
    """A page in a new browser context (its own cookies: one user per context) with this viewport."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


def admin_login(data_dir: str | os.PathLike) -> tuple[str, str]:
    """The admin's e-mail and password that scripts/label-studio.sh wrote for the server's data directory."""
    values = dict(line.split("=", 1) for line in Path(data_dir, "evalset-admin.env").read_text().splitlines()
                  if "=" in line)
    return values["EVALSET_LS_EMAIL"], values["EVALSET_LS_PASSWORD"]


def _submit_form(page: Page, path: str, url: str, email: str, password: str) -> None:
    page.goto(f"{url.rstrip('/')}{path}")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.click("form button[type=submit]")
    if "/user/" in page.url:  # still on the form: refused
        raise AssertionError(f"{path} refused {email}: {page.inner_text('form')[:300]}")


def sign_up(page: Page, url: str, email: str, password: str, invite_token: str | None = None) -> None:
    """Create a user through Label Studio's signup page (it joins the server's organisation, and is logged in).
    ``scripts/label-studio.sh`` closes the page to anyone without the organisation's invite link: give its
    ``invite_token`` (``GET /api/invite`` with the admin's key)."""
    _submit_form(page, "/user/signup/" + (f"?token={invite_token}" if invite_token else ""), url, email, password)


def invite_token(url: str, api_key: str) -> str:
    """The token of the server organisation's invite link, read with the admin's API key."""
    import httpx

    answer = httpx.get(f"{url.rstrip('/')}/api/invite", headers={"Authorization": f"Token {api_key}"}, timeout=30)
    answer.raise_for_status()
    return str(answer.json()["token"])


def log_in(page: Page, url: str, email: str, password: str) -> None:
    """Log in through Label Studio's login page."""
    _submit_form(page, "/user/login/", url, email, password)


def open_labeling(page: Page, url: str, project_id: int) -> None:
    """Open the project's labeling stream (the next task to label) and wait until its first task is shown. A
    project with instructions opens with them in a modal over the task."""
    page.goto(f"{url.rstrip('/')}/projects/{project_id}/data?labeling=1")
    page.wait_for_selector(f"{LABELING} .lsf-choices")


def close_instructions(page: Page) -> None:
    """Close the instructions modal, if open."""
    if page.locator(INSTRUCTIONS).count():
        page.get_by_role("button", name="Close modal").click()
        page.locator(INSTRUCTIONS).wait_for(state="detached")


def annotate(page: Page, server, project_id: int, email: str) -> None:
    """Sign ``email`` up on the test server (``server``: tests/conftest.py's ``label_studio``, through its invite
    link) and open the project's labeling view, instructions closed: an annotator at their first task."""
    import uuid

    sign_up(page, server.url, email, f"pw-{uuid.uuid4().hex}", invite_token(server.url, server.api_key))
    open_labeling(page, server.url, project_id)
    close_instructions(page)


def artefacts_dir(fallback: Path) -> Path:
    """Where screenshots go: ``$EVALSET_ARTEFACTS`` (created) if set, else ``fallback`` (a test's tmp_path)."""
    folder = Path(os.environ.get(ARTEFACTS_VARIABLE) or fallback)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save_screenshot(page: Page, name: str, folder: Path, full_page: bool = False) -> Path:
    """A PNG of the page (the viewport unless ``full_page``) as ``folder/name.png``; returns its path."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
