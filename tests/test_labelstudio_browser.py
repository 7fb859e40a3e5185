"""What an annotator sees and does in the real Label Studio, in Debian's headless Chromium (tests/support/browser.py):
the guideline's instructions fit their box, rendered (no raw Markdown); the grade definitions are read beside the
buttons without hovering; a grade given with a hotkey and one given with a click come back through pull; at
1366x768 and 800x900 the annotator reads how far they are (``Pair 4 of 8``), with no side panel and nothing past the
window. Without the browser: the sanitiser keeps the instructions as written, and a project made with an older
interface gets the new one on push, its annotations intact.

Screenshots of each state go to $EVALSET_ARTEFACTS (.ci/run sets it) or the test's tmp_path.
"""

import contextlib
import re
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from evalset import labelstudio
from evalset.cli import main
from evalset.io.guideline import read_guideline
from evalset.io.poolfiles import read_pool_pairs, read_tasks
from evalset.labelstudio.project import description_record
from evalset.labelstudio.push import pool_tasks, push_tasks
from tests.conftest import grade_annotation
from tests.support import browser

pytestmark = pytest.mark.labelstudio

REPO = Path(__file__).resolve().parents[1]
GUIDELINE = read_guideline(REPO / "guidelines" / "relevance-v2.md")
SIZES = [(1366, 768), (800, 768)]

# Every element of the instructions inside the box: the box does not scroll sideways, no block is wider than it
# is, and no element's right edge passes the box's content edge.
OVERFLOW = """box => {
  const edge = box.getBoundingClientRect().right - parseFloat(getComputedStyle(box).paddingRight);
  const wide = [];
  for (const el of [box, ...box.querySelectorAll('*')]) {
    const right = el.getBoundingClientRect().right;
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 || (el !== box && right > edge + 1))
      wide.push(`${el.tagName} scroll ${el.scrollWidth} client ${el.clientWidth} right ${right} edge ${edge}`);
  }
  return {client: box.clientWidth, scroll: box.scrollWidth, wide};
}"""


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text)


@pytest.fixture(scope="module")
def dl19_pool(shared_data, tmp_path_factory) -> Path:
    """The depth-10 pool of the official DL19 runs for the first 2 topics (as tests/test_labelstudio_server.py
    builds its pools)."""
    root = tmp_path_factory.mktemp("browser-pool")
    dl19 = shared_data / "dl19"
    queries = root / "topics.tsv"
    queries.write_text("\n".join((dl19 / "topics.tsv").read_text().splitlines()[:2]) + "\n")
    result = CliRunner().invoke(main, [str(a) for a in (
        "pool", dl19 / "runs" / "official_top100", "--depth", 10, "--queries", queries,
        "--corpus", dl19 / "passages.jsonl.gz", "-o", root / "pool")])
    assert result.exit_code == 0, result.output
    return root / "pool"


@pytest.fixture
def artefacts(tmp_path) -> Path:
    return browser.artefacts_dir(tmp_path)


def _push(ls_client, pool: Path, what: str):
    title = f"{what} {uuid.uuid4().hex[:8]}"
    labelstudio.push(ls_client, pool, GUIDELINE, title, progress=False)
    return labelstudio.find_project(ls_client, title)


def test_the_sanitiser_keeps_every_tag_and_class_of_the_instructions(ls_client, dl19_pool):
    project = _push(ls_client, dl19_pool, "sanitiser")
    assert project.expert_instruction == labelstudio.instructions_html(GUIDELINE)


# the interface evalset made before the definitions were shown on the buttons (the grades, hotkeys and control
# names were the same): a hint per choice, the body escaped in a <pre>
OLD_CONFIG = """<View>
  <Header value="Query"/>
  <Text name="query" value="$query" valueType="text"/>
  <Header value="Document"/>
  <Text name="text" value="$text" valueType="text"/>
  <Choices name="grade" toName="text" choice="single-radio" required="true" showInline="false">
""" + "".join(f'    <Choice value="{g.value} {g.name}" alias="{g.value}" hotkey="{g.value}" hint="{g.definition}"/>\n'
              for g in reversed(GUIDELINE.scale)) + """  </Choices>
  <TextArea name="comment" toName="text" rows="2" maxSubmissions="1" editable="true"/>
</View>
"""


