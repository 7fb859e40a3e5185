"""The HTML report in a real headless Chromium (Debian's package): it loads with no console error, requests
nothing outside the file, and a full-page screenshot is taken; at 1366 x 768 (through Playwright, the driver only)
no number of a table wraps onto a second line and every image is shown at the width evalset.report.legibility
assumes; the report of DL19's 37 runs answers on its first screen (the planned verdicts, the best run) and fits a
screen 800 px wide.

Skipped, saying why, only when no Chromium is installed (scripts/install-chromium.sh installs it). Set
EVALSET_REPORT_SCREENSHOT=PATH to keep the screenshot of the DL19 report, EVALSET_ARTEFACTS=FOLDER to keep the
1366 x 768 one (report-1366x768.png) and the first screens of the 37-run report
(report-first-screen-1366x768.png, report-first-screen-800x900.png).
"""

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

from evalset.io.annotations import labels_from_file
from evalset.io.guideline import read_guideline
from evalset.io.queries import read_queries
from evalset.io.setfolder import load_set
from evalset.io.trec import read_run
from evalset.report import build_report, collect, render_html
from evalset.report.plots import PAGE_WIDTH_PX
from evalset.sets import freeze
from evalset.stats.verdicts import css_class, decide
from tests.support.browser import artefacts_dir, launch, new_page, save_screenshot

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_html_in_chromium", REPO / "scripts" / "check_html_in_chromium.py")
chromium_check = sys.modules.setdefault(_spec.name, importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(chromium_check)

pytestmark = [pytest.mark.service, pytest.mark.skipif(
    chromium_check.find_chromium() is None,
    reason="Chromium is not installed: run scripts/install-chromium.sh (apt-get install chromium)")]

AGREEMENT = {"matrix": {"kappa": "kappa_linear", "annotators": ["nist", "<b>llm</b>", "llm&2"],
                        "values": [[1.0, 0.42, 0.35], [0.42, 1.0, None], [0.35, None, 1.0]]},
             "alpha_ordinal": 0.38}


def _dl19_set(root, folder):
    return load_set(freeze(labels_from_file(root / "qrels.txt", "human"), read_queries(root / "topics.tsv"),
                           read_guideline(REPO / "guidelines" / "relevance-v2.md"), "dl19", folder / "sets",
                           planned=[("bm25base_p", "idst_bert_p1"), ("bm25base_p", "bm25tuned_p")],
                           agreement=AGREEMENT).path)


@pytest.fixture(scope="module")
def dl19_page(shared_data, tmp_path_factory):
    """The DL19 report of 3 runs (its comparison table holds 9.559e-09, the number a narrow cell broke in two)."""
    root, folder = shared_data / "dl19", tmp_path_factory.mktemp("report")
    runs = {name: read_run(root / "runs" / "official_top100" / f"{name}.run.gz")
            for name in ("bm25base_p", "idst_bert_p1", "bm25tuned_p")}
    page = folder / "report.html"
    page.write_text(build_report(_dl19_set(root, folder), runs, resamples=1000, permutations=1000), encoding="utf-8")
    return page


@pytest.fixture(scope="module")
def dl19_all_runs(shared_data, tmp_path_factory):
    """The DL19 report of the 37 official runs, the page a reader checked (its data, and the page's file)."""
    root, folder = shared_data / "dl19", tmp_path_factory.mktemp("report37")
    runs = {path.name.split(".")[0]: read_run(path)
            for path in sorted((root / "runs" / "official_top100").glob("*.run.gz"))}
    data = collect(_dl19_set(root, folder), runs, resamples=1000, permutations=1000)
    page = folder / "report.html"
    page.write_text(render_html(data), encoding="utf-8")
    return data, page


def test_the_dl19_report_loads_without_error_and_is_screenshot(dl19_page):
    check = chromium_check.check_page(dl19_page)

    assert check.errors == []
    assert check.external_requests == []
    assert check.title == "evalset report: dl19 v1"
    assert check.screenshot.startswith(b"\x89PNG\r\n\x1a\n")
    assert check.width == 1280 and check.height > 3000  # every section laid out, not an empty page
    if os.environ.get("EVALSET_REPORT_SCREENSHOT"):
        Path(os.environ["EVALSET_REPORT_SCREENSHOT"]).write_bytes(check.screenshot)


def test_the_check_catches_console_errors_exceptions_and_outside_requests(tmp_path):
    # the control: a page that does what the report must never do
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"><title>bad</title></head><body>'
                    '<img src="http://127.0.0.1:9/x.png" alt="">'
                    '<script>console.error("boom"); throw new Error("uncaught one");</script></body></html>')
    check = chromium_check.check_page(page)
    assert "console.error: boom" in check.errors
    assert any("uncaught one" in error for error in check.errors)
    assert check.external_requests == ["http://127.0.0.1:9/x.png"]


