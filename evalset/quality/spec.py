"""When a pull flags an annotator against gold (``evalset pull --gold-rule``): :class:`GoldPolicy`, its rules declared
in it. Light: the command line reads it before the quality checks load."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from evalset.params import POSITIVE_INT, Constraint, Interval, check_fields


@dataclass(frozen=True)
class GoldPolicy:
    """When an annotator is flagged: ``kappa_linear < min_kappa`` on at least ``min_gold`` gold answers (each
    checked against :data:`RULES`)."""

    min_gold: int = 20
    min_kappa: float = 0.4

    RULES: ClassVar[dict[str, Constraint]] = {"min_gold": POSITIVE_INT, "min_kappa": Interval(float, -1, 1)}

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)

    def describe(self) -> str:
        return (f"flagged when linear kappa against gold < {self.min_kappa:.2f} on at least {self.min_gold} gold "
                f"answers; fewer answers: not enough gold")
