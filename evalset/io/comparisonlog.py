"""A set's comparison log, ``SETS/NAME/comparisons.jsonl``: every comparison made on a set, beside its frozen
version folders (which are never rewritten). What counts it is :mod:`evalset.stats.family`'s rule; who reads
and appends it, :mod:`evalset.comparing.setlog`."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalset.errors import InputError

LOG_NAME = "comparisons.jsonl"


@dataclass(frozen=True)
class ComparisonLog:
    """The comparisons made on one version and split of a set, in ``SETS/NAME/comparisons.jsonl``."""

    path: Path
    version: str
    split: str

    @classmethod
    def of_set(cls, set_path: str | os.PathLike, split: str) -> ComparisonLog:
        """The log of the set version folder ``set_path`` (``SETS/NAME/vN``) on ``split``."""
        set_path = Path(set_path)
        return cls(set_path.parent / LOG_NAME, set_path.name, split)

    def made(self) -> set[tuple[str, str, str]]:
        """The distinct (baseline, candidate, metric) comparisons logged on this version and split."""
        return {(record["baseline"], record["candidate"], record["metric"]) for record in self.records()}

    def records(self) -> list[dict[str, Any]]:
        """The comparisons logged on this version and split, in the order they were made."""
        if not self.path.exists():
            return []
        records = []
        for number, line in enumerate(self.path.read_text().splitlines(), 1):
            try:
                record = json.loads(line)
                if record.get("version") == self.version and record.get("split") == self.split:
                    records.append(record | {key: record[key] for key in ("baseline", "candidate", "metric")})
            except (json.JSONDecodeError, KeyError, AttributeError, TypeError) as exc:
                raise InputError(f"not a comparison record: {exc}", str(self.path), number) from None
        return records

    def refuse_unwritable(self) -> None:
        """Refuse, before any work, a log that cannot be appended to (a set on a read-only share): one line
        naming it and what to do."""
        target = self.path if self.path.exists() else self.path.parent
        if not os.access(target, os.W_OK):
            raise InputError("cannot be written (read-only, or not yours): compare --set logs every comparison it "
                             "makes beside the set; copy the set folder somewhere writable (a copy verifies: "
                             "evalset verify) and compare there", str(self.path))

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one comparison (``baseline, candidate, metric`` and what else it records), stamped with this
        log's version and split; a failed write (a full disk) is one line naming the log."""
        line = json.dumps({"version": self.version, "split": self.split, **record}, sort_keys=True) + "\n"
        size = self.path.stat().st_size if self.path.exists() else None
        try:
            with open(self.path, "a") as handle:
                handle.write(line)
        except OSError as exc:
            with contextlib.suppress(OSError):  # nothing half-written: the log as it was
                os.truncate(self.path, size) if size is not None else os.unlink(self.path)
            raise InputError(f"cannot log the comparison: {exc.strerror or exc}", str(self.path)) from None
