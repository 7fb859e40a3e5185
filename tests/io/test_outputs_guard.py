"""The one output guard (:func:`evalset.io.outputs.check_outputs`): no command writes the folder it runs in, a
folder holding it, a file inside one of its input folders, or anything in a set's folder; each case of issue 51 runs
from a temporary working folder holding a file that must survive."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.annotations import labels_from_file
from evalset.io.guideline import read_guideline
from evalset.io.outputs import check_outputs
from evalset.io.queries import read_queries
from evalset.sets import freeze

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def working_folder(tmp_path, monkeypatch) -> Path:
    """The command's current folder, holding ``keep.txt`` (which must survive) and an empty pool folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("keep me\n")
    (tmp_path / "pool").mkdir()
    (tmp_path / "pool" / "pool.tsv").write_text("pair_id\tquery_id\tdoc_id\torder\n")
    return tmp_path


def refused(result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in result.output
    for word in words:
        assert word in line
    return line


def test_an_empty_output_folder_is_refused_and_the_working_folder_survives(working_folder, shared_data):
    dl19 = shared_data / "dl19"
    select = CliRunner().invoke(main, ["estimate", "select", "documents", "pool", "--budget", "100", "-o", "",
                                       "--force"])
    refused(select, "-o: an empty path names no file")
    holes = CliRunner().invoke(main, ["holes", "--qrels", str(dl19 / "qrels.txt"),
                                      str(dl19 / "runs" / "official_top100" / "bm25base_p.run.gz"),
                                      str(dl19 / "runs" / "official_top100" / "p_bert.run.gz"),
                                      "-o", "", "--force"])
    refused(holes, "-o: an empty path names no file")
    assert (working_folder / "keep.txt").read_text() == "keep me\n"


@pytest.mark.parametrize("path", [".", "..", "./"])
def test_the_working_folder_and_the_folders_holding_it_are_refused(working_folder, path):
    result = CliRunner().invoke(main, ["estimate", "select", "documents", "pool", "--budget", "100", "-o", path,
                                       "--force"])
    refused(result, f"-o {path}: is the current folder")
    assert (working_folder / "keep.txt").exists()


def test_an_output_inside_the_pool_being_judged_is_refused(working_folder):
    result = CliRunner().invoke(main, ["judge", "probe", "pool", "--guideline", str(REPO / "guidelines" /
                                                                                   "relevance-v2.md"),
                                       "--model", "m", "--human", "keep.txt", "-o", "pool/probe.json"])
    refused(result, "-o pool/probe.json: lies in the input folder POOL_DIR pool")
    assert sorted(p.name for p in (working_folder / "pool").iterdir()) == ["pool.tsv"]


@pytest.fixture
def set_folder(shared_data, working_folder) -> Path:
    root = shared_data / "dl19"
    freeze(labels_from_file(root / "qrels.txt", "human"), read_queries(root / "topics.tsv"),
           read_guideline(REPO / "guidelines" / "relevance-v2.md"), "dl19", working_folder / "sets")
    return working_folder / "sets" / "dl19"


@pytest.mark.parametrize("name", ["versions.tsv", "comparisons.jsonl", "report.html"])
def test_nothing_is_written_in_a_sets_folder(set_folder, shared_data, name):
    versions = (set_folder / "versions.tsv").read_bytes()
    run = shared_data / "dl19" / "runs" / "official_top100" / "bm25base_p.run.gz"
    result = CliRunner().invoke(main, ["report", str(set_folder / "v1"), str(run),
                                       "-o", f"sets/dl19/{name}"])
    refused(result, f"-o sets/dl19/{name}: lies in the set folder")
    assert (set_folder / "versions.tsv").read_bytes() == versions
    assert not (set_folder / "report.html").exists()


def test_a_file_of_an_input_folder_is_named_with_the_folder_given(tmp_path):
    """The guard names the input as given (the folder, not the file it found there)."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.run").write_text("1 Q0 d1 1 2.0 a\n")
    with pytest.raises(InputError) as refusal:
        check_outputs({"-o": tmp_path / "runs" / "a.run"}, inputs={"RUNS": tmp_path / "runs"})
    assert str(refusal.value) == (f"-o {tmp_path / 'runs' / 'a.run'} is a file of the input RUNS {tmp_path / 'runs'}: "
                                  "writing it would destroy the input; choose another output path")


def test_an_empty_report_path_is_one_line_not_an_os_error(set_folder, shared_data):
    run = shared_data / "dl19" / "runs" / "official_top100" / "bm25base_p.run.gz"
    result = CliRunner().invoke(main, ["report", str(set_folder / "v1"), str(run), "-o", ""])
    refused(result, "-o: an empty path names no file")


def test_freeze_still_adds_a_version_to_its_own_set(set_folder, shared_data):
    check_outputs({"--sets-dir": set_folder / "versions.tsv"}, adds_to_set=set_folder, resumes=True)  # freeze's
    with pytest.raises(InputError, match="lies in the set folder"):
        check_outputs({"-o": set_folder / "versions.tsv"})
    with pytest.raises(InputError, match="frozen set version"):
        check_outputs({"--sets-dir": set_folder / "v1" / "x.tsv"}, adds_to_set=set_folder)


def test_an_existing_output_file_is_replaced_only_with_force(working_folder, shared_data):
    dl19 = shared_data / "dl19"
    labels = dl19 / "llm_labels" / "llama-3-70b.fourprompts.qrels"
    (working_folder / "ensemble.tsv").write_text("query_id\tdoc_id\tgrade\n")
    command = ["judge", "ensemble", str(labels), "--human", str(dl19 / "qrels.txt"), "-o", "ensemble.tsv"]
    refused(CliRunner().invoke(main, command), "-o ensemble.tsv: exists; give --force to replace it")
    assert (working_folder / "ensemble.tsv").read_text() == "query_id\tdoc_id\tgrade\n"
    replaced = CliRunner().invoke(main, [*command, "--force"])
    assert replaced.exit_code == 0, replaced.output
    assert (working_folder / "ensemble.tsv").read_text().startswith("query_id\t")


@pytest.mark.parametrize("name, content, kind", [
    ("mine.qrels", "19335 0 1017759 0\n", "a file evalset writes"),  # qrels given as the output by mistake
    ("notes.tsv", "my notes, not a table\n", "a tab-separated table"),
    ("page.html", "keep me\n", "an HTML page"),
])
def test_force_replaces_only_a_file_of_a_kind_evalset_writes(working_folder, shared_data, name, content, kind):
    """Issue 51: --force replaces only what a command wrote; a qrels file or a note given as -o survives."""
    dl19 = shared_data / "dl19"
    (working_folder / name).write_text(content)
    result = CliRunner().invoke(main, ["judge", "ensemble", str(dl19 / "llm_labels" / "llama-3-70b.fourprompts.qrels"),
                                       "--human", str(dl19 / "qrels.txt"), "-o", name, "--force"])
    assert refused(result) == (f"evalset: error: -o {name}: exists and is not {kind}; --force replaces only what a "
                               "command wrote: move it away or choose a new path")
    assert (working_folder / name).read_text() == content