def test_a_push_brings_an_older_interface_up_to_date_and_keeps_its_grades(ls_client, dl19_pool):
    title = f"old interface {uuid.uuid4().hex[:8]}"
    project = ls_client.projects.create(title=title, description=description_record(GUIDELINE),
                                        label_config=OLD_CONFIG, expert_instruction="<pre># Old</pre>")
    first = read_tasks(dl19_pool / "tasks.jsonl").iloc[:1].to_dict(orient="records")
    ls_client.projects.import_tasks(id=project.id, request=first)
    task = next(iter(ls_client.tasks.list(project=project.id)))
    me = ls_client.users.whoami()
    ls_client.annotations.create(**grade_annotation(task.id, me.id, 2))

    result = labelstudio.push(ls_client, dl19_pool, GUIDELINE, title, progress=False)
    assert "labeling interface and instructions updated to this evalset's (same guideline, same grades)" \
        in result.remarks
    assert "description updated to a sentence for annotators (the guideline's record kept at its end)" \
        in result.remarks
    updated = ls_client.projects.get(project.id)
    assert updated.label_config.strip() == labelstudio.labeling_config(GUIDELINE).strip()
    assert updated.expert_instruction == labelstudio.instructions_html(GUIDELINE)
    labels, report = labelstudio.pull(ls_client, title, dl19_pool, GUIDELINE)
    assert report.labels == 1 and labels["grade"].tolist() == [2]
    # the task pushed before has no place to show (the view leaves it blank); the new ones come after it
    tasks = sorted(labelstudio.export_snapshot(ls_client, project.id), key=lambda task: task["id"])
    assert "progress" not in tasks[0]["data"]
    assert [task["data"]["progress"] for task in tasks[1:3]] == [f"Pair {n} of {len(tasks)}" for n in (2, 3)]
    again = labelstudio.push(ls_client, dl19_pool, GUIDELINE, title, progress=False)
    assert not any("updated" in remark for remark in again.remarks) and again.added == 0


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_instructions_fit_their_box_and_the_grade_definitions_show_beside_the_buttons(
        label_studio, ls_client, dl19_pool, artefacts, width, height):
    project = _push(ls_client, dl19_pool, f"view {width}")
    with browser.launch() as chromium:
        page = browser.new_page(chromium, width, height)
        browser.log_in(page, label_studio.url, *browser.admin_login(label_studio.data_dir))
        browser.open_labeling(page, label_studio.url, project.id)
        box = page.locator(browser.INSTRUCTIONS)
        box.wait_for()
        browser.save_screenshot(page, f"instructions-{width}", artefacts)

        overflow = box.evaluate(OVERFLOW)
        assert overflow["wide"] == [] and overflow["scroll"] <= overflow["client"], overflow
        assert overflow["client"] <= width
        shown = box.inner_text()
        assert _words(shown) == _words(GUIDELINE.body)  # every word of the guideline, in order
        for marker in ("**", "`", "\n#", "\n- "):  # read as rendered text, not as Markdown source
            assert marker not in "\n" + shown
        assert box.locator("ul").first.evaluate("e => getComputedStyle(e).listStyleType") == "disc"
        assert box.locator("h2").count() == GUIDELINE.body.count("\n## ")
        for grade in GUIDELINE.scale:  # each definition of the scale: in the DOM, and on screen once scrolled to
            item = box.locator("li", has_text=f"{grade.value} {grade.name}").first
            assert item.count() == 1
            item.scroll_into_view_if_needed()
            assert item.is_visible()
            top, bottom = item.evaluate("e => [e.getBoundingClientRect().top, e.getBoundingClientRect().bottom]")
            assert top >= 0 and bottom <= height
        box.locator("h2").last.scroll_into_view_if_needed()
        browser.save_screenshot(page, f"instructions-{width}-end", artefacts)

        browser.close_instructions(page)
        choices = page.locator(f"{browser.LABELING} .lsf-choice")
        assert choices.count() == len(GUIDELINE.scale)
        view = page.locator(browser.LABELING)
        for index, grade in enumerate(sorted(GUIDELINE.scale, key=lambda g: -g.value)):
            choice = choices.nth(index)
            choice.scroll_into_view_if_needed()
            assert choice.is_visible()
            text = " ".join(choice.inner_text().split())
            assert text.startswith(f"{grade.value} {grade.name}: {grade.definition}"), text
            left, top, right, bottom = choice.evaluate("e => { const r = e.getBoundingClientRect(); "
                                                       "return [r.left, r.top, r.right, r.bottom]; }")
            assert left >= 0 and right <= width and top >= 0 and bottom <= height, (left, top, right, bottom)
            assert choice.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        assert view.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        browser.save_screenshot(page, f"labeling-{width}", artefacts)


