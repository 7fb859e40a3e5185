"""The ``evalset score`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import contract_options, evaluation_from_options


@click.command()
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False),
              help="TREC qrels: qid 0 docid grade. Required unless --set.")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Repeatable: ndcg@10, ndcg, ap, ap@100, p@10, recall@100, rr, rr@10, rprec, bpref, success@10, "
                   "judged@10 (trec_eval names such as ndcg_cut_10 or P_10 work too). Default: ndcg@10, ap, rr, "
                   "p@10 (with --set: the set's headline metric). judged@k is added beside every ndcg@k.")
@contract_options
@click.option("--per-query", is_flag=True, help="Also print every query's value.")
@click.option("--format", "output_format", type=click.Choice(["table", "tsv", "json"]), default="table",
              show_default=True, help="Output format (the JSON and TSV layouts are a documented contract).")
def score(qrels_path, runs, metrics, contract, set_path, split, override_contract, per_query, output_format):
    """Score RUN files (TREC format, .gz allowed) against QRELS or a frozen set.

    Means are over queries where the measure is defined; the number of defined and undefined queries is
    printed with each mean. With --set, results come per stratum with the traffic-weighted mean across
    strata, on the test split by default. A run's name is its file name without extensions.
    """
    from evalset.scoring import score_runs

    evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract)
    emit(score_runs(evaluation, runs, metrics, per_query=per_query), output_format)
