"""A set frozen with its document sample (`evalset freeze --sample`), on TREC DL 2019: the depth-10 pool of the 37
official runs (2,495 pairs; the 2,494 with text are the sample's frame), a sample of 300 judgments expected, NIST's
grades of the drawn pairs as the human labels, Llama-3-70B's grades of every pooled pair as the LLM labels. The set
records which pairs were drawn and their pi; `estimate --set` and the report estimate from it exactly as `estimate
--design documents` does from the files; labels that do not match the sample are refused, one line, exit 2, no
version written."""

import json
import os
import re
from pathlib import Path

import pytest

from evalset.io.setfolder import load_set
from evalset.io.trec import read_runs
from evalset.report import build_report
from tests.support.dl19files import drawn_sample, invoke, write_qrels

pytestmark = pytest.mark.slow  # the module's pool, draw and freeze cost about 3 s

RUNS = ["data/dl19/runs/bm25base_p.run.gz", "data/dl19/runs/p_exp_rm3_bert.run.gz",
        "data/dl19/runs/idst_bert_p1.run.gz"]
PLAN = "bm25base_p:p_exp_rm3_bert"
FREEZE = ("--queries", "data/dl19/topics.tsv", "--guideline", "guidelines/relevance-v2.md", "--plan", PLAN)


def _runs_args():
    return list(RUNS)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    data = drawn_sample(tmp_path_factory.mktemp("sampled-set"), 300, 5)
    root, human, llm = data["root"], data["human"], data["llm"]
    frozen = invoke("freeze", human, "--llm", llm, *FREEZE, "--name", "docs", "--sets-dir", root / "sets",
                    "--sample", root / "sample")
    assert frozen.exit_code == 0, frozen.output
    return {**data, "set": root / "sets" / "docs" / "v1", "freeze": frozen.output}


def test_the_version_holds_the_record_and_verifies(data):
    version = data["set"]
    assert sorted(p.name for p in version.iterdir()) == ["labels.tsv", "manifest.json", "qrels.txt", "queries.tsv",
                                                         "sample.json", "sample.tsv"]
    table = (version / "sample.tsv").read_text()
    assert table == (data["sample"] / "sample.tsv").read_text()  # every pooled pair's pi, as drawn
    manifest = json.loads((version / "manifest.json").read_text())
    drawn = len(data["drawn"])
    assert manifest["sample"]["counts"] == {"pairs": 2494, "drawn": drawn, "certain": manifest["sample"]["counts"][
        "certain"], "queries": 43}
    assert (manifest["sample"]["budget"], manifest["sample"]["seed"]) == (300, 5)
    assert {"sample.tsv", "sample.json"} <= set(manifest["files"])
    assert (f"note: recorded the document sample ({drawn:,} of 2,494 pooled pairs drawn, budget 300; 1 pair(s) "
            "without text left out: unjudged)") in data["freeze"]
    assert invoke("verify", version).output.startswith("OK ")
    frozen = load_set(version)
    assert frozen.sample is not None and int(frozen.sample.pairs["sampled"].sum()) == drawn


def test_an_edited_record_fails_verification(data, tmp_path):
    import shutil
    copy = tmp_path / "docs" / "v1"
    shutil.copytree(data["set"], copy)
    shutil.copy(data["set"].parent / "versions.tsv", copy.parent / "versions.tsv")
    os.chmod(copy / "sample.tsv", 0o644)
    lines = (copy / "sample.tsv").read_text().splitlines()
    (copy / "sample.tsv").write_text("\n".join(lines[:-1]) + "\n")
    result = invoke("verify", copy)
    assert result.exit_code != 0
    assert f"FAILED {copy / 'sample.tsv'}: content changed (sha256 differs from the manifest)" in result.output


def test_estimate_on_the_set_equals_the_estimate_from_the_files(data):
    on_set = invoke("estimate", "run", "set", "--set", data["set"], *_runs_args(), "--format", "json")
    assert on_set.exit_code == 0, on_set.output
    from_files = invoke("estimate", "run", "documents", "--sample", data["sample"], "--human", data["human"],
                        "--llm", data["llm"], *_runs_args(), "--compare", PLAN, "--format", "json")
    assert from_files.exit_code == 0, from_files.output
    got, expected = json.loads(on_set.output), json.loads(from_files.output)
    columns = ["measure", "kind", "name", "estimate", "se_set", "set_low", "set_high", "se_new", "new_low", "new_high"]
    # the judge is the LLM labels' annotator (the qrels file's name): the calibration is the same
    assert [[row[c] for c in columns] for row in got["rows"]] == [[row[c] for c in columns] for row in expected["rows"]]
    assert [c["verdict"] for c in got["comparisons"]] == [c["verdict"] for c in expected["comparisons"]]
    assert got["comparisons"][0]["kind"] == "planned"  # the set's planned comparison, by default
    assert got["record"]["record"] == str(data["set"] / "sample.json")
    assert got["record"]["judges"] == ["llm"] and expected["record"]["judges"] == ["llm.qrels"]


