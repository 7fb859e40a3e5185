"""The ``evalset judge recheck`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.guideline import guideline_option
from evalset.cli.options import (
    conflicting_grades_option,
    evaluation_options,
    force_option,
    grade_scale,
)
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED, RECHECK_RULES


@click.command("recheck")
@click.argument("labels", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--human", "human_paths", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="The humans' grades of the calibration pairs (labels or qrels); repeatable.")
@click.option("--old", help="The old judge's name, when the first judge in LABELS is not the old one.")
@click.option("--runs", "run_paths", multiple=True, type=click.Path(exists=True),
              help="Run files or folders (repeatable): add the change of the system-ranking tau.")
@click.option("-m", "--metric", "measure", default=DEFAULT_METRIC, show_default=True,
              help="Metric of the system rankings.")
@evaluation_options
@ruled(RECHECK_RULES, "primary", "--primary", default="quadratic kappa", help="The figure the verdict rests on.")
@guideline_option("Guideline: its scale.", exists=True, scale=True)
@conflicting_grades_option
@ruled(RECHECK_RULES, "resamples", "--resamples", default=1000,
       help="Query resamples of the paired interval.")
@ruled(RECHECK_RULES, "level", "--level", default=0.95, help="Two-sided interval level.")
@ruled(RECHECK_RULES, "seed", "--seed", default=DEFAULT_SEED, help="Seed of the bootstrap.")
@format_option()
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
@force_option(folder=False)
def recheck_command(labels, human_paths, old, run_paths, measure, contract, primary, guideline,
                    conflicting_grades, resamples, level, seed, output_format, output, force):
    """Is the new version of an LLM judge better than the old? LABELS hold both versions' grades of the same
    calibration pairs (labels of `evalset judge`, whose source names model, prompt and guideline, or one qrels
    file per judge); the change of their kappas with the humans (and of the system-ranking tau with --runs), with a
    paired bootstrap interval over queries, and a verdict: better, worse or not distinguishable, or an abstention
    and why (too few --resamples for the --level, a zero-width interval, fewer than 2 queries)."""
    from evalset.agreement.recheck import recheck_files
    from evalset.io.outputs import check_outputs

    grades_scale = grade_scale(guideline)
    check_outputs({"-o": output}, {"LABELS": labels, "--human": human_paths, "--runs": run_paths,
                                   "--guideline": guideline}, force=force)
    emit(recheck_files(labels, human_paths, run_paths=run_paths, conflicting_grades=conflicting_grades,
                       scale=grades_scale, primary=primary, measure=measure, contract=contract.applied_to()[0],
                       resamples=resamples, level=level, seed=seed, old=old),
         output_format, output=output)
