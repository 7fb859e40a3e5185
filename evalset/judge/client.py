"""Grading pool pairs through any OpenAI-compatible endpoint: concurrent, rate-limited, retried, journaled.

Conventions (where the issue is silent):

- Before the first pair the endpoint is checked once (:mod:`evalset.judge.endpoint`); a run whose endpoint stops
  answering stops (``EndpointUnreachable``) rather than spending every pair's retries.
- Transient errors (HTTP 408, 409, 429, 5xx, timeouts, connection errors) are retried up to ``max_retries`` times per
  pair, waiting ``Retry-After`` (or ``retry-after-ms``) when the server sends one, else exponential backoff
  ``min(cap, base * 2**(n-1))`` with equal jitter (half fixed, half uniform from a seeded generator). A 429 also
  pauses every worker until its ``Retry-After`` has passed, so that the whole client backs off, not one worker.
- An answer that cannot be parsed, or whose grade is off the scale, is asked again up to ``max_invalid`` times;
  then the pair is recorded as failed with the last reason. A grade is never repaired, clipped or defaulted.
- Another 4xx (for example a prompt too long for the model) fails that pair at once; 401, 403 and 404 stop the
  run (every answer so far is in the journal).
- Only what the model said is final: a pair whose answers were unusable is journaled as ``failed``. A pair that
  got no answer (transient errors to the end, a 4xx) is ``unanswered``: listed in the failures table of this run
  (``JudgeStats.unanswered``), never journaled, so the next run asks it again.
- ``structured="auto"`` asks for structured output (a strict JSON schema); after a 400 it asks that pair once
  without it, and if the server answers that, every later request goes without it (the strict parser checks the
  answer either way). A 400 either way fails the pair (e.g. a prompt too long) and keeps structured output.
- ``rpm`` paces request starts evenly (60/rpm seconds apart); ``tpm`` paces them by an estimate of each
  request's tokens (characters / 4, plus ``max_tokens`` or 100 for the answer).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import openai
import pandas as pd

from evalset.io.annotations import LABELS_COLUMNS
from evalset.io.guideline import Guideline
from evalset.judge.endpoint import Endpoint, Health, JudgeAborted, check_endpoint, describe_error, resolve_endpoint
from evalset.judge.journal import Answer, Journal
from evalset.judge.prompt import InvalidAnswer, PromptTemplate, parse_answer, response_format
from evalset.judge.spec import JudgeSettings


@dataclass
class JudgeStats:
    """What one run did: every count is of this run (pairs answered earlier are ``already_answered``).

    ``failed`` counts every pair that ended without a grade; ``unanswered`` holds those of them that got no answer
    from the model (not journaled: the next run asks them again). ``retrying`` is how many pairs wait to be asked
    again right now (for the progress bar). ``endpoint`` says how the endpoint answered the check before the run.
    """

    pairs: int = 0
    already_answered: int = 0
    judged: int = 0
    failed: int = 0
    requests: int = 0
    retries: int = 0
    retrying: int = 0
    rate_limited: int = 0
    server_errors: int = 0
    timeouts: int = 0
    connection_errors: int = 0
    invalid_answers: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    batches: list[str] = field(default_factory=list)
    unanswered: list[Answer] = field(default_factory=list)
    endpoint: str = ""

    def cost(self, price_in: float | None, price_out: float | None) -> float | None:
        """Cost of this run's tokens given prices per million input and output tokens."""
        if price_in is None and price_out is None:
            return None
        return (self.prompt_tokens * (price_in or 0.0) + self.completion_tokens * (price_out or 0.0)) / 1e6


WORKERS_PER_CLIENT = 4


class _Pacer:
    """Spaces request starts so that at most ``per_minute`` units are spent per minute (no bursts)."""

    def __init__(self, per_minute: float):
        self.seconds_per_unit = 60.0 / per_minute
        self.next_free = 0.0

    async def take(self, units: float) -> None:
        now = time.monotonic()
        start = max(now, self.next_free)
        self.next_free = start + units * self.seconds_per_unit
        if start > now:
            await asyncio.sleep(start - now)


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def retry_after_seconds(error: openai.APIStatusError) -> float | None:
    """The wait a server asked for (``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date)."""
    headers = error.response.headers
    if headers.get("retry-after-ms"):
        try:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


