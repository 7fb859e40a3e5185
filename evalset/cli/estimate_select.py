"""The ``evalset estimate select`` command: draw the human slice of a pool."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import force_option
from evalset.contract import DEFAULT_SEED

EXAMPLE = "evalset estimate select pool --size 10 --seed 3 -o slice"
"""The example of ``--help``: a uniform slice of 10 queries of a pool (`evalset pool --spec pools/dl19-demo.toml`)."""


@click.command("select", epilog=f"\b\nExample:\n  {EXAMPLE}\n\nSee docs/estimate.md.")
@click.argument("pool_dir", type=click.Path(file_okay=False))
@click.option("--size", type=int, help="Queries in a uniform slice (2 or more, fewer than all; no --queries with "
              "strata).")
@click.option("--per-stratum", type=int, help="Queries per traffic stratum, 2 or more (needs --queries).")
@click.option("--fraction", type=float, help="Share in (0, 1] of each stratum's queries, rounded up, at least 2 "
              "(needs --queries).")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False),
              help="queries.tsv of `evalset sample`: the strata and their traffic shares.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the draw.")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="The slice's pool folder (pool.tsv, tasks.jsonl, ... and slice.json).")
@force_option()
def select_command(pool_dir, size, per_stratum, fraction, queries_path, seed, output, force):
    """Draw, seeded, the queries of POOL_DIR that humans will grade in full, and write their pool folder (for
    `evalset push` or `evalset judge` as it is) with the slice record that `evalset estimate --slice` reads."""
    from pathlib import Path

    from evalset.estimate import select_slice_pool
    from evalset.io.outputs import check_outputs
    from evalset.io.slicerecord import RECORD_NAME
    from evalset.pooling.folder import POOL_FILES

    if sum(v is not None for v in (size, per_stratum, fraction)) != 1:
        raise click.UsageError("give one of --size, --per-stratum or --fraction")
    if Path(output).resolve() == Path(pool_dir).resolve():
        raise click.UsageError("the slice's folder must not be the pool folder it is cut from")
    check_outputs({}, {"POOL_DIR": pool_dir, "--queries": queries_path},
                  folders={"-o": (output, (*POOL_FILES, RECORD_NAME))}, force=force)
    emit(select_slice_pool(pool_dir, output, queries_path=queries_path, seed=seed, size=size, per_stratum=per_stratum,
                           fraction=fraction, replace=force))
