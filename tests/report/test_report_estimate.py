"""The report's PPI++ section: a set whose humans graded a slice of the queries the LLM graded shows the estimates
of `evalset estimate` on that slice; a set graded in full by humans shows none."""

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.estimate import select_slice
from evalset.estimate.frozen import set_slice
from evalset.io.guideline import read_guideline
from evalset.io.setfolder import load_set
from evalset.io.trec import read_qrels, read_run, write_qrels
from evalset.render import number
from evalset.report import collect, render_html
from evalset.sets import freeze
from evalset.sets.inputs import read_judgments

REPO = Path(__file__).resolve().parents[2]
DL19 = REPO / "data" / "dl19"
LLM = DL19 / "llm_labels" / "llama-3-70b.fourprompts.qrels"
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
RUNS = ("bm25base_p", "idst_bert_p1", "bm25tuned_p")
PLANNED = [("bm25base_p", "idst_bert_p1"), ("bm25base_p", "bm25tuned_p")]
FAST = {"resamples": 2000, "permutations": 2000}
FIGURES = ["human_mean", "human_low", "human_high", "estimate", "low", "high", "llm_mean", "effective_n"]
TITLE = "Estimates from LLM grades and the human slice (PPI++)"


def _freeze(human: Path, folder: Path):
    judgments = read_judgments([human], [LLM])
    return load_set(freeze(judgments, _topics(), read_guideline(GUIDELINE), "dl19", folder, planned=PLANNED).path)


def _topics():
    from evalset.io.queries import read_queries

    return read_queries(DL19 / "topics.tsv")


@pytest.fixture(scope="module")
def sliced(tmp_path_factory):
    """NIST's grades of a random slice of 10 of the 43 queries, the LLM's on all 43: the set, its slice record
    (as `evalset estimate select` would write it) and the files."""
    folder = tmp_path_factory.mktemp("sliced")
    nist = read_qrels(DL19 / "nist.qrels")
    record = select_slice(sorted(nist["query_id"].unique()), size=10, seed=20191)
    human = folder / "nist-slice.qrels"
    write_qrels(nist[nist["query_id"].isin(record.slice)], human)
    (folder / "slice.json").write_text(json.dumps(record.to_dict()))
    return _freeze(human, folder / "sets"), record, human, folder / "slice.json"


@pytest.fixture(scope="module")
def runs():
    return {name: read_run(DL19 / "runs" / f"{name}.run.gz") for name in RUNS}


@pytest.fixture(scope="module")
def sliced_data(sliced, runs):
    return collect(sliced[0], runs, **FAST)


@pytest.mark.slow
def test_the_estimates_are_those_of_evalset_estimate_on_the_human_graded_slice(sliced, sliced_data):
    _, record, human, slice_json = sliced
    estimate = sliced_data.estimate
    assert estimate.record.design == "as frozen" and estimate.record.slice == record.slice
    assert len(estimate.record.queries) == 43 and estimate.settings["slice"] == 10
    result = CliRunner().invoke(main, [
        "estimate", "run", "slice", *(str(DL19 / "runs" / f"{name}.run.gz") for name in RUNS),
        "--llm", str(LLM),
        "--human", str(human), "--slice", str(slice_json), "--planned", "2", "--format", "json",
        *(arg for baseline, candidate in PLANNED for arg in ("--compare", f"{baseline}:{candidate}"))])
    assert result.exit_code == 0, result.output
    expected = json.loads(result.output)
    assert estimate.runs["run"].tolist() == [row["run"] for row in expected["runs"]] == list(RUNS)
    for row, want in zip(estimate.runs.to_dict("records"), expected["runs"], strict=True):
        assert [row[f] for f in FIGURES] == pytest.approx([want[f] for f in FIGURES], abs=1e-12)
        assert row["human_low"] < row["human_mean"] < row["human_high"] and row["low"] < row["estimate"] < row["high"]
    for row, want in zip(estimate.comparisons.to_dict("records"), expected["comparisons"], strict=True):
        assert (row["baseline"], row["candidate"], row["level"], row["verdict"]) == (
            want["baseline"], want["candidate"], want["level"], want["verdict"])
        assert [row[f] for f in FIGURES] == pytest.approx([want[f] for f in FIGURES], abs=1e-12)
    assert [c["level"] for c in expected["comparisons"]] == [0.975, 0.975]  # the page's thresholds: 0.05 / 2
    assert [c.result.threshold for c in sliced_data.comparisons] == [0.025, 0.025]
    assert expected["comparisons"][0]["verdict"].startswith("established: candidate better")
    assert expected["comparisons"][1]["verdict"].startswith("not established")


