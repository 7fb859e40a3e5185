"""A set's comparison family with its log: the log read and appended through :mod:`evalset.io.comparisonlog`, the
family's rule kept pure in :mod:`evalset.stats.family` (which reads and writes no file).

Conventions
-----------
- On a set, the family is given the distinct comparisons its log (``SETS/NAME/comparisons.jsonl``) holds on the
  version and split (:func:`set_family`); without a set it has no log, and nothing is recorded.
- A comparison recorded (:func:`record_comparison`: ``compare --set`` records each one) is appended to the log as
  it is made, stamped with the version, the split and the time (UTC, to the second), and counted in the family
  that decides the next one.
- ``report``, ``plan`` and ``estimate`` read the log (their thresholds are the ones ``compare`` would use) and
  record nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from evalset.io.comparisonlog import ComparisonLog
from evalset.stats.family import ComparisonFamily
from evalset.stats.paired import Comparison


class LoggedSet(Protocol):
    """What a set's family needs of it (:class:`evalset.io.setfolder.FrozenSet` is one): its version folder, whose
    parent holds the log, and its planned comparisons."""

    @property
    def path(self) -> Path: ...

    @property
    def planned(self) -> list[tuple[str, str]]: ...


def set_family(asked: int, *, planned: int | None = None, frozen: LoggedSet | None = None,
               split: str = "test") -> ComparisonFamily:
    """:meth:`ComparisonFamily.of <evalset.stats.family.ComparisonFamily.of>` of ``asked`` comparisons on the set
    ``frozen`` (its planned list, and the comparisons its log holds on ``split``) or on no set; ``planned`` (a
    positive integer) overrides the planned count."""
    made = ComparisonLog.of_set(frozen.path, split).made() if frozen is not None else None
    return ComparisonFamily.of(asked, planned=planned, frozen=frozen, made=made)


def refuse_unlogged(frozen: LoggedSet | None, split: str = "test") -> None:
    """Refuse, before a comparison is made, a set whose log cannot take it (:meth:`ComparisonLog.
    refuse_unwritable`); nothing without a set."""
    if frozen is not None:
        ComparisonLog.of_set(frozen.path, split).refuse_unwritable()


def record_comparison(family: ComparisonFamily, result: Comparison, frozen: LoggedSet | None,
                      split: str = "test") -> ComparisonFamily:
    """Append ``result`` to the log of the set ``frozen`` on ``split`` (nothing without a set) and return the
    family that counts it (:meth:`~evalset.stats.family.ComparisonFamily.after`)."""
    if frozen is None:
        return family
    at = datetime.now(UTC).replace(microsecond=0).isoformat()
    ComparisonLog.of_set(frozen.path, split).append({**family.log_record(result), "at": at})
    return family.after(result)
