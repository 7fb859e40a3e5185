"""The ``evalset report`` command."""

from __future__ import annotations

import json
from pathlib import Path

import click

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError


@click.command("report")
@click.argument("set_path", metavar="SET", type=click.Path(file_okay=False))
@click.argument("more_runs", metavar="[RUN]...", nargs=-1, type=click.Path())
@click.option("--runs", "runs", metavar="RUN", multiple=True, type=click.Path(),
              help="Run files or folders of runs (TREC format, .gz allowed); `--runs A B C` works too.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--split", type=click.Choice(["test", "dev", "all"]), default="test", show_default=True,
              help="The queries the page is about.")
@click.option("--agreement", "agreement_path", type=click.Path(dir_okay=False),
              help="JSON of `evalset agreement --format json` [default: the set manifest's agreement block].")
@click.option("--resamples", type=int, default=9999, show_default=True, help="Bootstrap resamples per interval.")
@click.option("--permutations", type=int, default=9999, show_default=True, help="Sign flips per comparison.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of every resampling.")
def report_command(set_path, more_runs, runs, output, split, agreement_path, resamples, permutations, seed):
    """Write a self-contained HTML report of the frozen set SET (sets/NAME/vN) and the runs scored on it.

    The page (no script, no external resource; plots embedded as PNG) shows the set (queries per stratum,
    judgments per grade, judged@k per run), the agreement heatmap, the headline score of every run with a BCa
    bootstrap interval over queries, and each planned comparison: per-query differences, verdict, largest losses.
    """
    from evalset.io.files import atomic_path
    from evalset.io.outputs import check_outputs
    from evalset.io.setfolder import load_set
    from evalset.io.trec import read_runs
    from evalset.report import build_report

    paths = (*runs, *more_runs)
    if not paths:
        raise click.UsageError("give the runs with --runs RUN [RUN ...]")
    check_outputs({"-o": output}, {"SET": set_path, "RUN": paths, "--agreement": agreement_path})
    named = read_runs(paths)
    agreement = None
    if agreement_path:
        try:
            agreement = json.loads(Path(agreement_path).read_text())
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", agreement_path) from None
    page = build_report(load_set(set_path), named,
                        agreement=agreement, split=split, seed=seed, resamples=resamples, permutations=permutations)
    with atomic_path(output) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(page)
    click.echo(f"wrote {output} ({len(page.encode()) / 1e6:.1f} MB): set {set_path}, {len(named)} runs, split {split}")