@pytest.mark.slow
def test_the_page_shows_the_section_with_each_run_and_comparison(sliced_data):
    page = render_html(sliced_data)
    assert page.count(TITLE) == 1
    section = page[page.index(TITLE):page.index("</section>", page.index(TITLE))]
    summary = page[page.index('<section id="summary">'):page.index("</section>")]  # the page's first section
    assert ("The verdicts of the PPI++ estimates from the LLM grades and the human slice are in "
            '<a href="#estimates">their section</a>.') in summary
    assert f'<section id="estimates">\n<h2>{TITLE}</h2>' in page
    assert "43 queries of the split have LLM grades, 10 of them human grades too" in section
    assert "taken as a random slice" in section
    assert "<th>human-only (10 q)</th><th>PPI++ (43 q)</th><th>LLM-only</th><th>effective n</th>" in section

    def interval(row, centre, prefix="", sign=False):
        return (f"{number(row[centre], sign=sign)} [{number(row[prefix + 'low'], sign=sign)}, "
                f"{number(row[prefix + 'high'], sign=sign)}]")

    for row in sliced_data.estimate.runs.to_dict("records"):
        assert (f"<tr><td>{row['run']}</td><td class=\"num\">{interval(row, 'human_mean', 'human_')}</td>"
                f"<td class=\"num\">{interval(row, 'estimate')}</td><td class=\"num\">{number(row['llm_mean'])}</td>"
                f"<td class=\"num\">{number(row['effective_n'], 1)}</td></tr>") in section
    for row in sliced_data.estimate.comparisons.to_dict("records"):
        assert (f"<tr><td>{row['candidate']} - {row['baseline']}</td><td class=\"num\">0.975</td>"
                f"<td class=\"num\">{interval(row, 'human_mean', 'human_', True)}</td>"
                f"<td class=\"num\">{interval(row, 'estimate', sign=True)}</td>") in section
        assert f"<td>{row['verdict']}</td>" in section
    # best PPI++ estimate first
    assert section.index("<td>idst_bert_p1</td>") < section.index("<td>bm25base_p</td>") < section.index(
        "<td>bm25tuned_p</td>")


@pytest.mark.slow
def test_a_set_graded_in_full_by_humans_has_no_estimate_section(tmp_path, runs):
    frozen = _freeze(DL19 / "nist.qrels", tmp_path)
    assert set(frozen.labels["kind"]) == {"human", "llm"}
    data = collect(frozen, runs, **FAST)
    assert data.estimate is None and data.estimate_note == ""
    assert TITLE not in render_html(data) and "PPI++" not in render_html(data)


@pytest.mark.slow
def test_what_counts_as_an_llm_graded_part(sliced):
    frozen = sliced[0]
    labels = frozen.labels
    human = labels[labels["kind"] == "human"]
    one_human_query = labels[(labels["kind"] == "llm") | (labels["query_id"] == human["query_id"].iloc[0])]
    assert set_slice(dataclasses.replace(frozen, labels=one_human_query)) is None
    assert set_slice(dataclasses.replace(frozen, labels=human)) is None  # no LLM label
    llm_on_the_slice = labels[labels["query_id"].isin(human["query_id"])]
    assert set_slice(dataclasses.replace(frozen, labels=llm_on_the_slice)) is None  # nothing unlabelled
    # on a split, only that split's queries count
    slice_ids = sorted(set(human["query_id"]))
    dev = set(slice_ids[:9]) | set(sorted(set(labels["query_id"]) - set(slice_ids))[:5])
    queries = frozen.queries.assign(split=frozen.queries["query_id"].map(lambda q: "dev" if q in dev else "test"))
    split = dataclasses.replace(frozen, queries=queries)
    assert set_slice(split, "test") is None  # one human-graded query left in test
    record = set_slice(split, "dev")
    assert record.slice == tuple(slice_ids[:9]) and len(record.queries) == 14