class _Judge:
    def __init__(self, client: openai.AsyncOpenAI, settings: JudgeSettings, template: PromptTemplate,
                 guideline: Guideline, journal: Journal, stats: JudgeStats, tick: Callable[[JudgeStats], None]):
        self.client, self.settings, self.template, self.guideline = client, settings, template, guideline
        self.journal, self.stats, self.tick = journal, stats, tick
        self.health = Health(str(client.base_url).rstrip("/"), settings.unreachable_after,
                             settings.unreachable_seconds)
        self.structured = settings.structured != "off"
        self.pacers = [(p, kind) for p, kind in ((settings.rpm, "requests"), (settings.tpm, "tokens")) if p]
        self.pacers = [(_Pacer(p), kind) for p, kind in self.pacers]
        self.paused_until = 0.0
        self.random = random.Random(settings.seed)

    def _backoff(self, transient: int) -> float:
        ceiling = min(self.settings.backoff_cap, self.settings.backoff_base * 2 ** (transient - 1))
        return ceiling / 2 + self.random.uniform(0, ceiling / 2)

    async def _pace(self, messages: list[dict]) -> None:
        while (wait := self.paused_until - time.monotonic()) > 0:
            await asyncio.sleep(wait)
        for pacer, kind in self.pacers:
            tokens = sum(len(m["content"]) for m in messages) / 4 + (self.settings.max_tokens or 100)
            await pacer.take(1 if kind == "requests" else tokens)

    async def ask(self, messages: list[dict], structured: bool, client: openai.AsyncOpenAI) -> object:
        """One Chat Completions request; returns the decoded JSON body (or its text when it is not JSON).

        The body goes through the client's generic ``post`` (its documented way to send a request as given) and
        comes back undecorated (``cast_to=object``): the typed ``chat.completions.create`` re-walks every prompt
        through its TypedDict transforms and builds a pydantic model of every answer, about a third of the
        client's CPU per request at 160 requests/s. The answer is checked by :func:`read_chat_completion`
        instead."""
        body = {"model": self.settings.model, "messages": messages, "temperature": 0}
        if structured:
            body["response_format"] = response_format(self.guideline)
        if self.settings.max_tokens:
            body["max_completion_tokens"] = self.settings.max_tokens
        return await client.post("/chat/completions", body=body, cast_to=object,
                                      options={"timeout": self.settings.timeout})

    async def judge(self, task: dict, client: openai.AsyncOpenAI | None = None) -> Answer:
        """Ask for one pair until it has a valid grade or a bounded number of attempts failed."""
        messages = self.template.messages(self.guideline, task["query"], task["text"])
        pair = _PairState(task["pair_id"], structured=self.structured)
        while True:
            await self._pace(messages)
            pair.attempts += 1
            self.stats.requests += 1
            try:
                body = await self.ask(messages, pair.structured, client or self.client)
            except openai.BadRequestError as error:
                self.health.answered()
                if pair.structured and self.settings.structured == "auto":
                    pair.structured = False  # try this pair once without structured output
                    continue
                return pair.answer("unanswered", None, f"HTTP 400: {_message(error)}")
            except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as error:
                raise JudgeAborted(f"HTTP {error.status_code}: {_message(error)}") from None
            except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as error:
                failure = await self._after_transient(error, pair)
                if failure:
                    return pair.answer("unanswered", None, failure)
                continue
            except openai.APIResponseValidationError:
                body = None  # a 200 whose body the client could not read
            self.health.answered()
            if self.structured and not pair.structured:
                self.structured = False  # a 400 with structured output, an answer without: drop it from now on
            try:
                grade, reason = self._read(body, pair)
            except InvalidAnswer as error:
                pair.invalid += 1
                self.stats.invalid_answers += 1
                if pair.invalid > self.settings.max_invalid:
                    return pair.answer("failed", None, f"invalid answer {pair.invalid} times (last: {error})")
                self.stats.retries += 1
                self.tick(self.stats)
                continue
            return pair.answer("judged", grade, reason)

    async def _after_transient(self, error: openai.APIError, pair: _PairState) -> str | None:
        """Count a 408/409/429/5xx/timeout/connection error and wait before the retry; or say why the pair fails."""
        status = getattr(error, "status_code", None)
        if status is not None and status not in (408, 409, 429) and status < 500:
            self.health.answered()
            return f"HTTP {status}: {_message(error)}"
        pair.transient += 1
        timeout = isinstance(error, openai.APITimeoutError)
        self.stats.rate_limited += status == 429
        self.stats.server_errors += status is not None and status != 429
        self.stats.timeouts += timeout
        self.stats.connection_errors += status is None and not timeout
        reason = f"HTTP {status}" if status else describe_error(error)
        if status is None or status >= 500:
            self.health.no_answer(reason, self.stats.judged)  # raises EndpointUnreachable when it looks gone
        else:
            self.health.answered()
        if pair.transient > self.settings.max_retries:
            return f"gave up after {pair.transient} transient errors (last: {reason})"
        self.stats.retries += 1
        wait = retry_after_seconds(error) if status is not None else None
        if wait is not None and status == 429:
            self.paused_until = max(self.paused_until, time.monotonic() + wait)
        self.stats.retrying += 1
        self.tick(self.stats)
        try:
            await asyncio.sleep(wait if wait is not None else self._backoff(pair.transient))
        finally:
            self.stats.retrying -= 1
        return None

    def _read(self, body: object, pair: _PairState) -> tuple[int, str]:
        """The grade and reason of an answer (tokens counted either way), or :class:`InvalidAnswer`."""
        content, why, (used_in, used_out) = read_chat_completion(body)
        pair.prompt_tokens += used_in
        pair.completion_tokens += used_out
        self.stats.prompt_tokens += used_in
        self.stats.completion_tokens += used_out
        if why:
            raise InvalidAnswer(why)
        return parse_answer(content, self.guideline.grades)


