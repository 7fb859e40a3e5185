"""What every ``evalset judge`` command that asks an LLM endpoint shares (``judge grade``, ``judge probe``): the
endpoint's options, the client's settings built from them, and the endpoint's refusals as one-line service errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from evalset.cli.ruled import ruled
from evalset.cli.settings_option import settings_option
from evalset.judge.spec import PRICE_RULES, JudgeSettings

if TYPE_CHECKING:  # annotations only: a command module loads no library until run
    from collections.abc import Callable
    from typing import Any

    Command = Callable[..., Any]


CLIENT_SETTINGS = {
    "concurrency": "requests in flight",
    "rpm": "a client-side limit of requests per minute",
    "tpm": "a client-side limit of tokens per minute (estimated, chars/4)",
    "timeout": "seconds per request",
    "max_retries": "retries of a pair after a 429, a 5xx or a timeout",
    "max_invalid": "re-asks of a pair after an unparsable or off-scale answer, before it is a failure",
    "structured": "structured output (JSON schema); auto falls back to the strict parser on a 400",
    "max_tokens": "max_completion_tokens of the answer (none: the server's)",
    "seed": "the seed of the backoff jitter",
}
"""The client's settings a user may set with ``-s/--client`` (:class:`evalset.judge.spec.JudgeSettings`)."""


def endpoint_options(function: Command) -> Command:
    """The options of a job that asks the endpoint: the model, the endpoint, the client's pace and patience, the
    journal and failures files, the prices of the cost line."""
    options = [
        ruled(JudgeSettings, "model", "--model", required=True, help="Model name, as the endpoint knows it."),
        click.option("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL, else OpenAI)."),
        settings_option(JudgeSettings, CLIENT_SETTINGS, "-s", "--client", "client",
                        help="The client's pace and patience"),
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
        click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def judge_settings(model: str, base_url: str | None, client: dict, retry_failed: bool) -> JudgeSettings:
    """The client's settings from the endpoint options (``client``: the ``-s/--client`` settings given; each checked
    by :attr:`JudgeSettings.RULES`)."""
    return JudgeSettings(model=model, base_url=base_url, retry_failed=retry_failed, **client)


def service_errors(run: Callable[[], Any]) -> Any:
    """Run the job, turning the endpoint's refusal and the batch API's errors into one-line service errors."""
    import openai

    from evalset.errors import ServiceError
    from evalset.judge.client import JudgeAborted, blank_key

    try:
        return run()
    except JudgeAborted as exc:
        kept = "answers so far are in the journal" if exc.asked else "nothing was asked"
        raise ServiceError(f"the endpoint refused the job ({exc}); {kept}") from exc
    except openai.APIError as exc:  # the batch path's upload/create/poll, after the client's own retries
        raise ServiceError(f"{type(exc).__name__}: {blank_key(str(exc))}; answers so far are in the journal") from exc


def check_job_outputs(output: str, journal: str, failures: str, inputs: dict[str, str | None],
                      force: bool) -> None:
    """Refuse, before any call, a job's outputs that would destroy something (:func:`evalset.io.outputs.
    check_outputs`): the labels or report, its journal and its failures table. A job rewrites its own outputs only
    when it resumes, that is when its journal is there; an output file that exists without it is another file (a
    run, another model's labels) and is kept unless ``force``."""
    import os

    from evalset.io.outputs import check_outputs

    check_outputs({"-o": output, "--journal": journal, "--failures": failures}, inputs, force=force,
                  resumes=os.path.isfile(journal))
