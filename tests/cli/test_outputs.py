"""Outputs never destroy inputs: every command that writes refuses, before any work, an output that is one of its
inputs (the same path, or the same file through a linked folder or a link), two outputs that are one file, and an
output it cannot write (naming the option); a closed stdout loses no file and is not an error."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main

REPO = Path(__file__).resolve().parents[2]
DL19 = REPO / "data" / "dl19"
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
RUNS = [DL19 / "runs" / "ICT-BERT2.run.gz", DL19 / "runs" / "ICT-CKNRM_B.run.gz"]
EXCITE_ARGS = ["-l", "header=no", "-l", "query=3", "--per-stratum", "5"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder of copies of the real inputs, and `linked`, a symbolic link to that folder."""
    shutil.copy(REPO / "data" / "querylog" / "excite-small.log", tmp_path / "in.log")
    shutil.copy(DL19 / "llm_labels" / "flan-t5-large.fourprompts.qrels", tmp_path / "a.qrels")
    shutil.copy(DL19 / "llm_labels" / "llama-3-8b.baseline.qrels", tmp_path / "b.qrels")
    shutil.copy(DL19 / "nist.qrels", tmp_path / "pilot.png")  # qrels under a plot's name: --plot onto --qrels
    shutil.copy(DL19 / "topics.tsv", tmp_path / "topics.tsv")
    shutil.copy(GUIDELINE, tmp_path / "guideline.md")
    for run in RUNS:
        shutil.copy(run, tmp_path / run.name)
    (tmp_path / "runs-and-pool").mkdir()
    shutil.copy(RUNS[0], tmp_path / "runs-and-pool" / "pool.tsv")  # a run file where pool writes pool.tsv
    (tmp_path / "labels").mkdir()
    shutil.copy(DL19 / "llm_labels" / "flan-t5-large.fourprompts.qrels", tmp_path / "labels" / "a.qrels")
    (tmp_path / "sets" / "dl").mkdir(parents=True)
    shutil.copy(DL19 / "nist.qrels", tmp_path / "sets" / "dl" / "versions.tsv")  # labels where freeze logs
    pool = invoke("pool", *RUNS, "-k", "1", "--queries", DL19 / "topics.tsv", "--corpus", DL19 / "passages.jsonl.gz",
                  "-o", tmp_path / "pool")
    assert pool.exit_code == 0, pool.output
    (tmp_path.parent / f"{tmp_path.name}-linked").symlink_to(tmp_path, target_is_directory=True)
    return tmp_path


def frozen_set(work: Path) -> Path:
    result = invoke("freeze", DL19 / "nist.qrels", "--queries", DL19 / "topics.tsv", "--guideline", GUIDELINE,
                    "--name", "dl19", "--sets-dir", work / "frozen")
    assert result.exit_code == 0, result.output
    return work / "frozen" / "dl19" / "v1"


