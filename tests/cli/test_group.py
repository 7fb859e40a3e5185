"""The command line as a whole: help for every command, --version, one-line errors unless --debug."""

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
