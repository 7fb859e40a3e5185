"""A folder of runs stands for the run files in it, wherever runs are taken (score, compare, diff, plan,
pool, agreement, report), with the same results as naming the files."""

import json
import shutil

import pytest
from click.testing import CliRunner

from evalset.cli import main

RUNS = ("bm25base_p", "idst_bert_p1", "p_bert")


@pytest.fixture(scope="module")
def folder(tmp_path_factory, shared_data):
    """A folder holding three official DL19 runs (and a hidden file, which is not a run)."""
    target = tmp_path_factory.mktemp("runs")
    for name in RUNS:
        shutil.copy(shared_data / "dl19" / "runs" / "official_full" / f"{name}.run.gz", target)
    (target / ".DS_Store").write_text("not a run")
    return target


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_score_takes_a_folder_as_its_files(folder, shared_data):
    qrels = shared_data / "dl19" / "qrels.txt"
    by_folder = json.loads(invoke("score", "--qrels", qrels, folder, "--format", "json"))
    by_files = json.loads(invoke("score", "--qrels", qrels, *sorted(folder.glob("*.run.gz")), "--format", "json"))
    assert list(by_folder["runs"]) == sorted(RUNS)
    assert by_folder == by_files
    assert by_folder["runs"]["idst_bert_p1"]["ndcg@10"]["mean"] == pytest.approx(0.7645, abs=5e-5)


def test_compare_takes_a_folder_of_candidates(folder, shared_data):
    qrels = shared_data / "dl19" / "qrels.txt"
    baseline = folder / "bm25base_p.run.gz"
    results = json.loads(invoke("compare", "--qrels", qrels, baseline, folder, "--format", "json"))
    # the baseline is in the folder too: it is compared with the other two, not with itself
    assert [(r["baseline"], r["candidate"]) for r in results] == [("bm25base_p", "idst_bert_p1"),
                                                                  ("bm25base_p", "p_bert")]
    assert results[0]["threshold"] == pytest.approx(0.025)


def test_two_files_with_one_run_name_are_refused_naming_both(folder, shared_data, tmp_path):
    other = tmp_path / "p_bert.run"
    other.write_text("1 Q0 d1 1 1.0 mine\n")
    result = CliRunner().invoke(main, ["score", "--qrels", str(shared_data / "dl19" / "qrels.txt"), str(folder),
                                       str(other)])
    assert result.exit_code == 2
    assert f"two runs are named 'p_bert': {folder / 'p_bert.run.gz'} and {other}" in result.output


def test_plan_takes_a_folder_of_pilot_runs(folder, shared_data):
    document = json.loads(invoke("plan", "power", "--qrels", shared_data / "dl19" / "qrels.txt", folder,
                                 "--resamples", "20", "--permutations", "99", "--format", "json"))
    comparisons = {(row["baseline"], row["candidate"]) for row in document["comparisons"]}
    assert comparisons == {("bm25base_p", "idst_bert_p1"), ("bm25base_p", "p_bert")}


def test_an_empty_folder_or_no_candidate_is_an_error_not_an_empty_result(folder, shared_data, tmp_path):
    qrels = str(shared_data / "dl19" / "qrels.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(main, ["score", "--qrels", qrels, str(empty)])
    assert result.exit_code == 2
    assert result.output == f"evalset: error: {empty}: a folder of runs with no run file in it\n"
    only_itself = tmp_path / "only"
    only_itself.mkdir()
    shutil.copy(folder / "p_bert.run.gz", only_itself)
    result = CliRunner().invoke(main, ["compare", "--qrels", qrels, str(only_itself / "p_bert.run.gz"),
                                       str(only_itself)])
    assert (result.exit_code, result.output) == (2, "evalset: error: no candidate run to compare with the baseline "
                                                    "p_bert\n")
