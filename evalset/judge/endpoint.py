"""The endpoint, checked before the first pair: a well-formed URL, a key where one is needed, a server that answers
and serves the model; and the rule that stops a run whose endpoint stopped answering.

Conventions (where the issue is silent):

- The URL is ``--base-url``, else ``OPENAI_BASE_URL``, else OpenAI's (``https://api.openai.com/v1``); it must be
  ``http(s)://host...``, else :class:`~evalset.errors.InputError` before anything is opened or sent.
- The key is ``OPENAI_API_KEY``. Unset, OpenAI's endpoint is refused at once (:class:`InputError`); another endpoint
  is asked without one (vLLM, Ollama and the test server need none) and, if it answers 401 or 403, the run stops
  saying that the key is not set.
- The check: ``GET /models``; if it lists the model, done (no token spent). Otherwise (no such route, the model not
  listed, a 403 for a key that may not list models, a body that is not a model list) one chat request of one
  token for the model. A 401 or 404 for it stops the run (:class:`JudgeAborted`); a 200 that is not a chat
  completion stops it (the URL is not the API's root); a 400, 429 or 5xx lets it start (the server is there; the
  pairs' own retries take over). A connection that fails is tried again after 0.5, 1 and 2 s, then the run stops
  (:class:`EndpointUnreachable`); a probe that times out (``--timeout``) stops it at once.
- During the run: every request that gets no usable answer (connection error, timeout, 5xx) counts; any other
  HTTP answer resets the count. When ``unreachable_after`` requests in a row got none and nothing has answered
  for ``unreachable_seconds``, the run stops with :class:`EndpointUnreachable` (exit 2) instead of spending every
  pair's retries; the answers so far are in the journal.
"""

from __future__ import annotations

import asyncio
import os
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

import openai

from evalset.errors import InputError, ServiceError
from evalset.params import is_http_url

OPENAI_URL = "https://api.openai.com/v1"
CONNECT_WAITS = (0.5, 1.0, 2.0)  # waits between the probe's attempts to connect: 4 attempts over 3.5 s


class JudgeAborted(ServiceError):
    """The endpoint refused the whole job (bad key, unknown model or route, a batch failed as a whole);
    ``asked``: whether a pair had been asked (the check before the first pair asks none)."""

    def __init__(self, message: str, asked: bool = True):
        super().__init__(message)
        self.asked = asked


class EndpointUnreachable(ServiceError):
    """The endpoint does not answer (connection refused, no route, timeouts, nothing but 5xx): the run stops."""


@dataclass(frozen=True)
class Endpoint:
    """Where requests go: ``url``, where it came from (``origin``) and the key (None when unset)."""

    url: str
    origin: str
    api_key: str | None


def resolve_endpoint(base_url: str | None) -> Endpoint:
    """The endpoint of ``base_url`` (else ``OPENAI_BASE_URL``, else OpenAI's), checked without a request.

    Raises :class:`InputError` for a URL that is not ``http(s)://host...`` and for OpenAI's endpoint without
    ``OPENAI_API_KEY``.
    """
    if base_url:
        url, origin = base_url, "--base-url"
    elif os.environ.get("OPENAI_BASE_URL"):
        url, origin = os.environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL"
    else:
        url, origin = OPENAI_URL, "the default endpoint"
    if not is_http_url(url):
        raise InputError(f"{origin} {url!r} is not an http(s) URL with a host (for example "
                         f"http://127.0.0.1:8000/v1 or {OPENAI_URL})")
    key = os.environ.get("OPENAI_API_KEY") or None
    if key is None and urllib.parse.urlsplit(url.strip()).hostname == "api.openai.com":
        raise InputError(f"OPENAI_API_KEY is not set, and {url} needs a key: export OPENAI_API_KEY=... (a server "
                         f"that needs no key, such as a local vLLM: --base-url)")
    return Endpoint(url.strip(), origin, key)


def describe_error(error: BaseException) -> str:
    """A connection or timeout error in a few words, from the deepest cause (``connection refused``, ...)."""
    if isinstance(error, openai.APITimeoutError):
        return "timed out"
    deepest, seen = error, {id(error)}
    while (cause := deepest.__cause__ or deepest.__context__) is not None and id(cause) not in seen:
        deepest = cause
        seen.add(id(cause))
    if isinstance(deepest, ConnectionRefusedError):
        return "connection refused"
    return f"{type(deepest).__name__}: {deepest}" if deepest is not error else type(error).__name__


