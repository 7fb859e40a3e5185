"""Gold tasks without a server: reading gold, the rate, the blind mix, scores against gold, and bad input refused
before any connection (push and pull point at a port where nothing listens: a connection attempt would fail with
another message)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.guideline import read_guideline
from evalset.judgments.gold import gold_only_count
from evalset.pooling import pair_id
from evalset.quality import (
    GoldPolicy,
    GoldReport,
    plan_gold,
    prepare_gold_push,
    read_gold,
    score_annotators,
    split_gold,
)
from evalset.quality.gold import kappa_against_gold
from tests.support.options import refusal

REPO = Path(__file__).resolve().parents[2]
GUIDELINE_PATH = REPO / "guidelines" / "relevance-v2.md"
GUIDELINE = read_guideline(GUIDELINE_PATH)
NOWHERE = {"LABEL_STUDIO_URL": "http://127.0.0.1:9", "LABEL_STUDIO_API_KEY": "not-used"}


def _tasks(spec: list[tuple[str, str]]) -> pd.DataFrame:
    """Tasks (pair_id, query_id, query, text) of (query_id, doc_id) pairs, in the order given."""
    return pd.DataFrame([{"pair_id": pair_id(q, d), "query_id": q, "query": f"query {q}", "text": f"doc {d}"}
                         for q, d in spec])


# ------------------------------------------------------------------------------------------------- reading gold
def test_read_gold_keeps_one_grade_per_pair_and_leaves_negative_grades_out(tmp_path):
    path = tmp_path / "gold.qrels"
    path.write_text("q1 0 d1 2\nq1 0 d1 2\nq1 0 d2 -1\nq2 0 d3 0\n")
    gold = read_gold(path, GUIDELINE)
    assert gold[["query_id", "doc_id", "grade"]].values.tolist() == [["q1", "d1", 2], ["q2", "d3", 0]]
    assert gold["pair_id"].tolist() == [pair_id("q1", "d1"), pair_id("q2", "d3")]
    assert (gold.attrs["repeats"], gold.attrs["unjudged"]) == (1, 1)


def test_read_gold_refuses_a_grade_off_the_scale_with_its_line(tmp_path):
    path = tmp_path / "gold.qrels"
    path.write_text("q1 0 d1 2\nq1 0 d2 7\n")
    with pytest.raises(InputError) as error:
        read_gold(path, GUIDELINE)
    assert (error.value.path, error.value.line) == (str(path), 2)
    assert "gold grade 7 of query q1 document d2 is not on the scale" in error.value.message


def test_read_gold_refuses_a_pair_with_two_grades_from_two_annotators(tmp_path):
    path = tmp_path / "gold.tsv"
    path.write_text("query_id\tdoc_id\tannotator\tkind\tgrade\tsource\tlabeled_at\tcomment\n"
                    "q1\td1\tann\thuman\t2\t\t\t\nq1\td1\tbob\thuman\t3\t\t\t\n")
    with pytest.raises(InputError, match=r"one grade per pair.*query q1 document d1 has grades 2, 3") as error:
        read_gold(path, GUIDELINE)
    assert error.value.line == 3


# ----------------------------------------------------------------------------------------------- rate and mix
@pytest.mark.parametrize(("pool", "in_pool", "rate", "count"), [
    (200, 0, 0.1, 23),  # 23/223 = 10.3%; 22/222 = 9.9%
    (200, 5, 0.1, 17),  # 22/217 = 10.1%; 21/216 = 9.7%
    (200, 30, 0.1, 0),  # the pool already holds 15% gold
    (10, 0, 0.5, 10),  # 10/20
])
def test_gold_only_count_is_the_smallest_that_reaches_the_rate(pool, in_pool, rate, count):
    assert gold_only_count(pool, in_pool, rate) == count
    assert (in_pool + count) / (pool + count) >= rate
    assert count == 0 or (in_pool + count - 1) / (pool + count - 1) < rate


def test_plan_mixes_gold_blind_inside_its_query_and_is_the_same_on_a_second_run():
    pool = _tasks([("q1", f"d{i}") for i in range(8)] + [("q2", f"d{i}") for i in range(8)])
    gold = _tasks([("q1", "g1"), ("q2", "g2"), ("q2", "g3"), ("q9", "g4"), ("q9", "g5"), ("q1", "d0")])
    plan = plan_gold(pool, set(pool["pair_id"]), gold, rate=0.25, seed=3)
    # 1 gold pair in the pool (q1/d0) + 4 gold-only: 5 / 20 = 25%
    assert (plan.gold_in_pool, plan.gold_added, len(plan.tasks)) == (1, 4, 20)
    assert plan.gold_pairs == set(plan.tasks["pair_id"]) & set(gold["pair_id"])
    assert list(plan.tasks.columns) == ["pair_id", "query_id", "query", "text"]
    assert set(pool["pair_id"]) <= set(plan.tasks["pair_id"]) and plan.tasks["pair_id"].is_unique
    # pool queries' gold pairs (3 of them) are chosen before q9's: only one q9 pair makes it
    assert (plan.tasks["query_id"] == "q9").sum() == 1
    runs = plan.tasks["query_id"].ne(plan.tasks["query_id"].shift()).sum()
    assert runs == plan.tasks["query_id"].nunique() == 3  # each query's tasks together
    pool_order = [p for p in plan.tasks["pair_id"] if p in set(pool["pair_id"])]
    assert pool_order == pool["pair_id"].tolist()  # the pool's own order is kept
    again = plan_gold(pool, set(pool["pair_id"]), gold, rate=0.25, seed=3)
    assert again.tasks.equals(plan.tasks)
    other = plan_gold(pool, set(pool["pair_id"]), gold, rate=0.25, seed=4)
    assert not other.tasks.equals(plan.tasks)


def test_plan_refuses_a_rate_the_gold_cannot_reach_and_a_rate_outside_the_range():
    pool = _tasks([("q1", f"d{i}") for i in range(10)])
    gold = _tasks([("q1", "g1")])
    with pytest.raises(InputError, match=r"needs 3 gold pair.*has 1"):
        plan_gold(pool, set(pool["pair_id"]), gold, rate=0.2, seed=0)
    for rate in (0, -0.1, 0.51, 1.0):
        with pytest.raises(InputError) as raised:
            plan_gold(pool, set(pool["pair_id"]), gold, rate=rate, seed=0)
        assert str(raised.value) == f"rate must be a number in (0, 0.5], got {rate}"


# ------------------------------------------------------------------------------------------------------ scores
def test_scores_against_gold_are_plain_accuracy_and_mae_and_sklearn_linear_kappa():
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 4, 40)
    answers = pd.DataFrame({
        "annotator": ["near"] * 40 + ["noise"] * 40 + ["one"] * 40 + ["few"] * 5,
        "grade": np.concatenate([np.clip(truth + (np.arange(40) % 5 == 0), 0, 3), rng.integers(0, 4, 40),
                                 np.ones(40, dtype=int), truth[:5]]),
        "gold": np.concatenate([truth, truth, truth, truth[:5]])})
    scores = score_annotators(answers, [0, 1, 2, 3]).set_index("annotator")
    for name, group in answers.groupby("annotator"):
        grades, gold = group["grade"].tolist(), group["gold"].tolist()
        row = scores.loc[name]
        assert row["gold_seen"] == len(grades)
        assert row["accuracy"] == pytest.approx(sum(a == b for a, b in zip(grades, gold, strict=True)) / len(gold))
        assert row["mae"] == pytest.approx(sum(abs(a - b) for a, b in zip(grades, gold, strict=True)) / len(gold))
        assert row["kappa_linear"] == pytest.approx(cohen_kappa_score(grades, gold, weights="linear",
                                                                      labels=[0, 1, 2, 3]), abs=1e-12)
    assert scores["verdict"].to_dict() == {"few": "not enough gold", "near": "passed", "noise": "flagged",
                                           "one": "flagged"}
    report = GoldReport(scores.reset_index(), GoldPolicy(), gold_only_answers=0, gold_path=None, gold_pairs=40)
    assert report.to_text().splitlines()[-1] == "flagged: noise, one"


def test_kappa_has_agreements_one_rule_zero_for_a_constant_side_undefined_only_for_zero_over_zero():
    """Issue 29: a constant annotator's kappa was undef in agreement and 0.000 in pull --gold."""
    from sklearn.metrics import cohen_kappa_score

    scale = [0, 1, 2, 3]
    assert kappa_against_gold(np.array([0, 1, 2]), np.array([2, 2, 2]), scale) == 0.0 == cohen_kappa_score(
        [2, 2, 2], [0, 1, 2], labels=scale, weights="linear")
    assert kappa_against_gold(np.array([1, 1, 1]), np.array([0, 2, 3]), scale) == 0.0
    assert np.isnan(kappa_against_gold(np.array([2, 2]), np.array([2, 2]), scale))
    answers = pd.DataFrame({"annotator": ["a"] * 3 + ["b"] * 3, "grade": [0, 1, 2, 2, 2, 2], "gold": [2] * 6})
    verdicts = score_annotators(answers, scale, GoldPolicy(min_gold=3)).set_index("annotator")["verdict"]
    assert verdicts.to_dict() == {"a": "flagged", "b": "undefined"}


