"""The ``evalset estimate validate`` commands, one per design: many seeded draws of the design on fully graded data,
each estimated as ``evalset estimate run`` would, held against the full grades (the one harness,
:mod:`evalset.estimate.simulate`): ``slice``, ``documents`` and ``holes`` (each group of runs left out of a set's
pool in turn)."""

from __future__ import annotations

import click

from evalset.cli.estimate_options import (
    SEE,
    common,
    ensemble_option,
    estimated,
    example,
    grades,
    interval_option,
    override_option,
    set_option,
    split_option,
)
from evalset.cli.ruled import ruled
from evalset.estimate.spec import Drawn, ValidateDocuments, ValidateHoles, ValidateSlice


def draws(drawn: str):
    """--resamples R and --seed: the draws of a validation (simulated designs, as the vocabulary spells them), each
    ``drawn``."""
    return lambda command: ruled(Drawn, "draws", "--resamples", "draws", metavar="R", required=True,
                                 help=f"Draws, each {drawn}.")(ruled(Drawn, "seed", "--seed",
                                                                     help="Seed of the draws.")(command))


@click.group("validate", epilog=SEE)
def validate_group():
    """Check a design on fully graded data: coverage, width, bias and RMSE of its intervals over many draws."""


@validate_group.command("slice", short_help="Random slices of whole queries (PPI++).",
                        epilog=example("evalset estimate validate slice runs/ --human nist.qrels --llm llm.qrels "
                                       "--resamples 1000 --size 10"))
@grades("Human grades of every query (labels or qrels).",
        "LLM grades of every query; repeatable (merged by median).", no_llm=False)
@draws("a random slice of --size queries")
@ruled(ValidateSlice, "slice_size", "--size", "slice_size", metavar="N", required=True,
       help="Human-graded queries per slice.")
@click.option("--compare", "comparisons", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A paired difference to validate; repeatable [default: every pair of runs].")
@ensemble_option
@interval_option
@common
def validate_slice(**settings):
    """Draw R random slices of N of the queries humans graded, estimate RUNs' means and paired differences from
    each, and report how often the intervals cover the means under the full human grades."""
    estimated(ValidateSlice, **settings)


@validate_group.command("documents", short_help="Document samples of every query.",
                        epilog=example("evalset estimate validate documents runs/ --human nist.qrels --llm llm.qrels "
                                       "--resamples 200 --budget 1000"))
@grades("Human grades of every pooled pair (labels or qrels).",
        "LLM grades of every pooled pair; repeatable, each file one judge.")
@draws("a document sample of --budget judgments expected")
@ruled(ValidateDocuments, "budget", "--budget", metavar="B", required=True,
       help="Human judgments expected per sample.")
@common
def validate_documents(**settings):
    """Draw R document samples of B judgments expected from the pairs humans graded, estimate RUNs from each, and
    report coverage, widths, bias, RMSE and Kendall's tau against the full grades (the query slice beside)."""
    estimated(ValidateDocuments, **settings)


@validate_group.command("holes", short_help="Samples of a set's holes, each group left out in turn.",
                        epilog=example("evalset estimate validate holes runs/ --set sets/dl19/v1 --groups "
                                       "run_metadata.tsv --llm llm.qrels --resamples 500 --fraction 25%"))
@set_option
@click.option("--groups", "groups_path", required=True, type=click.Path(dir_okay=False),
              help="Each run's group (a TSV with a header: run and group, or TREC's run_metadata.tsv runid and "
                   "participant, or two columns): each group is left out of the set's pool in turn.")
@grades(None, "LLM grades of every pair the set judges; repeatable, each file one judge.")
@draws("a sample of each run's holes")
@ruled(ValidateHoles, "holes_fraction", "--fraction", "holes_fraction", metavar="P", percent=True,
       help="The share of each run's holes a draw takes.")
@ruled(ValidateHoles, "holes_precision", "--precision", "holes_precision", metavar="SE",
       help="Instead of --fraction: each run's share sized for this standard error of its mean (as estimate select "
            "holes --precision sizes it).")
@ruled(ValidateHoles, "depth", "--depth", metavar="K", help="The depth of the set's pool and of each run's holes "
                                                          "[default: 10].")
@split_option
@override_option
@common
def validate_holes(**settings):
    """Leave each group of RUNs out of the frozen set's pool in turn, draw R samples of its runs' holes, and report
    each run's bias, RMSE, coverage and width against its score on the set with its own holes judged."""
    estimated(ValidateHoles, **settings)
