"""The ``evalset estimate`` command (PPI++ from LLM grades and a human slice) and ``evalset estimate select``."""

from __future__ import annotations

import sys

import click

from evalset.cli.emit import emit
from evalset.cli.estimate_select import select_group
from evalset.cli.options import conflicting_grades_option, run_pairs, set_evaluation_options
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_METRIC
from evalset.estimate.spec import EstimateSpec


class _EstimateGroup(click.Group):
    """``estimate`` with its one subcommand, ``select``; a stray argument is most often a second run after
    ``--runs``, so the message says how runs are given."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands:
            raise click.UsageError(f"unexpected argument {args[0]!r}: give each run file or folder with its own "
                                   "--runs (--runs A --runs B), or `estimate select slice POOL_DIR` to draw a slice")
        return super().resolve_command(ctx, args)


@click.group("estimate", cls=_EstimateGroup, invoke_without_command=True)
@ruled(EstimateSpec, "design", "--design",
       help="queries: humans grade a random slice of queries (--slice); documents: a document sample drawn by "
            "`estimate select documents` (--sample), the LLM grading every pooled pair.")
@click.option("--runs", "runs", metavar="RUN", multiple=True, type=click.Path(),
              help="Run files or folders of runs (TREC format, .gz allowed); repeatable.")
@click.option("--llm", "llm_paths", multiple=True, type=click.Path(dir_okay=False),
              help="LLM grades of every query: labels of `evalset judge`, or qrels; repeatable (merged by median; with "
                   "--design documents, each file one judge, kept apart).")
@click.option("--ensemble", is_flag=True, help="Combine the --llm files' judges into one prediction calibrated on the "
              "human slice (per combination of their grades, cross-fitted by query) instead of their median.")
@click.option("--human", "human_paths", multiple=True, type=click.Path(dir_okay=False),
              help="Human grades of the slice (labels of `evalset pull`, or qrels); with --simulate: of every query.")
@click.option("--slice", "slice_path", type=click.Path(), help="The slice record (slice.json, or its folder) of "
              "`evalset estimate select`. Required unless --simulate.")
@click.option("--sample", "sample_path", type=click.Path(), help="With --design documents: the sample record "
              "(sample.json, or its folder) of `evalset estimate select documents`.")
@click.option("--no-llm", is_flag=True, help="With --design documents: Horvitz-Thompson's estimator from the human "
              "sample alone (no --llm).")
@ruled(EstimateSpec, "budget", "--budget", metavar="B",
       help="With --design documents --simulate: human judgments expected per simulated sample.")
@click.option("--set", "set_path", type=click.Path(file_okay=False), help="A frozen set with an LLM-graded part "
              "(sets/NAME/vN): its labels are the grades, its human-graded queries the slice, its contract and "
              "planned comparisons apply; a set frozen with --sample is estimated by the document design. With "
              "--design documents and --sample: a sample of the set's holes (estimate select holes --set SET), the "
              "set's judgments known, --human the drawn holes' grades, --llm every pair's.")
@ruled(EstimateSpec, "split", "--split", help="With --set: the queries estimated.")
@click.option("-m", "--metric", "metrics", multiple=True,
              help=f"A metric to estimate; repeatable [default: {DEFAULT_METRIC}].")
@click.option("--compare", "comparisons", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A paired difference to estimate (run names); repeatable.")
@ruled(EstimateSpec, "planned", "--planned", help="Planned comparisons for the Bonferroni threshold [default: the "
                                                  "--compare pairs].")
@click.option("--exploratory", is_flag=True,
              help="The comparisons were not planned: reported as leads, never as differences.")
@ruled(EstimateSpec, "alpha", "--alpha", help="Family-wise error rate.")
@ruled(EstimateSpec, "level", "--level", help="Confidence level of the run means.")
@ruled(EstimateSpec, "interval", "--interval",
       help="t: Student's t quantile on (human queries - 1) df, for small slices; normal: ppi_py's interval.")
@ruled(EstimateSpec, "draws", "--simulate", "draws", metavar="R",
       help="Validate on fully human-graded data: draw R random slices (or samples) and report the intervals' "
            "coverage and widths.")
@ruled(EstimateSpec, "slice_size", "--size", "slice_size", metavar="N",
       help="With --simulate: human-graded queries per simulated slice.")
@ruled(EstimateSpec, "seed", "--seed", help="Seed of the simulated slices.")
@click.option("--groups", "groups_path", type=click.Path(dir_okay=False), help="With --design documents --set SET "
              "--simulate R: simulate a sample of the set's holes, each group of --runs left out of its pool in turn "
              "(the set's judgments as the full ones). A TSV with a header giving each run's group: the columns run "
              "and group, or runid and participant (TREC's run_metadata.tsv), or the two columns of a two-column "
              "file (the run, then its group).")
@ruled(EstimateSpec, "holes_fraction", "--fraction", "holes_fraction", metavar="P", percent=True,
       help="With --groups: the share of each run's holes a simulated sample draws.")
@ruled(EstimateSpec, "holes_precision", "--precision", "holes_precision", metavar="SE",
       help="With --groups, instead of --fraction: each run's share sized for this standard error of its mean "
       "(as estimate select holes --precision sizes it).")
@ruled(EstimateSpec, "depth", "--depth", metavar="K",
       help="With --groups: the depth of the set's pool and of each run's holes [default: 10].")
@conflicting_grades_option
@set_evaluation_options
@click.option("--other-judge", is_flag=True, help="With --set --llm: estimate with LLM labels of another judge than "
              "the set records (the output says what changed).")
@click.option("--override-contract", is_flag=True,
              help="With --set: allow contract options that contradict the set's contract (the output says so).")
@format_option()
@click.pass_context
def estimate(ctx, design, runs, llm_paths, human_paths, slice_path, set_path, split, metrics, comparisons, planned,
             exploratory, alpha, level, interval, draws, slice_size, seed, conflicting_grades, contract,
             other_judge, override_contract, output_format, sample_path, no_llm, budget, ensemble, groups_path,
             holes_fraction, holes_precision, depth):
    """Estimate each run's mean (and paired differences) from LLM grades on every query, corrected by human
    grades on a random slice of queries (PPI++ with ppi_py), beside the human slice alone and the LLM alone.

    First draw the slice with `evalset estimate select`, have humans grade its pool (push/pull), then run this
    with --slice. With --simulate R --size N on fully human-graded data, check the intervals' coverage.

    --design documents: humans grade a document sample of every query (`estimate select documents`), the LLM
    judges every pooled pair; give --sample, --human and --llm (or --no-llm); validate with --simulate R --budget B.
    With --set SET --simulate R --groups FILE --fraction P: each group left out of the set's pool in turn, R
    samples of its runs' holes estimated against the set's judgments (bias, RMSE, coverage per run).
    """
    if ctx.invoked_subcommand is not None:
        return
    spec = EstimateSpec(
        runs=runs, llm=llm_paths, human=human_paths, slice_path=slice_path, set_path=set_path, split=split,
        metrics=metrics, pairs=run_pairs(comparisons, "--compare"), planned=planned, exploratory=exploratory,
        alpha=alpha, level=level, interval=interval, draws=draws, slice_size=slice_size, seed=seed,
        conflicting_grades=conflicting_grades, options=contract, override_contract=override_contract, design=design,
        sample_path=sample_path, no_llm=no_llm, budget=budget, other_judge=other_judge, ensemble=ensemble,
        groups_path=groups_path, holes_fraction=holes_fraction, holes_precision=holes_precision, depth=depth)
    from tqdm import tqdm

    from evalset.estimate import make_estimate

    unit = "run" if groups_path else "sample" if design == "documents" else "slice"
    result = make_estimate(spec, progress=lambda draws: tqdm(draws, desc=f"{unit}s", unit=unit, disable=None,
                                                             file=sys.stderr, leave=False))
    emit(result, output_format)


estimate.add_command(select_group)
