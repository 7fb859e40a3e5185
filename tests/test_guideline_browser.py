"""What the guideline tells annotators about Submit, Update, Skip and Cancel skip is what Label Studio 1.23.2 does,
in Debian's headless Chromium (tests/support/browser.py) on a project push made: a submitted grade is revised with
the back arrow and Update; Skip after Submit keeps the grade and leaves only Cancel skip; Cancel skip deletes the
submitted grade and leaves it selected as a draft, the pair back in the annotator's queue; a skipped pair is not
served again to the one who skipped it, and is served to another annotator of the project. Screenshots go to
$EVALSET_ARTEFACTS or the test's tmp_path."""

import uuid
from pathlib import Path

import pytest

from evalset import labelstudio
from evalset.io.guideline import read_guideline
from tests.support import browser

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
GUIDELINE = read_guideline(REPO / "guidelines" / "relevance-v2.md")
PREVIOUS = "[data-testid='prev-task']"
SKIP = "[data-testid='bottombar-skip-button']"
UPDATE = "[data-testid='bottombar-update-button']"  # a submitted pair's, disabled until its grade changes
# another pair is shown: its labeling view is there and does not start with the text of the pair before
NEXT_PAIR = """text => { const view = document.querySelector('.lsf-main-view');
  return view && view.querySelector('.lsf-choices') && !view.innerText.startsWith(text); }"""


def _buttons(page) -> set[str]:
    return {name for button in page.locator(f"{browser.LABELING} button, .lsf-bottombar button").all()
            if button.is_visible() and (name := button.inner_text().strip())}


def _annotations(client, project_id) -> list[tuple[int, bool, list]]:
    """(task id, cancelled, grades) of every annotation, and the drafts' task ids."""
    tasks = labelstudio.export_snapshot(client, project_id)
    return sorted((task["id"], bool(annotation["was_cancelled"]),
                   [choice for region in annotation["result"] for choice in region["value"].get("choices", [])])
                  for task in tasks for annotation in task.get("annotations") or [])


def _eventually(read, seconds: float = 15.0):
    """``read()`` once it has changed from what it first gave (Label Studio saves after the click returns), or
    what it gives after ``seconds``."""
    import time

    first, deadline = read(), time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if (now := read()) != first:
            return now
    return first


def _query_and_passage(page) -> str:
    return page.locator(browser.LABELING).inner_text()[:300]


def test_update_skip_after_submit_and_cancel_skip_do_what_the_guideline_says(label_studio, ls_client, tmp_path,
                                                                              shared_data):
    from click.testing import CliRunner

    from evalset.cli import main

    pool = tmp_path / "pool"
    dl19 = shared_data / "dl19"
    (tmp_path / "topics.tsv").write_text((dl19 / "topics.tsv").read_text().splitlines()[0] + "\n")
    built = CliRunner().invoke(main, [str(a) for a in ("pool", dl19 / "runs" / "official_top100", "--depth", 3,
                                                       "--queries", tmp_path / "topics.tsv", "--corpus",
                                                       dl19 / "passages.jsonl.gz", "-o", pool)])
    assert built.exit_code == 0, built.output
    title = f"guideline actions {uuid.uuid4().hex[:8]}"
    labelstudio.push(ls_client, pool, GUIDELINE, title, progress=False)
    project = labelstudio.find_project(ls_client, title)
    artefacts = browser.artefacts_dir(tmp_path)
    email = f"ann-{uuid.uuid4().hex[:6]}@example.org"
    with browser.launch() as chromium:
        page = browser.new_page(chromium)
        browser.annotate(page, label_studio, project.id, email)
        first = _query_and_passage(page)
        page.keyboard.press("2")
        page.click(browser.SUBMIT)
        page.wait_for_function(NEXT_PAIR, arg=first[:200])
        (task, cancelled, grades), = _annotations(ls_client, project.id)
        assert (cancelled, grades) == (False, ["2"])

        # Revise: the back arrow, a new grade, Update
        page.click(PREVIOUS)
        page.locator(UPDATE).wait_for()
        assert _query_and_passage(page) == first and {"Skip", "Update"} <= _buttons(page)
        assert page.locator(UPDATE).is_disabled()
        page.locator(f"{browser.LABELING} .lsf-choice", has_text="1 Related").click()
        browser.save_screenshot(page, "guideline-revise", artefacts)
        page.locator(UPDATE).click()
        assert _eventually(lambda: _annotations(ls_client, project.id)) == [(task, False, ["1"])]

        # Skip after Submit: the grade is kept, and the pair offers only Cancel skip
        if _query_and_passage(page) != first:  # Update moved on to the next pair
            page.click(PREVIOUS)
        page.locator(UPDATE).wait_for()
        page.click(SKIP)
        assert _eventually(lambda: _annotations(ls_client, project.id)) == [(task, True, ["1"])]
        page.click(PREVIOUS)
        cancel = page.locator("button", has_text="Cancel skip")
        cancel.wait_for()
        browser.save_screenshot(page, "guideline-skipped-after-submit", artefacts)
        assert "Update" not in _buttons(page) and "Submit" not in _buttons(page)

        # Cancel skip: the annotation is deleted, the grade stays selected as a draft, the pair comes back
        cancel.click()
        page.locator(browser.SUBMIT).wait_for()
        assert _eventually(lambda: _annotations(ls_client, project.id)) == []
        assert page.locator(f"{browser.LABELING} .lsf-choice input:checked").count() == 1
        browser.save_screenshot(page, "guideline-after-cancel-skip", artefacts)
        exported = labelstudio.export_snapshot(ls_client, project.id)
        assert [len(t.get("drafts") or []) for t in exported if t["id"] == task] == [1]
        browser.open_labeling(page, label_studio.url, project.id)
        browser.close_instructions(page)
        assert _query_and_passage(page) == first  # back in the queue

        # Skip (the draft not submitted): the next pair follows, and the skipped one is never served again
        page.click(SKIP)
        page.wait_for_function(NEXT_PAIR, arg=first[:200])
        browser.open_labeling(page, label_studio.url, project.id)
        browser.close_instructions(page)
        assert _query_and_passage(page) != first
        assert [cancelled for _, cancelled, _ in _annotations(ls_client, project.id)] == [True]

        # in a project shared with another annotator, the pair skipped goes to them
        other = browser.new_page(chromium)
        browser.sign_up(other, label_studio.url, f"ann-{uuid.uuid4().hex[:6]}@example.org", f"pw-{uuid.uuid4().hex}",
                        browser.invite_token(label_studio.url, label_studio.api_key))
        browser.open_labeling(other, label_studio.url, project.id)
        browser.close_instructions(other)
        assert _query_and_passage(other) == first
