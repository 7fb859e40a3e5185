"""The ``evalset agreement`` command."""

from __future__ import annotations

import click

from evalset.cli.options import conflicting_grades_option, evaluation_options, parse_scale, png_path
from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED


@click.command("agreement")
@click.argument("inputs", nargs=-1, type=click.Path(dir_okay=False), metavar="[LABELS]...")
@click.option("--human", "humans", multiple=True, metavar="NAME|FILE",
              help="A qrels annotator that is human (its name, or its file, which is then read too). Repeatable; "
                   "qrels files not named here are LLM judges. Labels tables carry their own kind.")
@click.option("--guideline", type=click.Path(dir_okay=False), help="Guideline file: its scale (default 0,1,2,3).")
@click.option("--scale", help="The grade scale as comma-separated integers, when no guideline is given.")
@click.option("--out-of-scale", type=click.Choice(["error", "clip", "drop"]), default="error", show_default=True,
              help="A grade off the scale: refuse (naming file and line), clip it to the scale's end, or drop it.")
@conflicting_grades_option
@click.option("--kappa", type=click.Choice(["unweighted", "linear", "quadratic"]), default="quadratic",
              show_default=True, help="The kappa of the matrix, heatmap and calibration verdict.")
@click.option("--bootstrap", "resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Query resamples (0: no bootstrap interval).")
@click.option("--confidence", type=float, default=0.95, show_default=True, help="Two-sided interval level.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the bootstrap.")
@click.option("--runs", "run_paths", multiple=True, type=click.Path(exists=True),
              help="A run file or a folder of runs (repeatable): compare system rankings under each annotator.")
@click.option("-m", "--measure", default=DEFAULT_METRIC, show_default=True, help="Measure of the system rankings.")
@evaluation_options
@click.option("--queries", type=click.Path(dir_okay=False), help="queries.tsv or topics: query texts.")
@click.option("--corpus", type=click.Path(dir_okay=False), help="Document texts (JSONL or TSV, .gz ok).")
@click.option("--disagreements", "disagreements_path", type=click.Path(dir_okay=False),
              help="Write every disagreement (largest gap first) to this TSV.")
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="Disagreements shown in the report.")
@click.option("--pairs", type=click.Choice(["all", "with-human"]), default="all", show_default=True,
              help="Pairs listed in the table format (JSON always has all).")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
@click.option("--plot", type=click.Path(dir_okay=False), callback=png_path,
              help="Heatmap of the pairwise kappa matrix (PNG).")
@click.option("--annotator-quality", "quality_wanted", is_flag=True,
              help="Add each annotator's agreement with the consensus of the others and Dawid-Skene's confusion "
                   "matrix (crowd-kit: pip install 'evalset[quality]').")
@click.option("--confusion-plot", type=click.Path(dir_okay=False), callback=png_path,
              help="Heatmaps of each annotator's Dawid-Skene confusion matrix (PNG).")
def agreement_command(inputs, humans, guideline, scale, out_of_scale, conflicting_grades, kappa, resamples, confidence,
                      seed, run_paths, measure, contract, queries, corpus,
                      disagreements_path, top, pairs, output_format, output, plot, quality_wanted, confusion_plot):
    """Agreement of annotators in LABELS tables and TREC qrels files (a qrels file is one annotator, named by
    its file name): kappas with intervals, alpha, LLM calibration, system rankings, disagreements."""
    from evalset import agreement
    from evalset.agreement import render
    from evalset.io.corpus import read_corpus
    from evalset.io.guideline import read_guideline
    from evalset.io.outputs import check_outputs
    from evalset.io.queries import read_queries
    from evalset.io.trec import read_runs

    if guideline and scale:
        raise click.UsageError("give --guideline or --scale, not both")
    check_outputs({"--disagreements": disagreements_path, "--plot": plot, "-o": output,
                   "--confusion-plot": confusion_plot},
                  {"LABELS": inputs, "--human": humans, "--guideline": guideline, "--runs": run_paths,
                   "--queries": queries, "--corpus": corpus})
    grades_scale = read_guideline(guideline).grades if guideline else parse_scale(scale or "0,1,2,3")
    grades, counts = agreement.load_grades(list(inputs), humans, conflicting_grades)
    settled = sum(entry.get("conflicting_grades_settled", 0) for entry in counts.values())
    if settled:
        click.echo(f"note: {settled} conflicting judgments settled by --conflicting-grades {conflicting_grades}",
                   err=True)
    runs = read_runs(run_paths) if run_paths else None
    result = agreement.agreement_report(
        grades, grades_scale, out_of_scale=out_of_scale, kappa=kappa, resamples=resamples, level=confidence,
        seed=seed, runs=runs, measure=measure,
        contract=contract.applied_to()[0],
        input_counts=counts)
    table = result.disagreements
    if queries or corpus:
        table = agreement.with_texts(table, read_queries(queries) if queries else None,
                                     read_corpus(corpus, set(table["doc_id"])) if corpus else None)
    if disagreements_path:
        render.write_disagreements(table, disagreements_path)
    if plot:
        render.write_heatmap(result, plot)
    quality = None
    if quality_wanted or confusion_plot:
        from evalset import quality as annotators

        quality = annotators.annotator_quality(grades, grades_scale, out_of_scale)
        if confusion_plot:
            annotators.write_confusion_plot(quality, confusion_plot)
    sections = {"annotator_quality": annotators.quality_to_dict(quality)} if quality_wanted else None
    text = (render.to_json(result, table, top, sections) if output_format == "json"
            else render.format_table(result, pairs=pairs, disagreements=table, top=top))
    if quality_wanted and output_format != "json":
        text += "\n" + "\n".join(annotators.quality_lines(quality)) + "\n"
    if output:
        render.write_text(text, output)
    else:
        click.echo(text, nl=False)
