"""The ``evalset explain`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.metric_option import one_metric
from evalset.cli.options import contract_options, evaluation_from_options
from evalset.cli.ruled import format_option, ruled
from evalset.comparing.spec import EXPLAIN_RULES
from evalset.contract import DEFAULT_METRIC


@click.command("explain")
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("candidates", nargs=-1, required=True, type=click.Path(dir_okay=False))
@one_metric(f"The metric whose per-query change is explained [default: {DEFAULT_METRIC}, or the set's headline].")
@contract_options
@ruled(EXPLAIN_RULES, "depth", "--depth", default=None, metavar="K",
       help="The top k whose documents are followed [default: the metric's cutoff].")
@click.option("--queries", type=click.Path(dir_okay=False), help="Queries (queries.tsv or topics): their texts shown.")
@ruled(EXPLAIN_RULES, "epsilon", "--epsilon", default=None,
       help="The largest per-query difference that is no change [default: 1e-9].")
@ruled(EXPLAIN_RULES, "top", "--top", default=None, metavar="N",
       help="The text shows the N queries that changed most [default: every one; JSON keeps all].")
@format_option()
def explain(qrels_path, baseline, candidates, metric, contract, set_path, split, override_contract, depth, queries,
            epsilon, top, output_format):
    """Why each query of each CANDIDATE moved against BASELINE on one metric: relevant documents lost from the top
    k, rescued into it, promoted or demoted within it; an unjudged document entering; a tie artefact (the
    difference vanishes under ties=expected); the movements that cancelled. No test is made and nothing decided
    (`evalset compare` does that), and nothing is added to a set's comparison log.
    """
    runs = (baseline, *candidates)
    evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract)
    from evalset.comparing import explain_runs

    emit(explain_runs(evaluation, runs, metric=metric, depth=depth, queries=queries, epsilon=epsilon, top=top),
         output_format)