def _submit(page) -> None:
    """Submit the task's annotation and wait for the server to take it and the next task to show."""
    with page.expect_response(lambda r: r.request.method == "POST" and "/annotations" in r.url) as answer:
        page.click(browser.SUBMIT)
    assert answer.value.status == 201, answer.value.status
    page.wait_for_function("() => !document.querySelector('.lsf-main-view .lsf-choice input:checked')")


def test_an_annotator_grades_with_a_hotkey_and_a_click_and_pull_returns_both(
        label_studio, ls_client, dl19_pool, artefacts):
    project = _push(ls_client, dl19_pool, "ui grading")
    email = f"ann-{uuid.uuid4().hex[:6]}@example.org"
    with browser.launch() as chromium:
        page = browser.new_page(chromium)
        browser.annotate(page, label_studio, project.id, email)

        page.click(browser.SUBMIT)  # no grade: refused, saying what to do
        warning = page.get_by_text("Choose a grade (keys 3, 2, 1, 0) before you submit.")
        warning.wait_for()
        browser.save_screenshot(page, "submit-without-grade", artefacts)
        assert 'Checkbox "grade"' not in page.locator("body").inner_text()
        page.get_by_role("button", name="OK").click()
        assert ls_client.projects.get(project.id).total_annotations_number == 0

        page.keyboard.press("2")
        checked = page.locator(f"{browser.LABELING} .lsf-choice input:checked")
        checked.wait_for()
        assert checked.count() == 1
        browser.save_screenshot(page, "hotkey-2", artefacts)
        _submit(page)

        page.locator(f"{browser.LABELING} .lsf-choice", has_text="0 Irrelevant").click()
        browser.save_screenshot(page, "click-0", artefacts)
        _submit(page)

    labels, report = labelstudio.pull(ls_client, project.title, dl19_pool, GUIDELINE)
    order = read_pool_pairs(dl19_pool / "pool.tsv").sort_values("order")
    first_two = list(zip(order["query_id"], order["doc_id"], strict=True))[:2]
    assert report.annotations == 2 and report.labels == 2
    got = dict(zip(zip(labels["query_id"], labels["doc_id"], strict=True), labels["grade"], strict=True))
    assert got == {first_two[0]: 2, first_two[1]: 0}
    assert set(labels["annotator"]) == {email}
    assert set(labels["kind"]) == {"human"}


# What the labeling view shows beside the task, and how wide the page is: the side panels' widths and the room
# left to the task, Label Studio's own counter, the document's width against the window's.
VIEW = """([panels, counter]) => ({
  panels: [...document.querySelectorAll(panels)].map(e => Math.round(e.getBoundingClientRect().width)),
  padding: (s => [s.paddingLeft, s.paddingRight])(getComputedStyle(document.querySelector('.lsf-sidepanels'))),
  task: Math.round(document.querySelector('.lsf-main-view').getBoundingClientRect().width),
  counter: [...document.querySelectorAll(counter)].map(e => Math.round(e.getBoundingClientRect().width)),
  scroll: document.documentElement.scrollWidth, window: window.innerWidth,
})"""
VIEW_SIZES = [(1366, 768), (800, 900)]


