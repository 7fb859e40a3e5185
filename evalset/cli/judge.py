"""The ``evalset judge`` group: ``judge POOL_DIR`` (``judge grade``) grades a pool; ``probe`` and ``recheck``
check whether the judge can be trusted."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.guideline import guideline_option
from evalset.cli.judge_ensemble import ensemble_command
from evalset.cli.judge_recheck import recheck_command
from evalset.cli.ruled import ruled
from evalset.contract import JUDGE_JOB_RULES, JUDGE_SETTINGS_RULES, PRICE_RULES


class _JudgeGroup(click.Group):
    """``evalset judge POOL_DIR ...`` is ``evalset judge grade POOL_DIR ...``: grading is the group's default."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["grade", *args]
        return super().parse_args(ctx, args)


@click.group("judge", cls=_JudgeGroup)
def judge_group():
    """Grade a pool with an LLM (`evalset judge POOL_DIR`, i.e. `judge grade`), probe the judge with adversarial
    passages (`judge probe`), compare two versions of a judge against the humans (`judge recheck`), or combine
    several judges into one calibrated on the humans (`judge ensemble`)."""


def endpoint_options(function):
    """The options of a job that asks the endpoint: the model, the endpoint, the client's pace and patience, the
    journal and failures files, the prices of the cost line."""
    options = [
        click.option("--model", required=True, help="Model name, as the endpoint knows it."),
        click.option("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL, else OpenAI)."),
        setting("concurrency", "--concurrency", default=8, help="Requests in flight."),
        setting("rpm", "--rpm", default=None, help="Client-side limit of requests per minute."),
        setting("tpm", "--tpm", default=None, help="Client-side limit of tokens per minute (estimated, chars/4)."),
        setting("timeout", "--timeout", default=60.0, help="Seconds per request."),
        setting("max_retries", "--max-retries", default=6, help="Retries of a pair after a 429, a 5xx or a timeout."),
        setting("max_invalid", "--max-invalid", default=2,
                help="Re-asks of a pair after an unparsable or off-scale answer, before it is a failure."),
        setting("structured", "--structured", default="auto",
                help="Structured output (JSON schema); auto falls back to the strict parser on a 400."),
        setting("max_tokens", "--max-tokens", default=None,
                help="max_completion_tokens for the answer (default: the server's)."),
        click.option("--template", "template_path", type=click.Path(exists=True, dir_okay=False),
                     help="Prompt template (default: the shipped relevance-judge-v1)."),
        click.option("--journal", "journal_path", type=click.Path(dir_okay=False),
                     help="Journal (SQLite; default OUTPUT.journal.sqlite)."),
        click.option("--failures", "failures_path", type=click.Path(dir_okay=False),
                     help="Failures table (default: OUTPUT stem + .failures.tsv)."),
        click.option("--retry-failed", is_flag=True, help="Ask again the pairs the journal lists as failed."),
        ruled(PRICE_RULES, "price_in", "--price-in", default=None,
              help="Price per million input tokens (for the cost line)."),
        ruled(PRICE_RULES, "price_out", "--price-out", default=None, help="Price per million output tokens."),
        setting("seed", "--seed", default=0, help="Seed of the backoff jitter."),
        click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def setting(name: str, *decls: str, **attrs):
    """The option of the client's setting ``name``, by its rule (:data:`evalset.contract.JUDGE_SETTINGS_RULES`, the
    rules of :class:`evalset.judge.client.JudgeSettings`)."""
    return ruled(JUDGE_SETTINGS_RULES, name, *decls, **attrs)


def judge_settings(model, base_url, concurrency, rpm, tpm, timeout, max_retries, max_invalid, structured, max_tokens,
                   seed, retry_failed):
    """The client's settings from the endpoint options (each checked by :attr:`JudgeSettings.RULES`)."""
    from evalset.judge.client import JudgeSettings

    return JudgeSettings(model=model, base_url=base_url, concurrency=concurrency, rpm=rpm, tpm=tpm, timeout=timeout,
                         max_retries=max_retries, max_invalid=max_invalid, structured=structured,
                         max_tokens=max_tokens, seed=seed, retry_failed=retry_failed)


def service_errors(run):
    """Run the job, turning the endpoint's refusal and the batch API's errors into one-line service errors."""
    import openai

    from evalset.errors import ServiceError
    from evalset.judge.client import JudgeAborted, blank_key

    try:
        return run()
    except JudgeAborted as exc:
        raise ServiceError(f"the endpoint refused the job ({exc}); answers so far are in the journal") from exc
    except openai.APIError as exc:  # the batch path's upload/create/poll, after the client's own retries
        raise ServiceError(f"{type(exc).__name__}: {blank_key(str(exc))}; answers so far are in the journal") from exc


@judge_group.command("grade")
@click.argument("pool_dir", type=click.Path(exists=True, file_okay=False))
@guideline_option("The guideline (its text goes into the prompt verbatim).", "guideline_path", required=True,
                  exists=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The labels table (TSV).")
@ruled(JUDGE_JOB_RULES, "limit", "--limit", default=None, help="Judge only the first N pairs in judging order.")
@click.option("--batch", is_flag=True, help="Use the Batch API (upload, poll, collect) instead of live requests.")
@ruled(JUDGE_JOB_RULES, "poll_seconds", "--poll", "poll_seconds", default=30.0, help="Batch poll interval (s).")
@endpoint_options
def judge_command(pool_dir, guideline_path, output, limit, batch, poll_seconds, model, base_url, concurrency, rpm,
                  tpm, timeout, max_retries, max_invalid, structured, max_tokens, template_path, journal_path,
                  failures_path, retry_failed, price_in, price_out, seed, progress):
    """Grade the pool's pairs with an LLM through an OpenAI-compatible endpoint (key: OPENAI_API_KEY).

    The endpoint is checked once before the first pair. Exit 2 when it refuses the job or cannot be reached, and
    when no pair asked was judged. Pairs the endpoint did not answer are asked again by the next run.
    """
    from evalset.errors import ServiceError
    from evalset.io.outputs import check_outputs
    from evalset.judge import job
    from evalset.judge.prompt import DEFAULT_TEMPLATE

    settings = judge_settings(model, base_url, concurrency, rpm, tpm, timeout, max_retries, max_invalid, structured,
                              max_tokens, seed, retry_failed)
    default_journal, default_failures = job.default_paths(output)
    check_outputs({"-o": output, "--journal": journal_path or default_journal,
                   "--failures": failures_path or default_failures},
                  {"POOL_DIR": pool_dir, "--guideline": guideline_path, "--template": template_path},
                  resumes=True)  # a job resumes from its journal and rewrites its labels
    result = service_errors(lambda: job.judge_pool(
        pool_dir, guideline_path, output, settings, limit=limit, template_path=template_path or DEFAULT_TEMPLATE,
        journal_path=journal_path, failures_path=failures_path, batch=batch, poll_seconds=poll_seconds,
        progress=progress, price_in=price_in, price_out=price_out))
    emit(result)
    failure = job.run_failure(result)
    if failure:
        raise ServiceError(failure)


from evalset.cli.judge_probe import probe_command  # noqa: E402 (it uses the endpoint options above)

judge_group.add_command(probe_command)
judge_group.add_command(recheck_command)
judge_group.add_command(ensemble_command)
