"""The slice record (``slice.json``) of ``evalset estimate select``, which ``evalset estimate run slice --slice``
reads back.

The record holds evalset's version (stamped by the writer, :func:`evalset.estimate.slicing.write_slice_pool`), the
design (``uniform``, ``stratified``), the seed, the design's setting (``size``,
``per_stratum`` or ``fraction``), the pool it was cut from (``source``: path and sha256 of its ``pool.tsv``),
the slice's query ids, and every query of the set with its stratum, share and whether it is in the slice.
:mod:`evalset.estimate.slicing` says how a slice is drawn.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalset.errors import InputError
from evalset.io.files import check_file

RECORD_NAME = "slice.json"


@dataclass(frozen=True)
class SliceRecord:
    """A drawn slice: ``queries`` (``query_id, stratum, stratum_share``: every query of the set) and ``slice``
    (the query ids humans grade, sorted), with how they were drawn."""

    design: str
    seed: int | None  # None: not drawn here (a frozen set's human-graded queries, taken as the slice)
    queries: pd.DataFrame
    slice: tuple[str, ...]
    settings: dict[str, Any]
    source: dict[str, Any]

    @property
    def in_slice(self) -> pd.Series:
        """Per query of ``queries`` (same order), whether it is in the slice."""
        return self.queries["query_id"].isin(self.slice)

    def to_dict(self) -> dict[str, Any]:
        """The record as ``slice.json`` holds it, but for evalset's version."""
        return {"design": self.design, "seed": self.seed, **self.settings,
                "source": self.source, "slice": list(self.slice),
                "queries": self.queries.assign(in_slice=self.in_slice).to_dict(orient="records")}

    def summary(self) -> str:
        counts = self.queries.assign(in_slice=self.in_slice).groupby("stratum", sort=True)["in_slice"]
        strata = ", ".join(f"{s} {int(c.sum())}/{len(c)}" for s, c in counts)
        return (f"{len(self.slice)} of {len(self.queries)} queries in the human slice ({self.how}; per stratum: "
                f"{strata})")

    @property
    def how(self) -> str:
        """How the slice was drawn, in words: its design and seed."""
        return self.design if self.seed is None else f"{self.design}, seed {self.seed}"


def read_slice(path: str | os.PathLike) -> SliceRecord:
    """Read a slice record (a ``slice.json``, or a slice's pool folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / RECORD_NAME
    check_file(str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        queries = pd.DataFrame(data["queries"])[["query_id", "stratum", "stratum_share"]]
        record = SliceRecord(str(data["design"]), int(data["seed"]), queries.astype(
            {"query_id": str, "stratum": str, "stratum_share": float}), tuple(map(str, data["slice"])),
            {k: data[k] for k in ("size", "per_stratum", "fraction") if k in data}, data.get("source", {}))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(f"not a slice record ({type(exc).__name__}: {exc}); expected the slice.json written by "
                         "`evalset estimate select`", str(path)) from None
    stray = sorted(set(record.slice) - set(record.queries["query_id"]))
    if stray:
        raise InputError(f"slice query {stray[0]} is not among the record's queries", str(path))
    if len(record.slice) < 2:
        raise InputError(f"a slice of {len(record.slice)} queries: an interval needs at least 2", str(path))
    return record
