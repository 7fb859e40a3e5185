"""What an ``evalset judge`` job is told, its rules declared once beside their owners: the client's settings
(:class:`JudgeSettings`, with its own rules), the prices of a job's cost line (:data:`PRICE_RULES`), a grading job's
and a probe's parameters (:data:`JUDGE_JOB_RULES`, :data:`PROBE_RULES`, which :func:`evalset.judge.job.judge_pool`
and :func:`evalset.judge.probing.probe_pool` apply). Light: the command line reads it before the client loads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from evalset.contract import DEFAULT_SEED, SECONDS, STRUCTURED_OUTPUT
from evalset.params import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    POSITIVE_NUMBER,
    PROBABILITY,
    RESAMPLES,
    SEED,
    Choice,
    Constraint,
    Interval,
    Length,
    check_fields,
)

PRICE_RULES: dict[str, Constraint] = {"price_in": POSITIVE_NUMBER, "price_out": POSITIVE_NUMBER}
"""The prices per million tokens of a job's cost line (judge_pool, probe_pool)."""
JUDGE_JOB_RULES: dict[str, Constraint] = {"limit": POSITIVE_INT, "poll_seconds": SECONDS, **PRICE_RULES}
"""evalset.judge.job.judge_pool."""
PROBE_RULES: dict[str, Constraint] = {"size": POSITIVE_INT, "rel": POSITIVE_INT, "seed": SEED, "resamples": RESAMPLES,
                                      "level": PROBABILITY, **PRICE_RULES}
"""evalset.judge.probing.probe_pool (rel, a grade, is also checked against the guideline's scale)."""


@dataclass
class JudgeSettings:
    """How to ask: the model and the client's pace and patience; each number checked against :data:`RULES` (at most
    1,000 requests in flight: each worker holds a connection)."""

    model: str
    base_url: str | None = None
    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    timeout: float = 60.0
    max_retries: int = 6
    max_invalid: int = 2
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    structured: str = "auto"
    max_tokens: int | None = None
    seed: int = DEFAULT_SEED
    retry_failed: bool = False
    check_endpoint: bool = True
    unreachable_after: int = 5
    unreachable_seconds: float = 15.0

    RULES: ClassVar[dict[str, Constraint]] = {
        "model": Length(1, 400),  # an empty name would label every grade ``llm:``
        "concurrency": Interval(int, 1, 1_000), "rpm": POSITIVE_NUMBER, "tpm": POSITIVE_NUMBER, "timeout": SECONDS,
        "max_retries": NON_NEGATIVE_INT, "max_invalid": NON_NEGATIVE_INT, "backoff_base": SECONDS,
        "backoff_cap": SECONDS, "structured": Choice(STRUCTURED_OUTPUT), "max_tokens": POSITIVE_INT, "seed": SEED,
        "unreachable_after": POSITIVE_INT, "unreachable_seconds": SECONDS}

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)
