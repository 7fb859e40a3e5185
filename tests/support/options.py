"""An option given a value its declared rule refuses (evalset.params, the option built by evalset.cli.ruled): the
command stops at once with exit 2 and one line naming the option (``evalset: error: Invalid value for ...``), never
a traceback; and the library
function that owns the rule refuses the same value with an InputError in the same words."""

from click.testing import CliRunner

from evalset.cli import main

HUGE = "1" + "0" * 20
"""A count far beyond any bound (and beyond numpy's 64-bit integers)."""


def refusal(command: list[str], option: str, value: object) -> str:
    """What ``evalset COMMAND OPTION VALUE`` says: it exits 2 without a traceback, before anything else is
    checked (no other argument is given); returns the message after ``Invalid value for 'OPTION':``."""
    result = CliRunner().invoke(main, [*command, option, str(value)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit), result.output
    lines = result.output.splitlines()
    assert len(lines) == 1, result.output
    named = f"evalset: error: Invalid value for '{option}': "
    if lines[0].startswith("evalset: error: Invalid value for '-k' / "):  # click names both spellings of -k
        named = f"evalset: error: Invalid value for '-k' / '{option}': "
    long = {"-c": "--contract", "-s": "--client", "-l": "--log"}
    if option in ("--merge", "--gold-rule"):  # a settings option with one long name: click names it alone
        long = {}
    if option in long:  # -c/-s/-l NAME=VALUE: click names both spellings, the message names the setting
        named = f"evalset: error: Invalid value for '{option}' / '{long[option]}': "
    assert lines[0].startswith(named), lines[0]
    return lines[0].removeprefix(named)


def not_one_of(value: str, *names: str) -> str:
    """click's refusal of a name off a choice."""
    return f"{value!r} is not one of {', '.join(repr(name) for name in names)}."
