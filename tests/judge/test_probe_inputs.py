"""`evalset judge probe` refuses bad input in one line (exit 2) before asking anything, and runs without the
truncation control when no pair is human-relevant (a note says so)."""

import json
import shutil

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.judge.probes import query_terms
from evalset.judge.probing import probe_pool
from evalset.judge.spec import JudgeSettings
from tests.conftest import REPO
from tests.support.openai_server import Behaviour, JudgeServer
from tests.support.options import HUGE, not_one_of, refusal

GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
NOWHERE = "http://127.0.0.1:9/v1"  # never asked: every refusal comes first


@pytest.fixture(scope="module")
def nist_zero(tasks, shared_data):
    """The pool's pairs NIST graded 0."""
    qrels = {}
    for line in (shared_data / "dl19" / "qrels.txt").read_text().splitlines():
        query_id, _, doc_id, grade = line.split()
        qrels[(query_id, doc_id)] = int(grade)
    return [t for t in tasks if qrels.get((t["query_id"], t["doc_id"])) == 0]


def probe(pool, human, out, *more, base_url=NOWHERE):
    return CliRunner().invoke(main, ["judge", "probe", str(pool), "--guideline", str(GUIDELINE), "--human", str(human),
                                     "-o", str(out), "--model", "judge-test", "--base-url", base_url, *map(str, more)])


def refused(result, *words):
    assert result.exit_code == 2, result.output
    assert result.output.startswith("evalset: error: ") and result.output.count("\n") == 1, result.output
    assert all(word in result.output for word in words), result.output
    return result.output


def qrels_of(path, pairs, grade):
    path.write_text("".join(f"{t['query_id']} 0 {t['doc_id']} {grade}\n" for t in pairs))
    return path


def test_a_pool_without_texts_is_refused(pool_dir, shared_data, tmp_path):
    bare = tmp_path / "pool"
    shutil.copytree(pool_dir, bare)
    (bare / "tasks.jsonl").unlink()
    refused(probe(bare, shared_data / "dl19" / "qrels.txt", tmp_path / "p.json"), "no tasks.jsonl", "--corpus")
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize("how", ["dropped", "blank"])
def test_a_sampled_pair_without_its_text_is_refused(pool_dir, nist_zero, tmp_path, how):
    pool = tmp_path / "pool"
    shutil.copytree(pool_dir, pool)
    lines = (pool / "tasks.jsonl").read_text().splitlines(keepends=True)
    victim = nist_zero[0]
    kept = []
    for line in lines:
        task = json.loads(line)
        if task["pair_id"] == victim["pair_id"]:
            if how == "dropped":
                continue
            line = json.dumps({**task, "text": "  "}) + "\n"
        kept.append(line)
    (pool / "tasks.jsonl").write_text("".join(kept))
    human = qrels_of(tmp_path / "human.qrels", nist_zero, 0)
    refused(probe(pool, human, tmp_path / "p.json"), f"pair {victim['pair_id']}", "no passage text", "tasks.jsonl")


def test_human_grades_without_a_grade_0_pair_of_the_pool_are_refused(pool_dir, tasks, tmp_path):
    human = qrels_of(tmp_path / "human.qrels", tasks, 2)
    refused(probe(pool_dir, human, tmp_path / "p.json"), "no pair of the pool has a human grade of 0", str(human))


def test_a_relevance_level_off_the_guidelines_scale_is_refused(pool_dir, nist_zero, tmp_path):
    human = qrels_of(tmp_path / "human.qrels", nist_zero, 0)
    refused(probe(pool_dir, human, tmp_path / "p.json", "-c", "rel_level=4"),
            "the relevance level (-c rel_level) must be a grade of the guideline's scale above its lowest", "got 4")


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--size", 0, "must be a positive integer, got 0"),
    ("--size", "nan", "must be a positive integer, got 'nan'"),
    ("--resamples", -1, "must be an integer in [1, 1000000], got -1"),
    ("--resamples", HUGE, f"must be an integer in [1, 1000000], got {HUGE}"),
    ("-c", "rel_level=0", "rel_level: must be a positive integer, got 0"),
    ("-c", "rel_level=x", "rel_level: must be a positive integer, got 'x'"),
    ("--format", "tsv", not_one_of("tsv", "table", "json")),
])
def test_an_option_off_its_rule_is_refused_naming_it(option, value, said):
    assert refusal(["judge", "probe"], option, value) == said


