"""The ``evalset compare`` command."""

from __future__ import annotations

from pathlib import Path

import click

from evalset.cli.emit import emit
from evalset.cli.options import contract_options, evaluation_from_options, force_option, one_metric
from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED


@click.command()
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False),
              help="TREC qrels: qid 0 docid grade. Required unless --set.")
@click.argument("baseline", type=click.Path())
@click.argument("candidates", nargs=-1, type=click.Path())
@one_metric(f"The one metric the verdict is on [default: {DEFAULT_METRIC}, or the set's headline].")
@contract_options
@click.option("--planned", type=int, default=None,
              help="Number of planned comparisons for the Bonferroni threshold alpha/N [default: the candidates; "
                   "with --set: the set's planned comparisons].")
@click.option("--exploratory", is_flag=True, help="Not planned beforehand: reported as a lead, never as a difference.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Family-wise error rate.")
@click.option("--permutations", type=int, default=9999, show_default=True, help="Random sign flips.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of every resampling.")
@click.option("--format", "output_format", type=click.Choice(["table", "json", "tsv"]), default="table",
              show_default=True, help="Output format (tsv: the matrix of adjusted p-values of --all or --baseline).")
@click.option("--why", is_flag=True, help="Classify each query's change: relevant documents lost, rescued, promoted, "
                                          "demoted; an unjudged document entering; a tie artefact.")
@click.option("--holes", "holes_folder", type=click.Path(), metavar="DIR",
              help="Find the unjudged documents of the top k, bound the difference if they were judged, and write "
                   "them as a pool folder (pool.tsv, pool_sources.tsv, pool.json) for push or judge.")
@click.option("--depth", type=int, metavar="K", help="The top k of judged@k, of the holes' bound, of --why and "
                                                     "--holes [default: the metric's cutoff].")
@click.option("--accept-holes", is_flag=True, help="Keep the verdict as judged when unjudged documents of the top k "
                                                   "could flip it (said in the output).")
@click.option("--interval", type=click.Choice(["bca", "percentile"]), default="bca", show_default=True,
              help="The bootstrap interval of the mean difference.")
@click.option("--test", "primary_test", type=click.Choice(["permutation", "t"]), default="permutation",
              show_default=True, help="The primary test the verdict rests on, with the interval.")
@click.option("--queries", type=click.Path(), help="Queries (queries.tsv or topics): with stratum and stratum_share "
                                                   "columns the strata of a traffic-weighted verdict; the texts "
                                                   "--why shows; with --holes and --corpus the tasks of tasks.jsonl.")
@click.option("--corpus", type=click.Path(), help="With --holes and --queries: document texts for tasks.jsonl.")
@click.option("--epsilon", type=float, help="With --why: the largest per-query difference that is no change "
                                             "[default: 1e-9].")
@click.option("--top", type=int, metavar="N", help="With --why: the text shows the N queries that changed most "
                                                  "[default: every one; JSON keeps all].")
@click.option("--all", "all_pairs", is_flag=True, help="Many systems: every pair of the runs given (files or folders, "
                                                       "BASELINE among them), family-wise corrected.")
@click.option("--baseline", "baseline_name", metavar="NAME", help="Many systems: every other run given against the "
                                                                  "run NAME, family-wise corrected.")
@click.option("--correction", type=click.Choice(["tukey", "holm", "bonferroni"]),
              help="With --all or --baseline: randomised Tukey HSD (max-statistic permutation test), or Holm or "
                   "Bonferroni on paired permutation p-values [default: tukey].")
