"""The report's figures are readable on a 1366 x 768 screen: no text under 9 px as the page shows it, no two texts
overlapping, none leaving its figure, no marker on an axes' frame (evalset.report.legibility measures them from
matplotlib's extents). The page's tables, in a real browser, are in test_report_browser.py."""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure

from evalset.cli import main
from evalset.io.setfolder import load_set
from evalset.io.trec import read_run
from evalset.report import collect, plots
from evalset.report.legibility import MIN_TEXT_PX, check_figure, check_report, displayed_px

REPO = Path(__file__).resolve().parents[2]
DL19 = REPO / "data" / "dl19"  # the demo's data (scripts/demo.sh)
GUIDELINE = str(REPO / "guidelines" / "relevance-v2.md")
FAST = {"resamples": 500, "permutations": 500}  # the figures' layout does not depend on them


def _cli(*args: str) -> None:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output


def _figures(draw) -> list[Figure]:
    with plots.saved_figures() as figures:
        draw()
    return figures


def _problems(draw) -> list[str]:
    return [p for figure in _figures(draw) for p in check_figure(figure, plots.DPI).problems]


# ------------------------------------------------------------------------------------------ the demo's reports
@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's two sets: DL19 with NIST's and the LLMs' grades (its agreement block), and a set of NIST's grades
    on 10 of the 43 topics with Llama-3-70B's on all (its report has the 2 x 2 heatmap and the PPI++ section)."""
    out = tmp_path_factory.mktemp("demo")
    llm = sorted(str(path) for path in (DL19 / "llm_labels").glob("*.qrels"))
    _cli("agreement", str(DL19 / "nist.qrels"), *llm, "--human", "nist", "--guideline", GUIDELINE, "--runs",
         str(DL19 / "runs"), "--resamples", "0", "-o", str(out / "agreement"))
    _cli("freeze", str(DL19 / "nist.qrels"), *[a for path in llm for a in ("--llm", path)], "--queries",
         str(DL19 / "topics.tsv"), "--guideline", GUIDELINE, "--name", "dl19", "--sets-dir", str(out / "sets"),
         "--plan", "bm25base_p:idst_bert_p1", "--plan", "bm25base_p:bm25tuned_p")
    qrels = pd.read_csv(DL19 / "nist.qrels", sep=" ", header=None, dtype=str)
    picked = np.random.default_rng(3).choice(sorted(qrels[0].unique()), 10, replace=False)
    qrels[qrels[0].isin(picked)].to_csv(out / "slice.qrels", sep=" ", header=False, index=False)
    _cli("freeze", str(out / "slice.qrels"), "--llm", str(DL19 / "llm_labels" / "llama-3-70b.fourprompts.qrels"),
         "--queries", str(DL19 / "topics.tsv"), "--guideline", GUIDELINE, "--name", "dl19-slice", "--sets-dir",
         str(out / "sets"), "--plan", "bm25base_p:idst_bert_p1")
    runs = {path.name.split(".")[0]: read_run(path) for path in sorted((DL19 / "runs").glob("*.run.gz"))}
    full = collect(load_set(out / "sets" / "dl19" / "v1"), runs,
                   agreement=json.loads((out / "agreement" / "agreement.json").read_text()), **FAST)
    three = {name: runs[name] for name in ("bm25base_p", "bm25tuned_p", "idst_bert_p1")}
    return {"report": full, "report-slice": collect(load_set(out / "sets" / "dl19-slice" / "v1"), three, **FAST)}


@pytest.mark.slow
@pytest.mark.parametrize("report", ["report", "report-slice"])
def test_the_demos_report_figures_are_readable_at_1366x768(demo, report):
    checks = check_report(demo[report])
    assert len(checks) == {"report": 6, "report-slice": 5}[report]  # every figure of the page was checked
    assert [problem for check in checks for problem in check.problems] == []
    assert min(check.smallest_px for check in checks) >= MIN_TEXT_PX
    assert all(len(check.texts) > 5 for check in checks)  # the texts were found


# -------------------------------------------------------------------------------------- the rules, one by one
def test_displayed_size_is_the_font_at_the_dpi_shrunk_to_the_page_column():
    assert displayed_px(6, 100, 900) == pytest.approx(8.33, abs=0.01)  # shown at its own width
    assert displayed_px(9, 100, 2200) == pytest.approx(6.25)  # shrunk to the 1100 px column: half
    assert displayed_px(9, 100, 2200, page_width_px=2200) == pytest.approx(12.5)


def test_the_check_finds_small_overlapping_and_cut_text_and_a_marker_on_the_frame():
    figure = Figure(figsize=(4, 3))
    axes = figure.subplots()
    axes.plot([0, 1], [0, 1], "o", markersize=6)
    axes.set_xlim(0, 1)  # both markers sit on the frame
    axes.text(0.5, 0.5, "one", fontsize=10)
    axes.text(0.52, 0.5, "two", fontsize=10)  # over "one"
    axes.text(0.2, 0.8, "tiny", fontsize=5)
    figure.text(0.98, 0.5, "cut at the right", fontsize=10)
    check = check_figure(figure, plots.DPI)
    assert check.small == ("'tiny' is 6.9 px tall (under 9)",)
    assert "'one' overlaps 'two'" in check.overlaps
    assert len(check.outside) == 1 and check.outside[0].startswith("'cut at the right' leaves the figure by")
    assert len(check.markers) == 2
    assert check.smallest_px == pytest.approx(5 * 100 / 72)


