"""The ``evalset judge ensemble`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.guideline import guideline_option
from evalset.cli.options import conflicting_grades_option, force_option, grade_scale
from evalset.cli.ruled import format_option


@click.command("ensemble")
@click.argument("labels", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--human", "human_paths", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="The humans' grades the ensemble is calibrated on (labels or qrels); repeatable.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The ensemble's labels (TSV).")
@guideline_option("Guideline: its scale.", exists=True, scale=True)
@conflicting_grades_option
@force_option(folder=False)
@format_option()
def ensemble_command(labels, human_paths, output, guideline, conflicting_grades, force, output_format):
    """Combine the LLM judges of LABELS (labels tables or one qrels file per judge) into one judge calibrated on
    the humans: per combination of their grades, the human grade distribution learnt on the other queries, and its
    expected grade rounded. One judge alone is calibrated the same way. The labels it writes go to `agreement`,
    `judge recheck` and `estimate --llm` like any judge's."""
    from evalset.io.outputs import check_outputs
    from evalset.judgments.ensemble import ensemble_files

    grades_scale = grade_scale(guideline)
    check_outputs({"-o": output}, {"LABELS": labels, "--human": human_paths, "--guideline": guideline}, force=force)
    ensemble = ensemble_files(labels, human_paths, grades_scale, conflicting_grades)
    emit(ensemble, output_format, written=[ensemble.write(output)])
