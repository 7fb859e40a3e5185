"""What a sampling run is told and what it hands on: normalisation, strata, time window, screening rules,
the counted queries and the result.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools

import numpy as np
import pandas as pd
import pyarrow as pa

from evalset.errors import InputError
from evalset.speed.parallel import parallel_map

# Window and column reasons first, then text reasons in the order they are tested (a query is counted once,
# under the first reason that applies).
WINDOW_REASONS = ("unparsable_timestamp", "outside_window", "no_user_id", "no_source")
TEXT_REASONS = ("empty", "credential_url", "email", "payment_card", "phone", "long_digits", "blocklist",
                "excluded")
DROP_REASONS = WINDOW_REASONS + TEXT_REASONS


@dataclasses.dataclass(frozen=True)
class Normalisation:
    """How a raw query becomes the normalised query that is counted and written.

    Tabs and line breaks always become spaces and the ends are always trimmed (queries.tsv has no quoting).
    """

    lowercase: bool = True
    nfkc: bool = True
    collapse_whitespace: bool = True

    @classmethod
    def parse(cls, text: str) -> Normalisation:
        """From a comma list of ``case``, ``nfkc``, ``space``, or ``none``."""
        steps = {part.strip() for part in text.split(",") if part.strip()}
        unknown = steps - {"case", "nfkc", "space", "none"}
        if unknown:
            raise InputError(f"unknown normalisation step(s) {', '.join(sorted(unknown))}; "
                             f"expected case, nfkc, space or none")
        return cls("case" in steps, "nfkc" in steps, "space" in steps)


@dataclasses.dataclass(frozen=True)
class Strata:
    """Traffic strata: names and the cumulative traffic share at which each but the last ends."""

    names: tuple[str, ...] = ("head", "torso", "tail")
    cuts: tuple[float, ...] = (1 / 3, 2 / 3)

    def __post_init__(self) -> None:
        if len(self.names) != len(self.cuts) + 1 or len(set(self.names)) != len(self.names):
            raise InputError("strata need distinct names and one cut point fewer than names")
        if any(not 0 < c < 1 for c in self.cuts) or list(self.cuts) != sorted(set(self.cuts)):
            raise InputError("cut points must be increasing shares strictly between 0 and 1")
        if any(not n or "/" in n or not n.isprintable() or n.strip() != n for n in self.names):
            raise InputError("stratum names must be printable, without '/' or surrounding spaces")

    @classmethod
    def parse(cls, text: str) -> Strata:
        """From ``head:0.5,torso:0.8,tail``: each name with the share where it ends, the last without; a refusal
        quotes ``text``."""
        try:
            return cls._parse(text)
        except InputError as exc:
            raise InputError(f"strata {text!r}: {exc.message}") from None

    @classmethod
    def _parse(cls, text: str) -> Strata:
        parts = [part.strip() for part in text.split(",")]
        names, cuts = [], []
        for part in parts[:-1]:
            name, _, share = part.partition(":")
            try:
                cuts.append(float(share))
            except ValueError:
                raise InputError(f"stratum {part!r} needs a cut point, as in head:0.5") from None
            names.append(name.strip())
        if ":" in parts[-1]:
            raise InputError(f"the last stratum ({parts[-1]!r}) takes the rest of the traffic: no cut point")
        return cls(tuple([*names, parts[-1]]), tuple(cuts))


@dataclasses.dataclass(frozen=True)
class Window:
    """A time window ``since <= timestamp < until`` (naive datetimes, as written in the log).

    ``timestamp_format`` is a strptime format (``%y%m%d%H%M%S`` for the Excite log); ``None`` reads ISO 8601
    (:func:`~evalset.sampling.sample_log` takes it from the log's :class:`LogLayout`).
    """

    since: dt.datetime | None = None
    until: dt.datetime | None = None
    timestamp_format: str | None = None

    @property
    def active(self) -> bool:
        return self.since is not None or self.until is not None


@dataclasses.dataclass(frozen=True)
class Screen:
    """Extra exclusions on top of the built-in empty/PII rules.

    ``blocklist`` holds terms (matched as whole words, case-insensitively); ``excluded`` holds queries that
    are dropped when their normalised form is equal (e.g. the queries of an earlier evaluation set).
    """

    blocklist: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()


@dataclasses.dataclass
class QueryCounts:
    """Counted, screened and stratified queries of a log: one row per (source, normalised query), ordered by
    source, stratum (traffic order), query_id.

    ``queries`` is that table as a frame (``query_id, query, source, frequency, stratum``; ``source`` and
    ``stratum`` categorical), built on first use. The counts are held as arrays in that order (``source_code``
    into ``source_names``, ``tier`` into ``strata.names``, ``frequency``, and ``id_keys``, which sort like the
    ids), the texts as the rows ``text_row`` of ``texts`` (``query_id, query``, in any order): drawing a few
    queries from millions copies a few texts. ``dropped`` counts submissions by reason (every reason of
    ``DROP_REASONS``, zeros included); ``rows_read`` are all submissions read, kept and dropped.
    """

    texts: pa.Table
    text_row: np.ndarray
    source_code: np.ndarray
    source_names: list[str]
    tier: np.ndarray
    frequency: np.ndarray
    id_keys: np.ndarray
    dropped: dict[str, int]
    rows_read: int
    count_by: str
    strata: Strata

    @property
    def stratum_names(self) -> list[str]:
        """Every traffic stratum of every source (a source's as ``source/stratum``), in ``stratum_code`` order."""
        return [name if source == "" else f"{source}/{name}" for source in self.source_names or [""]
                for name in self.strata.names]

    @property
    def stratum_code(self) -> np.ndarray:
        return self.source_code * len(self.strata.names) + self.tier

    @functools.cached_property
    def queries(self) -> pd.DataFrame:
        rows = pa.array(self.text_row)
        query_id, query = parallel_map(lambda name: self.texts[name].take(rows).to_pandas(), ["query_id", "query"])
        return pd.DataFrame({
            "query_id": query_id.reset_index(drop=True),
            "query": query.reset_index(drop=True),
            "source": pd.Categorical.from_codes(self.source_code, categories=list(self.source_names)),
            "frequency": self.frequency.astype(np.int64),
            "stratum": pd.Categorical.from_codes(self.stratum_code, categories=self.stratum_names),
        })

    @functools.cached_property
    def summary(self) -> pd.DataFrame:
        """Per stratum (empty ones included): ``stratum, distinct_queries, traffic, traffic_share`` (share of
        all kept traffic)."""
        names = self.stratum_names
        sizes = np.bincount(self.stratum_code, minlength=len(names))
        traffic = np.rint(np.bincount(self.stratum_code, weights=self.frequency, minlength=len(names)))
        traffic = traffic.astype(np.int64)  # exact: float64 sums integers exactly below 2**53
        total = int(traffic.sum())
        return pd.DataFrame({"stratum": names, "distinct_queries": sizes.astype(np.int64), "traffic": traffic,
                             "traffic_share": traffic / total if total else np.zeros(len(names))})


@dataclasses.dataclass(frozen=True)
class SampleResult:
    """What :func:`sample_log` returns: the ``queries.tsv`` frame, the counts behind it and the manifest.

    ``to_text()`` is what ``evalset sample`` prints before the files it wrote: submissions read and dropped by
    reason, distinct queries, and each stratum's queries, traffic and sample; ``to_dict()`` is the manifest.
    """

    queries: pd.DataFrame
    counts: QueryCounts
    manifest: dict

    @property
    def notes(self) -> list[str]:
        """A sample with no query in the test split (``holdout`` 0): said, since a set frozen from it scores its
        test split by default and would find none; a timestamp column read without a window: its values are not
        checked (only a window parses them)."""
        notes = []
        if len(self.queries) and not (self.queries["split"] == "test").any():
            notes.append("warning: no query is in the test split (--holdout 0, the default): every sampled query is "
                         "dev; a set frozen from it is scored with --split dev or --split all, or give --holdout "
                         "(e.g. 0.5: that share of each stratum's sample held out for test)")
        window = self.manifest.get("window", {})
        if self.manifest.get("columns", {}).get("timestamp") and window.get("since") is None and \
                window.get("until") is None:
            notes.append("note: the timestamp column is read only for a time window (--since, --until): without "
                         "one its values are neither parsed nor checked")
        return notes

    def to_dict(self) -> dict:
        return self.manifest

    def to_text(self) -> str:
        counts, manifest = self.counts, self.manifest
        dropped = ", ".join(f"{reason} {n:,}" for reason, n in counts.dropped.items() if n) or "none"
        lines = [
            f"read {counts.rows_read:,} submissions ({manifest['engine']}); kept "
            f"{manifest['submissions']['kept']:,}; dropped: {dropped}",
            f"{len(counts.frequency):,} distinct normalised queries, counted by {counts.count_by}",
        ]
        lines += [f"  {stratum['stratum']:<12} {stratum['distinct_queries']:>9,} queries "
                  f"{stratum['traffic']:>12,} traffic ({stratum['traffic_share']:.1%})  "
                  f"sampled {stratum['sampled']} (test {stratum['test']})" for stratum in manifest["strata"]]
        return "\n".join(lines)
