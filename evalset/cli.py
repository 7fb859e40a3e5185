"""The ``evalset`` command line: one short function per command, parsing and printing only."""

from __future__ import annotations

import sys

import click

from evalset import __version__
from evalset.errors import InputError


class _Group(click.Group):
    """Prints bad input as one line (no traceback unless --debug) and exits non-zero."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (InputError, ValueError, OSError) as exc:
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
