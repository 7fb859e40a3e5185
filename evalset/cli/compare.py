"""The ``evalset compare`` command."""

from __future__ import annotations

import json

import click

from evalset.cli.options import contract_options, scoring_from_options
from evalset.contract import DEFAULT_SEED


@click.command()
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False),
              help="TREC qrels: qid 0 docid grade. Required unless --set.")
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("candidates", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--metric", help="The one metric the verdict is on [default: ndcg@10, or the set's headline].")
@contract_options
@click.option("--planned", type=int, default=None,
              help="Number of planned comparisons for the Bonferroni threshold alpha/N [default: the candidates; "
                   "with --set: the set's planned comparisons].")
@click.option("--exploratory", is_flag=True, help="Not planned beforehand: reported, never established.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Family-wise error rate.")
@click.option("--permutations", type=int, default=9999, show_default=True, help="Random sign flips.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of every resampling.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
def compare(qrels_path, baseline, candidates, metric, rel_level, gain, ties, missing, undefined, unjudged, set_path,
            split, override_contract, planned, exploratory, alpha, permutations, seed, output_format):
    """Compare each CANDIDATE run against BASELINE, per query, on one metric.

    The verdict comes from a paired permutation test at the Bonferroni threshold alpha/planned; the paired
    t-test, a BCa bootstrap interval (level 1 - threshold) and the effect size are printed beside it.
    With --set, a comparison not in the set's planned list is exploratory, every comparison is appended to
    the set's comparison log, and the threshold counts every distinct comparison made on that split.
    """
    from evalset.io.trec import read_runs
    from evalset.scoring import compare_runs, format_comparisons, unusual_grades_note

    scoring = scoring_from_options(qrels_path, set_path, split, override_contract, rel_level=rel_level, gain=gain,
                                   ties=ties, missing=missing, undefined=undefined, unjudged=unjudged)
    results = compare_runs(scoring, read_runs((baseline, *candidates)), metric, planned=planned,
                           exploratory=exploratory, alpha=alpha, permutations=permutations, seed=seed)
    if output_format == "json":
        click.echo(json.dumps([result.to_dict() for result in results], indent=2))
    else:
        click.echo(format_comparisons(results, scoring))
    if note := unusual_grades_note(scoring):
        click.echo(note, err=True)
