"""The ``evalset score`` command."""

from __future__ import annotations

import json

import click

from evalset.cli.options import contract_options
from evalset.scoring import (
    _json_number,
    _long_per_query,
    _metric_spellings,
    _scoring,
    _summary_entry,
    _warn_counts,
    format_score_table,
)


@click.command()
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), help="TREC qrels: qid 0 docid grade.")
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Repeatable: ndcg@10, ndcg, ap, ap@100, p@10, recall@100, rr, rr@10, rprec, bpref, success@10, "
                   "judged@10 (trec_eval names such as ndcg_cut_10 or P_10 work too). Default: ndcg@10, ap, rr, "
                   "p@10 (with --set: the set's headline metric). judged@k is added beside every ndcg@k.")
@contract_options
@click.option("--per-query", is_flag=True, help="Also print every query's value.")
@click.option("--format", "output_format", type=click.Choice(["table", "tsv", "json"]), default="table",
              show_default=True, help="Output format (the JSON and TSV layouts are a documented contract).")
def score(qrels_path, runs, metrics, rel_level, gain, ties, missing, undefined, set_path, split, override_contract,
          per_query, output_format):
    """Score RUN files (TREC format, .gz allowed) against QRELS or a frozen set.

    Means are over queries where the measure is defined; the number of defined and undefined queries is
    printed with each mean. With --set, results come per stratum with the traffic-weighted mean across
    strata, on the test split by default. A run's name is its file name without extensions.
    """
    import pandas as pd

    from evalset.io.trec import read_runs
    from evalset.metrics import evaluate_runs

    scoring = _scoring(qrels_path, set_path, split, override_contract, rel_level=rel_level, gain=gain, ties=ties,
                       missing=missing, undefined=undefined)
    default = (scoring.headline,) if scoring.frozen else ("ndcg@10", "ap", "rr", "p@10")
    spelled = _metric_spellings(metrics, default)
    tables = evaluate_runs(read_runs(runs), scoring.qrels, list(spelled.values()), scoring.contract)
    entries = {name: {text: _summary_entry(table, m, scoring) for text, m in spelled.items()}
               for name, table in tables.items()}
    if output_format == "json":
        document = {"contract": scoring.contract.to_dict(), "runs": entries,
                    "notes": {name: dict(table.attrs) for name, table in tables.items()}}
        if scoring.frozen is not None:
            document["set"] = {"path": str(scoring.frozen.path), "split": split,
                               "weighting": scoring.frozen.contract.weighting,
                               "contract_overridden": scoring.overridden or []}
        if per_query:
            document["per_query"] = [
                {"run": row.run, "query_id": row.query_id, "metric": row.metric, "value": _json_number(row.value)}
                for row in _long_per_query(tables, spelled).itertuples()
            ]
        click.echo(json.dumps(document, indent=2))
    elif output_format == "tsv":
        if per_query:
            click.echo(_long_per_query(tables, spelled).to_csv(sep="\t", index=False, na_rep=""), nl=False)
        else:
            rows = [{"run": name, "metric": text, **{k: entry[k] for k in ("mean", "defined", "undefined")},
                     **({"weighted_mean": entry["weighted_mean"]} if "weighted_mean" in entry else {})}
                    for name, by_metric in entries.items() for text, entry in by_metric.items()]
            click.echo(pd.DataFrame(rows).to_csv(sep="\t", index=False, na_rep=""), nl=False)
    else:
        click.echo(format_score_table(entries, scoring, len(next(iter(tables.values())))))
        if per_query:
            wide = _long_per_query(tables, spelled).pivot_table(
                index=["run", "query_id"], columns="metric", values="value", sort=False, dropna=False)
            click.echo("\n" + wide[list(spelled)].to_string(float_format=lambda v: f"{v:.4f}", na_rep="undef"))
    for name, table in tables.items():
        _warn_counts(name, table.attrs, scoring.qrels)
