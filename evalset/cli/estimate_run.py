"""The ``evalset estimate run`` commands, one per design: ``slice`` (human grades of a slice of whole queries,
PPI++), ``documents`` (a document sample of every query), ``holes`` (a sample of a frozen set's holes) and ``set``
(a frozen set that estimates itself, by the design it was frozen with). Each takes only its design's options."""

from __future__ import annotations

import click

from evalset.cli.estimate_options import (
    SEE,
    common,
    compared,
    ensemble_option,
    estimated,
    example,
    grades,
    interval_option,
    override_option,
    set_option,
    split_option,
)
from evalset.estimate.spec import RunDocuments, RunHoles, RunSet, RunSlice


@click.group("run", epilog=SEE)
def run_group():
    """Estimate each run's mean and paired differences from LLM grades corrected by a human sample."""


@run_group.command("slice", short_help="From the human grades of a slice of whole queries (PPI++).",
                   epilog=example("evalset estimate run slice runs/ --llm llm.qrels --human slice.qrels --slice "
                                  "slice"))
@grades("Human grades of the slice (labels of `evalset pull`, or qrels).",
        "LLM grades of every query: labels of `evalset judge`, or qrels; repeatable (merged by median).", no_llm=False)
@click.option("--slice", "slice_path", required=True, type=click.Path(),
              help="The slice record (slice.json, or its folder) of `evalset estimate select slice`.")
@ensemble_option
@interval_option
@compared
@common
def run_slice(**settings):
    """Estimate RUNs (files or folders) from LLM grades on every query corrected by human grades on a random slice
    of them (PPI++ with ppi_py), beside the human slice alone and the LLM alone."""
    estimated(RunSlice, **settings)


@run_group.command("documents", short_help="From a document sample of every query.",
                   epilog=example("evalset estimate run documents runs/ --sample sample --human sample.qrels --llm "
                                  "pool-llm.qrels"))
@grades("Human grades of the sampled pairs (labels or qrels).",
        "LLM grades of every pooled pair; repeatable, each file one judge.")
@click.option("--sample", "sample_path", required=True, type=click.Path(),
              help="The sample record (sample.json, or its folder) of `evalset estimate select documents`.")
@compared
@common
def run_documents(**settings):
    """Estimate RUNs from a document sample of every query graded by humans, the LLM grading every pooled pair
    (Horvitz-Thompson's estimator with --no-llm): "this set"'s interval and "new queries"'."""
    estimated(RunDocuments, **settings)


@run_group.command("holes", short_help="From a sample of a frozen set's holes.",
                   epilog=example("evalset estimate run holes new.run --set sets/a/v1 --sample holes-sample --human "
                                  "h.qrels --llm l.qrels"))
@grades("Human grades of the drawn holes (labels or qrels).",
        "LLM grades of every pair of the set and of the holes; repeatable, each file one judge.")
@set_option
@click.option("--sample", "sample_path", required=True, type=click.Path(),
              help="The sample record of `evalset estimate select holes --set SET`.")
@split_option
@override_option
@compared
@common
def run_holes(**settings):
    """Estimate RUNs' scores under full judgments on a frozen set from a sample of their holes graded by humans,
    the set's judgments known."""
    estimated(RunHoles, **settings)


@run_group.command("set", short_help="On a frozen set that estimates itself.",
                   epilog=example("evalset estimate run set runs/ --set sets/dl19-slice/v1"))
@set_option
@split_option
@click.option("--llm", "llm", multiple=True, type=click.Path(dir_okay=False),
              help="With --other-judge: another judge's LLM labels of the set's queries.")
@click.option("--other-judge", is_flag=True, help="Estimate with --llm, another judge than the set records (the "
                                                  "output says what changed).")
@interval_option
@override_option
@compared
@common
def run_set(**settings):
    """Estimate RUNs on a frozen set with an LLM-graded part, by the design it was frozen with (its human slice,
    or its document sample); its contract and planned comparisons apply."""
    estimated(RunSet, **settings)
