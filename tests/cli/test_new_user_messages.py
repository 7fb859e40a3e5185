"""What a new user tripped on (issue 74 item 11), each as the command shows it: one line that says what is wrong
and what to do, never a silent default or a message about the wrong thing."""

from pathlib import Path

from click.testing import CliRunner

from evalset.cli import main
from tests.conftest import REPO

DL19 = REPO / "data" / "dl19"
RUN = DL19 / "runs" / "TUA1-1.run.gz"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_a_repeated_qrels_line_is_the_qrels_note_not_a_runs(tmp_path):
    qrels = tmp_path / "q.qrels"
    qrels.write_text(DL19.joinpath("nist.qrels").read_text() + "19335 0 1017759 0\n")
    result = invoke("score", "--qrels", qrels, RUN, DL19 / "runs" / "bm25base_p.run.gz")
    assert result.stderr.splitlines().count("note: the qrels: 1 repeated lines collapsed") == 1
    assert "TUA1-1: 1 repeated" not in result.stderr


def test_a_pool_made_without_texts_says_to_pool_again_with_the_corpus(tmp_path):
    assert invoke("pool", RUN, DL19 / "runs" / "bm25base_p.run.gz", "-k", "2", "-o", tmp_path / "pool").exit_code == 0
    result = invoke("judge", "grade", tmp_path / "pool", "--guideline", "relevance-v2", "--model", "m", "-o",
                    tmp_path / "labels.tsv", "--base-url", "http://127.0.0.1:9/v1")
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: {tmp_path / 'pool' / 'tasks.jsonl'}: no such file: the pool was made "
                             "without the texts (no --corpus): pool again with --corpus and --queries for the tasks "
                             "an annotator or a judge reads\n")


def test_an_unknown_guideline_name_lists_the_shipped_ones(tmp_path):
    for command in (["judge", "grade", "pool", "--model", "m", "-o", "x.tsv"],
                    ["freeze", DL19 / "nist.qrels", "--queries", DL19 / "topics.tsv", "--name", "s"]):
        result = invoke(*command, "--guideline", "relevance-v9")
        assert result.exit_code == 2
        assert result.output.endswith("'--guideline': no such file, and no guideline shipped with evalset is named "
                                      "'relevance-v9' (shipped: relevance-v1, relevance-v2)\n"), result.output


def test_an_empty_model_name_is_refused_where_it_would_label_every_grade_llm_colon(tmp_path):
    result = invoke("judge", "grade", tmp_path, "--guideline", "relevance-v2", "--model", "", "-o", "x.tsv")
    assert result.exit_code == 2 and "'--model': must be a text of 1 to 400 characters, got ''" in result.output


def test_a_set_option_without_a_set_is_refused_not_ignored():
    for option in (["--split", "dev"], ["--override-contract"]):
        result = invoke("score", "--qrels", DL19 / "nist.qrels", RUN, *option)
        assert result.exit_code == 2
        assert result.output == (f"evalset: error: {option[0]}: only with --set (a frozen set's split, its "
                                 "contract)\n")


def test_the_help_says_what_a_runs_folder_may_hold_and_a_readme_there_is_refused_naming_it(tmp_path):
    text = " ".join(invoke("score", "--help").output.split())
    assert "a folder stands for every file in it but hidden ones, so keep only runs there" in text
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.run").write_bytes(Path(RUN).read_bytes())
    (tmp_path / "runs" / "README.md").write_text("# my runs\nbm25 tuned on dev\n")
    result = invoke("score", "--qrels", DL19 / "nist.qrels", tmp_path / "runs")
    assert result.exit_code == 2 and "README.md" in result.output


def test_freeze_says_an_unchanged_version_and_refuses_a_version_before_the_latest(tmp_path):
    args = [DL19 / "nist.qrels", "--queries", DL19 / "topics.tsv", "--guideline", "relevance-v2", "--name", "s",
            "--sets-dir", tmp_path]
    assert invoke("freeze", *args).exit_code == 0
    again = invoke("freeze", *args)
    assert again.exit_code == 0 and ("note: v2 holds the same qrels, queries, labels and contract as v1: nothing "
                                     "changed since (evalset diff shows none)") in again.output
    (tmp_path / "s" / "v5").mkdir()  # a later version (a folder is enough to count)
    earlier = invoke("freeze", *args, "--version", "3")
    assert earlier.exit_code == 2 and earlier.output == (
        f"evalset: error: {tmp_path / 's'}: --version 3 comes before the latest version, v5: versions only grow "
        "(give --version 6 or more, or none)\n")


def test_a_grade_too_large_for_err_does_not_advise_a_gain_that_cannot_help(tmp_path):
    qrels = tmp_path / "q.qrels"
    qrels.write_text("19335 0 1017759 2000\n19335 0 1082489 0\n")
    result = invoke("score", "--qrels", qrels, RUN, "-m", "err@10")
    assert result.exit_code == 2
    assert "(-c gain=linear helps every measure but err, which is on 2^grade - 1 whatever the gain)" in result.output
