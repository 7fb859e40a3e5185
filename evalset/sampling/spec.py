"""What ``evalset sample`` is asked, its rules declared once beside their owners: the log's layout
(:class:`LogLayout`, with its own rules) and the stage's parameters (:data:`SAMPLE_RULES`, which
:func:`evalset.sampling.sample_log` applies). Light: the command line reads it before the stage loads."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from evalset.contract import COUNT_BY, ENGINES, LOG_FORMATS
from evalset.params import SEED, Choice, Constraint, Interval, Length, check_fields

LOG_COLUMN = Length(1, 1_000)
"""A query log's column: its name, or its 1-based position written as digits."""
SAMPLE_RULES: dict[str, Constraint] = {"count_by": Choice(COUNT_BY), "seed": SEED,
                                       "holdout": Interval(float, 0, 1, closed="left"), "engine": Choice(ENGINES)}
"""evalset.sampling.sample_log (and sample_queries: seed, holdout)."""


@dataclasses.dataclass(frozen=True)
class LogLayout:
    """How a query log is laid out: its ``format`` (None: from the file name, ``.log`` is TSV), whether its first
    line is a ``header`` (``"no"``: columns are 1-based positions), the column of each field (``query`` required;
    ``count`` of a pre-aggregated log, ``user_id``, ``source``: the log's own stratum, e.g. agent/human; None: the
    log has none), and the strptime format of its timestamps (None: ISO 8601; ``%y%m%d%H%M%S`` for Excite)."""

    format: str | None = None
    header: str = "yes"
    query: str = "query"
    count: str | None = None
    timestamp: str | None = None
    timestamp_format: str | None = None
    user_id: str | None = None
    source: str | None = None

    RULES: ClassVar[dict[str, Constraint]] = {
        "format": Choice(LOG_FORMATS), "header": Choice(("yes", "no")), "query": LOG_COLUMN, "count": LOG_COLUMN,
        "timestamp": LOG_COLUMN, "timestamp_format": Length(1, 200), "user_id": LOG_COLUMN, "source": LOG_COLUMN}

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)
