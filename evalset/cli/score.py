"""The ``evalset score`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import contract_options, evaluation_from_options
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_METRICS, SCORE_FORMATS, SCORE_RULES


class _MetricOption(click.Option):
    """``-m``, whose help lists the registered measures: read when the help is shown, so that the command module
    loads no library until then."""

    def get_help_record(self, ctx):
        from evalset.metrics import MEASURES

        measures = ", ".join(f"{kind.spelling} ({kind.help})" for kind in MEASURES.values())
        self.help = (f"Repeatable: {measures}; ir_measures' names and a measure's own parameters (rel, judged_only; "
                     "for ndcg dcg='log2' or 'exp-log2') work too, e.g. 'P(rel=2)@10' or 'nDCG(dcg=\"exp-log2\")@10', "
                     "as do trec_eval's, such as ndcg_cut_10, P_10 or iprec_at_recall_0.50, its nicknames all_trec, "
                     "official and set, and its lists (P.5,10); in iprec@0.5 (IPrec@0.5) the number is a recall level. "
                     "Default: "
                     f"{', '.join(DEFAULT_METRICS)} (with --set: the set's headline metric). judged@k is added beside "
                     "every ndcg@k.")
        return super().get_help_record(ctx)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--metric", "metrics", multiple=True, cls=_MetricOption)
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
