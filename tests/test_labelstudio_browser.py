"""What an annotator sees and does in the real Label Studio, in Debian's headless Chromium (tests/support/browser.py):
the guideline's instructions fit their box, rendered (no raw Markdown); the grade definitions are read beside the
buttons without hovering; a grade given with a hotkey and one given with a click come back through pull. Without
the browser: the sanitiser keeps the instructions as written, and a project made with an older interface gets
the new one on push, its annotations intact.

Screenshots of each state go to $EVALSET_ARTEFACTS (.ci/run sets it) or the test's tmp_path.
"""

import re
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset import labelstudio
from evalset.cli import main
from evalset.io.guideline import read_guideline
from evalset.io.poolfiles import read_pool_pairs, read_tasks
from evalset.labelstudio.project import description_record
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
        browser.sign_up(page, label_studio.url, email, f"pw-{uuid.uuid4().hex}",
                        browser.invite_token(label_studio.url, label_studio.api_key))
        browser.open_labeling(page, label_studio.url, project.id)
        browser.close_instructions(page)

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