def test_chromium_is_the_system_package():
    # the issue asks for Chromium from the system packages, not a browser downloaded by a test tool
    assert Path(shutil.which("chromium") or chromium_check.find_chromium()).resolve().parts[1] == "usr"


# a cell's text spans two lines when its text's box is taller than 1.5 lines
WRAPPED_NUMBERS = """() => [...document.querySelectorAll("td.num")].map(cell => {
    const text = document.createRange();
    text.selectNodeContents(cell);
    return [cell.textContent, text.getBoundingClientRect().height, parseFloat(getComputedStyle(cell).lineHeight)];
}).filter(([, height, line]) => height > 1.5 * line)"""
IMAGES = "() => [...document.images].map(image => [image.naturalWidth, image.getBoundingClientRect().width])"


def test_at_1366x768_no_number_wraps_and_images_show_at_their_width(dl19_page, tmp_path):
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    folder = Path(os.environ.get("EVALSET_ARTEFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_check.find_chromium(), args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])  # Debian's Chromium: Playwright never downloads one
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(dl19_page.as_uri())
            wrapped, images = page.evaluate(WRAPPED_NUMBERS), page.evaluate(IMAGES)
            cells = page.evaluate("() => [...document.querySelectorAll('td.num')].map(cell => cell.textContent)")
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            page.screenshot(path=str(folder / "report-1366x768.png"), full_page=True)
        finally:
            browser.close()
    assert "9.559e-09" in cells
    assert wrapped == []
    assert overflow <= 0  # nowrap did not push a table past the screen
    assert len(images) == 6 and all(shown == min(natural, PAGE_WIDTH_PX) for natural, shown in images)
    assert (folder / "report-1366x768.png").read_bytes().startswith(b"\x89PNG")


# where the answers are on the first screen: the summary's verdicts (class, text, top, bottom) and its best run
FIRST_SCREEN = """() => {
    const box = element => element.getBoundingClientRect();
    const best = document.querySelector("#summary .best");
    return {verdicts: [...document.querySelectorAll("#summary td.verdict > span")].map(
                span => [span.className, span.textContent, box(span).top, box(span).bottom]),
            best: [best.textContent, box(best).top, box(best).bottom]};
}"""
# how wide the page is: the document's scroll width, each table's and each image's right edge
WIDTHS = """() => ({document: document.documentElement.scrollWidth,
    tables: [...document.querySelectorAll("table")].map(table => table.getBoundingClientRect().right),
    images: [...document.images].map(image => image.getBoundingClientRect().right)})"""


@pytest.mark.slow
def test_the_37_run_report_answers_on_its_first_screen_and_fits_a_screen_800_px_wide(dl19_all_runs, tmp_path):
    data, path = dl19_all_runs
    folder = artefacts_dir(tmp_path)
    with launch() as browser:
        wide = new_page(browser, width=1366, height=768)
        wide.goto(path.as_uri())
        first = wide.evaluate(FIRST_SCREEN)
        save_screenshot(wide, "report-first-screen-1366x768", folder)
        narrow = new_page(browser, width=800, height=900)
        narrow.goto(path.as_uri())
        widths = narrow.evaluate(WIDTHS)
        save_screenshot(narrow, "report-first-screen-800x900", folder)
        narrow.set_content('<table><tr><td style="white-space: nowrap">' + "wide " * 300 + "</td></tr></table>")
        control = narrow.evaluate(WIDTHS)  # the measure sees a table wider than the screen
    assert len(data.scores) == 37
    # the planned verdicts, as the comparisons decided them, within the first screen at 1366 x 768
    assert [(kind, text) for kind, text, _, _ in first["verdicts"]] == [
        (css_class(decide(c.result.evidence).word), c.result.verdict) for c in data.comparisons]
    assert [kind for kind, *_ in first["verdicts"]] == ["established", "not-established"]
    assert all(0 <= top < bottom <= 768 for _, _, top, bottom in first["verdicts"])
    # the best run named on it
    name, top, bottom = first["best"]
    assert name == data.scores["mean"].idxmax() == "idst_bert_p1" and 0 <= top < bottom <= 768
    # at 800 px wide nothing is wider than the screen
    assert widths["document"] <= 800
    assert len(widths["tables"]) == 12 and max(widths["tables"]) <= 800
    assert len(widths["images"]) == 6 and max(widths["images"]) <= 800
    assert control["document"] > 800 and control["tables"][0] > 800
    for name in ("report-first-screen-1366x768", "report-first-screen-800x900"):
        assert (folder / f"{name}.png").read_bytes().startswith(b"\x89PNG")