@pytest.mark.slow
def test_a_stratum_with_too_few_human_graded_queries_is_said_on_the_page(sliced, runs):
    frozen = sliced[0]
    slice_ids = sorted(frozen.labels.loc[frozen.labels["kind"] == "human", "query_id"].unique())
    others = sorted(set(frozen.queries["query_id"]) - set(slice_ids))
    lone = frozen.queries["query_id"].isin([slice_ids[0], *others[:3]])  # a stratum with one human-graded query
    queries = frozen.queries.assign(stratum=lone.map({True: "tail", False: "head"}),
                                    stratum_share=lone.map({True: 0.2, False: 0.8}))
    data = collect(dataclasses.replace(frozen, queries=queries), {"bm25base_p": runs["bm25base_p"]}, **FAST)
    assert data.estimate is None
    assert "no estimate could be made: stratum tail: 1 human-graded slice queries" in data.estimate_note
    page = render_html(data)
    assert f"<h2>{TITLE}</h2>\n<p class=\"none\">The set has an LLM-graded part" in page


@pytest.mark.slow
def test_a_stratified_set_shows_each_stratum_and_the_traffic_weighted_estimate(sliced, runs):
    frozen = sliced[0]
    slice_ids = sorted(frozen.labels.loc[frozen.labels["kind"] == "human", "query_id"].unique())
    others = sorted(set(frozen.queries["query_id"]) - set(slice_ids))
    tail = frozen.queries["query_id"].isin([*slice_ids[:3], *others[:7]])
    queries = frozen.queries.assign(stratum=tail.map({True: "tail", False: "head"}),
                                    stratum_share=tail.map({True: 0.2, False: 0.8}))
    data = collect(dataclasses.replace(frozen, queries=queries), {"bm25base_p": runs["bm25base_p"]}, **FAST)
    table = data.estimate.runs.set_index("stratum")
    assert table.index.tolist() == ["head", "tail", "weighted"]
    assert table.loc["weighted", "estimate"] == pytest.approx(0.8 * table.loc["head", "estimate"]
                                                             + 0.2 * table.loc["tail", "estimate"])
    page = render_html(data)
    assert "<td>head (7 of 33)</td>" in page and "<td>tail (3 of 10)</td>" in page
    assert "<td>weighted (10 of 43)</td>" in page and "(per stratum, then traffic-weighted)" in page


@pytest.mark.slow
def test_the_missing_queries_rule_the_report_was_given_holds_for_its_estimates_too(sliced, runs):
    """A run lacking two queries of the slice: refused by the report unless -c missing=is chosen, and then the
    estimates follow the same choice (they said "no estimate could be made" before)."""
    frozen, record, *_ = sliced
    lacking = [record.slice[0], record.slice[1]]
    short = {**runs, "bm25tuned_p": runs["bm25tuned_p"][~runs["bm25tuned_p"]["query_id"].isin(lacking)]}
    data = collect(frozen, short, missing="zero", **FAST)
    assert data.estimate is not None and data.estimate_note == ""
    row = data.estimate.runs.set_index("run").loc["bm25tuned_p"]
    full = collect(frozen, runs, **FAST).estimate.runs.set_index("run").loc["bm25tuned_p"]
    assert row["estimate"] != full["estimate"] and row["human_mean"] < full["human_mean"]  # two slice queries at 0
    assert any("bm25tuned_p" in caveat and "lacks 2" in caveat for caveat in data.estimate.caveats)
    assert collect(frozen, short, missing="skip", **FAST).estimate is not None
