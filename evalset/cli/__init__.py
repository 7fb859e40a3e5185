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

import importlib
import sys

import click

from evalset import __version__
from evalset.errors import InputError, ServiceError

# command name -> module of evalset.cli, the function in it, and its one-line summary in `evalset --help`;
# in pipeline order, which is the order `evalset --help` lists them in
COMMANDS = {
    "sample": ("sample", "sample", "Draw a stratified sample of queries from query logs into queries.tsv."),
    "pool": ("pool", "pool_command", "Pool the top k of several runs into blind judging pairs."),
    "push": ("labelstudio", "push_command", "Push a pool's judging tasks to a Label Studio project."),
    "pull": ("labelstudio", "pull_command", "Pull a Label Studio project's annotations into a labels table."),
    "judge": ("judge", "judge_command", "Grade a pool's pairs with an LLM through an OpenAI-compatible endpoint."),
    "agreement": ("agreement", "agreement_command", "Agreement of annotators and LLM judges, and of their rankings."),
    "freeze": ("sets", "freeze", "Freeze labels into a versioned, read-only set with its contract."),
    "verify": ("sets", "verify", "Check every file of a frozen set version against its manifest."),
    "diff": ("sets", "diff", "Judgments added, removed and changed between two set versions."),
    "score": ("score", "score", "Score runs against qrels or a frozen set."),
    "compare": ("compare", "compare", "Compare candidate runs against a baseline, per query, with a verdict."),
    "plan": ("plan", "plan_command", "How many queries and judgments a set needs, and their cost."),
    "report": ("report", "report_command", "Write a self-contained HTML report of a frozen set and its runs."),
}


class _Group(click.Group):
    """Loads each command from its module when it is needed; prints user and service errors as one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*COMMANDS, *sorted(set(self.commands) - set(COMMANDS))]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return super().get_command(ctx, name)  # a command added with add_command
        module, function, summary = COMMANDS[name]
        command = getattr(importlib.import_module(f"evalset.cli.{module}"), function)
        command.short_help = summary
        return command

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
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