def test_the_report_shows_each_runs_estimate_with_both_intervals(data):
    from evalset.estimate.frozen import set_estimate
    from evalset.render import number

    frozen = load_set(data["set"])
    runs = read_runs(RUNS)
    page = build_report(frozen, runs, permutations=199, resamples=199)
    assert "<h2>Estimates from the document sample" in page
    report = set_estimate(frozen, runs)
    for row in report.estimate.table.itertuples():
        if row.kind == "run":
            cells = (f'<td>{row.name}</td><td class="num">{number(row.estimate)}</td><td class="num">'
                     f'[{number(row.set_low)}, {number(row.set_high)}]</td><td class="num">'
                     f'[{number(row.new_low)}, {number(row.new_high)}]</td>')
            assert cells in page
    [comparison] = report.comparisons.itertuples()
    assert (f'[{number(comparison.set_low, sign=True)}, {number(comparison.set_high, sign=True)}]</td>'
            f'<td class="num">[{number(comparison.new_low, sign=True)}, {number(comparison.new_high, sign=True)}]'
            f'</td><td>{comparison.verdict}</td>') in page.replace("&quot;", '"')
    assert re.search(r"<p>\d+ of the 2,494 pooled pairs \(1 pooled pair\(s\) without text left out of the draw: "
                     r"unjudged\) over 43 queries were drawn at random", page)


def _refused(data, tmp_path, *labels, queries="data/dl19/topics.tsv"):
    result = invoke("freeze", *labels, "--queries", queries, "--guideline", "guidelines/relevance-v2.md",
                    "--name", "bad", "--sets-dir", tmp_path / "sets", "--sample", data["sample"])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "sets" / "bad" / "v1").exists()
    [line] = result.output.strip().splitlines()
    return line


def test_labels_that_do_not_match_the_sample_are_refused_and_nothing_is_frozen(data, tmp_path):
    keys, drawn, nist = data["keys"], data["drawn"], data["nist"]
    unsampled = next(key for key in keys if key not in set(drawn))
    extra = write_qrels(tmp_path / "extra.qrels", [*drawn, unsampled], nist)
    line = _refused(data, tmp_path, extra, "--llm", data["llm"])
    assert f"{extra}: a human grade of {unsampled[0]} {unsampled[1]}, which was not sampled (1 such grades)" in line
    short = write_qrels(tmp_path / "short.qrels", drawn[1:], nist)
    line = _refused(data, tmp_path, short, "--llm", data["llm"])
    assert f"{short}: the sampled pair {drawn[0][0]} {drawn[0][1]} has no human grade (1 such pairs)" in line
    partial = write_qrels(tmp_path / "partial.qrels", keys[1:], data["llama"])
    line = _refused(data, tmp_path, data["human"], "--llm", partial)
    assert f"{partial}: the LLM judge partial has no grade of the pooled pair {keys[0][0]} {keys[0][1]}" in line
    line = _refused(data, tmp_path, data["human"], "--llm", data["llm"], "--merge", "llm=yes")
    assert "a set frozen with a document sample merges human grades only" in line
    topics = tmp_path / "topics.tsv"
    rows = Path("data/dl19/topics.tsv").read_text().splitlines()
    kept = [row for row in rows if not row.startswith(f"{keys[0][0]}\t")]
    topics.write_text("\n".join(kept) + "\n")
    line = _refused(data, tmp_path, data["human"], "--llm", data["llm"], queries=topics)
    assert "queries" in line and keys[0][0] in line


def test_a_set_without_a_sample_or_an_llm_graded_part_is_refused_and_a_sampled_set_takes_no_grades(data, tmp_path):
    plain = invoke("freeze", data["human"], *FREEZE, "--name", "plain", "--sets-dir", tmp_path / "sets")
    assert plain.exit_code == 0, plain.output
    result = invoke("estimate", "run", "set", "--set", tmp_path / "sets" / "plain" / "v1", *_runs_args())
    assert result.exit_code == 2
    assert "the set has no LLM-graded part" in result.output and "score the set instead" in result.output
    given = invoke("estimate", "run", "set", "--set", data["set"], "--human", data["human"], *_runs_args())
    assert given.exit_code == 2 and "No such option '--human'" in given.output


def test_a_set_weighting_its_strata_by_traffic_is_refused_by_the_document_design(data, tmp_path):
    """The document design weights every query alike: a sampled set whose two strata are weighted by traffic is
    refused in one line naming it (documents.sample.refuse_traffic_strata, as the hole designs refuse it)."""
    topics = Path("data/dl19/topics.tsv").read_text().splitlines()
    strata = tmp_path / "queries.tsv"
    strata.write_text("query_id\tquery\tstratum\tstratum_share\n" + "".join(
        f"{line.split(chr(9))[0]}\t{line.split(chr(9))[1]}\t{'head' if i < 10 else 'tail'}\t{0.6 if i < 10 else 0.4}\n"
        for i, line in enumerate(topics)))
    frozen = invoke("freeze", data["human"], "--llm", data["llm"], "--queries", strata, "--guideline",
                    "guidelines/relevance-v2.md", "--name", "strata", "--sets-dir", tmp_path / "sets", "--sample",
                    data["root"] / "sample")
    assert frozen.exit_code == 0, frozen.output
    version = tmp_path / "sets" / "strata" / "v1"
    result = invoke("estimate", "run", "set", "--set", version, *_runs_args())
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: {version}: the document design weights every query alike, but this "
                             "set weights its 2 strata by traffic: estimate each stratum's set apart\n")
