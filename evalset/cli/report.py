"""The ``evalset report`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.options import contract_option, force_option
from evalset.cli.ruled import format_option, ruled
from evalset.report.spec import ReportSpec


@click.command("report")
@click.argument("set_path", metavar="SET", type=click.Path(file_okay=False))
@click.argument("runs", metavar="RUN...", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@ruled(ReportSpec, "split", "--split", help="The queries the page is about.")
@click.option("--agreement", "agreement_path", type=click.Path(dir_okay=False),
              help="JSON of `evalset agreement --format json` [default: the set manifest's agreement block].")
@click.option("--probes", "probes_path", type=click.Path(exists=True, dir_okay=False),
              help="JSON of `evalset judge probe` of the judge of the set's LLM labels: adds its section.")
@ruled(ReportSpec, "resamples", "--resamples",
       help="Bootstrap resamples per interval (at least 40 for a 95% interval; a comparison's interval at level 1 - "
            "threshold may need more, else the comparison abstains).")
@ruled(ReportSpec, "permutations", "--permutations", help="Sign flips per comparison.")
@ruled(ReportSpec, "seed", "--seed", help="Seed of every resampling.")
@contract_option(("missing",), defaults={"missing": None})
@force_option(folder=False)
@format_option()
def report_command(set_path, runs, output, split, agreement_path, probes_path, resamples, permutations,
                   seed, contract, force, output_format):
    """Write a self-contained HTML report of the frozen set SET (sets/NAME/vN) and the runs RUN... scored on it
    (TREC run files, .gz allowed, or folders of them).

    The page (no script, no external resource; plots embedded as PNG) shows the set (queries per stratum,
    judgments per grade, judged@k per run), the agreement heatmap, the headline score of every run with a BCa
    bootstrap interval over queries, and each planned comparison: per-query differences, verdict, largest losses.
    A judged query missing from a run is an error unless -c missing=zero|skip.
    """
    from evalset.io.outputs import check_outputs
    from evalset.report.output import write_report

    check_outputs({"-o": output}, {"SET": set_path, "RUN": runs, "--agreement": agreement_path,
                                   "--probes": probes_path}, force=force)
    spec = ReportSpec(split=split, seed=seed, resamples=resamples, permutations=permutations,
                      missing=contract.get("missing"))
    emit(write_report(set_path, runs, output, spec, agreement_path=agreement_path, probes_path=probes_path),
         output_format)
