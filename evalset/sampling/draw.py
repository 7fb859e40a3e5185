"""The draw: a fixed number of queries per stratum, seeded per stratum, with a held-out test share.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.params import NON_NEGATIVE_INT, POSITIVE_INT, check, validate_params
from evalset.sampling.options import QueryCounts
from evalset.sampling.spec import SAMPLE_RULES
from evalset.seeds import generator


def parse_per_stratum(text: str) -> int | dict[str, int]:
    """``50`` (every stratum) or ``head=100,torso=50,tail=20`` (by stratum or traffic-stratum name)."""
    try:
        if "=" not in text:
            return int(text)
        pairs = (part.split("=", 1) for part in text.split(",") if part.strip())
        return {name.strip(): int(count) for name, count in pairs}
    except ValueError:
        raise InputError(f"per-stratum count must be a number or name=number pairs, not {text!r}") from None


def check_per_stratum(per_stratum: int | Mapping[str, int]) -> int | Mapping[str, int]:
    """``per_stratum`` if it asks for some query: a positive count, or counts by name that are not negative and
    not all 0 (a sample of no query is refused, not written as a header-only file)."""
    if not isinstance(per_stratum, Mapping):
        return check("per_stratum", per_stratum, POSITIVE_INT)
    for name, count in per_stratum.items():
        check(f"per_stratum {name}", count, NON_NEGATIVE_INT)
    if not any(per_stratum.values()):
        raise InputError("per_stratum must ask for at least one query, got 0 for every stratum")
    return per_stratum


def _refuse_unknown_strata(per_stratum: int | Mapping[str, int], strata: list[str]) -> None:
    """Refuse a per-stratum count of a name that is no stratum (``foo=2``): a typo would sample nothing there."""
    if isinstance(per_stratum, int):
        return
    known = {*strata, *(stratum.rsplit("/", 1)[-1] for stratum in strata)}
    unknown = [name for name in per_stratum if name not in known]
    if unknown:
        raise InputError(f"--per-stratum names {', '.join(map(repr, unknown))}, which is no stratum of this log "
                         f"(its strata: {', '.join(strata)})")


def _count_for(stratum: str, per_stratum: int | Mapping[str, int]) -> int:
    if isinstance(per_stratum, int):
        count = per_stratum
    elif stratum in per_stratum:
        count = per_stratum[stratum]
    elif stratum.rsplit("/", 1)[-1] in per_stratum:
        count = per_stratum[stratum.rsplit("/", 1)[-1]]
    else:
        raise InputError(f"no per-stratum count for stratum {stratum!r}")
    return check(f"the per-stratum count of {stratum!r}", count, NON_NEGATIVE_INT)


@validate_params({name: SAMPLE_RULES[name] for name in ("seed", "holdout")})
def sample_queries(counts: QueryCounts, per_stratum: int | Mapping[str, int], *, seed: int = DEFAULT_SEED,
                   holdout: float = 0.0) -> pd.DataFrame:
    """Draw queries uniformly among the distinct queries of each stratum, without replacement.

    Returns the ``queries.tsv`` frame (``query_id, query, stratum, frequency, stratum_share, weight, split``),
    strata in order, then by ``query_id``. ``weight`` is the stratum's traffic share / queries drawn in it;
    ``split`` marks ``round(holdout * n)`` of each stratum's n drawn queries ``test`` (the rest ``dev``), so a
    stratum keeps its size whatever the holdout. Raises InputError before drawing anything if a stratum is
    smaller than its count.
    """
    check_per_stratum(per_stratum)
    summary = counts.summary
    _refuse_unknown_strata(per_stratum, list(summary["stratum"]))
    wanted = {row.stratum: _count_for(row.stratum, per_stratum) for row in summary.itertuples()}
    for row in summary.itertuples():
        if wanted[row.stratum] > row.distinct_queries:
            raise InputError(f"stratum {row.stratum!r} has {row.distinct_queries} distinct queries, "
                             f"fewer than the {wanted[row.stratum]} asked for (--per-stratum)")
    codes = counts.stratum_code
    parts = [_draw(counts, np.flatnonzero(codes == index), row, wanted[row.stratum], seed, holdout)
             for index, row in enumerate(summary.itertuples()) if wanted[row.stratum]]
    if not parts:
        return pd.DataFrame(columns=["query_id", "query", "stratum", "frequency", "stratum_share", "weight",
                                     "split"])
    return pd.concat(parts, ignore_index=True)


def _draw(counts: QueryCounts, positions: np.ndarray, row, size: int, seed: int, holdout: float) -> pd.DataFrame:
    """Draw ``size`` of the queries at ``positions`` (one stratum) in query_id order; mark the test split."""
    rng = generator(seed, zlib.crc32(row.stratum.encode("utf-8")))
    keys = counts.id_keys[positions]
    if len(keys) > 1 and not np.all(keys[1:] > keys[:-1]):
        positions = positions[np.argsort(keys, kind="stable")]
    picked = positions[np.sort(rng.choice(len(positions), size=size, replace=False))]
    texts = counts.texts.take(pa.array(counts.text_row[picked]))
    split = np.full(size, "dev", dtype=object)
    split[rng.permutation(size)[: math.floor(holdout * size + 0.5)]] = "test"
    return pd.DataFrame({
        "query_id": texts["query_id"].to_pylist(), "query": texts["query"].to_pylist(), "stratum": row.stratum,
        "frequency": counts.frequency[picked].astype(np.int64), "stratum_share": row.traffic_share,
        "weight": row.traffic_share / size, "split": split,
    })
