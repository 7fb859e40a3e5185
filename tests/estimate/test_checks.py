"""What `evalset estimate`, `estimate select` and `freeze` refuse or say before any work (issue 29): settings no
estimate can have, a priority list the merge would not follow, a stratum with two traffic shares, slices that
break their design, LLM grades of part of the pool and off-scale grades. Each refusal is one line, exit 2."""

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.estimate import RunSlice, check_coverage, estimate_runs, grades_of, select_slice
from evalset.estimate.frozen import set_estimate
from evalset.io.queries import read_queries
from evalset.judgments.merging import merge_grades
from tests.support.options import refusal

STRATA = "query_id\tquery\tstratum\tstratum_share\tsplit\n" + "".join(
    f"s{i}\tshort {i}\tshort\t0.9219\ttest\n" for i in range(6)) + "".join(
    f"l{i}\tlong query {i}\tlong\t0.0781\ttest\n" for i in range(6))


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(result, message):
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"evalset: error: {message}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# --- item 3, 22b: alpha, level, planned, a run compared with itself
@pytest.mark.parametrize(("settings", "message"), [
    ({"alpha": 1.5}, "alpha must be a number in (0, 1), got 1.5"),
    ({"level": 0.0}, "level must be a number in (0, 1), got 0.0"),
    ({"planned": -2}, "planned must be a positive integer, got -2"),
    ({"pairs": [("a", "a")]}, "comparison a:a compares a run with itself"),
])
def test_estimate_settings_are_checked_by_every_estimate_function(settings, message):
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        RunSlice(runs=["run"], llm=["llm"], human=["human"], slice_path="slice", **settings)
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        set_estimate(None, {}, **settings)
    if "planned" not in settings:
        with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
            estimate_runs({}, None, None, None, **settings)


@pytest.mark.parametrize(("option", "message"), [
    (["--alpha", "1.5"], "Invalid value for '--alpha': must be a number in (0, 1), got 1.5"),
    (["--level", "0"], "Invalid value for '--level': must be a number in (0, 1), got 0.0"),
    (["--planned", "-2"], "Invalid value for '--planned': must be a positive integer, got -2"),
    (["--compare", "bm25base_p:bm25base_p"], "comparison bm25base_p:bm25base_p compares a run with itself"),
])
def test_the_command_refuses_them_in_one_line(option, message):
    refused(invoke("estimate", "run", "slice", "data/dl19/runs/bm25base_p.run.gz", "--llm", "llm.qrels", "--human",
                   "human.qrels", "--slice", "slice.json", *option), message)


# --- item 4: --merge priority=NAMES
LABELS = pd.DataFrame([("q", d, a, "human", g) for d, grades in (("a", (1, 3, 2)), ("b", (0, 2, 2)))
                       for a, g in zip(("ann", "bob", "cat"), grades, strict=True)],
                      columns=["query_id", "doc_id", "annotator", "kind", "grade"])


@pytest.mark.parametrize(("rule", "options", "message"), [
    ("annotator-priority", {"priority": ["nosuch"]}, "--merge priority: 'nosuch' is not an annotator whose grades are "
                                                     "merged (no annotator of that name; annotators: ann, bob, cat)"),
    ("annotator-priority", {"priority": ["bob"], "exclude": ["bob"]},
     "--merge priority: 'bob' is not an annotator whose grades are merged (excluded by --merge exclude=NAMES; "
     "annotators: ann, cat)"),
    ("annotator-priority", {}, "the merge rule annotator-priority needs --merge priority=NAMES"),
    ("median", {"priority": ["bob"]}, "--merge priority goes with the merge rule annotator-priority, not median"),
])
def test_a_priority_list_the_merge_would_not_follow_is_refused(rule, options, message):
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        merge_grades(LABELS, rule, max_gap=None, **options)
    kept = merge_grades(LABELS, "annotator-priority", priority=["cat", "bob"], max_gap=None)
    assert kept.qrels["grade"].tolist() == [2, 2]