async def check_endpoint(client: openai.AsyncOpenAI, model: str, timeout: float, endpoint: Endpoint,
                         message: Callable[[openai.APIStatusError], str]) -> str:
    """Ask the endpoint once before the first pair (see the module's conventions); returns how it answered.

    ``message`` turns an HTTP error into its printable message (the key blanked).
    """
    try:
        listed = await _request(client, "get", "/models", None, timeout, endpoint)
    except openai.AuthenticationError as error:
        raise JudgeAborted(_refusal(error, endpoint, message), asked=False) from None
    except (openai.APIStatusError, openai.APIResponseValidationError):
        listed = None  # no /models route, a key that may not list models, a server error: ask the model itself
    names = [item.get("id") for item in listed.get("data", []) if isinstance(item, dict)] \
        if isinstance(listed, dict) and isinstance(listed.get("data"), list) else []
    if model in names:
        return f"{endpoint.url} lists the model {model}"
    body = {"model": model, "messages": [{"role": "user", "content": "Answer OK."}], "temperature": 0,
            "max_completion_tokens": 1}
    try:
        answer = await _request(client, "post", "/chat/completions", body, timeout, endpoint)
    except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as error:
        listing = f"; it lists {len(names)} models: {', '.join(map(str, names[:5]))}" if names else ""
        if error.status_code == 404 and not names:  # a bare 404: often a URL without the API's root path
            listing = (f"; {endpoint.url} ({endpoint.origin}) has no chat completions route or no model {model}: is "
                       "it the API's root (for example .../v1), and is --model right?")
        raise JudgeAborted(_refusal(error, endpoint, message) + listing, asked=False) from None
    except (openai.APIStatusError, openai.APIResponseValidationError) as error:
        status = getattr(error, "status_code", "?")
        return f"{endpoint.url} answered a one-token request for {model} with HTTP {status}; starting anyway"
    if not (isinstance(answer, dict) and isinstance(answer.get("choices"), list)):
        raise JudgeAborted(f"{endpoint.url} ({endpoint.origin}) answered a chat request with something that is "
                           f"not a chat completion: is it the API's root (for example .../v1)?", asked=False)
    return f"{endpoint.url} answered a one-token request for {model}"


async def _request(client: openai.AsyncOpenAI, method: str, path: str, body: dict | None, timeout: float,
                   endpoint: Endpoint) -> object:
    """One probe request, its connection tried again after each of :data:`CONNECT_WAITS`."""
    started = time.monotonic()
    for attempt in range(len(CONNECT_WAITS) + 1):
        try:
            if method == "get":
                return await client.get(path, cast_to=object, options={"timeout": timeout, "max_retries": 0})
            return await client.post(path, body=body, cast_to=object, options={"timeout": timeout, "max_retries": 0})
        except openai.APITimeoutError:
            raise EndpointUnreachable(f"the endpoint {endpoint.url} ({endpoint.origin}) did not answer {path} within "
                                      f"{timeout:g} s (--timeout); nothing was asked") from None
        except openai.APIConnectionError as error:
            if attempt == len(CONNECT_WAITS):
                raise EndpointUnreachable(
                    f"cannot reach the endpoint {endpoint.url} ({endpoint.origin}): {describe_error(error)} "
                    f"({attempt + 1} attempts over {time.monotonic() - started:.1f} s); nothing was asked. Start "
                    f"the server or fix the URL, then run the same command again") from None
            await asyncio.sleep(CONNECT_WAITS[attempt])
    raise AssertionError("unreachable")


def _refusal(error: openai.APIStatusError, endpoint: Endpoint,
             message: Callable[[openai.APIStatusError], str]) -> str:
    text = f"HTTP {error.status_code}: {message(error)}"
    if error.status_code in (401, 403) and endpoint.api_key is None:
        text += "; OPENAI_API_KEY is not set"
    return text


class Health:
    """Whether the endpoint still answers: see the module's conventions (``unreachable_after`` requests in a row
    without a usable answer, and none for ``unreachable_seconds``)."""

    def __init__(self, endpoint_url: str, unreachable_after: int, unreachable_seconds: float):
        self.endpoint_url = endpoint_url
        self.unreachable_after, self.unreachable_seconds = unreachable_after, unreachable_seconds
        self.silent = 0
        self.last_answer = time.monotonic()

    def answered(self) -> None:
        """An HTTP answer other than a 5xx arrived."""
        self.silent = 0
        self.last_answer = time.monotonic()

    def no_answer(self, why: str, judged: int) -> None:
        """A request got no usable answer; raises :class:`EndpointUnreachable` when the endpoint looks gone."""
        self.silent += 1
        quiet = time.monotonic() - self.last_answer
        if self.silent >= self.unreachable_after and quiet >= self.unreachable_seconds:
            raise EndpointUnreachable(
                f"the endpoint {self.endpoint_url} stopped answering: no usable answer to the last {self.silent} "
                f"requests over {quiet:.0f} s (last: {why}); stopped. The {judged:,} pairs judged this run are in "
                f"the journal: run the same command again when the endpoint is back")
