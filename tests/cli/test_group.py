"""The command line as a whole: help for every command, --version, one-line errors unless --debug."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset import __version__
from evalset.cli import main

COMMANDS = main.list_commands(None)


def command_named(name: str):
    return main.get_command(None, name)


def test_every_stage_has_a_command():
    assert {"sample", "pool", "agreement", "freeze", "verify", "diff", "score", "compare", "plan",
            "report"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_a_description_and_documented_options(command):
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert command_named(command).help and len(command_named(command).help.split()) >= 5
    for parameter in command_named(command).params:
        if parameter.param_type_name == "option" and parameter.name != "help":
            assert parameter.help, f"{command} --{parameter.name} has no help"


def test_version_and_group_help():
    assert CliRunner().invoke(main, ["--version"]).output.strip() == f"evalset, version {__version__}"
    listing = CliRunner().invoke(main, ["--help"]).output
    assert all(command in listing for command in COMMANDS)


def test_errors_are_one_line_unless_debug(tmp_path):
    missing = tmp_path / "absent.run"
    result = CliRunner().invoke(main, ["score", "--qrels", str(missing), str(missing)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"evalset: error: {missing}: no such file"]
    debug = CliRunner().invoke(main, ["--debug", "score", "--qrels", str(missing), str(missing)])
    assert debug.exception is not None and type(debug.exception).__name__ == "InputError"


PROCESS_SETTINGS = """
import atexit, gc, os, sys
huge_pages = lambda: [line.split()[1] for line in open("/proc/self/status") if line.startswith("THP_enabled")]
atexit.register(lambda: print(os.environ.get("OPENBLAS_NUM_THREADS"), gc.get_threshold()[0], gc.get_freeze_count() > 0,
                              *huge_pages()))
sys.argv = ["evalset", "--version"]
from evalset.cli import run
run()
"""


@pytest.mark.parametrize("blas_threads, expected", [(None, "1"), ("2", "2")], ids=["default", "the user's"])
def test_the_program_runs_one_blas_thread_collects_garbage_less_often_and_asks_for_small_pages(blas_threads,
                                                                                              expected):
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    if blas_threads:
        env["OPENBLAS_NUM_THREADS"] = blas_threads
    done = subprocess.run([sys.executable, "-c", PROCESS_SETTINGS], capture_output=True, text=True, env=env,
                          check=True)
    small_pages = " 0" if "THP_enabled" in Path("/proc/self/status").read_text() else ""  # Linux 5.0 on
    assert done.stdout.splitlines() == [f"evalset, version {__version__}", f"{expected} 10000 True{small_pages}"]
