"""``-m/--metric``: the measures a command reads, and ``-m help``, which lists them."""

from __future__ import annotations

import click


def listing_measures(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """``-m help``: print every registered measure, its spelling and meaning, and the names it also takes; exit."""
    if "help" not in values:
        return values
    from evalset.metrics import MEASURES

    width = max(len(kind.spelling) for kind in MEASURES.values())
    click.echo("\n".join(f"{kind.spelling:<{width}}  {kind.help}" for kind in MEASURES.values()))
    click.echo("\nir_measures' names and a measure's own parameters (rel, judged_only; for ndcg dcg='log2' or "
               "'exp-log2') work too, e.g. 'P(rel=2)@10' or 'nDCG(dcg=\"exp-log2\")@10', as do trec_eval's, such as "
               "ndcg_cut_10, P_10 or iprec_at_recall_0.50, its nicknames all_trec, official and set, and its lists "
               "(P.5,10); in iprec@0.5 (IPrec@0.5) the number is a recall level.")
    ctx.exit()


def one_metric(help_text: str):
    """``-m/--metric`` for a command that reads one metric: given twice, it is refused (click keeps the last);
    ``-m help`` lists the measures."""
    def only_one(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str | None:
        listing_measures(ctx, param, values)
        if len(values) > 1:
            raise click.BadParameter(f"this command reads one metric, got {len(values)} ({', '.join(values)})")
        return values[0] if values else None

    return click.option("-m", "--metric", multiple=True, callback=only_one, help=help_text)
