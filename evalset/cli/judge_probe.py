"""The ``evalset judge probe`` command: can the judge be fooled by adversarial passages?"""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.guideline import guideline_option
from evalset.cli.judge_endpoint import check_job_outputs, endpoint_options, judge_settings, service_errors
from evalset.cli.options import contract_option, force_option
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_SEED, EvaluationContract
from evalset.judge.spec import PROBE_RULES


@click.command("probe")
@click.argument("pool_dir", type=click.Path(exists=True, file_okay=False))
@guideline_option("The guideline (its text goes into the prompt verbatim).", "guideline_path", required=True,
                  exists=True)
@click.option("--human", "human_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The human grades of the pool's pairs (labels table or qrels).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The probe's report (JSON).")
@ruled(PROBE_RULES, "size", "--size", default=200,
       help="Pairs drawn from those the humans graded 0 (and, for the truncation control, graded relevant).")
@contract_option(("rel_level",))
@ruled(PROBE_RULES, "resamples", "--resamples", default=9999, help="Bootstrap resamples per interval.")
@ruled(PROBE_RULES, "seed", "--seed", default=DEFAULT_SEED, help="Seed of the sample, the variants and the intervals.")
@format_option(help="What is printed (the JSON is written to --output either way).")
@force_option(folder=False)
@endpoint_options
def probe_command(pool_dir, guideline_path, human_path, output, size, contract, resamples, seed, output_format, force,
                  model, base_url, client, template_path, journal_path, failures_path, retry_failed, price_in,
                  price_out, progress):
    """Probe the judge with adversarial passages: query terms stuffed into the passage, an instruction to the
    grader appended, the query copied in front, on pairs the humans graded 0; and the passage cut to its first
    sentence on pairs they graded relevant (the control). Each variant is graded as `evalset judge` grades, beside
    the unaltered pair; the report gives per probe the share of pairs whose grade rose to relevant and the mean
    grade shift, with their intervals. --seed seeds the sample, the variants and the intervals.
    """
    from evalset.judge import probing
    from evalset.judge.prompt import DEFAULT_TEMPLATE
    from evalset.judgments.reading import read_grades

    settings = judge_settings(model, base_url, client, retry_failed)
    default_journal, default_failures = probing.default_paths(output)
    check_job_outputs(output, journal_path or default_journal, failures_path or default_failures,
                      {"POOL_DIR": pool_dir, "--guideline": guideline_path, "--human": human_path,
                       "--template": template_path}, force)
    human = read_grades([(human_path, "human")], kind="human").judgments
    emit(service_errors(lambda: probing.probe_pool(
        pool_dir, guideline_path, human, output, settings, human_source=human_path, size=size,
        rel=contract.get("rel_level", EvaluationContract().rel_level), seed=seed,
        resamples=resamples, template_path=template_path or DEFAULT_TEMPLATE, journal_path=journal_path,
        failures_path=failures_path, progress=progress, price_in=price_in, price_out=price_out)), output_format)