def test_an_llm_annotator_in_the_priority_list_needs_allow_llm():
    labels = LABELS.assign(kind=LABELS["annotator"].map({"ann": "human", "bob": "human", "cat": "llm"}))
    with pytest.raises(InputError, match=r"'cat' is not an annotator whose grades are merged \(an LLM annotator"):
        merge_grades(labels, "annotator-priority", priority=["cat"], max_gap=None)
    assert merge_grades(labels, "annotator-priority", priority=["cat"], max_gap=None, allow_llm=True).qrels[
        "grade"].tolist() == [2, 2]


# --- item 5, 19d: one share per stratum, a known split (read_queries: freeze and select alike)
def test_a_stratum_with_two_traffic_shares_and_an_unknown_split_are_refused_with_their_line(tmp_path):
    path = tmp_path / "queries.tsv"
    path.write_text(STRATA.replace("s0\tshort 0\tshort\t0.9219", "s0\tshort 0\tshort\t0.5"))
    with pytest.raises(InputError, match=r"stratum short: stratum_share 0\.5 here, 0\.9219 on 5 other line") as error:
        read_queries(path)
    assert (error.value.path, error.value.line) == (str(path), 2)
    path.write_text(STRATA.replace("l2\tlong query 2\tlong\t0.0781\ttest", "l2\tlong query 2\tlong\t0.0781\t0.5"))
    with pytest.raises(InputError, match=r"split must be one of test, dev, found '0\.5'") as error:
        read_queries(path)
    assert error.value.line == 10
    path.write_text(STRATA.replace("0.9219", "0.92190"))  # the same number, spelled otherwise
    assert len(read_queries(path)) == 12


@pytest.mark.parametrize("command", ["freeze", "select"])
def test_both_commands_refuse_a_stratum_with_two_shares(tmp_path, command):
    queries = tmp_path / "queries.tsv"
    queries.write_text(STRATA.replace("s3\tshort 3\tshort\t0.9219", "s3\tshort 3\tshort\t0.5"))
    if command == "freeze":
        qrels = tmp_path / "q.qrels"
        qrels.write_text("s0 0 d1 1\nl0 0 d1 0\n")
        result = invoke("freeze", qrels, "--queries", queries, "--guideline", "guidelines/relevance-v2.md", "--name",
                        "x", "--sets-dir", tmp_path / "sets")
    else:
        result = invoke("estimate", "select", "slice", _pool(tmp_path), "--per-stratum", 2, "--queries", queries, "-o",
                        tmp_path / "slice")
    refused(result, f"{queries}:5: stratum short: stratum_share 0.5 here, 0.9219 on 5 other line(s)")


# --- item 19: the slice's design
def _pool(tmp_path):
    pool = tmp_path / "pool"
    pool.mkdir(exist_ok=True)
    ids = [line.split("\t")[0] for line in STRATA.splitlines()[1:]]
    (pool / "pool.tsv").write_text("pair_id\tquery_id\tdoc_id\torder\n" + "".join(
        f"p{i}\t{q}\td{i}\t{i + 1}\n" for i, q in enumerate(ids)))
    (pool / "pool_sources.tsv").write_text("pair_id\tquery_id\tdoc_id\n" + "".join(
        f"p{i}\t{q}\td{i}\n" for i, q in enumerate(ids)))
    return pool


def _strata(text=STRATA):
    rows = [line.split("\t") for line in text.splitlines()]
    return pd.DataFrame(rows[1:], columns=rows[0])


IDS = _strata()["query_id"].tolist()