def test_rotated_labels_overlap_only_when_their_glyph_boxes_do():
    figure = Figure(figsize=(4, 3))
    axes = figure.subplots()
    axes.set_xticks([0, 1], ["a-long-rotated-label", "another-long-label"], rotation=45, ha="right",
                    rotation_mode="anchor")
    axes.set_xlim(-1, 2)
    figure.tight_layout()
    assert check_figure(figure, plots.DPI).overlaps == ()  # their window extents (axis-aligned) do overlap


def test_a_strip_plot_keeps_dots_at_0_and_1_off_the_frame():
    values = pd.Series([0.0, 0.5, 1.0], index=["none", "half", "all"])
    assert _problems(lambda: plots.strip_plot(values, "judged@10")) == []


def test_a_two_by_two_heatmap_with_a_long_name_has_room_for_its_texts():
    matrix = pd.DataFrame([[1.0, 0.29], [0.29, 1.0]], index=["slice", "llama-3-70b.fourprompts"],
                          columns=["slice", "llama-3-70b.fourprompts"])
    assert _problems(lambda: plots.heatmap(matrix, "kappa_quadratic")) == []


@pytest.mark.parametrize("queries", [43, pytest.param(400, marks=pytest.mark.slow)])
def test_a_difference_plot_names_as_many_queries_as_fit_the_largest_differences_first(queries):
    differences = pd.Series(np.sort(np.random.default_rng(1).normal(0, 0.2, queries)),
                            index=[str(1_000_000 + k) for k in range(queries)])
    result = SimpleNamespace(mean_difference=float(differences.mean()), metric="ndcg@10", candidate="c",
                             baseline="b")
    (figure,) = _figures(lambda: plots.difference_plot(differences, result))
    assert check_figure(figure, plots.DPI).problems == ()
    named = [label.get_text() for label in figure.axes[0].get_xticklabels()]
    if queries == 43:
        assert named == list(differences.index)
    else:
        assert 20 < len(named) < queries
        assert named[0] == differences.index[0] and named[-1] == differences.index[-1]  # the largest |differences|
        assert f"{len(named)} named, the largest |differences|" in figure.axes[0].get_xlabel()


def test_a_strip_of_37_near_equal_shares_is_as_tall_as_its_largest_stack_not_as_the_runs():
    # DL19's judged@10 over its 37 runs: 14 at 0.988, one at 0.998, 22 at 1.000 (a row per run drew it 954 px tall)
    values = pd.Series([0.988] * 14 + [0.998] + [1.0] * 22, index=[f"run{k}" for k in range(37)])
    (figure,) = _figures(lambda: plots.strip_plot(values, "judged@10"))
    assert check_figure(figure, plots.DPI).problems == ()
    assert figure.get_figheight() * plots.DPI == pytest.approx(100 * 1.1 + 9 * 22)  # 308 px: 22 dots stacked
    (dots,) = figure.axes[0].lines
    assert sorted(zip(dots.get_xdata(), dots.get_ydata(), strict=True)) == sorted(
        [(0.988, k) for k in range(14)] + [(0.998, 0)] + [(1.0, k) for k in range(22)])
    assert [text.get_text() for text in figure.axes[0].texts] == ["14", "22"]
    spread = pd.Series(np.linspace(0.3, 1.0, 37), index=values.index)  # no two within a dot's width: one row
    (flat,) = _figures(lambda: plots.strip_plot(spread, "judged@10"))
    assert flat.get_figheight() * plots.DPI == pytest.approx(100 * 1.1 + 9) and len(flat.axes[0].texts) == 0


def test_the_ranking_is_one_plot_a_row_per_run_with_its_letter_groups_beside():
    names = [f"run{k:02d}" for k in range(37)]
    means = np.linspace(0.8, 0.1, 37)
    scores = pd.DataFrame({"mean": means, "ci_low": means - 0.05, "ci_high": means + 0.05}, index=names)
    letters = {name: "a" if k < 10 else "ab" if k < 20 else "b" if k < 30 else "c" for k, name in enumerate(names)}
    letters["run05"] = "ab"  # a group whose runs are not contiguous in the ranking
    (figure,) = _figures(lambda: plots.ranking_plot(scores.iloc[::-1], "ndcg@10", 0.95, letters,
                                                    {"run36": (0.05, 0.12)}))
    assert check_figure(figure, plots.DPI).problems == ()
    assert figure.get_figheight() * plots.DPI == pytest.approx(110 + 16 * 37)  # 702 px: 16 px a row
    axes, panel = figure.axes
    assert [label.get_text() for label in axes.get_yticklabels()] == names  # the best on top
    assert [label.get_text() for label in panel.get_xticklabels()] == ["a", "b", "c"]
    assert len(panel.lines) == sum(len(own) for own in letters.values())  # one bar per run in each of its groups
    assert "orange: the range over the holes" in axes.get_xlabel()
