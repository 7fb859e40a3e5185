"""Inputs read once: ``-`` (stdin), pipes and process substitution give what the file gives."""

from __future__ import annotations

import gzip
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.io.files import local_file, remove_copies

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dl19(shared_data: Path) -> dict[str, Path]:
    return {"qrels": shared_data / "dl19" / "qrels.txt",
            "run": shared_data / "dl19" / "runs" / "official_top100" / "TUA1-1.run.gz"}


def _invoke(args: list[str], stdin: bytes | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin)


def test_stdin_plain_and_gzipped_score_like_the_file(dl19) -> None:
    expected = _invoke(["score", "--qrels", dl19["qrels"], dl19["run"], "--format", "json"])
    assert expected.exit_code == 0
    compressed = dl19["run"].read_bytes()
    for data in (gzip.decompress(compressed), compressed):
        result = _invoke(["score", "--qrels", dl19["qrels"], "-", "--format", "json"], data)
        assert result.exit_code == 0, result.output
        assert result.output == expected.output  # the run is named by its tag, TUA1-1, as the file is


def test_qrels_on_stdin(dl19) -> None:
    expected = _invoke(["score", "--qrels", dl19["qrels"], dl19["run"], "--format", "json"])
    result = _invoke(["score", "--qrels", "-", dl19["run"], "--format", "json"], dl19["qrels"].read_bytes())
    assert result.output == expected.output


def test_empty_stdin_and_stdin_twice_are_one_line(dl19) -> None:
    empty = _invoke(["score", "--qrels", dl19["qrels"], "-"], b"")
    assert empty.exit_code == 2
    assert empty.output == "evalset: error: <stdin>: empty input: nothing was read on stdin\n"
    twice = _invoke(["score", "--qrels", "-", "-"], b"x")
    assert twice.exit_code == 2
    assert twice.output.count("\n") == 1 and "only one input can be `-`" in twice.output


def test_a_bad_line_names_stdin_not_the_copy(dl19) -> None:
    result = _invoke(["score", "--qrels", dl19["qrels"], "-"], b"19335 Q0 d1 1 high t\n")
    assert result.exit_code == 2
    assert result.output == "evalset: error: <stdin>:1: score must be a finite number, found 'high'\n"


def test_copies_are_removed(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"printf 'a b\\n' > {shlex.quote(str(fifo))}"])
    copy = local_file(str(fifo))
    writer.wait()
    assert copy != str(fifo) and Path(copy).read_text() == "a b\n" and local_file(str(fifo)) == copy
    remove_copies()
    assert not Path(copy).exists()
    regular = tmp_path / "file"
    regular.write_text("x")
    assert local_file(str(regular)) == str(regular)  # a regular file is read where it is


@pytest.mark.slow
def test_pipes_and_process_substitution_in_a_shell(dl19) -> None:
    python = shlex.quote(sys.executable)
    qrels, run = shlex.quote(str(dl19["qrels"])), shlex.quote(str(dl19["run"]))
    score = f"{python} -m evalset score --format json --qrels"
    outputs = {}
    for name, command in {
        "file": f"{score} {qrels} {run}",
        "pipe": f"zcat {run} | {score} {qrels} -",
        "substitution": f"{score} {qrels} <(zcat {run})",
        "gzip substitution": f"{score} <(cat {qrels}) <(cat {run})",
        "empty": f"{score} {qrels} - < /dev/null",
    }.items():
        outputs[name] = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=REPO,
                                       env={**os.environ, "PYTHONPATH": str(REPO)})
    for name in ("pipe", "substitution", "gzip substitution"):
        assert outputs[name].returncode == 0, outputs[name].stderr
        assert outputs[name].stdout == outputs["file"].stdout
    empty = outputs["empty"]
    assert empty.returncode == 2
    assert empty.stderr == "evalset: error: <stdin>: empty input: nothing was read on stdin\n"
