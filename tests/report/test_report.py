"""The HTML report: what it computes (scores, intervals, verdicts, agreement matrix) and how it writes it
(escaped, self-contained, deterministic). The browser check is in test_report_browser.py."""

import dataclasses
import gzip
import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.annotations import labels_from_file
from evalset.io.comparisonlog import ComparisonLog
from evalset.io.guideline import read_guideline
from evalset.io.queries import read_queries
from evalset.io.setfolder import load_set
from evalset.io.trec import read_run
from evalset.metrics import evaluate
from evalset.report import agreement_matrix, build_report, collect, render_html
from evalset.sets import freeze
from evalset.stats.verdicts import css_class, decide

REPO = Path(__file__).resolve().parents[2]
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
RUNS = ("bm25base_p", "idst_bert_p1", "bm25tuned_p")
PLANNED = [("bm25base_p", "idst_bert_p1"), ("bm25base_p", "bm25tuned_p")]
FAST = {"resamples": 2000, "permutations": 2000}
PNG = 'src="data:image/png;base64,'


@pytest.fixture(scope="module")
def dl19_set(shared_data, tmp_path_factory):
    """The DL19 NIST qrels frozen as a set, with the two planned comparisons of the issue."""
    root = shared_data / "dl19"
    target = freeze(labels_from_file(root / "qrels.txt", "human"), read_queries(root / "topics.tsv"),
                    read_guideline(GUIDELINE), "dl19", tmp_path_factory.mktemp("sets"), planned=PLANNED)
    return load_set(target.path)


@pytest.fixture(scope="module")
def dl19_runs(shared_data):
    folder = shared_data / "dl19" / "runs" / "official_top100"
    return {name: read_run(folder / f"{name}.run.gz") for name in RUNS}


@pytest.fixture(scope="module")
def dl19_data(dl19_set, dl19_runs):
    return collect(dl19_set, dl19_runs, **FAST)


@pytest.fixture(scope="module")
def dl19_page(dl19_set, dl19_runs):
    return build_report(dl19_set, dl19_runs, **FAST)


# ------------------------------------------------------------------------------------------------ the numbers
@pytest.mark.slow
def test_scores_are_nists_published_ndcg_at_10(dl19_data, shared_data):
    nist = json.loads((shared_data / "dl19" / "nist_summaries.json").read_text())
    for name in RUNS:
        assert dl19_data.scores.loc[name, "mean"] == pytest.approx(nist[name]["trec_eval"]["ndcg_cut_10"], abs=5e-5)
        low, high = dl19_data.scores.loc[name, ["ci_low", "ci_high"]]
        assert low < dl19_data.scores.loc[name, "mean"] < high
    assert dl19_data.scores["defined"].tolist() == [43, 43, 43]


def test_set_tables_count_queries_and_grades(dl19_data, dl19_set):
    assert dl19_data.strata.to_dict("records") == [
        {"stratum": "all", "queries": 43, "judged_queries": 43, "judgments": 9260, "traffic_share": 1.0}]
    grades = dl19_set.qrels["grade"].value_counts()
    assert dl19_data.grades["judgments"].tolist() == [grades[g] for g in range(4)] == [5158, 1601, 1804, 697]
    assert dl19_data.grades["name"].tolist() == ["Irrelevant", "Related", "Highly relevant", "Perfectly relevant"]


def test_judged_at_10_is_the_share_of_the_top_10_with_a_judgment(dl19_data, dl19_set, dl19_runs):
    run = dl19_runs["idst_bert_p1"]
    judged = set(zip(dl19_set.qrels["query_id"], dl19_set.qrels["doc_id"], strict=True))
    top = run[run["query_id"].isin(dl19_set.qrels["query_id"])].sort_values(
        ["query_id", "score", "doc_id"], ascending=[True, False, False]).groupby("query_id").head(10)
    share = top.apply(lambda r: (r.query_id, r.doc_id) in judged, axis=1).groupby(top["query_id"]).mean()
    assert dl19_data.scores.loc["idst_bert_p1", "judged"] == pytest.approx(share.mean())


