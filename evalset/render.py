"""Rendering for people and for JSON: aligned text tables, numbers, and JSON-safe values.

Conventions
-----------
- An undefined value (``None``, NaN) is printed as :data:`UNDEFINED` (``undef``) everywhere, and written to
  JSON as ``null``; a non-finite value is never written to JSON (it would not be valid JSON).
- Text tables are columns separated by two spaces, left-aligned unless a column is named right-aligned,
  with no trailing white space.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

UNDEFINED = "undef"
"""How an undefined value is printed (a mean over no defined query, a kappa with no variation, ...)."""


def is_undefined(value: Any) -> bool:
    """Whether ``value`` is None or NaN."""
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def number(value: Any, digits: int = 4, *, sign: bool = False) -> str:
    """``value`` with ``digits`` decimals (``sign``: always with its sign), or :data:`UNDEFINED`."""
    if is_undefined(value):
        return UNDEFINED
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def counted(count: int, singular: str, plural: str | None = None, grouped: bool = False) -> str:
    """``count`` and the noun that agrees with it: ``1 grade``, ``0 grades``, ``2 pool tasks``; ``plural``
    when adding ``s`` is wrong (``counted(2, "pair has", "pairs have")``); ``grouped``: thousands separated
    (``2,495 pairs``)."""
    noun = singular if count == 1 else plural or singular + "s"
    return f"{count:,} {noun}" if grouped else f"{count} {noun}"


def text_table(rows: Sequence[Sequence[Any]], right: Collection[int] = ()) -> list[str]:
    """Lines of an aligned table (the first row is usually the header); ``right`` are the indices of the
    right-aligned columns. Cells are turned into text with ``str``."""
    cells = [[str(cell) for cell in row] for row in rows]
    if not cells:
        return []
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return ["  ".join(cell.rjust(width) if i in right else cell.ljust(width)
                      for i, (cell, width) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in cells]


def json_safe(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers, NaN and infinities as None, tuples as lists, recursively
    through dicts and lists."""
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def records(frame: Any) -> list[dict[str, Any]] | None:
    """A frame's rows as JSON-safe records (:func:`json_safe`): a result's table in its ``--format json`` (no frame:
    None)."""
    return None if frame is None else json_safe(frame.to_dict("records"))


def fields_dict(instance: Any) -> dict[str, Any]:
    """A result's dataclass fields as JSON (:func:`json_safe`): a frame as its rows (records), a nested dataclass by
    its own ``to_dict`` or fields, a path as text. The ``--format json`` of a result that has no layout of its own."""
    import dataclasses
    import os

    import pandas as pd

    def plain(value: Any) -> Any:
        if isinstance(value, pd.DataFrame):
            return records(value)
        if hasattr(value, "to_dict") and dataclasses.is_dataclass(value):
            return value.to_dict()
        if dataclasses.is_dataclass(value):
            return fields_dict(value)
        if isinstance(value, (list, tuple)):
            return [plain(item) for item in value]
        if isinstance(value, (frozenset, set)):
            return sorted(plain(item) for item in value)
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    return json_safe({field.name: plain(getattr(instance, field.name)) for field in dataclasses.fields(instance)})


def quiet_matplotlib() -> None:
    """Matplotlib on its file backend (Agg), its font manager's warnings off: on a fresh machine its first use builds
    the font cache and logs a ``findfont`` line per font family it lacks, which would land in a command's output."""
    import logging

    import matplotlib

    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    matplotlib.use("Agg")
