"""The ``evalset compare`` command."""

from __future__ import annotations

from pathlib import Path

import click

from evalset.cli.emit import emit
from evalset.cli.metric_option import one_metric
from evalset.cli.options import contract_options, evaluation_from_options
from evalset.cli.ruled import format_option, ruled
from evalset.comparing.spec import DECIDE, DEFAULT_DECIDE, CompareSpec
from evalset.contract import COMPARE_FORMATS, DEFAULT_METRIC


@click.command()
@click.argument("baseline", type=click.Path())
@click.argument("candidates", nargs=-1, type=click.Path())
@one_metric(f"The one metric the verdict is on [default: {DEFAULT_METRIC}, or the set's headline].")
@contract_options
@ruled(CompareSpec, "planned", "--planned",
       help="Number of planned comparisons for the Bonferroni threshold alpha/N [default: the candidates; "
                   "with --set: the set's planned comparisons].")
@click.option("--exploratory", is_flag=True, help="Not planned beforehand: reported as a lead, never as a difference.")
@ruled(CompareSpec, "alpha", "--alpha", help="Family-wise error rate.")
@ruled(CompareSpec, "permutations", "--permutations", help="Random sign flips (permutations of many systems).")
@ruled(CompareSpec, "seed", "--seed", help="Seed of every resampling.")
@format_option(COMPARE_FORMATS, help="Output format (tsv: the matrix of adjusted p-values of --all or --baseline).")
@ruled(CompareSpec, "depth", "--depth", metavar="K", help="The top k of judged@k and of the holes' bound [default: "
                                                     "the metric's cutoff].")
@click.option("--accept-holes", is_flag=True, help="Keep the verdict as judged when unjudged documents of the top k "
                                                   "could flip it (said in the output).")
@click.option("--decide", type=click.Choice(list(DECIDE)), default=DEFAULT_DECIDE, show_default=True,
              help="The test and the bootstrap interval that must both exclude 0, or the test alone.")
@ruled(CompareSpec, "min_effect", "--min-effect", metavar="D", help="The smallest gap worth the change.")
@click.option("--queries", type=click.Path(), help="queries.tsv with stratum and stratum_share: the strata of a "
                                                   "traffic-weighted verdict.")
@click.option("--all", "all_pairs", is_flag=True, help="Many systems: every pair of the runs given (files or folders).")
@click.option("--baseline", "baseline_name", metavar="NAME", help="Many systems: every other run given against the "
                                                                  "run NAME, family-wise corrected.")
@ruled(CompareSpec, "correction", "--correction",
       help="With --all or --baseline: randomised Tukey HSD, or Holm or Bonferroni on paired permutation "
            "p-values [default: tukey].")
def compare(qrels_path, baseline, candidates, metric, contract, set_path, split, override_contract, planned,
            exploratory, alpha, permutations, seed, output_format, depth, accept_holes, decide, min_effect, queries,
            all_pairs, baseline_name, correction):
    """Compare each CANDIDATE run against BASELINE, per query, on one metric.

    The verdict rests on a paired permutation test at the Bonferroni threshold alpha/planned and a bootstrap
    interval; it is withheld when unjudged documents of the top k could flip it. With --set: a comparison not
    planned, or not on the set's headline, is exploratory, and each is logged. With --all or --baseline NAME: the
    runs at once, family-wise corrected. The rules: docs/compare.md; why queries moved: `evalset explain`.
    """
    if output_format == "tsv" and not (all_pairs or baseline_name):
        raise click.UsageError("--format tsv is the matrix of adjusted p-values: give --all or --baseline NAME")
    if not candidates and not (all_pairs or baseline_name):
        raise click.UsageError("Missing argument 'CANDIDATES...': give a run to compare with BASELINE, or --all")
    if Path(baseline).is_dir() and not (all_pairs or baseline_name):
        raise click.BadParameter(f"File {baseline!r} is a directory.", param_hint="'BASELINE'")
    spec = CompareSpec(metric=metric, planned=planned, exploratory=exploratory, alpha=alpha, permutations=permutations,
                       seed=seed, depth=depth, accept_holes=accept_holes, **DECIDE[decide], min_effect=min_effect,
                       strata=queries, all_pairs=all_pairs, baseline=baseline_name, correction=correction)
    runs = (baseline, *candidates)
    evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract, runs)
    from evalset.comparing import make_comparisons

    emit(make_comparisons(evaluation, runs, spec), output_format)
