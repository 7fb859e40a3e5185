"""The ``evalset judge`` command."""

from __future__ import annotations

import click

from evalset.cli.emit import emit


@click.command("judge")
@click.argument("pool_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--guideline", "guideline_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The guideline file (its text goes into the prompt verbatim).")
@click.option("--model", required=True, help="Model name, as the endpoint knows it.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The labels table (TSV).")
@click.option("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL, else OpenAI).")
@click.option("--limit", type=int, help="Judge only the first N pairs in judging order.")
@click.option("--concurrency", type=int, default=8, show_default=True, help="Requests in flight.")
@click.option("--rpm", type=float, help="Client-side limit: requests per minute.")
@click.option("--tpm", type=float, help="Client-side limit: tokens per minute (estimated, chars/4).")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request.")
@click.option("--max-retries", type=int, default=6, show_default=True, help="Per pair: 429/5xx/timeout retries.")
@click.option("--max-invalid", type=int, default=2, show_default=True,
              help="Per pair: re-asks after an unparsable or off-scale answer before it is a failure.")
@click.option("--structured", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
              help="Structured output (JSON schema); auto falls back to the strict parser on a 400.")
@click.option("--max-tokens", type=int, help="max_completion_tokens for the answer (default: the server's).")
@click.option("--template", "template_path", type=click.Path(exists=True, dir_okay=False),
              help="Prompt template (default: the shipped relevance-judge-v1).")
@click.option("--journal", "journal_path", type=click.Path(dir_okay=False),
              help="Journal (SQLite; default OUTPUT.journal.sqlite).")
@click.option("--failures", "failures_path", type=click.Path(dir_okay=False),
              help="Failures table (default: OUTPUT stem + .failures.tsv).")
@click.option("--retry-failed", is_flag=True, help="Ask again the pairs the journal lists as failed.")
@click.option("--batch", is_flag=True, help="Use the Batch API (upload, poll, collect) instead of live requests.")
@click.option("--poll", "poll_seconds", type=float, default=30.0, show_default=True, help="Batch poll interval (s).")
@click.option("--price-in", type=float, help="Price per million input tokens (for the cost line).")
@click.option("--price-out", type=float, help="Price per million output tokens.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the backoff jitter.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
def judge_command(pool_dir, guideline_path, model, output, base_url, limit, concurrency, rpm, tpm, timeout,
                  max_retries, max_invalid, structured, max_tokens, template_path, journal_path, failures_path,
                  retry_failed, batch, poll_seconds, price_in, price_out, seed, progress):
    """Grade the pool's pairs with an LLM through an OpenAI-compatible endpoint (key: OPENAI_API_KEY).

    The endpoint is checked once before the first pair. Exit 2 when it refuses the job or cannot be reached, and
    when no pair asked was judged. Pairs the endpoint did not answer are asked again by the next run.
    """
    import openai

    from evalset.errors import ServiceError
    from evalset.io.outputs import check_outputs
    from evalset.judge import job
    from evalset.judge.client import JudgeAborted, JudgeSettings, blank_key
    from evalset.judge.prompt import DEFAULT_TEMPLATE
    from evalset.pooling import pool_files

    for name, value in (("--concurrency", concurrency), ("--rpm", rpm), ("--tpm", tpm), ("--timeout", timeout)):
        if value is not None and value <= 0:
            raise click.BadParameter(f"must be > 0, got {value}", param_hint=name)
    default_journal, default_failures = job.default_paths(output)
    check_outputs({"-o": output, "--journal": journal_path or default_journal,
                   "--failures": failures_path or default_failures},
                  {"POOL_DIR": pool_files(pool_dir), "--guideline": guideline_path, "--template": template_path})
    settings = JudgeSettings(model=model, base_url=base_url, concurrency=concurrency, rpm=rpm, tpm=tpm,
                             timeout=timeout, max_retries=max_retries, max_invalid=max_invalid, structured=structured,
                             max_tokens=max_tokens, seed=seed, retry_failed=retry_failed)
    try:
        result = job.judge_pool(pool_dir, guideline_path, output, settings, limit=limit,
                                template_path=template_path or DEFAULT_TEMPLATE, journal_path=journal_path,
                                failures_path=failures_path, batch=batch, poll_seconds=poll_seconds,
                                progress=progress, price_in=price_in, price_out=price_out)
    except JudgeAborted as exc:
        raise ServiceError(f"the endpoint refused the job ({exc}); answers so far are in the journal") from exc
    except openai.APIError as exc:  # the batch path's upload/create/poll, after the client's own retries
        raise ServiceError(f"{type(exc).__name__}: {blank_key(str(exc))}; answers so far are in the journal") from exc
    emit(result)
    failure = job.run_failure(result)
    if failure:
        raise ServiceError(failure)