@pytest.mark.slow
def test_planned_comparisons_are_decided_at_the_threshold_compare_would_use(shared_data, dl19_runs, tmp_path):
    root = shared_data / "dl19"
    frozen = load_set(freeze(labels_from_file(root / "qrels.txt", "human"), read_queries(root / "topics.tsv"),
                             read_guideline(GUIDELINE), "dl19", tmp_path / "sets", planned=PLANNED).path)
    # one exploratory peek in the log: each planned comparison's family is max(2 planned, |{peek, itself}|) = 2
    ComparisonLog.of_set(frozen.path, "test").append({"baseline": "bm25base_p", "candidate": "p_bert",
                                                      "metric": "ndcg@10"})
    data = collect(frozen, dl19_runs, **FAST)
    assert [c.result.threshold for c in data.comparisons] == [0.025, 0.025]
    assert [c.result.kind for c in data.comparisons] == ["planned", "planned"]
    assert len((frozen.path.parent / "comparisons.jsonl").read_text().splitlines()) == 1  # the report logs nothing

    def compare(baseline, candidate):  # appends to the log, as compare does
        result = CliRunner().invoke(main, ["compare", "--set", str(frozen.path), "--permutations", "2000",
                                           "--format", "json", str(_run_path(baseline)), str(_run_path(candidate))])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)[0]

    first = compare(*PLANNED[0])
    shown = data.comparisons[0].result
    assert (first["threshold"], first["verdict"], first["permutation_p"]) == (
        shown.threshold, shown.verdict, shown.permutation_p)
    assert shown.established
    # the log now holds the peek and the first: the exploratory peek is never counted (issue 74), the family stays
    # the 2 planned comparisons, for both commands alike, and the report lists what the log holds
    again = collect(frozen, dl19_runs, **FAST)
    second = compare(*PLANNED[1])
    assert second["threshold"] == again.comparisons[1].result.threshold == 0.025
    assert second["verdict"] == again.comparisons[1].result.verdict
    assert second["family"] == ("0.05 / 2: the set's planned comparisons; 1 looks off the plan in its log are not "
                                "counted (a look decides nothing)")
    assert [(r["candidate"], r["metric"]) for r in again.logged] == [("p_bert", "ndcg@10"), ("idst_bert_p1", "ndcg@10")]
    page = render_html(again)
    assert "<td>bm25base_p</td><td>p_bert</td><td>ndcg@10</td><td></td>" in page and "no: exploratory" in page


def test_differences_and_largest_losses_are_per_query_candidate_minus_baseline(dl19_data, dl19_set, dl19_runs):
    comparison = dl19_data.comparisons[1]
    base = evaluate(dl19_runs["bm25base_p"], dl19_set.qrels, ["ndcg@10"])["ndcg@10"]
    cand = evaluate(dl19_runs["bm25tuned_p"], dl19_set.qrels, ["ndcg@10"])["ndcg@10"]
    expected = (cand - base).sort_values(kind="stable")
    pd.testing.assert_series_equal(comparison.differences, expected, check_names=False)
    losses = [loss["query_id"] for loss in comparison.result.largest_losses]
    assert losses == list(expected.index[:10])
    assert comparison.result.losses == int((expected < 0).sum())


@pytest.mark.slow
def test_all_runs_are_compared_at_once_with_their_letter_groups(dl19_data, dl19_page, dl19_set, dl19_runs):
    many = dl19_data.many
    assert many.runs == ["idst_bert_p1", "bm25base_p", "bm25tuned_p"] and many.correction == "tukey"
    assert many.means == pytest.approx(sorted(dl19_data.scores["mean"], reverse=True))
    assert many.letters == ["a", "b", "b"] and many.permutations == FAST["permutations"]
    assert "<h2>All runs</h2>" in dl19_page
    # one plot of the ranking: the scores' intervals with the letter groups beside them
    assert dl19_page.count('alt="ndcg@10 per run') == 1
    assert 'alt="ndcg@10 per run with intervals and its letter groups"' in dl19_page
    assert "<td>idst_bert_p1</td><td><code>a</code></td>" in dl19_page
    alone = build_report(dl19_set, {"bm25base_p": dl19_runs["bm25base_p"]}, **FAST)
    assert '<h2>All runs</h2>\n<p class="none">One run only: nothing to compare.</p>' in alone