@force_option("--holes")
def compare(qrels_path, baseline, candidates, metric, contract, set_path, split, override_contract, planned,
            exploratory, alpha, permutations, seed, output_format, why, holes_folder, depth, accept_holes, interval,
            primary_test, queries, corpus, epsilon, top, all_pairs, baseline_name, correction, force):
    """Compare each CANDIDATE run against BASELINE, per query, on one metric.

    The verdict rests on a paired permutation test at the Bonferroni threshold alpha/planned and on a bootstrap
    interval (level 1 - threshold); the paired t-test and the effect size are printed beside them, and a line
    says when they disagree. Beside every difference: both runs' judged@k; when unjudged documents of the top
    k could flip the verdict, it is withheld (--accept-holes keeps it). A design that cannot support a verdict
    (too few queries or sign flips, a stratum of one query) says why it gives none. A judged query missing from
    a run is an error unless --missing zero|skip. On a stratified set the verdict is on the set's weighting,
    with each stratum's difference. On the dev split every comparison is exploratory. The rules: the README's
    "How a verdict is decided".
    With --set, a comparison not in the set's planned list is exploratory, every comparison is appended to
    the set's comparison log, and the threshold counts every distinct comparison made on that split.
    --why and --holes explain each comparison (docs/compare.md, docs/compare-holes.md).
    With --all (every pair) or --baseline NAME (every run against NAME) the runs given are compared at once under
    a family-wise correction (--correction): the runs by mean with their groups, the adjusted p-values
    (docs/compare-many.md).
    """
    if all_pairs or baseline_name:
        single = (planned or exploratory or why or holes_folder or corpus or interval != "bca"
                  or primary_test != "permutation")
        if (all_pairs and baseline_name) or single:
            raise click.UsageError("--all and --baseline compare the runs at once: give one of them, without "
                                   "--planned, --exploratory, --why, --holes, --corpus, --interval or --test")
        evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract,
                                             (baseline, *candidates))
        from evalset.comparing import compare_many
        from evalset.io.trec import expand_run_paths

        emit(compare_many(evaluation, expand_run_paths((baseline, *candidates)), metric, baseline=baseline_name,
                          correction=correction or "tukey", alpha=alpha, permutations=permutations, seed=seed,
                          depth=depth, accept_holes=accept_holes, strata=queries),
             output_format)
        return
    if correction or output_format == "tsv":
        raise click.UsageError("--correction and --format tsv are for --all or --baseline")
    if not candidates:
        raise click.UsageError("Missing argument 'CANDIDATES...': give a run to compare with BASELINE, or --all")
    if Path(baseline).is_dir():
        raise click.BadParameter(f"File {baseline!r} is a directory.", param_hint="'BASELINE'")
    if holes_folder is None and (corpus or force):
        raise click.UsageError("--corpus gives the document texts of the --holes pool: give --holes DIR too" if corpus
                               else "--force replaces the --holes pool folder: give --holes DIR too")
    for name, value in (("--epsilon", epsilon), ("--top", top)):
        if value is not None and not why:
            raise click.UsageError(f"{name} is read by --why: give --why too")
    if holes_folder is not None:
        from evalset.io.outputs import check_outputs
        from evalset.io.poolfiles import POOL_FILES

        check_outputs({}, {"--qrels": qrels_path, "BASELINE": baseline, "CANDIDATES": candidates, "--set": set_path,
                           "--queries": queries, "--corpus": corpus},
                      folders={"--holes": (holes_folder, POOL_FILES)}, force=force)
    evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract,
                                         () if why or holes_folder else (baseline, *candidates))
    from evalset.comparing import compare_runs, explain_comparisons
    from evalset.io.trec import expand_run_paths, read_run

    run_files = expand_run_paths((baseline, *candidates))
    # --why and --holes read the runs' top k: each file is then read once, whole; else big files stream
    runs = {name: read_run(path) for name, path in run_files.items()} if why or holes_folder else None
    comparisons = compare_runs(evaluation, runs or run_files, metric, planned=planned, exploratory=exploratory,
                               alpha=alpha, permutations=permutations, seed=seed, depth=depth,
                               accept_holes=accept_holes, bound_holes=True if holes_folder else None,
                               interval=interval, primary_test=primary_test,
                               strata=queries)
    explained = explain_comparisons(comparisons, run_files, runs=runs, why=why, holes_folder=holes_folder,
                                    depth=depth, queries=queries, corpus=corpus, seed=seed, epsilon=epsilon,
                                    top=top)
    written = explained.write(replace=force)  # before printing: a closed stdout loses no pool
    emit(explained, output_format)
    if output_format != "json":
        for path in written:
            click.echo(f"wrote {path}")