@pytest.mark.parametrize(("design", "queries", "message"), [
    ({"per_stratum": 1}, _strata(), "per_stratum must be an integer >= 2, got 1"),
    ({"size": 4}, _strata(), "the queries file has strata: draw a stratified slice"),
    ({"per_stratum": 6}, _strata(), "the stratified slice takes all 12 queries of the pool"),
    ({"fraction": 1.0}, _strata(), "the stratified slice takes all 12 queries of the pool"),
    ({"per_stratum": 2}, _strata(STRATA.replace("0.0781", "0.8781")), "the strata's traffic shares sum to 1.8, not 1"),
    ({"fraction": 1.5}, None, "fraction must be a number in (0, 1], got 1.5"),
    ({"fraction": 0.0}, None, "fraction must be a number in (0, 1], got 0.0"),
    ({"size": 1}, None, "size must be an integer >= 2, got 1"),
    ({"size": 12}, None, "a slice of 12 queries out of 12: give fewer than all (--size;"),
    ({"size": 4, "seed": -1}, None, "seed must be a non-negative integer, got -1"),
])
def test_a_slice_that_breaks_its_design_is_refused(design, queries, message):
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        select_slice(IDS, queries=queries, **design)


def test_a_uniform_slice_with_a_one_stratum_or_textless_queries_file_and_shares_rounded_are_drawn():
    assert len(select_slice(IDS, size=4, queries=_strata().assign(stratum="all")).slice) == 4
    rounded = _strata(STRATA.replace("0.0781", "0.0780"))  # sums to 0.9999
    assert len(select_slice(IDS, per_stratum=2, queries=rounded).slice) == 4