@pytest.mark.slow
@pytest.mark.parametrize(("width", "height"), VIEW_SIZES, ids=[f"{w}x{h}" for w, h in VIEW_SIZES])
def test_an_annotator_sees_how_far_they_are_with_no_side_panel_and_nothing_past_the_window(
        label_studio, ls_client, dl19_pool, artefacts, width, height):
    # a blind-mode title (the longest kind): the top bar cuts it rather than run past the window
    title = f"view {uuid.uuid4().hex[:8]} [annotator.one@example.org]"
    push_tasks(ls_client, pool_tasks(dl19_pool).iloc[:8], GUIDELINE, title, progress=False)
    project = labelstudio.find_project(ls_client, title)
    with browser.launch() as chromium:
        page = browser.new_page(chromium, width, height)
        browser.annotate(page, label_studio, project.id, f"ann-{uuid.uuid4().hex[:6]}@example.org")

        def shows(progress: str) -> dict:
            with contextlib.suppress(PlaywrightTimeout):  # the next task shows once the server has answered
                page.wait_for_function("([sel, text]) => document.querySelector(sel)?.innerText === text",
                                       arg=[browser.PROGRESS, progress], timeout=15_000)
            assert page.locator(browser.PROGRESS).inner_text() == progress
            assert page.locator(browser.PROGRESS).is_visible()
            view = page.evaluate(VIEW, [browser.SIDE_PANELS, browser.TASK_COUNT])
            assert all(panel == 0 for panel in view["panels"]), view  # hidden, or never made
            assert view["padding"] == ["0px", "0px"] and view["task"] == width, view
            assert view["counter"] == [0], view  # Label Studio's own counter: there, and hidden
            assert view["scroll"] <= view["window"] == width, view
            return view

        shows("Pair 1 of 8")
        browser.save_screenshot(page, f"view-{width}-first", artefacts)
        for done in range(1, 4):
            page.keyboard.press("2")
            page.locator(f"{browser.LABELING} .lsf-choice input:checked").wait_for()
            _submit(page)
            shows(f"Pair {done + 1} of 8")
        # a new page of the stream goes on where the annotator left off
        browser.open_labeling(page, label_studio.url, project.id)
        browser.close_instructions(page)
        shows("Pair 4 of 8")
        browser.save_screenshot(page, f"view-{width}-after-3", artefacts)
        assert ls_client.projects.get(project.id).total_annotations_number == 3

        # the data manager is Label Studio's own page (no labeling config in it): its toolbar does not fit 800 px
        page.goto(f"{label_studio.url}/projects/{project.id}/data")
        page.get_by_text("Label All Tasks").wait_for()
        browser.save_screenshot(page, f"data-manager-{width}", artefacts)
        scroll = page.evaluate("() => document.documentElement.scrollWidth")
        assert (scroll <= width) == (width > 1000), scroll
def _answer(page, method: str, path: str, action) -> int:
    """Run ``action`` and wait for the server's answer to the ``method`` request on a URL holding ``path``."""
    with page.expect_response(lambda r: r.request.method == method and path in r.url) as answer:
        action()
    return answer.value.status