def test_a_planned_comparison_without_its_runs_says_so(dl19_set, dl19_runs):
    data = collect(dl19_set, {"bm25base_p": dl19_runs["bm25base_p"]}, **FAST)
    assert [c.note for c in data.comparisons] == ["run not given: idst_bert_p1", "run not given: bm25tuned_p"]
    page = build_report(dl19_set, {"bm25base_p": dl19_runs["bm25base_p"]}, **FAST)
    assert "Not shown: run not given: idst_bert_p1." in page
    assert ('<td><a href="#comparison-1">idst_bert_p1 vs bm25base_p</a></td><td colspan="5" class="none">Not shown: '
            "run not given: idst_bert_p1.</td>") in _summary(page)


def _summary(page: str) -> str:
    return page[page.index('<section id="summary">'):page.index("</section>")]


def test_the_summary_comes_first_with_the_verdicts_the_best_runs_and_what_they_rest_on(dl19_data):
    page = render_html(dl19_data)
    summary = _summary(page)
    assert page.index("<h1>") < page.index('<section id="summary">') < page.index("<h2>Planned comparisons</h2>")
    assert page.index("<h2>Planned comparisons</h2>") < page.index("<h2>Scores per run</h2>") < page.index(
        "<h2>The set</h2>")
    for index, comparison in enumerate(dl19_data.comparisons, start=1):
        result = comparison.result
        word = css_class(decide(result.evidence).word)
        assert f'<span class="{word}">{html.escape(result.verdict)}</span>' in summary
        assert f'<a href="#comparison-{index}">{comparison.candidate} vs {comparison.baseline}</a>' in summary
        assert f'<div class="comparison" id="comparison-{index}">' in page
        assert (f'<td class="pair"><span>{result.mean_difference:+.4f}</span> '
                f"<span>[{result.ci_low:+.4f}, {result.ci_high:+.4f}]</span></td>") in summary
        assert result.judged_at_k == {"k": 10, "baseline": 1.0, "candidate": 1.0} and result.hole_bound is None
    assert summary.count('<td class="num">43</td><td class="num">1.000 / 1.000</td>'
                         "<td>none in either top 10</td>") == 2
    assert summary.count('class="established"') == 1 and summary.count('class="not-established"') == 1
    best = dl19_data.scores["mean"].idxmax()
    assert best == "idst_bert_p1" and f'<span class="best">{best}</span> ' in summary
    assert "The Tukey HSD of all pairs tells it from each of the other 2 runs." in summary  # letters a, b, b
    assert ("the 43 queries of split <b>test</b> (43 judged, 9260 judgments), 3 runs; judged@10 (the share of a "
            "run's top 10 with a judgment) is 1.000 for every run") in summary


def test_the_summary_reads_the_verdicts_it_shows_from_the_comparisons_never_deciding_again(dl19_data):
    first = dl19_data.comparisons[0]
    said = dataclasses.replace(first.result, verdict="the verdict as decided", rule="interval holds 0")
    summary = _summary(render_html(dataclasses.replace(
        dl19_data, comparisons=[dataclasses.replace(first, result=said), *dl19_data.comparisons[1:]])))
    assert '<span class="not-established">the verdict as decided</span>' in summary
    assert summary.count('class="established"') == 0


