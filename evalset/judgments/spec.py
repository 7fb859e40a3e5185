"""What a frozen set's merge is told (``evalset freeze --merge``): :class:`MergePolicy`, its rules declared in it.
Light: the command line reads it before the merge loads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from evalset.contract import GOLD_RATE_MAX, MERGE_RULES
from evalset.params import NON_NEGATIVE_INT, SEED, Choice, Constraint, Interval, Length, check_fields

GOLD_PUSH_RULES: dict[str, Constraint] = {"rate": Interval(float, 0, GOLD_RATE_MAX, closed="right"), "seed": SEED}
"""evalset.quality.gold.prepare_gold_push and plan_gold."""


ANNOTATOR_NAMES = Length(1, 10_000)
"""Annotators' names separated by commas."""


@dataclass(frozen=True)
class MergePolicy:
    """How a frozen set merges the grades of one pair (:mod:`evalset.judgments.merging`'s conventions; ``max_gap``
    0: any two different grades are unresolved): the ``rule``, whether LLM grades take part (``llm``: ``"yes"`` or
    ``"no"``), the widest spread of grades that still merges (``max_gap``; None: any), the ``priority`` of
    ``annotator-priority`` and the annotators to ``exclude`` (names separated by commas)."""

    rule: str = "median"
    llm: str = "no"
    max_gap: int | None = 2
    priority: str | None = None
    exclude: str | None = None

    RULES: ClassVar[dict[str, Constraint]] = {
        "rule": Choice(MERGE_RULES), "llm": Choice(("no", "yes")), "max_gap": NON_NEGATIVE_INT,
        "priority": ANNOTATOR_NAMES, "exclude": ANNOTATOR_NAMES}

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)

    @property
    def allow_llm(self) -> bool:
        return self.llm == "yes"

    @property
    def priorities(self) -> list[str] | None:
        return _names(self.priority) or None

    @property
    def excluded(self) -> list[str]:
        return _names(self.exclude)


def _names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]