def test_no_gold_answer_yet_is_a_warning_not_a_quiet_empty_report():
    scores = score_annotators(pd.DataFrame({"annotator": [], "grade": [], "gold": []}), [0, 1, 2, 3])
    assert scores.empty and list(scores.columns) == ["annotator", "gold_seen", "accuracy", "mae", "kappa_linear",
                                                     "verdict"]
    assert GoldReport(scores, GoldPolicy(), gold_only_answers=0, gold_path=None, gold_pairs=0).to_text() == (
        "warning: no answer to a gold task yet: no annotator can be scored against gold")


def test_split_gold_keeps_gold_only_answers_out_of_the_labels_and_pool_gold_in_both():
    labels = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "g1", "d2"], "annotator": ["a"] * 3,
                           "grade": [1, 2, 3]})
    pool = pd.DataFrame({"pair_id": [pair_id("q1", "d1"), pair_id("q2", "d2")], "query_id": ["q1", "q2"],
                         "doc_id": ["d1", "d2"]})
    gold = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["g1", "d1"], "grade": [2, 0]})
    kept, answers = split_gold(labels, pool, gold)
    assert kept["doc_id"].tolist() == ["d1", "d2"]
    assert sorted(zip(answers["doc_id"], answers["grade"], answers["gold"], strict=True)) == [("d1", 1, 0),
                                                                                             ("g1", 2, 2)]


