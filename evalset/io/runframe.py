"""A run given as a DataFrame (``query_id, doc_id, score[, rank]``), validated and normalised: the one check of a
run's values for every reader that builds a frame first (:mod:`evalset.io.tablerun`, :mod:`evalset.io.frames`) and
for a run made in Python.

Conventions
-----------
- Ids become strings; a score must be a finite number and a rank an integer (a float that is one, ``3.0``, is
  read as it); without a ``rank`` column, ranks are the row order within each query (1-based).
- A bad value is named by its row (0-based), or by its line in the source file when the reader gives the row's
  line (``line_of``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from evalset.errors import InputError


def run_from_frame(frame: pd.DataFrame, source: str = "<DataFrame>",
                   line_of: Callable[[int], int] | None = None) -> pd.DataFrame:
    """Validate a run given as a DataFrame (``query_id, doc_id, score[, rank]``) and normalise it.

    Without a ``rank`` column, ranks are the row order within each query (1-based). A bad value is named by its
    row (0-based), or by its line in ``source`` when ``line_of`` (row -> line number) is given.
    """
    missing = [c for c in ("query_id", "doc_id", "score") if c not in frame.columns]
    if missing:
        raise InputError(f"run is missing column(s) {', '.join(missing)}", source)
    out = pd.DataFrame({"query_id": frame["query_id"].astype(str), "doc_id": frame["doc_id"].astype(str)})
    score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(score))
    if bad.size:
        _refuse_value(f"score must be a finite number, found {plain_value(frame['score'].iloc[bad[0]])!r}",
                      int(bad[0]), source, line_of)
    if "rank" in frame.columns:
        rank = pd.to_numeric(frame["rank"], errors="coerce")
        if rank.isna().any() or (rank != rank.round()).any():
            row = int(np.flatnonzero((rank.isna() | (rank != rank.round())).to_numpy())[0])
            _refuse_value(f"rank must be an integer, found {plain_value(frame['rank'].iloc[row])!r}", row, source,
                          line_of)
        out["rank"] = rank.to_numpy(dtype=np.int64)
    else:
        out["rank"] = out.groupby("query_id").cumcount().to_numpy(dtype=np.int64) + 1
    out["score"] = score
    return out.reset_index(drop=True)


def plain_value(value: object) -> object:
    """A numpy scalar as the Python number it holds (``inf``, not ``np.float64(inf)``, in a message)."""
    return value.item() if isinstance(value, np.generic) else value


def _refuse_value(message: str, row: int, source: str, line_of: Callable[[int], int] | None) -> None:
    if line_of is None:
        raise InputError(f"{message} (row {row})", source)
    raise InputError(message, source, line_of(row))
