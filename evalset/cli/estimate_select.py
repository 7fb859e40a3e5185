"""The ``evalset estimate select`` command: draw the human slice of a pool, or a sample of its pairs
(``--documents``)."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import force_option
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_SEED, DOCUMENT_SAMPLE_RULES, HOLE_SIZING_RULES, SELECT_RULES
from evalset.errors import InputError
from evalset.params import check

EXAMPLE = "evalset estimate select pool --size 10 --seed 3 -o slice"
"""The example of ``--help``: a uniform slice of 10 queries of a pool (`evalset pool --spec pools/dl19-demo.toml`)."""
DOCUMENTS_EXAMPLE = "evalset estimate select pool --documents 1000 --seed 3 -o sample"
"""The document sample's example: 1,000 human judgments expected, spread over every query of the pool."""
HOLES_EXAMPLE = "evalset estimate select holes --holes sets/a/v1 --precision 0.01 --runs new.run --llm l.qrels -o s"
"""A sample of a set's holes sized for a standard error of 0.01 on each run's mean."""


def parse_documents(value: str) -> tuple[int | None, float | None]:
    """``--documents``: an integer budget (``1000``) or a percentage of the pool's pairs (``10%``) -> (budget,
    fraction), each checked by the rule the library declares for it. One option for both, so that a share of the
    pairs is never confused with ``--fraction`` (a share of each stratum's queries)."""
    text = value.strip()
    share = text.endswith("%")
    try:
        parsed = float(text[:-1]) / 100 if share else int(text)
    except ValueError:
        raise click.BadParameter(f"give a number of judgments (1000) or a percentage of the pool's pairs (10%), "
                                 f"got {value!r}", param_hint="'--documents'") from None
    name = "fraction" if share else "budget"
    try:
        check(name, parsed, DOCUMENT_SAMPLE_RULES[name])
    except InputError as exc:
        raise click.BadParameter(exc.message, param_hint="'--documents'") from None
    return (None, parsed) if share else (parsed, None)


@click.command("select", epilog=f"\b\nExamples:\n  {EXAMPLE}\n  {DOCUMENTS_EXAMPLE}\n  {HOLES_EXAMPLE}\n\n"
               "See docs/estimate.md and docs/reusability.md.")
@click.argument("pool_dir", type=click.Path(file_okay=False))
@ruled(SELECT_RULES, "size", "--size", default=None,
       help="Queries in a uniform slice, fewer than all (no --queries with strata).")
@ruled(SELECT_RULES, "per_stratum", "--per-stratum", default=None,
       help="Queries per traffic stratum (needs --queries).")
@ruled(SELECT_RULES, "fraction", "--fraction", default=None,
       help="Share of each stratum's queries, rounded up, at least 2 (needs --queries).")
@click.option("--documents", metavar="B|P%", help="A document sample instead of a slice: B human judgments "
              "expected (an integer, below the pool's pairs) or P% of the pool's pairs, drawn over every query "
              "with known inclusion probabilities (the record: sample.tsv, sample.json).")
@click.option("--holes", "frozen_set", type=click.Path(file_okay=False), metavar="SET",
              help="With --documents or --precision: POOL_DIR holds the holes of runs on the frozen set SET "
              "(compare --set SET ... --holes POOL_DIR); the set's judged pairs count as certain, and the record "
              "names the set.")
@ruled(HOLE_SIZING_RULES, "precision", "--precision", default=None,
       help="With --holes, instead of --documents: each run's holes drawn so that the standard error of its mean "
       "(predicted from the LLM's calibration on the set) is at most this; needs --runs and --llm.")
@click.option("--runs", "runs", metavar="RUN", multiple=True, type=click.Path(),
              help="With --precision: the runs whose holes POOL_DIR holds (files or folders); repeatable.")
@click.option("--llm", "llm_paths", multiple=True, type=click.Path(dir_okay=False),
              help="With --precision: an LLM's grades of every pair of the set and of the holes (qrels or labels; "
                   "one judge a file, repeatable).")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="With --precision: the measures each run is sized for (default the set's headline); repeatable.")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False),
              help="queries.tsv of `evalset sample`: the strata and their traffic shares.")
@ruled(SELECT_RULES, "seed", "--seed", default=DEFAULT_SEED, help="Seed of the draw.")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="The slice's pool folder (pool.tsv, tasks.jsonl, ... and slice.json).")
@force_option()
@format_option()
def select_command(pool_dir, size, per_stratum, fraction, documents, frozen_set, precision, runs, llm_paths, metrics,
                   queries_path, seed, output, force, output_format):
    """Draw, seeded, the queries of POOL_DIR that humans will grade in full, and write their pool folder (for
    `evalset push` or `evalset judge` as it is) with the slice record that `evalset estimate --slice` reads.

    With --documents, draw instead a sample of the pool's pairs over every query (each with a known inclusion
    probability), and write the drawn pairs' pool folder with the sample's record beside it; with --holes SET
    --precision, a sample of a frozen set's holes sized per run."""
    from pathlib import Path

    from evalset.io.outputs import check_outputs
    from evalset.io.poolfiles import POOL_FILES
    from evalset.io.samplerecord import RECORD_FILES
    from evalset.io.slicerecord import RECORD_NAME

    pairs = documents is not None or precision is not None
    if precision is None and (runs or llm_paths or metrics):
        raise InputError("--runs, --llm and --metric size a sample of a set's holes: give them with --precision")
    if pairs:
        if any(v is not None for v in (size, per_stratum, fraction, queries_path)):
            raise InputError(f"{'--documents' if documents else '--precision'} draws pairs, not queries: give it "
                             "without --size, --per-stratum, --fraction or --queries")
        if documents is not None and precision is not None:
            raise InputError("give one of --documents (a budget) or --precision (sized per run)")
        budget, share = parse_documents(documents) if documents is not None else (None, None)
    elif frozen_set is not None:
        raise InputError("--holes draws a sample of a set's holes: give it with --documents or --precision")
    elif sum(v is not None for v in (size, per_stratum, fraction)) != 1:
        raise click.UsageError("give one of --size, --per-stratum, --fraction or --documents")
    if Path(output).resolve() == Path(pool_dir).resolve():
        if pairs:  # one line, as every refusal of the document sample
            raise InputError("-o: the sample's folder must not be the pool folder it is drawn from", output)
        raise click.BadParameter("the slice's folder must not be the pool folder it is cut from", param_hint="-o")
    names = RECORD_FILES if pairs else (RECORD_NAME,)
    check_outputs({}, {"POOL_DIR": pool_dir, "--queries": queries_path, "--holes": frozen_set, "--runs": runs,
                       "--llm": llm_paths}, folders={"-o": (output, (*POOL_FILES, *names))}, force=force)
    if pairs:
        from evalset.estimate.documents.select import select_document_pool

        emit(select_document_pool(pool_dir, output, budget=budget, fraction=share, seed=seed, replace=force,
                                  frozen_set=frozen_set, precision=precision, runs=runs, llm=llm_paths,
                                  measures=metrics), output_format)
        return
    from evalset.estimate import select_slice_pool

    emit(select_slice_pool(pool_dir, output, queries_path=queries_path, seed=seed, size=size, per_stratum=per_stratum,
                           fraction=fraction, replace=force), output_format)
