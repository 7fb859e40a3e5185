"""The ``evalset estimate`` commands, by verb and design: ``select`` (draw what humans grade), ``run`` (estimate from
it) and ``validate`` (check a design on fully graded data), each with one command per design."""

from __future__ import annotations

import click

from evalset.cli.estimate_run import run_group
from evalset.cli.estimate_select import select_group
from evalset.cli.estimate_validate import validate_group


@click.group("estimate", epilog="See docs/estimate.md and docs/reusability.md.")
def estimate():
    """Means and paired differences from LLM grades corrected by a human sample: select what humans grade, run the
    estimate, or validate a design on fully graded data (each by design: slice, documents, holes)."""


estimate.add_command(select_group)
estimate.add_command(run_group)
estimate.add_command(validate_group)
