"""`evalset score` and `evalset compare` as a user runs them: output contracts, errors, exit codes."""

import json

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.scoring import score_runs
from tests.support.options import not_one_of, refusal


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    return {"qrels": str(root / "qrels.txt"),
            "runs": {name: str(root / "runs" / "official_full" / f"{name}.run.gz")
                     for name in ("bm25base_p", "idst_bert_p1", "p_bert")}}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_score_json_follows_the_output_contract(dl19):
    result = invoke("score", "--qrels", dl19["qrels"], dl19["runs"]["idst_bert_p1"], "-m", "ndcg_cut_10", "-m", "ap",
                    "--format", "json", "--per-query")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["contract"] == {"rel_level": 1, "gain": "linear", "ties": "trec", "missing": "zero",
                                    "undefined": "skip", "unjudged": "nonrelevant", "trec_eval_version": 10}
    scores = document["runs"]["idst_bert_p1"]
    assert list(scores) == ["ndcg_cut_10", "judged@10", "ap"]  # spelled as given; judged@k beside nDCG@k
    assert scores["ndcg_cut_10"]["mean"] == pytest.approx(0.7645, abs=5e-5)
    assert scores["ap"] == {"mean": pytest.approx(0.5290, abs=5e-5), "defined": 43, "undefined": 0}
    rows = document["per_query"]
    assert len(rows) == 43 * 3 and set(rows[0]) == {"run", "query_id", "metric", "value"}


def test_score_unjudged_condensed_is_in_the_contract_and_the_notes(dl19):
    run = dl19["runs"]["bm25base_p"]
    condensed = invoke("score", "--qrels", dl19["qrels"], run, "-m", "ap", "-c", "unjudged=condensed",
                       "--format", "json")
    assert condensed.exit_code == 0, condensed.output
    document = json.loads(condensed.stdout)
    assert document["contract"]["unjudged"] == "condensed"
    assert "note: bm25base_p: 37934 unjudged documents removed before scoring (condensed)" in condensed.stderr
    assert document["notes"]["bm25base_p"]["unjudged_removed"] == 43000 - 5066  # 5,066 of its rows are judged
    default = json.loads(invoke("score", "--qrels", dl19["qrels"], run, "-m", "ap", "--format", "json").stdout)
    assert "unjudged_removed" not in default["notes"]["bm25base_p"]
    assert document["runs"]["bm25base_p"]["ap"]["mean"] > default["runs"]["bm25base_p"]["ap"]["mean"]
    table = invoke("score", "--qrels", dl19["qrels"], run, "-m", "ap", "-c", "unjudged=condensed").output
    assert "contract: rel_level=1 gain=linear ties=trec missing=zero undefined=skip unjudged=condensed" in table
    refused = invoke("score", "--qrels", dl19["qrels"], run, "-c", "unjudged=skip")
    assert refused.exit_code == 2 and "'skip' is not one of 'nonrelevant', 'condensed'" in refused.output


def test_score_tsv_per_query_columns(dl19):
    result = invoke("score", "--qrels", dl19["qrels"], dl19["runs"]["bm25base_p"], dl19["runs"]["p_bert"],
                    "-m", "rr", "--format", "tsv", "--per-query")
    lines = result.output.splitlines()
    assert lines[0].split("\t") == ["run", "query_id", "metric", "value"]
    assert len(lines) == 1 + 2 * 43


def test_score_table_names_runs_and_contract(dl19):
    result = invoke("score", "--qrels", dl19["qrels"], dl19["runs"]["bm25base_p"], "-m", "p@10", "-c", "rel_level=2")
    assert result.exit_code == 0
    assert "bm25base_p" in result.output and "rel_level=2" in result.output
    assert result.output.splitlines()[1].split() == ["bm25base_p", "0.4116"]  # NIST's passages-eval P_10