@pytest.mark.slow
def test_strata_and_splits_of_a_sampled_set(shared_data, dl19_runs, tmp_path):
    topics = read_queries(shared_data / "dl19" / "topics.tsv")
    queries = topics.assign(stratum=["agent" if i % 3 == 0 else "human" for i in range(len(topics))],
                            split=["dev" if i % 5 == 0 else "test" for i in range(len(topics))])
    queries["stratum_share"] = queries["stratum"].map({"agent": 0.3, "human": 0.7})
    target = freeze(labels_from_file(shared_data / "dl19" / "qrels.txt", "human"), queries,
                    read_guideline(GUIDELINE), "strata", tmp_path)
    frozen = load_set(target.path)
    data = collect(frozen, {"bm25base_p": dl19_runs["bm25base_p"]}, **FAST)
    test = queries[queries["split"] == "test"]
    assert data.strata[["stratum", "queries"]].values.tolist() == [
        ["agent", int((test["stratum"] == "agent").sum())], ["human", int((test["stratum"] == "human").sum())]]
    per_query = evaluate(dl19_runs["bm25base_p"], frozen.qrels, ["ndcg@10"])["ndcg@10"]
    means = per_query.loc[test["query_id"]].groupby(test.set_index("query_id")["stratum"]).mean()
    assert data.scores.loc["bm25base_p", "mean"] == pytest.approx(0.3 * means["agent"] + 0.7 * means["human"])
    assert data.scores.loc["bm25base_p", "stratum:agent"] == pytest.approx(means["agent"])
    page = render_html(data)
    assert "traffic-weighted across strata" in page and "<th>agent</th><th>human</th>" in page
    assert len(collect(frozen, {"bm25base_p": dl19_runs["bm25base_p"]}, split="dev", **FAST).queries) == len(
        queries) - len(test)


# ------------------------------------------------------------------------------------------------ agreement
MATRIX = {"kappa": "kappa_linear", "annotators": ["nist", "gpt"], "values": [[1.0, 0.41], [0.41, 1.0]]}


def test_agreement_matrix_reads_the_three_shapes_alike():
    from_matrix = agreement_matrix({"matrix": MATRIX, "alpha_ordinal": 0.4,
                                    "systems": {"pairs": [{"a": "nist", "b": "gpt", "runs": 37,
                                                           "kendall_tau": 0.89, "tau_ap": 0.8}]}})
    from_pairs = agreement_matrix({"pairs": [{"a": "nist", "b": "gpt", "kappa": 0.2, "kappa_linear": 0.41}]})
    from_mapping = agreement_matrix({"nist": {"gpt": 0.41}})
    assert from_matrix.matrix.loc["nist", "gpt"] == from_pairs.matrix.loc["gpt", "nist"] == 0.41
    assert from_mapping.matrix.loc["gpt", "nist"] == 0.41 and from_mapping.matrix.loc["gpt", "gpt"] == 1.0
    assert from_pairs.measure == "kappa_linear"
    assert from_matrix.alpha_ordinal == 0.4 and from_matrix.system_taus["kendall_tau"].tolist() == [0.89]
    assert agreement_matrix({"matrix": {"nist": {"gpt": 0.41}}}).matrix.equals(from_mapping.matrix)
    assert agreement_matrix(None) is None and agreement_matrix({}) is None
    with pytest.raises(InputError, match="not understood"):
        agreement_matrix({"kappa": 0.4})


@pytest.mark.slow
def test_without_agreement_data_the_page_says_so_and_with_it_shows_a_heatmap(dl19_page, dl19_data):
    without = dl19_page
    assert "No agreement data recorded." in without
    with_block = render_html(dataclasses.replace(dl19_data, agreement=agreement_matrix({"matrix": MATRIX})))
    assert "No agreement data recorded." not in with_block
    assert 'alt="heatmap of pairwise kappa_linear"' in with_block
    # comparisons: 2; the ranking (scores and letter groups): 1; set: grades, judged@10; agreement: 1
    assert without.count(PNG) == 5 and with_block.count(PNG) == 6