# (command line with OUT standing for the output path, the input it names, the option refused, the input's name)
CASES = {
    "sample -o onto the log": (["sample", "{w}/in.log", *EXCITE_ARGS, "-o", "OUT"], "in.log", "-o", "LOGS"),
    "sample's manifest onto the log": (
        ["sample", "{w}/q.manifest.json", *EXCITE_ARGS, "-l", "format=tsv", "-o", "{o}/q.tsv"], "q.manifest.json",
        "-o's manifest", "LOGS"),
    "agreement -o onto the folder of a qrels": (
        ["agreement", "{w}/labels/a.qrels", "{w}/b.qrels", "-o", "{o}/labels"], "labels/a.qrels", "-o", "LABELS"),
    "pool -o onto the folder of a run named pool.tsv": (
        ["pool", "{w}/runs-and-pool/pool.tsv", f"{{w}}/{RUNS[1].name}", "-k", "1", "-o", "{o}/runs-and-pool"],
        "runs-and-pool/pool.tsv", "-o", "RUNS"),
    "judge -o onto the guideline": (
        ["judge", "{w}/pool", "--guideline", "{w}/guideline.md", "--model", "m", "-o", "OUT"], "guideline.md", "-o",
        "--guideline"),
    "judge -o onto the pool's tasks": (
        ["judge", "{w}/pool", "--guideline", "{w}/guideline.md", "--model", "m", "-o", "OUT"], "pool/tasks.jsonl",
        "-o", "POOL_DIR"),
    "judge probe -o onto the human grades": (
        ["judge", "probe", "{w}/pool", "--guideline", "{w}/guideline.md", "--human", "{w}/a.qrels", "--model", "m",
         "-o", "OUT"], "a.qrels", "-o", "--human"),
    "judge probe --journal onto the pool's tasks": (
        ["judge", "probe", "{w}/pool", "--guideline", "{w}/guideline.md", "--human", "{w}/a.qrels", "--model", "m",
         "-o", "{o}/probe.json", "--journal", "OUT"], "pool/tasks.jsonl", "--journal", "POOL_DIR"),
    "pull -o onto the pool": (
        ["pull", "--project", "p", "--pool", "{w}/pool", "--guideline", "{w}/guideline.md", "-o", "OUT"],
        "pool/pool.tsv", "-o", "--pool"),
    "freeze --sets-dir onto a labels file": (
        ["freeze", "{w}/sets/dl/versions.tsv", "--queries", "{w}/topics.tsv", "--guideline", "{w}/guideline.md",
         "--name", "dl", "--sets-dir", "{o}/sets"], "sets/dl/versions.tsv", "--sets-dir", "LABELS"),
    "plan --plot onto the pilot qrels": (
        ["plan", "power", "--qrels", "{w}/pilot.png", f"{{w}}/{RUNS[0].name}", f"{{w}}/{RUNS[1].name}", "--plot",
         "OUT"],
        "pilot.png", "--plot", "--qrels"),
    "report -o onto a run": (["report", "SET", f"{{w}}/{RUNS[0].name}", "-o", "OUT"], RUNS[0].name, "-o", "RUN"),
}


@pytest.mark.parametrize("through", ["the same path", "a linked folder", "a link to the file"])
@pytest.mark.parametrize("case", list(CASES))
def test_an_output_that_is_an_input_is_refused_and_the_input_is_unchanged(case, through, work):
    template, input_name, option, input_option = CASES[case]
    linked = work.parent / f"{work.name}-linked"
    if case == "sample's manifest onto the log":
        shutil.copy(work / "in.log", work / "q.manifest.json")
    out_folder = work if through == "the same path" else linked
    output = out_folder / input_name
    if through == "a link to the file":
        if "OUT" not in template:
            pytest.skip("the output's name is the command's own (a pool folder, a manifest, a set's log)")
        output = work / f"link-to-{Path(input_name).name}"
        output.symlink_to(work / input_name)
    set_path = frozen_set(work) if "SET" in template else None
    args = [str(output) if part == "OUT" else str(set_path) if part == "SET"
            else part.format(w=work, o=out_folder) for part in template]
    before = digest(work / input_name)
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"evalset: error: {option} "), result.output
    held = f"holds the input {input_option} " in result.output  # an output folder holding the input
    inside = f"is a file of the input {input_option} " in result.output  # a file of an input folder
    assert held or inside or f"is the input {input_option} " in result.output, result.output
    assert f"writing {'the folder' if held else 'it'} would destroy the input" in result.output
    assert digest(work / input_name) == before


def test_two_outputs_of_one_command_that_are_one_file_are_refused(work):
    result = invoke("judge", work / "pool", "--guideline", GUIDELINE, "--model", "m", "-o", work / "labels.tsv",
                    "--journal", work / "labels.tsv")
    assert result.exit_code == 2
    assert "--journal" in result.output and "are the same file" in result.output


def test_agreement_into_a_folder_that_cannot_be_made_writes_nothing(work):
    (work / "a-file").write_text("not a folder\n")
    result = invoke("agreement", work / "a.qrels", work / "b.qrels", "-o", work / "a-file" / "out", "--resamples",
                    "0")
    assert result.exit_code == 2
    assert result.output.startswith(f"evalset: error: -o {work / 'a-file' / 'out'}: ")
    assert (work / "a-file").read_text() == "not a folder\n"