# ------------------------------------------------------------------------- bad input: exit 2, nothing pushed
@pytest.fixture(scope="module")
def pool(shared_data, tmp_path_factory):
    dl19 = shared_data / "dl19"
    folder = tmp_path_factory.mktemp("gold") / "pool"
    result = CliRunner().invoke(main, ["pool", str(dl19 / "runs" / "rankllm"), "--depth", "3", "--exclude-judged",
                                       str(dl19 / "qrels.txt"), "--queries", str(dl19 / "topics.tsv"), "--corpus",
                                       str(dl19 / "passages.jsonl.gz"), "-o", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def _push(pool, *extra):
    return CliRunner().invoke(main, ["push", str(pool), "--guideline", str(GUIDELINE_PATH), "--project", "proj",
                                     *map(str, extra)], env=NOWHERE)


def _one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalset: error: "), result.output
    return lines[0]


@pytest.mark.slow
def test_push_refuses_bad_gold_before_connecting(pool, shared_data, tmp_path):
    qrels = shared_data / "dl19" / "qrels.txt"
    off = tmp_path / "off.qrels"
    off.write_text("19335 0 1017759 0\n19335 0 1082489 5\n")
    assert _one_error_line(_push(pool, "--gold", off, "--gold-rate", 0.1)) == (
        f"evalset: error: {off}:2: gold grade 5 of query 19335 document 1082489 is not on the scale of "
        f"{GUIDELINE_PATH} (0, 1, 2, 3)")
    no_text = tmp_path / "no-text.qrels"
    no_text.write_text(qrels.read_text() + "19335 0 no-such-passage 2\n")
    line = _one_error_line(_push(pool, "--gold", no_text, "--gold-rate", 0.1))
    assert line.startswith(f"evalset: error: {no_text}:9261: 1 gold pair(s) have no text (document no-such-passage"
                           " is not in ")
    for rate in (0, 0.6, -1):
        result = _push(pool, "--gold", qrels, "--gold-rate", rate)
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert f"Invalid value for '--gold-rate': must be a number in (0, 0.5], got {float(rate)}" in result.output
    assert "--gold and --gold-rate go together" in _one_error_line(_push(pool, "--gold", qrels))
    assert "--gold and --gold-rate go together" in _one_error_line(_push(pool, "--gold-rate", 0.1))


@pytest.mark.slow
def test_a_good_gold_push_gets_as_far_as_the_connection(pool, shared_data):
    result = _push(pool, "--gold", shared_data / "dl19" / "qrels.txt", "--gold-rate", 0.1)
    assert "Label Studio at http://127.0.0.1:9 is not answering" in _one_error_line(result)


@pytest.mark.slow
def test_prepare_reads_texts_from_the_corpus_and_queries_recorded_in_pool_json(pool, shared_data):
    plan = prepare_gold_push(pool, shared_data / "dl19" / "qrels.txt", GUIDELINE, 0.5, seed=0)
    assert plan.gold_added == plan.pool_tasks and plan.gold_in_pool == 0
    texts = {json.loads(line)["pair_id"]: json.loads(line)["text"] for line in (pool / "tasks.jsonl").open()}
    assert all(plan.tasks.set_index("pair_id").loc[p, "text"] == t for p, t in texts.items())
    assert plan.tasks["text"].str.len().gt(0).all() and plan.tasks["query"].str.len().gt(0).all()


def test_pull_refuses_a_gold_report_without_gold(pool, tmp_path):
    result = CliRunner().invoke(main, ["pull", "--project", "p", "--pool", str(pool), "--guideline",
                                       str(GUIDELINE_PATH), "-o", str(tmp_path / "l.tsv"), "--gold-report",
                                       str(tmp_path / "r.json")], env=NOWHERE)
    assert "--gold-report needs --gold" in _one_error_line(result)


def test_pull_refuses_a_gold_report_over_the_gold_file_or_over_the_labels(pool, tmp_path):
    gold = tmp_path / "gold.qrels"
    gold.write_text("19335 0 1017759 0\n")
    before = gold.read_bytes()
    base = ["pull", "--project", "p", "--pool", str(pool), "--guideline", str(GUIDELINE_PATH), "--gold", str(gold)]
    over_gold = CliRunner().invoke(main, [*base, "-o", str(tmp_path / "l.tsv"), "--gold-report", str(gold)],
                                   env=NOWHERE)
    assert "--gold-report" in _one_error_line(over_gold) and gold.read_bytes() == before
    same = CliRunner().invoke(main, [*base, "-o", str(tmp_path / "l.tsv"), "--gold-report", str(tmp_path / "l.tsv")],
                              env=NOWHERE)
    assert "--gold-report" in _one_error_line(same) and not (tmp_path / "l.tsv").exists()


def test_a_gold_share_far_above_the_rate_asked_is_a_warning():
    """Issue 29: push reported a 100% gold rate against 0.1 asked, without a warning."""
    pool = _tasks([("q1", f"d{i}") for i in range(8)])
    plan = plan_gold(pool, set(pool["pair_id"]), pool.copy(), rate=0.1, seed=3)
    assert plan.to_text().splitlines()[1] == (
        "warning: 100.0% of the tasks are gold, against a rate of 0.1 asked: the gold file grades 8 of the pool's 8 "
        "pairs, which count as gold (a gold file of pairs outside the pool, or fewer of the pool's, keeps the rate)")
    fair = plan_gold(pool, set(pool["pair_id"]), _tasks([("q1", "g1"), ("q1", "g2")]), rate=0.1, seed=3)
    assert "warning" not in fair.to_text()


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--gold-rate", 0, "must be a number in (0, 0.5], got 0.0"),
    ("--gold-rate", 0.6, "must be a number in (0, 0.5], got 0.6"),
    ("--gold-rate", "nan", "must be a number in (0, 0.5], got nan"),
    ("--gold-rate", "x", "must be a number in (0, 0.5], got 'x'"),
    ("--seed", -1, "must be a non-negative integer, got -1"),
])
def test_push_refuses_a_gold_option_off_its_rule_naming_it(option, value, said):
    assert refusal(["push"], option, value) == said


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--gold-rule", "min_gold=0", "min_gold: must be a positive integer, got 0"),
    ("--gold-rule", "min_gold=inf", "min_gold: must be a positive integer, got 'inf'"),
    ("--gold-rule", "min_kappa=1.5", "min_kappa: must be a number in [-1, 1], got 1.5"),
    ("--gold-rule", "min_kappa=nan", "min_kappa: must be a number in [-1, 1], got nan"),
    ("--gold-rule", "min_kappa=-inf", "min_kappa: must be a number in [-1, 1], got -inf"),
])
def test_pull_refuses_a_gold_option_off_its_rule_naming_it(option, value, said):
    assert refusal(["pull"], option, value) == said


@pytest.mark.parametrize(("make", "message"), [
    (lambda: GoldPolicy(min_gold=0), "min_gold must be a positive integer, got 0"),
    (lambda: GoldPolicy(min_kappa=1.5), "min_kappa must be a number in [-1, 1], got 1.5"),
    (lambda: GoldPolicy(min_kappa=float("nan")), "min_kappa must be a number in [-1, 1], got nan"),
    (lambda: prepare_gold_push("no-pool", "no-gold", GUIDELINE, 0.6), "rate must be a number in (0, 0.5], got 0.6"),
    (lambda: prepare_gold_push("no-pool", "no-gold", GUIDELINE, 0.1, -1),
     "seed must be a non-negative integer, got -1"),
    (lambda: plan_gold(pd.DataFrame(), set(), pd.DataFrame(), 0.0, 0), "rate must be a number in (0, 0.5], got 0.0"),
])
def test_the_library_refuses_what_the_commands_refuse(make, message):
    with pytest.raises(InputError) as raised:
        make()
    assert str(raised.value) == message