def test_an_unreadable_recorded_agreement_block_is_reported_on_the_page(dl19_set, dl19_runs):
    odd = dataclasses.replace(dl19_set, manifest={**dl19_set.manifest, "agreement": {"kappa": 0.4}})
    data = collect(odd, {"bm25base_p": dl19_runs["bm25base_p"]}, **FAST)
    assert data.agreement is None
    assert data.agreement_note.startswith("The manifest records an agreement block this report cannot read")
    with pytest.raises(InputError, match="not understood"):  # a block given explicitly must be readable
        collect(dl19_set, dl19_runs, agreement={"kappa": 0.4}, **FAST)
    with pytest.raises(InputError, match="agreement block not understood: KeyError"):  # so must its parts
        collect(dl19_set, dl19_runs, agreement={"matrix": {"values": [[1.0]]}}, **FAST)


# ------------------------------------------------------------------------------------------------ the page
def hostile_set(tmp_path):
    """A set whose query text and ids, and whose run names, are HTML."""
    queries = pd.DataFrame({"query_id": ["q<1>", "q&2", "q3"],
                            "query": ["<script>alert(1)</script>", 'say "hi" & <b>bye</b>', "plain"]})
    rows = [(q, d, "ann", "human", g) for q in queries["query_id"] for d, g in (("d1", 2), ("d2", 0), ("d3", 1))]
    labels = pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "kind", "grade"]).assign(
        source="test", labeled_at="", comment="")
    base, evil = "base", "<img src=x onerror=alert(2)>"
    runs = {
        base: pd.DataFrame({"query_id": ["q<1>", "q<1>", "q&2", "q3"], "doc_id": ["d1", "d2", "d3", "d2"],
                            "score": [2.0, 1.0, 1.0, 1.0]}),
        evil: pd.DataFrame({"query_id": ["q<1>", "q&2", "q&2", "q3"], "doc_id": ["d2", "d1", "d3", "d1"],
                            "score": [2.0, 2.0, 1.0, 1.0]}),
    }
    target = freeze(labels, queries, read_guideline(GUIDELINE), "hostile", tmp_path / "sets", planned=[(base, evil)],
                    agreement={"matrix": {"kappa": "kappa", "annotators": ["<i>ann</i>", "llm&co"],
                                          "values": [[1.0, None], [None, 1.0]]}})
    return load_set(target.path), runs


@pytest.mark.slow
def test_every_text_from_the_data_is_escaped_and_nothing_is_fetched(tmp_path):
    frozen, runs = hostile_set(tmp_path)
    page = build_report(frozen, runs, **FAST)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "q&lt;1&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page and "&lt;i&gt;ann&lt;/i&gt;" in page
    for raw in ("<script", "<img src=x", "<i>ann", "<b>bye", "q<1>", "llm&co", "q&2"):
        assert raw not in page
    assert not re.search(r"(src|href)=\"(?!data:|#)", page)  # every resource inline (links within the page)
    assert "http://" not in page and "https://" not in page


@pytest.mark.slow
def test_the_report_is_deterministic(dl19_set, dl19_runs, dl19_page):
    assert build_report(dl19_set, dl19_runs, **FAST) == dl19_page


# ------------------------------------------------------------------------------------------------ the command
def _run_path(name: str) -> Path:
    return REPO.parent / "shared" / "data" / "dl19" / "runs" / "official_top100" / f"{name}.run.gz"


