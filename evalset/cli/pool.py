"""The ``evalset pool`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import contract_option, force_option
from evalset.cli.ruled import format_option, ruled
from evalset.pooling.spec import POOL_SPEC_RULES


@click.command("pool")
@click.argument("runs", nargs=-1, type=click.Path(exists=True))
@ruled(POOL_SPEC_RULES, "depth", "-k", "--depth", default=None,
       help="Pool the top K documents of every run per query. Required unless --spec gives the depth.")
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Folder for pool.tsv and the rest. Required unless --spec gives the output.")
@click.option("--system-depth", "depths", multiple=True, metavar="NAME=K", help="Depth for one run (repeatable).")
@contract_option(("ties",), ", or the spec's")
@ruled(POOL_SPEC_RULES, "seed", "--seed", default=None,
       help="Seed of the blind judging order [default: 20191, or the spec's].")
@click.option("--queries", type=click.Path(), help="queries.tsv or topics file: pool only these queries.")
@click.option("--exclude-judged", type=click.Path(), help="Qrels or labels: leave judged pairs out.")
@ruled(POOL_SPEC_RULES, "budget", "--budget", default=None,
       help="Keep at most N pairs (best rank first, queries filled fairly).")
@click.option("--corpus", type=click.Path(), help="Document texts (JSONL or TSV, .gz ok) for tasks.jsonl.")
@click.option("--spec", type=click.Path(), help="A pool specification (TOML) holding the same options.")
@force_option()
@format_option()
def pool_command(runs, depth, output, depths, contract, seed, queries, exclude_judged, budget, corpus, spec, force,
                 output_format):
    """Pool the top K of several runs into blind judging pairs (judge-the-holes with --exclude-judged)."""
    from evalset import pooling
    from evalset.io.outputs import check_outputs

    per_system = {}
    for item in depths:
        name, _, k = item.rpartition("=")
        if not name or not k.strip().lstrip("-").isdigit():
            raise click.BadParameter(f"expected NAME=K, got {item!r}", param_hint="--system-depth")
        per_system[name] = int(k)
    base = pooling.PoolSpec.from_toml(spec) if spec else pooling.PoolSpec()
    settings = base.with_overrides(runs=runs, depth=depth, output=output, depths=per_system,
                                   ties=contract.get("ties"), seed=seed,
                                   queries=queries, exclude_judged=exclude_judged, budget=budget, corpus=corpus)
    if not settings.output:
        raise click.UsageError("no output folder (give -o DIR or `output` in the spec)")
    check_outputs({}, {"RUNS": settings.runs, "--queries": settings.queries, "--corpus": settings.corpus,
                       "--exclude-judged": settings.exclude_judged, "--spec": spec},
                  folders={"-o": (settings.output, pooling.POOL_FILES)}, force=force)
    build = pooling.build_from_spec(settings)
    written = pooling.write_pool(build, settings.output, replace=force)  # before printing: a closed stdout loses none
    emit(build, output_format, written=written)