def test_a_grade_withdrawn_by_skip_then_cancel_skip_and_a_grade_never_submitted_are_named_by_pull(
        label_studio, ls_client, dl19_pool, artefacts):
    # Submit, Skip, Cancel skip: Label Studio deletes the annotation and keeps its grade as a draft, still shown as
    # chosen; the next task's grade is chosen and left (the view saves it as a draft after a few seconds)
    project = _push(ls_client, dl19_pool, "cancel skip")
    email = f"ann-{uuid.uuid4().hex[:6]}@example.org"
    chosen = f"{browser.LABELING} .lsf-choice input:checked"
    with browser.launch() as chromium:
        page = browser.new_page(chromium)
        browser.annotate(page, label_studio, project.id, email)
        page.keyboard.press("2")
        page.locator(chosen).wait_for()
        _submit(page)
        assert ls_client.projects.get(project.id).total_annotations_number == 1

        page.click(browser.PREVIOUS_TASK)  # back to the submitted task: Skip withdraws it (Label Studio asks nothing)
        page.locator(browser.UPDATE).wait_for()
        assert _answer(page, "PATCH", "/api/annotations/", lambda: page.click(browser.SKIP)) == 200
        page.wait_for_function("() => !document.querySelector('.lsf-main-view .lsf-choice input:checked')")
        page.click(browser.PREVIOUS_TASK)  # back again: the skipped task offers Cancel skip
        page.locator(browser.CANCEL_SKIP).wait_for()
        browser.save_screenshot(page, "skipped-after-submit", artefacts)
        assert _answer(page, "DELETE", "/api/annotations/", lambda: page.click(browser.CANCEL_SKIP)) == 204
        page.locator(browser.SUBMIT).wait_for()
        shown = page.locator(chosen)
        assert shown.count() == 1 and shown.evaluate("e => e.closest('.lsf-choice').innerText").startswith("2 ")
        browser.save_screenshot(page, "after-cancel-skip", artefacts)
        assert ls_client.projects.get(project.id).total_annotations_number == 0  # the submitted grade is gone

        page.click(browser.NEXT_TASK)
        page.wait_for_function("() => !document.querySelector('.lsf-main-view .lsf-choice input:checked')")
        related = page.locator(f"{browser.LABELING} .lsf-choice", has_text="1 Related")
        assert _answer(page, "POST", "/drafts", related.click) == 201  # the view saves it after a few seconds
        assert page.locator(chosen).count() == 1
        browser.save_screenshot(page, "chosen-not-submitted", artefacts)

        labels, report = labelstudio.pull(ls_client, project.title, dl19_pool, GUIDELINE)
        order = read_pool_pairs(dl19_pool / "pool.tsv").sort_values("order")
        (q1, d1), (q2, d2) = list(zip(order["query_id"], order["doc_id"], strict=True))[:2]
        assert (report.annotations, report.labels, len(labels)) == (0, 0, 0)  # a draft is never turned into a label
        assert [(d.query_id, d.doc_id, d.annotator, d.grade, d.kind) for d in report.drafts] == [
            (q1, d1, email, 2, "withdrawn"), (q2, d2, email, 1, "not submitted")]
        text = report.to_text()
        assert "warning: 2 grade(s) held as drafts in Label Studio are not submitted, so not in the labels:" in text
        task1, task2 = (draft.task_id for draft in report.drafts)
        assert (f"  withdrawn: {email} submitted {q1}/{d1}, then withdrew it (Skip, then Cancel skip): Label Studio "
                f"deleted the grade and holds 2 as their draft; to restore it, they open task {task1} of project "
                f"{project.id} and press Submit") in text.splitlines()
        assert (f"  not submitted: {email} chose 1 for {q2}/{d2} and never submitted it; to make it a grade, they "
                f"open task {task2} of project {project.id} and press Submit") in text.splitlines()

        # what the warning says to do: back to the withdrawn task, Submit; the grade is a label again
        page.click(browser.PREVIOUS_TASK)
        page.locator(browser.SUBMIT).wait_for()
        page.locator(chosen).wait_for()
        assert _answer(page, "POST", "/annotations", lambda: page.click(browser.SUBMIT)) == 201

    labels, report = labelstudio.pull(ls_client, project.title, dl19_pool, GUIDELINE)
    assert labels[["query_id", "doc_id", "annotator", "grade"]].values.tolist() == [[q1, d1, email, 2]]
    assert [(d.query_id, d.kind) for d in report.drafts] == [(q2, "not submitted")]
