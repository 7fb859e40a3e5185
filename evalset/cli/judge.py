"""The ``evalset judge`` group: ``judge POOL_DIR`` (``judge grade``) grades a pool; ``probe`` and ``recheck``
check whether the judge can be trusted."""

from __future__ import annotations

import click

from evalset.cli.default_group import DefaultCommandGroup
from evalset.cli.emit import emit
from evalset.cli.guideline import guideline_option
from evalset.cli.judge_endpoint import check_job_outputs, endpoint_options, judge_settings, service_errors
from evalset.cli.judge_ensemble import ensemble_command
from evalset.cli.judge_probe import probe_command
from evalset.cli.judge_recheck import recheck_command
from evalset.cli.options import force_option
from evalset.cli.ruled import format_option, ruled
from evalset.judge.spec import JUDGE_JOB_RULES


@click.group("judge", cls=DefaultCommandGroup, default="grade")
def judge_group():
    """Grade a pool with an LLM (`evalset judge POOL_DIR`, i.e. `judge grade`), probe the judge with adversarial
    passages (`judge probe`), compare two versions of a judge against the humans (`judge recheck`), or combine
    several judges into one calibrated on the humans (`judge ensemble`)."""


@judge_group.command("grade")
@click.argument("pool_dir", type=click.Path(exists=True, file_okay=False))
@guideline_option("The guideline (its text goes into the prompt verbatim).", "guideline_path", required=True,
                  exists=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The labels table (TSV).")
@ruled(JUDGE_JOB_RULES, "limit", "--limit", default=None, help="Judge only the first N pairs in judging order.")
@click.option("--batch", is_flag=True, help="Use the Batch API (upload, poll, collect) instead of live requests.")
@ruled(JUDGE_JOB_RULES, "poll_seconds", "--poll", "poll_seconds", default=30.0, help="Batch poll interval (s).")
@force_option(folder=False)
@format_option()
@endpoint_options
def judge_command(pool_dir, guideline_path, output, limit, batch, poll_seconds, force, output_format, model, base_url,
                  client, template_path, journal_path, failures_path, retry_failed, price_in, price_out, progress):
    """Grade the pool's pairs with an LLM through an OpenAI-compatible endpoint (key: OPENAI_API_KEY).

    The endpoint is checked once before the first pair. Exit 2 when it refuses the job or cannot be reached, and
    when no pair asked was judged. Pairs the endpoint did not answer are asked again by the next run.
    """
    from evalset.errors import ServiceError
    from evalset.judge import job
    from evalset.judge.prompt import DEFAULT_TEMPLATE

    settings = judge_settings(model, base_url, client, retry_failed)
    default_journal, default_failures = job.default_paths(output)
    check_job_outputs(output, journal_path or default_journal, failures_path or default_failures,
                      {"POOL_DIR": pool_dir, "--guideline": guideline_path, "--template": template_path}, force)
    result = service_errors(lambda: job.judge_pool(
        pool_dir, guideline_path, output, settings, limit=limit, template_path=template_path or DEFAULT_TEMPLATE,
        journal_path=journal_path, failures_path=failures_path, batch=batch, poll_seconds=poll_seconds,
        progress=progress, price_in=price_in, price_out=price_out))
    emit(result, output_format)
    failure = job.run_failure(result)
    if failure:
        raise ServiceError(failure)


judge_group.add_command(probe_command)
judge_group.add_command(recheck_command)
judge_group.add_command(ensemble_command)
