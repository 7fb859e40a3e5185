"""The ``evalset`` command line: the click group, the error contract, and one short module per command.

A command module parses its options, makes one library call and prints with a library formatter; it holds
no statistics and no policy. Commands are loaded when they are run or listed, and a command imports the
library (pandas, numpy, scipy, ...) inside its function, so ``evalset --help`` starts in about 0.1 s.

Errors (see :mod:`evalset.errors`): an :class:`~evalset.errors.InputError` (bad input) or a
:class:`~evalset.errors.ServiceError` (Label Studio, an LLM endpoint, a disk) is one line on stderr and exit 2
(``--debug`` shows its traceback); anything else is a bug and keeps its traceback (exit 1). click's own usage
errors stay as click prints them (exit 2).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

import click

from evalset import __version__
from evalset.errors import InputError, ServiceError

# command name -> module of evalset.cli, and the function in it
COMMANDS = {
    "agreement": ("agreement", "agreement_command"),
    "compare": ("compare", "compare"),
    "diff": ("sets", "diff"),
    "freeze": ("sets", "freeze"),
    "judge": ("judge", "judge_command"),
    "plan": ("plan", "plan_command"),
    "pool": ("pool", "pool_command"),
    "pull": ("labelstudio", "pull_command"),
    "push": ("labelstudio", "push_command"),
    "report": ("report", "report_command"),
    "sample": ("sample", "sample"),
    "score": ("score", "score"),
    "verify": ("sets", "verify"),
}


class _Group(click.Group):
    """Loads each command from its module when it is needed; prints user and service errors as one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return super().get_command(ctx, name)  # a command added with add_command
        module, function = COMMANDS[name]
        return getattr(importlib.import_module(f"evalset.cli.{module}"), function)

    def invoke(self, ctx: click.Context):
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()
            return result
        except BrokenPipeError:
            # the reader of stdout closed it (`evalset pool ... | head -1`): not an error of ours; files are written
            # before the lines that report them, so nothing is lost. Python's advice (the docs on SIGPIPE): point
            # stdout at devnull so that the flush at exit does not fail again.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except (InputError, ServiceError) as exc:
            if ctx.params.get("debug"):
                raise
            click.echo(f"evalset: error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="evalset")
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def main(debug: bool) -> None:
    """Build search evaluation sets the way TREC does, and score rankers on them honestly.

    Stages: sample -> pool -> push/pull and judge -> agreement -> freeze -> score/compare.
    """

