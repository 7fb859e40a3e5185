"""How a command prints a library result: one rule for every command.

A result is a frozen dataclass that renders itself: ``to_text()`` (the table format), ``to_dict()`` (``--format
json``, a documented contract), ``to_tsv()`` where a command offers TSV, ``to_trec_eval()`` where it offers
trec_eval's layout, and ``notes``: lines for stderr about what was left out or should be checked (and
``format_notes(output_format)`` where some belong to one format only). Notes come after the result unless the
command says they come first (warnings about its inputs, said before a long result). JSON is UTF-8 as it is (no
``\\u`` escapes), indented by 2.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # annotations only: a command module loads nothing until run
    import os
    from collections.abc import Sequence


def emit(result, output_format: str = "table", *, notes_first: bool = False, output: str | None = None,
         written: Sequence[str | os.PathLike] = ()) -> None:
    """Print ``result`` in ``output_format`` (``table``, ``json``, ``tsv`` or ``trec_eval``) on stdout, or with
    ``output`` write it to that file instead (atomically), and its notes on stderr. ``written``: the files the
    command wrote (before printing: a closed stdout loses none), a ``wrote PATH`` line each last, or the JSON
    object's ``written`` list."""
    import os

    notes = list(getattr(result, "notes", ()))
    if hasattr(result, "format_notes"):
        notes += result.format_notes(output_format)
    if notes_first:
        for note in notes:
            click.echo(note, err=True)
    if output_format == "json":
        document = result.to_dict()
        if written and isinstance(document, dict):
            document = {**document, "written": [os.fspath(path) for path in written]}
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    elif output_format == "tsv":
        text = result.to_tsv()
    elif output_format == "trec_eval":
        text = result.to_trec_eval()
    else:
        text = result.to_text() + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        from evalset.io.files import write_text

        write_text(output, text)
    if not notes_first:
        for note in notes:
            click.echo(note, err=True)
    if output_format != "json":
        for path in written:
            click.echo(f"wrote {os.fspath(path)}")