def test_k_zero_is_refused_with_one_line_and_exit_2(dl19):
    result = invoke("score", "--qrels", dl19["qrels"], dl19["runs"]["bm25base_p"], "-m", "ndcg@0")
    assert result.exit_code == 2
    assert result.output.strip() == "evalset: error: ndcg: the cutoff k must be an integer in [1, 1000000], got 0"


def test_malformed_run_names_file_and_line(tmp_path, dl19):
    bad = tmp_path / "bad.run"
    bad.write_text("19335 Q0 a 1 3.0 x\n19335 Q0 b 2 x\n")
    result = invoke("score", "--qrels", dl19["qrels"], bad)
    assert result.exit_code == 2 and f"{bad}:2: expected 6" in result.output


def test_two_runs_with_one_name_are_refused(tmp_path, dl19):
    result = invoke("score", "--qrels", dl19["qrels"], dl19["runs"]["p_bert"], dl19["runs"]["p_bert"])
    assert result.exit_code == 2 and "two runs are named 'p_bert'" in result.output


def test_compare_json_has_every_field(dl19):
    result = invoke("compare", "--qrels", dl19["qrels"], dl19["runs"]["bm25base_p"], dl19["runs"]["idst_bert_p1"],
                    dl19["runs"]["p_bert"], "--format", "json")
    assert result.exit_code == 0, result.output
    comparisons = json.loads(result.stdout)
    assert [c["candidate"] for c in comparisons] == ["idst_bert_p1", "p_bert"]
    required = {"baseline", "candidate", "metric", "n", "mean_difference", "median_difference", "wins", "losses",
                "ties", "permutation_p", "t", "ttest_p", "ci_low", "ci_high", "ci_level", "effect_size", "threshold",
                "kind", "established", "largest_losses"}
    assert required <= set(comparisons[0])
    assert comparisons[0]["threshold"] == 0.025  # two planned comparisons by default
    assert round(comparisons[0]["t"], 4) == 7.1275 and comparisons[0]["established"] is True


def test_compare_exploratory_table(dl19):
    result = invoke("compare", "--qrels", dl19["qrels"], dl19["runs"]["bm25base_p"], dl19["runs"]["p_bert"],
                    "--exploratory")
    assert result.exit_code == 0 and "never established" in result.output


def test_a_mean_over_no_defined_query_prints_as_undef(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 0\nq1 0 d2 0\n")  # no relevant document: nDCG and RR undefined
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d3 2 1.0 r\n")
    result = invoke("score", "--qrels", tmp_path / "qrels.txt", tmp_path / "r.run", "-m", "ndcg@10", "-m", "rr",
                    "--per-query")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1].split() == ["r", "undef", "(0/1)", "0.1000", "undef", "(0/1)"]
    assert lines[-1].split() == ["r", "q1", "undef", "0.1000", "undef"]
    assert "n/a" not in result.output


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--max-retrieved", 0, "must be a positive integer, got 0"),
    ("--max-retrieved", "1e3", "must be a positive integer, got '1e3'"),
    ("--max-retrieved", "inf", "must be a positive integer, got 'inf'"),
    ("-c", "trec_eval_version=8", "trec_eval_version: " + not_one_of("8", "9", "10")),
    ("-c", "trec_eval_version=x", "trec_eval_version: " + not_one_of("x", "9", "10")),
    ("--format", "csv", not_one_of("csv", "table", "tsv", "json", "trec_eval")),
    ("--split", "train", not_one_of("train", "test", "dev", "all")),
])
def test_a_score_option_off_its_rule_is_refused_naming_it(option, value, said):
    assert refusal(["score"], option, value) == said


@pytest.mark.parametrize(("given", "message"), [
    ({"max_retrieved": 0}, "max_retrieved must be a positive integer, got 0"),
])
def test_scoring_refuses_what_the_command_refuses_before_reading_a_run(given, message):
    with pytest.raises(InputError) as raised:
        score_runs(None, ["no-such.run"], **given)
    assert str(raised.value) == message