def test_plan_refuses_a_plot_that_is_not_png_before_scoring(work):
    result = invoke("plan", "power", "--qrels", DL19 / "nist.qrels", *RUNS, "--plot", work / "power.svg")
    assert result.exit_code == 2 and "give a file name ending in .png" in result.output


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
@pytest.mark.parametrize(("command", "option"), [
    (["pool", *RUNS, "-k", "1", "-o", "/proc/x"], "-o /proc/x"),
    (["freeze", DL19 / "nist.qrels", "--queries", DL19 / "topics.tsv", "--guideline", GUIDELINE, "--name", "dl",
      "--sets-dir", "/proc/x"], "--sets-dir /proc/x/dl/versions.tsv"),
    (["sample", REPO / "data" / "querylog" / "excite-small.log", *EXCITE_ARGS, "-o", "/proc/x/q.tsv"],
     "-o /proc/x/q.tsv"),
    (["report", "sets/any/v1", *RUNS, "-o", "/proc/x/report.html"], "-o /proc/x/report.html"),
])
def test_an_output_that_cannot_be_written_is_named_by_its_option_before_any_work_is_printed(command, option):
    result = CliRunner().invoke(main, [str(part) for part in command])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"evalset: error: {option}: cannot write in /proc: No such file or directory\n"


@pytest.mark.slow
def test_pool_into_a_closed_pipe_writes_the_whole_pool_and_exits_0_without_error(tmp_path):
    """`evalset pool ... | head -1`: the reader closing stdout is not an error of ours, and loses no file."""
    expected = invoke("pool", *RUNS, "-k", "5", "-o", tmp_path / "expected")
    assert expected.exit_code == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line: every write to stdout fails with EPIPE
    try:
        done = subprocess.run([sys.executable, "-m", "evalset", "pool", *map(str, RUNS), "-k", "5", "-o",
                               str(tmp_path / "piped")], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode == 0 and done.stderr == ""
    for name in ("pool.tsv", "pool_sources.tsv"):
        assert (tmp_path / "piped" / name).read_bytes() == (tmp_path / "expected" / name).read_bytes()
    assert (tmp_path / "piped" / "pool.json").exists()


@pytest.mark.slow
def test_pool_into_head_prints_its_first_line_and_writes_the_pool(tmp_path):
    done = subprocess.run(["bash", "-c", 'set -o pipefail; "$@" | head -1', "bash", sys.executable, "-m", "evalset",
                           "pool", *map(str, RUNS), "-k", "5", "-o", str(tmp_path / "pool")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("pooled ") and done.stdout.count("\n") == 1
    assert (tmp_path / "pool" / "pool.tsv").exists() and (tmp_path / "pool" / "pool.json").exists()


@pytest.mark.slow
def test_an_output_beside_its_inputs_is_written_as_before(work):
    """Outputs in the folder of the inputs, and an output that does not exist yet, are fine."""
    result = invoke("agreement", work / "a.qrels", work / "b.qrels", "-o", work / "agreement", "--resamples", "0")
    assert result.exit_code == 0, result.output
    assert all((work / "agreement" / name).stat().st_size > 0 for name in (
        "agreement.json", "disagreements.tsv", "kappa.png"))


@pytest.mark.parametrize("command", [["judge", "grade"], ["judge", "probe", "--human", "a.qrels"]])
def test_a_judging_job_keeps_a_file_that_is_not_its_own(work, command):
    # issue 74: judge -o FILE and judge probe -o FILE replaced any existing file (a run, another model's labels)
    # with exit 0; a job rewrites its output only when it resumes, that is when its journal is beside it
    arguments = [a if a != "a.qrels" else work / a for a in command]
    run = work / RUNS[0].name
    before = digest(run)
    refused = invoke(*arguments, work / "pool", "--guideline", GUIDELINE, "-o", run, "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1")
    assert refused.exit_code == 2
    assert refused.output == f"evalset: error: -o {run}: exists; give --force to replace it, or choose a new path\n"
    assert digest(run) == before