@pytest.mark.parametrize(("given", "message"), [
    ({"size": 0}, "size must be a positive integer, got 0"),
    ({"rel": 0}, "rel must be a positive integer, got 0"),
    ({"seed": -1}, "seed must be a non-negative integer, got -1"),
    ({"resamples": 10**7}, "resamples must be an integer in [1, 1000000], got 10000000"),
    ({"level": 1.0}, "level must be a number in (0, 1), got 1.0"),
    ({"price_in": -1.0}, "price_in must be a number > 0, got -1.0"),
])
def test_the_probe_refuses_what_the_command_refuses_before_reading_the_pool(given, message):
    with pytest.raises(InputError) as raised:
        probe_pool("no-pool", GUIDELINE, None, "probe.json", JudgeSettings(model="m"), **given)
    assert str(raised.value) == message


def test_an_output_that_is_an_input_is_refused(pool_dir, nist_zero, tmp_path):
    human = qrels_of(tmp_path / "human.qrels", nist_zero, 0)
    before = human.read_text()
    refused(probe(pool_dir, human, human), "--human")
    assert human.read_text() == before


@pytest.mark.slow
def test_without_a_relevant_pair_the_control_is_left_out_and_said(pool_dir, nist_zero, tmp_path):
    # not a query that is its own terms, whose stuffing at the start is its copy (one request for both)
    pairs = [t for t in nist_zero if " ".join(query_terms(t["query"])) != t["query"]]
    human = qrels_of(tmp_path / "human.qrels", pairs, 0)
    with JudgeServer() as server:
        result = probe(pool_dir, human, tmp_path / "p.json", "--size", 4, "--resamples", 200,
                       base_url=server.base_url)
        asked = len(server.chat_records())
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "p.json").read_text())
    assert [p["probe"] for p in report["probes"]] == ["stuffing", "injection", "query-copy", "neutral"]
    assert report["samples"]["relevant"] == {"population": 0, "sampled": 0}
    assert "the truncation control is not run" in result.output and report["notes"]
    assert asked == 4 * (1 + 3 + 4 + 1 + 1)  # the four pairs, three stuffings, four injections, a copy, a placebo


@pytest.mark.slow
def test_pairs_without_a_grade_are_counted_as_failed_never_as_a_grade(pool_dir, nist_zero, tmp_path):
    pairs = [t for t in nist_zero if " ".join(query_terms(t["query"])) != t["query"]][:4]
    human = qrels_of(tmp_path / "human.qrels", pairs, 0)
    off_scale = {(pairs[0]["query"], pairs[0]["text"]): 9}  # the first pair's original: never a valid answer
    with JudgeServer(Behaviour(grades=off_scale)) as server:
        result = probe(pool_dir, human, tmp_path / "p.json", "--size", 4, "--resamples", 200, "-s", "max_invalid=1",
                       "--price-in", 1, base_url=server.base_url)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "p.json").read_text())
    assert report["failed"] == 1
    assert sum(report["original_grades"]["irrelevant"].values()) == 3  # the failed original is not a grade
    for entry in report["probes"]:
        for row in (entry, *entry["kinds"]):
            assert row["failed"] == 1 and row["pairs"] == 3, row
    failures = (tmp_path / "p.failures.tsv").read_text().splitlines()
    assert len(failures) == 2 and pairs[0]["pair_id"] in failures[1] and "grade 9 is not on the scale" in failures[1]
    assert "cost " in result.output
