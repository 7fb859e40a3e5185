"""How a command prints a library result: one rule for every command.

A result is a frozen dataclass that renders itself: ``to_text()`` (the table format), ``to_dict()`` (``--format
json``, a documented contract), ``to_tsv()`` where a command offers TSV, and ``notes``: lines for stderr about what
was left out or should be checked. Notes come after the result unless the command says they come first (warnings
about its inputs, said before a long result).
"""

from __future__ import annotations

import json

import click


def emit(result, output_format: str = "table", *, notes_first: bool = False) -> None:
    """Print ``result`` in ``output_format`` (``table``, ``json`` or ``tsv``) on stdout and its notes on stderr."""
    notes = list(getattr(result, "notes", ()))
    if notes_first:
        for note in notes:
            click.echo(note, err=True)
    if output_format == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
    elif output_format == "tsv":
        click.echo(result.to_tsv(), nl=False)
    else:
        click.echo(result.to_text())
    if not notes_first:
        for note in notes:
            click.echo(note, err=True)
