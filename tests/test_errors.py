"""The error contract (evalset.errors): bad input and failing services are one line and exit 2; a bug keeps its
traceback and exits 1; --debug shows the traceback of the first two as well."""

import errno
import os
import socket
import subprocess
import sys

import click
import numpy as np
import pytest
from click.testing import CliRunner

from evalset import labelstudio
from evalset.cli import main
from evalset.errors import InputError, ServiceError
from evalset.io.files import atomic_path
from evalset.judge import Journal
from evalset.pooling import PoolSpec
from tests.conftest import REPO

GUIDELINE = REPO / "guidelines" / "relevance-v2.md"


@pytest.fixture
def dead_port():
    """A port on 127.0.0.1 that refuses connections: bound (so nobody else takes it) but not listening."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.fixture
def raising_command():
    """Adds to the real `evalset` group a throwaway command `fail KIND` that raises an error of that kind."""

    def fail_with(kind: str) -> None:
        if kind == "numpy":
            np.zeros(2).reshape(3)  # a genuine library bug: ValueError from numpy
        elif kind == "oserror":
            os.stat("/nonexistent/evalset-test")
        elif kind == "input":
            raise InputError("grade 9 is not on the scale", "labels.tsv", 3)
        elif kind == "service":
            raise ServiceError("Label Studio at http://127.0.0.1:9 is not answering")

    command = click.command("fail")(click.argument("kind")(fail_with))
    main.add_command(command)
    try:
        yield command
    finally:
        main.commands.pop("fail")


def one_line_error(result) -> str:
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_python_dash_m_runs_every_command_including_those_registered_lazily():
    result = subprocess.run([sys.executable, "-m", "evalset.cli", "agreement", "--help"], capture_output=True,
                            text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Agreement of annotators" in result.stdout and "--kappa" in result.stdout


@pytest.mark.parametrize(("kind", "exception"), [("numpy", ValueError), ("oserror", FileNotFoundError)])
def test_a_bug_inside_a_library_keeps_its_traceback_and_exits_1(raising_command, kind, exception):
    result = CliRunner().invoke(main, ["fail", kind])
    assert result.exit_code == 1
    assert type(result.exception) is exception  # not turned into a one-line user error
    assert "evalset: error" not in result.output


def test_a_bug_prints_a_python_traceback_in_a_real_process():
    code = ("import click, numpy; from evalset.cli import main\n"
            "main.add_command(click.command('fail')(lambda: numpy.zeros(2).reshape(3)))\n"
            "main(['fail'], prog_name='evalset')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.strip().endswith("ValueError: cannot reshape array of size 2 into shape (3,)")


@pytest.mark.parametrize(("kind", "line"), [
    ("input", "evalset: error: labels.tsv:3: grade 9 is not on the scale"),
    ("service", "evalset: error: Label Studio at http://127.0.0.1:9 is not answering"),
])
def test_input_and_service_errors_are_one_line_and_exit_2_and_debug_shows_the_traceback(raising_command, kind,
                                                                                        line):
    result = CliRunner().invoke(main, ["fail", kind])
    assert result.exit_code == 2 and one_line_error(result) == line
    debug = CliRunner().invoke(main, ["--debug", "fail", kind])
    assert debug.exit_code == 1
    assert type(debug.exception) is (InputError if kind == "input" else ServiceError)


def test_a_commands_usage_error_is_one_line_naming_the_option():
    result = CliRunner().invoke(main, ["score", "--no-such-option"])
    assert result.exit_code == 2
    assert result.output.splitlines() == ["evalset: error: No such option '--no-such-option'."]
    bad = CliRunner().invoke(main, ["compare", "--qrels", "q", "a", "b", "--seed", "-1"])
    assert (bad.exit_code, bad.output) == (2, "evalset: error: Invalid value for '--seed': must be a non-negative "
                                              "integer, got -1\n")


def test_input_error_is_still_a_value_error_for_library_callers_and_service_error_is_not_an_os_error():
    assert issubclass(InputError, ValueError)
    assert not issubclass(ServiceError, OSError)
    assert issubclass(labelstudio.LabelStudioError, ServiceError)
    assert not issubclass(labelstudio.LabelStudioError, OSError)


@pytest.mark.slow
def test_a_dead_label_studio_is_a_service_error_and_one_line_from_push_and_pull(tmp_path, dead_port, monkeypatch):
    url = f"http://127.0.0.1:{dead_port}"
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "a-key")
    with pytest.raises(ServiceError, match=f"Label Studio at {url} is not answering"):
        labelstudio.connect(url)
    expected = (f"evalset: error: cannot connect to Label Studio at {url}: Label Studio at {url} is not answering "
                "(ConnectError)")
    pool = tmp_path / "pool"
    pool.mkdir()
    pushed = CliRunner().invoke(main, ["push", str(pool), "--guideline", str(GUIDELINE), "--project", "proj",
                                       "--url", url])
    assert pushed.exit_code == 2 and one_line_error(pushed) == expected
    pulled = CliRunner().invoke(main, ["pull", "--project", "p", "--pool", str(pool), "--guideline",
                                       str(GUIDELINE), "-o", str(tmp_path / "labels.tsv"), "--url", url])
    assert pulled.exit_code == 2 and one_line_error(pulled) == expected
    assert not (tmp_path / "labels.tsv").exists()


def test_atomic_path_under_a_file_is_a_service_error_naming_the_path(tmp_path):
    (tmp_path / "file.txt").write_text("a file, not a folder\n")
    target = tmp_path / "file.txt" / "out.tsv"
    with pytest.raises(ServiceError, match=rf"^cannot write {target}: \[Errno {errno.EEXIST}\] File exists"), \
            atomic_path(target) as tmp:
        open(tmp, "w").close()  # pragma: no cover - never reached
    assert (tmp_path / "file.txt").read_text() == "a file, not a folder\n"


def test_a_write_the_disk_refuses_is_a_service_error_and_leaves_nothing_behind(tmp_path):
    target = tmp_path / "out.tsv"
    with pytest.raises(ServiceError) as refused, atomic_path(target) as tmp:
        with open(tmp, "w") as handle:
            handle.write("half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # what a full disk raises from write()
    assert str(refused.value) == f"cannot write {target}: [Errno 28] No space left on device"
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_lets_other_errors_through_unchanged(tmp_path):
    with pytest.raises(InputError, match="bad"), atomic_path(tmp_path / "out.tsv"):
        raise InputError("bad")
    with pytest.raises(ZeroDivisionError), atomic_path(tmp_path / "out.tsv"):
        _ = 1 / 0
    assert list(tmp_path.iterdir()) == []


def test_freeze_into_a_sets_folder_under_a_file_is_one_line_naming_it(shared_data, tmp_path):
    (tmp_path / "file.txt").write_text("x\n")
    sets_dir = tmp_path / "file.txt" / "sets"
    result = CliRunner().invoke(main, ["freeze", str(shared_data / "dl19" / "qrels.txt"), "--queries",
                                       str(shared_data / "dl19" / "topics.tsv"), "--guideline", str(GUIDELINE),
                                       "--name", "s", "--sets-dir", str(sets_dir)])
    assert result.exit_code == 2
    assert one_line_error(result) == (f"evalset: error: --sets-dir {sets_dir / 's' / 'versions.tsv'}: cannot write "
                                      f"there, {tmp_path / 'file.txt'} is not a folder")


def test_a_journal_that_cannot_be_opened_is_named(tmp_path):
    (tmp_path / "notes.txt").write_text("not a database, just a text file that happens to be long enough\n" * 20)
    with pytest.raises(InputError, match=r"notes.txt: not a journal \(SQLite\): file is not a database"):
        Journal(tmp_path / "notes.txt", "m", "a", "b")
    with pytest.raises(ServiceError, match=r"cannot open the journal .*/absent/j.sqlite: unable to open"):
        Journal(tmp_path / "absent" / "j.sqlite", "m", "a", "b")


def test_a_pool_spec_that_is_a_folder_or_not_utf8_is_refused_naming_it(tmp_path):
    with pytest.raises(InputError, match=rf"^{tmp_path}: cannot read: Is a directory$"):
        PoolSpec.from_toml(tmp_path)
    (tmp_path / "spec.toml").write_bytes(b"depth = 5\n\xff\n")
    with pytest.raises(InputError, match=r"spec.toml: not UTF-8 text: invalid start byte at byte 10$"):
        PoolSpec.from_toml(tmp_path / "spec.toml")