@dataclass
class _PairState:
    """One pair's attempts so far."""

    pair_id: str
    structured: bool
    attempts: int = 0
    transient: int = 0
    invalid: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def answer(self, status: Literal["judged", "failed", "unanswered"], grade: int | None, reason: str) -> Answer:
        return Answer(self.pair_id, status, grade, reason, self.attempts, self.prompt_tokens,
                      self.completion_tokens, utc_now())


def read_chat_completion(body: object) -> tuple[str | None, str | None, tuple[int, int]]:
    """``(content, why it is unusable or None, (prompt tokens, completion tokens))`` of a Chat Completions body."""
    if not isinstance(body, dict):  # the client hands back a body it could not parse as JSON as text
        return None, "the response body is not a JSON chat completion", (0, 0)
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    tokens = (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, "the response has no choices", tokens
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is not None and not isinstance(content, str):
        return None, "the message content is not text", tokens
    return content, None, tokens


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _message(error: openai.APIStatusError) -> str:
    """The server's error message, with the API key blanked should a server echo it."""
    body = error.body
    inner = body.get("error", body) if isinstance(body, dict) else None
    text = str(inner["message"]) if isinstance(inner, dict) and inner.get("message") else str(error.message)
    return blank_key(text)


def blank_key(text: str) -> str:
    """``text`` with the API key (``OPENAI_API_KEY``) blanked as ``***``, should a server have echoed it."""
    key = os.environ.get("OPENAI_API_KEY")
    return text.replace(key, "***") if key else text


NO_KEY = "unused"


def make_client(settings: JudgeSettings, max_retries: int = 0) -> openai.AsyncOpenAI:
    """The OpenAI client: ``base_url`` (else ``OPENAI_BASE_URL``), the key from ``OPENAI_API_KEY``.

    Live judging retries, counts and honours ``Retry-After`` itself, so its client does not retry
    (``max_retries=0``); the batch path's few calls (upload, create, poll, download) use the client's own retries.
    A server that needs no key (vLLM, Ollama, the test server) gets a placeholder when ``OPENAI_API_KEY`` is unset;
    OpenAI's endpoint without it, or a URL that is not one, is an ``InputError`` (:func:`resolve_endpoint`).
    """
    endpoint = resolve_endpoint(settings.base_url)
    return openai.AsyncOpenAI(base_url=endpoint.url, api_key=endpoint.api_key or NO_KEY, max_retries=max_retries,
                              timeout=settings.timeout)


async def check_before_judging(client: openai.AsyncOpenAI, settings: JudgeSettings, own_client: bool) -> str:
    """Check the endpoint once (:func:`evalset.judge.endpoint.check_endpoint`); returns how it answered."""
    if own_client:
        endpoint = resolve_endpoint(settings.base_url)
    else:
        endpoint = Endpoint(str(client.base_url).rstrip("/"), "the client given",
                            None if client.api_key == NO_KEY else client.api_key)
    return await check_endpoint(client, settings.model, settings.timeout, endpoint, _message)


async def judge_pairs(tasks: list[dict], guideline: Guideline, template: PromptTemplate, settings: JudgeSettings,
                      journal: Journal, tick: Callable[[JudgeStats], None] = lambda stats: None,
                      client: openai.AsyncOpenAI | None = None) -> JudgeStats:
    """Ask for every task the journal has no answer for, ``settings.concurrency`` at a time; journal each answer.

    ``tasks`` are pool task records (``pair_id, query_id, doc_id, query, text``). ``tick`` is called after every
    answer and retry (for a progress bar). Returns this run's :class:`JudgeStats`. Answers the model gave are
    journaled; pairs that got none are in ``stats.unanswered`` only. Raises :class:`JudgeAborted` when the endpoint
    refuses the job and :class:`EndpointUnreachable` when it does not answer (before the first pair or later).
    """
    stats = JudgeStats(pairs=len(tasks))
    started = time.monotonic()
    if settings.retry_failed:
        journal.forget_failures()
    done = journal.answers()
    pending = [task for task in tasks if task["pair_id"] not in done]
    stats.already_answered = len(tasks) - len(pending)
    workers_count = max(1, settings.concurrency)
    # One client per WORKERS_PER_CLIENT workers: httpcore scans its whole connection pool on every request, so
    # one pool of 32 connections costs more CPU per request than eight pools of 4 (measured: bench_judge.py).
    own_clients = [] if client else [make_client(settings)
                                     for _ in range(-(-workers_count // WORKERS_PER_CLIENT))]
    clients = [client] if client else own_clients
    judge = _Judge(clients[0], settings, template, guideline, journal, stats, tick)
    queue: asyncio.Queue = asyncio.Queue()
    for task in pending:
        queue.put_nowait(task)

    async def worker(number: int) -> None:
        while not queue.empty():
            task = queue.get_nowait()
            answer = await judge.judge(task, clients[number % len(clients)])
            if answer.status == "unanswered":
                stats.unanswered.append(answer)
            else:
                journal.record(answer)
            stats.judged += answer.status == "judged"
            stats.failed += answer.status != "judged"
            tick(stats)

    try:
        if pending and settings.check_endpoint:
            stats.endpoint = await check_before_judging(clients[0], settings, own_client=not client)
        workers = [asyncio.create_task(worker(number)) for number in range(workers_count)]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for running in workers:
                running.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
    finally:
        for own in own_clients:
            await own.close()
        stats.seconds = time.monotonic() - started
    return stats


# --------------------------------------------------------------------------------------------------- labels
def label_source(settings_model: str, template: PromptTemplate, guideline: Guideline) -> str:
    """The ``source`` of every label: model, prompt template and guideline, each with its sha256."""
    return (f"model={settings_model};prompt={template.name}@sha256:{template.sha256};"
            f"guideline={guideline.name}-v{guideline.version}@sha256:{guideline.sha256}")


def labels_from_journal(tasks: list[dict], answers: dict[str, Answer], model: str, template: PromptTemplate,
                        guideline: Guideline) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The labels table (docs/design.md) and the failures table for ``tasks``, in judging order.

    Labels: ``query_id, doc_id, annotator`` (``llm:<model>``), ``kind`` (``llm``), ``grade``, ``source``
    (:func:`label_source`), ``labeled_at`` (when the answer arrived, UTC), ``comment`` (the model's reason, on
    one line). Failures: ``pair_id, query_id, doc_id, attempts, reason``. Tasks without an answer are in neither.
    """
    source = label_source(model, template, guideline)
    labels, failures = [], []
    for task in tasks:
        answer = answers.get(task["pair_id"])
        if answer is None:
            continue
        if answer.status == "judged":
            labels.append((task["query_id"], task["doc_id"], f"llm:{model}", "llm", answer.grade, source,
                           answer.answered_at, " ".join(answer.reason.split())))
        else:
            failures.append((task["pair_id"], task["query_id"], task["doc_id"], answer.attempts,
                             " ".join(answer.reason.split())))
    return (pd.DataFrame(labels, columns=list(LABELS_COLUMNS)).astype({"grade": "int64"}),
            pd.DataFrame(failures, columns=["pair_id", "query_id", "doc_id", "attempts", "reason"]))
