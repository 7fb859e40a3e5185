"""Inputs that used to give a traceback, a quiet zero or `t = nan` now give an error naming the cause, or a
visible note (issue 15, items 4, 9 and 10)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    return {"qrels": str(root / "qrels.txt"),
            "runs": [str(root / "runs" / "official_full" / f"{name}.run.gz") for name in ("bm25base_p", "p_bert")]}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("command", ["score", "compare", "plan power"])
def test_empty_qrels_are_refused_at_the_door(tmp_path, dl19, command):
    empty = tmp_path / "empty.qrels"
    empty.write_text("")
    result = invoke(*command.split(), "--qrels", empty, *dl19["runs"])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"evalset: error: {empty}: no judgments: the qrels are empty, blank or comments " \
                                    "only (expected lines `qid 0 docid grade`)"


@pytest.mark.parametrize("command", ["score", "compare", "plan power"])
def test_runs_that_share_no_query_with_the_qrels_are_refused(tmp_path, dl19, command):
    other = tmp_path / "other.qrels"
    other.write_text("".join(f"x{line}" for line in Path(dl19["qrels"]).read_text().splitlines(keepends=True)))
    result = invoke(*command.split(), "--qrels", other, *dl19["runs"])
    assert result.exit_code == 2, result.output
    assert "run bm25base_p shares no query with the judgments" in result.stderr
    assert "nan" not in result.output


def test_a_grade_of_999_is_noted_on_stderr_and_in_the_json(tmp_path, dl19):
    lines = Path(dl19["qrels"]).read_text().splitlines()
    relevant = next(i for i, line in enumerate(lines) if line.split()[3] == "3")
    lines[relevant] = " ".join([*lines[relevant].split()[:3], "999"])
    odd = tmp_path / "odd.qrels"
    odd.write_text("\n".join(lines) + "\n")
    result = invoke("score", "--qrels", odd, dl19["runs"][0], "-m", "ndcg@10")
    assert result.exit_code == 0
    assert f"note: {odd}: 1 judgment(s) with an unusual grade, 999 (1x) (grades above 10 are unusual)" in result.stderr
    document = json.loads(invoke("score", "--qrels", odd, dl19["runs"][0], "--format", "json").stdout)
    assert document["notes"]["bm25base_p"]["unusual_grades"] == {"999": 1}
    compared = invoke("compare", "--qrels", odd, *dl19["runs"], "--permutations", "99")
    assert compared.exit_code == 0
    assert f"note: {odd}: 1 judgment(s) with an unusual grade, 999 (1x)" in compared.stderr


def test_good_qrels_get_no_grade_note(dl19):
    result = invoke("score", "--qrels", dl19["qrels"], dl19["runs"][0], "--format", "json")
    assert "unusual" not in result.output and "unusual" not in result.stderr


def test_plan_on_identical_runs_is_refused(tmp_path, dl19):
    twin = tmp_path / "twin.run.gz"
    twin.write_bytes(Path(dl19["runs"][0]).read_bytes())
    result = invoke("plan", "power", "--qrels", dl19["qrels"], dl19["runs"][0], twin, "--resamples", 20,
                    "--permutations", 20)
    assert result.exit_code == 2
    assert "twin vs bm25base_p: the runs score the same on every query (are they one run?)" in result.stderr


def test_plan_on_a_two_query_pilot_warns_loudly(tmp_path, dl19):
    lines = Path(dl19["qrels"]).read_text().splitlines()
    first_two = sorted({line.split()[0] for line in lines})[:2]
    small = tmp_path / "small.qrels"
    small.write_text("\n".join(line for line in lines if line.split()[0] in first_two) + "\n")
    result = invoke("plan", "power", "--qrels", small, *dl19["runs"], "--resamples", 20, "--permutations", 20)
    assert result.exit_code == 0, result.output
    assert "WARNING: p_bert vs bm25base_p: the pilot has only 2 queries" in result.stderr


def test_pool_with_an_empty_queries_file_is_refused_and_writes_nothing(tmp_path, dl19):
    queries = tmp_path / "queries.tsv"
    queries.write_text("")
    result = invoke("pool", *dl19["runs"], "-k", 5, "-o", tmp_path / "pool", "--queries", queries)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"evalset: error: {queries}: no query in the file (expected `qid<TAB>query` " \
                                    "lines, a queries.tsv or JSON Lines)"
    assert not (tmp_path / "pool").exists()


def test_pool_where_every_pair_is_judged_says_nothing_is_left_exit_0_and_writes_nothing(tmp_path, dl19):
    result = invoke("pool", *dl19["runs"], "-k", 1, "-o", tmp_path / "pool", "--exclude-judged", dl19["qrels"])
    assert result.exit_code == 0, result.output  # a judge-the-holes script with no hole left succeeded
    assert result.stdout.startswith("nothing left to judge: all ") and "no pool written" in result.stdout
    assert "already judged in " + str(dl19["qrels"]) in result.stdout
    assert not (tmp_path / "pool").exists()


@pytest.mark.parametrize("content", ["", "query_id\tdoc_id\tannotator\tkind\tgrade\tsource\tlabeled_at\tcomment\n"])
def test_agreement_refuses_a_file_with_no_judgment_instead_of_dropping_its_annotator(tmp_path, dl19, content):
    empty = tmp_path / "ann2.tsv"
    empty.write_text(content)
    result = invoke("agreement", dl19["qrels"], empty)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"evalset: error: {empty}: no judgments")


@pytest.mark.parametrize(("content", "cause"), [
    ("query\tcount\n", "the query log has no row: nothing to sample"),
    ("query\tcount\n\t3\n  \t2\n", "no query left to sample: all 5 submissions read were dropped (empty 5)"),
])
def test_sample_names_why_nothing_is_left_to_sample(tmp_path, content, cause):
    log = tmp_path / "log.tsv"
    log.write_text(content)
    result = invoke("sample", log, "--per-stratum", 1, "-l", "count=count", "-o", tmp_path / "queries.tsv")
    assert result.exit_code == 2
    assert result.stderr.strip() == f"evalset: error: {log}: {cause}"


@pytest.mark.parametrize("text", ["", "\n\n  \n"], ids=["empty", "blank-lines"])
@pytest.mark.parametrize("command", ["score", "compare", "pool"])
def test_a_run_file_with_no_line_is_refused_naming_it(tmp_path, dl19, monkeypatch, command, text):
    from evalset.io import runstream

    monkeypatch.setattr(runstream, "STREAM_ABOVE_BYTES", 0 if command == "score" else 1 << 30)  # score streams it
    empty = tmp_path / "empty.run"
    empty.write_text(text)
    first = ["--qrels", dl19["qrels"]] if command != "pool" else ["-k", 10, "-o", tmp_path / "pool"]
    result = invoke(command, *first, dl19["runs"][0], empty)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"evalset: error: {empty}: no run lines: the file is empty, blank or comments " \
                                    "only (expected lines `qid Q0 docid rank score tag`)"
    assert not (tmp_path / "pool").exists()