@pytest.mark.slow
def test_report_command_writes_the_page(dl19_set, tmp_path):
    output = tmp_path / "out" / "report.html"
    result = CliRunner().invoke(main, ["report", str(dl19_set.path), *map(str, map(_run_path, RUNS)),
                                       "-o", str(output), "--resamples", "1000", "--permutations", "1000"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {output}") and "3 runs" in result.output
    page = output.read_text()
    assert page.startswith("<!DOCTYPE html>") and "idst_bert_p1 vs bm25base_p" in page


def test_report_command_refuses_bad_input_in_one_line(dl19_set, tmp_path):
    broken = tmp_path / "agreement.json"
    broken.write_text("{not json")
    result = CliRunner().invoke(main, ["report", str(dl19_set.path), str(_run_path(RUNS[0])),
                                       "--agreement", str(broken), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "not valid JSON" in result.output and str(broken) in result.output
    assert not (tmp_path / "r.html").exists()
    result = CliRunner().invoke(main, ["report", str(dl19_set.path), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "Missing argument 'RUN...'" in result.output
    result = CliRunner().invoke(main, ["report", str(dl19_set.path), "--runs", str(_run_path(RUNS[0])), "-o",
                                       str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "--runs is now SET RUN... (the runs after the set" in result.output


@pytest.mark.parametrize("option", ["--resamples", "--permutations"])
@pytest.mark.parametrize("value", ["0", "-5"])
def test_report_refuses_a_count_of_resamples_that_is_not_positive(dl19_set, tmp_path, option, value):
    result = CliRunner().invoke(main, ["report", str(dl19_set.path), str(_run_path(RUNS[0])),
                                       "-o", str(tmp_path / "r.html"), option, value])
    name = option.lstrip("-")
    assert result.exit_code == 2, result.output
    assert result.output == (f"evalset: error: Invalid value for '--{name}': must be an integer in [1, 1000000], "
                             f"got {value}\n")
    assert not (tmp_path / "r.html").exists()


# ------------------------------------------------------------------------------------------------ no verdict the
# resamples cannot support (issue 48)
def test_too_few_resamples_to_place_a_scores_interval_are_refused_in_one_line(dl19_set, tmp_path):
    result = CliRunner().invoke(main, ["report", str(dl19_set.path), str(_run_path(RUNS[0])),
                                       "-o", str(tmp_path / "r.html"), "--resamples", "1"])
    assert result.exit_code == 2, result.output
    assert result.output == ("evalset: error: resamples must be an integer >= 40, got 1: fewer cannot place the ends "
                             "of a 95% interval of a run's score (none would fall beyond them)\n")
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(InputError, match="resamples must be an integer >= 40, got 39"):
        collect(dl19_set, {RUNS[0]: read_run(_run_path(RUNS[0]))}, resamples=39)


@pytest.mark.slow
def test_a_planned_comparison_whose_interval_the_resamples_cannot_place_gives_no_verdict(dl19_set, dl19_runs):
    """Two planned comparisons: each at threshold 0.025, its interval at level 0.975, whose ends 50 resamples
    cannot place (1 / 0.0125 = 80 needed); the scores' 95% intervals can."""
    data = collect(dl19_set, dl19_runs, resamples=50, permutations=2000)
    assert [c.result.threshold for c in data.comparisons] == [0.025, 0.025]
    assert [c.result.rule for c in data.comparisons] == ["too few resamples"] * 2
    assert {c.result.verdict for c in data.comparisons} == {
        "no verdict: 50 resamples cannot place the ends of a 0.975 interval (none falls beyond them); give at least 80"}
    assert not any(c.result.established for c in data.comparisons)
    page = render_html(data)
    assert page.count('Verdict: <span class="no-verdict">no verdict: 50 resamples cannot place') == 2
    assert "Bootstrap: BCa, 50 resamples" in page
    enough = collect(dl19_set, dl19_runs, resamples=80, permutations=2000)
    assert enough.comparisons[0].result.verdict.startswith("established: candidate better")
    assert 'Verdict: <span class="established">established' in render_html(enough)


# ------------------------------------------------------------------------------------------------ missing queries
@pytest.fixture(scope="module")
def lacking_run(tmp_path_factory) -> Path:
    """bm25tuned_p without 2 of the 43 judged queries."""
    path = tmp_path_factory.mktemp("runs") / "bm25tuned_p.run.gz"
    with gzip.open(_run_path("bm25tuned_p"), "rt") as source, gzip.open(path, "wt") as target:
        target.writelines(line for line in source if line.split()[0] not in ("19335", "47923"))
    return path


def _report(dl19_set, lacking_run, output, *options):
    return CliRunner().invoke(main, ["report", str(dl19_set.path), str(_run_path("bm25base_p")),
                                     str(lacking_run), "-o", str(output), "--resamples", "1000", "--permutations",
                                     "1000", *options])


def test_a_run_lacking_judged_queries_is_refused_unless_missing_is_chosen(dl19_set, lacking_run, tmp_path):
    result = _report(dl19_set, lacking_run, tmp_path / "r.html")
    assert result.exit_code == 2
    assert result.output == (
        f"evalset: error: {lacking_run}: run bm25tuned_p lacks 2 of the 43 judged queries: give -c missing=zero "
        "(they score 0, as a system that returned nothing) or -c missing=skip (they are left out of the comparison)\n")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.slow
@pytest.mark.parametrize(("missing", "said", "mean"), [
    ("zero", "scored 0 (-c missing=zero)", 0.4734),
    ("skip", "left out of its score and comparisons (-c missing=skip)", 0.4965)])
def test_missing_zero_or_skip_is_accepted_and_said_on_the_page(dl19_set, lacking_run, tmp_path, missing, said, mean):
    result = _report(dl19_set, lacking_run, tmp_path / "r.html", "-c", f"missing={missing}")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text()
    assert f'<p class="none">note: run bm25tuned_p lacks 2 of the 43 judged queries: {said}</p>' in page
    assert ("note: the set&#x27;s contract overridden: missing=skip (set: zero)" in page) == (missing == "skip")
    assert f"<td>bm25tuned_p</td><td class=\"num\">{mean:.4f}</td>" in page
    left_out = "2 queries scored by one run only were left out"
    assert (left_out in page) == (missing == "skip")


@pytest.mark.slow
def test_a_planned_comparison_the_holes_could_flip_is_not_established_as_compare_says(shared_data, tmp_path):
    """The set judged from the depth-10 pool of the BM25 runs only (docs/compare-holes.md): the report's planned
    comparison rests on what compare's does, judged@10 and the holes' bound, and withholds the same verdict."""
    from tests.comparing.test_compare import BM25, DL19, plain_qrels, plain_run, top
    from tests.comparing.test_compare import RUNS as SHIPPED

    pooled = {(q, d) for name in BM25 for q, docs in plain_run(SHIPPED / f"{name}.run.gz").items()
              for d in top(docs, 10)}
    qrels = tmp_path / "bm25-pool.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in plain_qrels(DL19 / "nist.qrels").items()
                             for d, g in docs.items() if (q, d) in pooled))
    frozen = load_set(freeze(labels_from_file(qrels, "human"), read_queries(shared_data / "dl19" / "topics.tsv"),
                             read_guideline(GUIDELINE), "pool", tmp_path / "sets",
                             planned=[("bm25base_p", "idst_bert_p1")]).path)
    runs = {name: read_run(SHIPPED / f"{name}.run.gz") for name in ("bm25base_p", "idst_bert_p1")}
    [comparison] = collect(frozen, runs, **FAST).comparisons
    result = comparison.result
    assert result.judged_at_k["k"] == 10 and round(result.judged_at_k["candidate"], 4) == 0.4762
    assert result.hole_bound["unjudged"] == 220 and result.hole_bound["could_flip"]
    assert not result.established and result.rule == "holes could flip"
    page = build_report(frozen, runs, **FAST)
    assert "not established: 220 unjudged documents in the candidate&#x27;s top 10 could flip it" in page
    assert "Holes: 220 unjudged documents" in page
    summary = _summary(page)
    assert ('<span class="not-established">not established: 220 unjudged documents in the candidate&#x27;s top 10 '
            "could flip it") in summary
    assert "<td>220 unjudged documents: a fill could change the verdict</td>" in summary
    assert f'<td class="num">1.000 / {result.judged_at_k["candidate"]:.3f}</td>' in summary
