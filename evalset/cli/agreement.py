"""The ``evalset agreement`` command."""

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
from evalset.contract import AGREEMENT_RULES, DEFAULT_METRIC, DEFAULT_SEED


@click.command("agreement")
@click.argument("inputs", nargs=-1, type=click.Path(dir_okay=False), metavar="[LABELS]...")
@click.option("--human", "humans", multiple=True, metavar="NAME|FILE",
              help="A qrels annotator that is human (its name, or its file, then read too); repeatable. Other "
                   "qrels are LLM judges; labels tables say.")
@guideline_option("Guideline: its scale.", scale=True)
@ruled(AGREEMENT_RULES, "out_of_scale", "--out-of-scale", default="error",
       help="A grade off the scale: refuse (naming file and line), clip it to the scale's end, or drop it.")
@conflicting_grades_option
@ruled(AGREEMENT_RULES, "kappa", "--kappa", default="quadratic",
       help="The kappa of the matrix, heatmap and calibration verdict.")
@ruled(AGREEMENT_RULES, "resamples", "--resamples", default=1000,
       help="Query resamples (0: no bootstrap interval).")
@ruled(AGREEMENT_RULES, "level", "--level", default=0.95, help="Two-sided interval level.")
@ruled(AGREEMENT_RULES, "seed", "--seed", default=DEFAULT_SEED, help="Seed of the bootstrap.")
@click.option("--runs", "run_paths", multiple=True, type=click.Path(exists=True),
              help="A run file or a folder of runs (repeatable): compare system rankings under each annotator, "
                   "and the runs each LLM judge inflates beyond the others (favouritism).")
@click.option("-m", "--metric", "measure", default=DEFAULT_METRIC, show_default=True,
              help="Metric of the system rankings.")
@evaluation_options
@click.option("--queries", type=click.Path(dir_okay=False), help="queries.tsv or topics: query texts.")
@click.option("--corpus", type=click.Path(dir_okay=False), help="Document texts (JSONL or TSV, .gz ok).")
@ruled(AGREEMENT_RULES, "top", "--top", default=20, help="Disagreements shown in the report.")
@ruled(AGREEMENT_RULES, "pairs", "--pairs", default="all",
       help="Pairs listed in the table format (JSON always has all).")
@format_option()
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Also write to this folder agreement.json, disagreements.tsv (all), kappa.png and, with "
                   "--annotator-quality, confusion.png.")
@click.option("--annotator-quality", "quality_wanted", is_flag=True,
              help="Add each annotator's agreement with the consensus of the others and Dawid-Skene's confusion "
                   "matrix (crowd-kit: pip install 'evalset[quality]').")
@click.option("--ensemble", is_flag=True,
              help="Add the LLM judges combined into one, calibrated on the humans (each query predicted from the "
                   "others).")
@force_option()
def agreement_command(inputs, humans, guideline, out_of_scale, conflicting_grades, kappa, resamples, level, seed,
                      run_paths, measure, contract, queries, corpus, top, pairs, output_format, output, quality_wanted,
                      ensemble, force):
    """Agreement of annotators in LABELS tables and TREC qrels files (a qrels file is one annotator, named by
    its file name): kappas with intervals, alpha, LLM calibration, system rankings, disagreements."""
    from evalset import agreement
    from evalset.agreement.render import AGREEMENT_FILES
    from evalset.io.outputs import check_outputs

    grades_scale = grade_scale(guideline)
    check_outputs({}, {"LABELS": inputs, "--human": humans, "--guideline": guideline, "--runs": run_paths,
                       "--queries": queries, "--corpus": corpus},
                  folders={"-o": (output, AGREEMENT_FILES)} if output else {}, force=force)
    result = agreement.analyse_agreement(
        inputs, humans, scale=grades_scale, out_of_scale=out_of_scale, conflicting_grades=conflicting_grades,
        kappa=kappa, resamples=resamples, level=level, seed=seed, runs=run_paths, measure=measure,
        contract=contract.applied_to()[0], queries=queries, corpus=corpus, top=top, pairs=pairs,
        annotator_quality=quality_wanted, ensemble=ensemble)
    written = result.write(output, replace=force) if output else []
    emit(result, output_format, notes_first=True, written=written)
