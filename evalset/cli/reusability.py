"""The ``evalset reusability`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.metric_option import one_metric
from evalset.cli.options import contract_options, evaluation_from_options, force_option, png_path
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_METRIC, REUSABILITY_RULES


@click.command("reusability")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@ruled(REUSABILITY_RULES, "depth", "-k", "--depth", required=True, help="The depth the pool was made with.")
@one_metric(f"The metric [default: {DEFAULT_METRIC}, or the set's headline].")
@click.option("--groups", "groups_path", type=click.Path(dir_okay=False),
              help="A TSV with a header giving each run's group (a participant, a team): also leave one group out.")
@click.option("--run-column", default="run", show_default=True, help="With --groups: the column of run names.")
@click.option("--group-column", default="group", show_default=True, help="With --groups: the column of groups.")
@contract_options
@format_option()
@click.option("--plot", type=click.Path(dir_okay=False), callback=png_path,
              help="Write each run's drop against the relevant documents only it found as a PNG.")
@force_option(folder=False)
def reusability_command(qrels_path, runs, depth, metric, groups_path, run_column, group_column, contract, set_path,
                        split, override_contract, output_format, plot, force):
    """Leave each run (and each group) out of the depth-k pool, rescore it, and say how fair the set is to a new
    system.

    RUNS (files or folders) are the runs that made the pool. For each run (group), the judgments of the documents
    only it contributed to the top --depth pool are removed, and it is rescored: the drop, its rank before and
    after, judged@k after, and the relevant documents only it found; then the largest and mean drop, Kendall's
    tau and tau_AP between the rankings, the runs whose rank changes, and a verdict. A judged query missing from a
    run is an error unless -c missing=zero|skip.
    """
    from evalset import reusability as library
    from evalset.io.groups import read_groups
    from evalset.io.outputs import check_outputs

    if groups_path is None and (run_column, group_column) != ("run", "group"):
        raise click.UsageError("--run-column and --group-column name the columns of --groups: give --groups")
    check_outputs({"--plot": plot}, {"--qrels": qrels_path, "--set": set_path, "RUNS": runs, "--groups": groups_path},
                  force=force)
    evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract)
    groups = read_groups(groups_path, run_column, group_column) if groups_path else None
    result = library.analyse_reusability(evaluation, runs, depth, metric, groups, groups_path)
    if plot:
        library.plot_reusability(result, plot)
    emit(result, output_format, notes_first=True, written=[plot] if plot else [])