def test_select_lists_one_command_for_each_thing_drawn_and_each_has_an_example():
    listed = invoke("estimate", "select", "--help").output.split("Commands:\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in listed] == ["documents", "holes", "slice"]
    examples = {"slice": "evalset estimate select slice pool --size 10 --seed 3 -o slice",
                "documents": "evalset estimate select documents pool --budget 1000 --seed 3 -o sample"}
    for command, example in examples.items():
        assert f"Example:\n    {example}\n" in invoke("estimate", "select", command, "--help").output


def test_the_old_select_is_refused_naming_the_three_commands():
    for old in (["out/pool", "--size", "3"], ["--documents", "100"], ["out/holes", "--holes", "sets/a/v1"]):
        result = invoke("estimate", "select", *old, "-o", "x")
        assert result.exit_code == 2
        assert result.output.startswith("evalset: error: estimate select is now three commands, one for each thing "
                                        "drawn: `evalset estimate select slice POOL ")


# --- item 9: LLM grades of part of the pool, off-scale grades
def _grades(rows, kind, file):
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"]).assign(annotator=kind, file=file)
    return grades_of(frame, (file,))


def test_llm_grades_of_part_of_the_slice_pool_and_an_unusual_grade_are_said():
    human = _grades([("q1", "a", 1), ("q1", "b", 99), ("q2", "a", 0), ("q2", "b", 2)], "nist", "human.qrels")
    llm = _grades([("q1", "a", 1), ("q2", "a", 0), ("q3", "a", 2)], "llm", "llm.qrels")
    notes = check_coverage(human, llm, ["q1", "q2", "q3"], ["q1", "q2"])
    assert any(n.startswith("warning: 2 of the 4 human-graded pairs of the slice (50%) have no LLM grade")
               for n in notes), notes
    assert any(n.startswith("note: human.qrels: 1 judgment(s) with an unusual grade, 99 (1x)") for n in notes), notes
    full = _grades([("q1", "a", 1), ("q1", "b", 3), ("q2", "a", 0), ("q2", "b", 2), ("q3", "a", 2)], "llm", "l")
    assert not any("no LLM grade" in n for n in check_coverage(human, full, ["q1", "q2", "q3"], ["q1", "q2"]))


def test_the_notes_reach_the_json_and_the_table(tmp_path):
    record = {"design": "uniform", "seed": 1, "slice": IDS[:4], "size": 4,
              "queries": [{"query_id": q, "stratum": "all", "stratum_share": 1.0} for q in IDS[:8]], "source": {}}
    (tmp_path / "slice.json").write_text(json.dumps(record))
    run = tmp_path / "sys.run"
    run.write_text("".join(f"{q} Q0 d{j} {j + 1} {10 - j} sys\n" for q in IDS[:8] for j in range(3)))
    other = tmp_path / "other.run"
    other.write_text("".join(f"{q} Q0 d{2 - j} {j + 1} {10 - j} other\n" for q in IDS[:8] for j in range(3)))
    human = tmp_path / "human.qrels"
    human.write_text("".join(f"{q} 0 d{j} {(j + i) % 3}\n" for i, q in enumerate(IDS[:4]) for j in range(3)))
    llm = tmp_path / "llm.qrels"
    llm.write_text("".join(f"{q} 0 d{j} {(j + i) % 3}\n" for i, q in enumerate(IDS[:8]) for j in range(3) if j != 1))
    result = invoke("estimate", "run", "slice", run, other, "--llm", llm, "--human", human, "--slice",
                    tmp_path / "slice.json", "--format", "json")
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert any(n.startswith("warning: 4 of the 12 human-graded pairs of the slice (33%) have no LLM grade")
               for n in notes), notes
    table = invoke("estimate", "run", "slice", run, other, "--llm", llm, "--human", human, "--slice",
                   tmp_path / "slice.json")
    assert "warning: 4 of the 12 human-graded pairs of the slice (33%) have no LLM grade" in table.output




# --- a measure without an upper bound (issue 31): an interval kept inside its range has no range to keep inside
@pytest.mark.parametrize("metric", ["NumRet", "dcg@10"])
def test_a_measure_without_an_upper_bound_is_refused_before_any_work(metric):
    from evalset.estimate.slicevalidation import simulate_slices

    message = r"has no upper bound \(its values are in \[0, inf\)\): estimates are made for measures with a bounded"
    with pytest.raises(InputError, match=message):
        estimate_runs({}, None, None, None, metrics=[metric])
    with pytest.raises(InputError, match=message):
        simulate_slices({}, None, None, slice_size=2, metrics=[metric])


def test_a_slice_keeps_a_task_whose_text_holds_a_unicode_line_separator(tmp_path):
    """A passage may hold U+2028 (DL19's do), written raw in tasks.jsonl: the slice's folder splits at newlines only."""
    pool = _pool(tmp_path)
    ids = [line.split("\t")[0] for line in STRATA.splitlines()[1:]]
    tasks = [{"pair_id": f"p{i}", "query_id": q, "doc_id": f"d{i}", "query": "q", "text": "one\u2028two\x85three"}
             for i, q in enumerate(ids)]
    (pool / "tasks.jsonl").write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks), "utf-8")
    result = invoke("estimate", "select", "slice", pool, "--size", 3, "--seed", 1, "-o", tmp_path / "slice")
    assert result.exit_code == 0, result.output
    written = (tmp_path / "slice" / "tasks.jsonl").read_text("utf-8").split("\n")[:-1]
    assert len(written) == 3
    assert {json.loads(line)["text"] for line in written} == {"one\u2028two\x85three"}


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--size", 1, "must be an integer >= 2, got 1"),
    ("--size", "x", "must be an integer >= 2, got 'x'"),
    ("--per-stratum", 1, "must be an integer >= 2, got 1"),
    ("--per-stratum", "nan", "must be an integer >= 2, got 'nan'"),
    ("--fraction", 0, "must be a number in (0, 1], got 0.0"),
    ("--fraction", 1.5, "must be a number in (0, 1], got 1.5"),
    ("--fraction", "nan", "must be a number in (0, 1], got nan"),
    ("--fraction", "inf", "must be a number in (0, 1], got inf"),
    ("--seed", -1, "must be a non-negative integer, got -1"),
])
def test_a_select_option_off_its_rule_is_refused_naming_it(option, value, said):
    assert refusal(["estimate", "select", "slice"], option, value) == said
