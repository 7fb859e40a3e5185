"""``--batch``: the same job through the OpenAI Batch API (files upload, batch create, poll, collect).

Rounds: round 0 submits every pair the journal lacks; each answer is parsed as in the online path, and the pairs
whose answer was unusable (unparsable, off the scale, or an error line) go into the next round, up to
``max_invalid`` further rounds; after that a pair the model answered unusably is journaled as failed (final),
and a pair that got only error lines or no line is listed as unanswered (never journaled: the next run asks it
again). Each submitted batch is journaled
before polling, so a run killed while waiting resumes polling the same batch (no second submission, no second
bill); a batch's answers and its "collected" mark are committed in one transaction.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import Callable

import openai

from evalset.io.guideline import Guideline
from evalset.judge.client import (
    JudgeAborted,
    JudgeSettings,
    JudgeStats,
    check_before_judging,
    make_client,
    read_chat_completion,
    response_format,
    utc_now,
)
from evalset.judge.journal import Answer, Journal
from evalset.judge.prompt import InvalidAnswer, PromptTemplate, parse_answer

MAX_BATCH_REQUESTS = 50_000  # the Batch API's limit per input file
TERMINAL = {"completed", "failed", "expired", "cancelled"}
NO_ANSWER = ("batch error", "no answer in batch")  # a pair the model did not answer: never a final failure


def batch_lines(tasks: list[dict], guideline: Guideline, template: PromptTemplate, settings: JudgeSettings) -> bytes:
    """The Batch API input file: one ``{custom_id, method, url, body}`` line per task (custom_id = pair_id)."""
    lines = []
    for task in tasks:
        body = {"model": settings.model, "temperature": 0,
                "messages": template.messages(guideline, task["query"], task["text"])}
        if settings.structured != "off":
            body["response_format"] = response_format(guideline)
        if settings.max_tokens:
            body["max_completion_tokens"] = settings.max_tokens
        lines.append(json.dumps({"custom_id": task["pair_id"], "method": "POST", "url": "/v1/chat/completions",
                                 "body": body}, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode()


async def judge_pairs_batch(tasks: list[dict], guideline: Guideline, template: PromptTemplate,
                            settings: JudgeSettings, journal: Journal, poll_seconds: float = 30.0,
                            tick: Callable[[JudgeStats], None] = lambda stats: None,
                            client: openai.AsyncOpenAI | None = None) -> JudgeStats:
    """Judge the tasks the journal lacks through the Batch API; returns this run's :class:`JudgeStats`."""
    stats = JudgeStats(pairs=len(tasks))
    started = time.monotonic()
    if settings.retry_failed:
        journal.forget_failures()
    by_pair = {task["pair_id"]: task for task in tasks}
    own_client = client is None
    client = client or make_client(settings, max_retries=settings.max_retries)
    known = journal.answers()
    stats.already_answered = sum(pair in known for pair in by_pair)
    try:
        open_batches = journal.open_batches()
        if settings.check_endpoint and (open_batches or any(pair not in known for pair in by_pair)):
            stats.endpoint = await check_before_judging(client, settings, own_client)
        next_round: dict[str, int] = {}
        for batch_id, round_, pair_ids in open_batches:  # submitted by a run that did not finish
            for pair in await _collect(client, batch_id, round_, pair_ids, settings, guideline, journal, stats,
                                       poll_seconds, tick):
                next_round[pair] = round_ + 1
        done = journal.answers()
        pending = {pair: next_round.get(pair, 0) for pair in by_pair if pair not in done}
        while pending:
            next_round = {}
            for round_ in sorted(set(pending.values())):
                group = [pair for pair, its_round in pending.items() if its_round == round_]
                for start in range(0, len(group), MAX_BATCH_REQUESTS):
                    chunk = group[start:start + MAX_BATCH_REQUESTS]
                    batch_id = await submit_batch(client, [by_pair[pair] for pair in chunk], guideline, template,
                                                  settings)
                    journal.record_batch(batch_id, round_, chunk)
                    stats.batches.append(batch_id)
                    stats.requests += len(chunk)
                    for pair in await _collect(client, batch_id, round_, chunk, settings, guideline, journal,
                                               stats, poll_seconds, tick):
                        next_round[pair] = round_ + 1
            pending = next_round
    finally:
        if own_client:
            await client.close()
        stats.seconds = time.monotonic() - started
    return stats


async def submit_batch(client: openai.AsyncOpenAI, tasks: list[dict], guideline: Guideline,
                       template: PromptTemplate, settings: JudgeSettings) -> str:
    """Upload the tasks' input file and create one batch; returns the batch id (the caller journals it)."""
    data = batch_lines(tasks, guideline, template, settings)
    uploaded = await client.files.create(file=("evalset-judge.jsonl", io.BytesIO(data)), purpose="batch")
    batch = await client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                        completion_window="24h")
    return batch.id


async def _collect(client: openai.AsyncOpenAI, batch_id: str, round_: int, pair_ids: list[str],
                   settings: JudgeSettings, guideline: Guideline, journal: Journal, stats: JudgeStats,
                   poll_seconds: float, tick: Callable[[JudgeStats], None]) -> list[str]:
    """Wait for a batch, journal its answers; returns the pairs to ask again in the next round."""
    batch = await client.batches.retrieve(batch_id)
    while batch.status not in TERMINAL:
        await asyncio.sleep(poll_seconds)
        batch = await client.batches.retrieve(batch_id)
    answers: dict[str, tuple[str | None, str | None, tuple[int, int]]] = {}
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            content = await client.files.content(file_id)
            for line in content.text.split("\n"):  # not splitlines: a text may hold U+2028
                if line.strip():
                    record = json.loads(line)
                    answers[record["custom_id"]] = _batch_answer(record)
    if batch.status != "completed" and not answers:
        raise JudgeAborted(f"batch {batch_id} ended {batch.status} with no answers: {batch.errors}")
    to_record, retry = [], []
    for pair in pair_ids:
        content, why, tokens = answers.get(pair, (None, f"no answer in batch {batch_id} ({batch.status})", (0, 0)))
        stats.prompt_tokens += tokens[0]
        stats.completion_tokens += tokens[1]
        try:
            if why:
                raise InvalidAnswer(why)
            grade, reason = parse_answer(content, guideline.grades)
            to_record.append(Answer(pair, "judged", grade, reason, round_ + 1, *tokens, utc_now()))
            stats.judged += 1
        except InvalidAnswer as error:
            stats.invalid_answers += 1
            if round_ >= settings.max_invalid and str(error).startswith(NO_ANSWER):
                stats.unanswered.append(Answer(pair, "unanswered", None, f"no answer after {round_ + 1} batch "
                                               f"rounds (last: {error})", round_ + 1, *tokens, utc_now()))
                stats.failed += 1
            elif round_ >= settings.max_invalid:
                to_record.append(Answer(pair, "failed", None, f"invalid answer {round_ + 1} times (last: {error})",
                                        round_ + 1, *tokens, utc_now()))
                stats.failed += 1
            else:
                retry.append(pair)
                stats.retries += 1
    journal.collect_batch(batch_id, to_record)
    tick(stats)
    return retry


def _batch_answer(record: dict) -> tuple[str | None, str | None, tuple[int, int]]:
    response = record.get("response") or {}
    if record.get("error") or response.get("status_code") != 200:
        error = record.get("error") or (response.get("body") or {}).get("error") or {}
        return None, f"batch error: {error.get('message', response.get('status_code'))}", (0, 0)
    return read_chat_completion(response.get("body"))
