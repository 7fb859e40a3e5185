"""The ``evalset score`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.metric_option import listing_measures
from evalset.cli.options import contract_options, evaluation_from_options
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_METRICS, SCORE_FORMATS
from evalset.scoring.spec import SCORE_RULES


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--metric", "metrics", multiple=True, callback=listing_measures,
              help="Repeatable: ndcg@10, ap@100, p@k, recall@k, rr, bpref, ... (-m help: every measure and its "
                   "meaning); ir_measures' names ('P(rel=2)@10') and trec_eval's (ndcg_cut_10, P.5,10, all_trec, "
                   f"official) work too. Default: {', '.join(DEFAULT_METRICS)} "
                   "(with --set: the set's headline metric); "
                   "judged@k is added beside every ndcg@k.")
@contract_options
@click.option("--per-query", is_flag=True, help="Also print every query's value (with --format trec_eval: -q).")
@format_option(SCORE_FORMATS,
               help="Output format (the JSON and TSV layouts are a documented contract; trec_eval: what trec_eval -m "
                    "prints for the measures asked, for each run).")
@ruled(SCORE_RULES, "max_retrieved", "--max-retrieved", default=None,
       help="Score each ranking's first N documents only (trec_eval's -M; a repeated document counted once; "
            "the documents left out are counted in a note).")
def score(qrels_path, runs, metrics, contract, set_path, split, override_contract, per_query, output_format,
          max_retrieved):
    """Score RUN files (TREC format, .gz allowed) against QRELS or a frozen set.

    Means are over queries where the measure is defined; the number of defined and undefined queries is
    printed with each mean. With --set, results come per stratum with the traffic-weighted mean across
    strata, on the test split by default. A run's name is its file name without extensions; a folder stands for
    every file in it but hidden ones, so keep only runs there (a README beside them is read as a run, and refused).
    """
    evaluation = evaluation_from_options(qrels_path, set_path, split, override_contract, contract, runs)
    from evalset.scoring import score_runs

    emit(score_runs(evaluation, runs, metrics, per_query=per_query, max_retrieved=max_retrieved),
         output_format)
