"""Stratified query sampling from a query log: count, screen, stratify by traffic, sample with weights.

The pipeline has three steps; only the first and last touch every row or every query, and both exist twice,
in memory (pyarrow/pandas) and in DuckDB (plain SQL, out of core), with the same results:

1. **Group log rows** by their raw query text (and user, and the log's own stratum column), after the time
   window. The DuckDB path is one ``GROUP BY`` over the files, the same work as counting queries at all.
2. **Screen** each distinct raw text once: normalise it and drop it if empty or carrying personal data. This
   step is shared by both paths (pyarrow compute kernels over the distinct texts), so the rules exist once.
3. **Aggregate and stratify**: frequency per normalised query (submissions, or distinct users), then strata by
   cumulative traffic share.

Conventions
-----------
- ``query_id`` is ``"q"`` + the first 16 hex digits of the MD5 of the normalised query (of
  ``source + TAB + query`` when the log has a stratum column), so it is stable across re-sampling and engines.
- Boundary rule: within each log stratum (``source``) queries are ordered by frequency descending, then by
  ``query_id`` ascending. A query belongs to the first traffic stratum whose cut point is above the traffic
  share of all queries ordered before it (``traffic_before < cut * total``). The query that straddles a cut
  point stays in the earlier stratum; queries of equal frequency on a cut are split by ``query_id``, an order
  unrelated to their text, and the same on every run and engine.
- Dropped counts are in submissions: log lines, or the summed ``count`` of a pre-aggregated log.
- Every random choice comes from ``numpy.random.default_rng([seed, crc32(stratum name)])``: a stratum's
  sample depends only on the seed and its own candidates.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime as dt
import functools
import hashlib
import json
import math
import os
import re
import tempfile
import unicodedata
import zlib
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalset import __version__
from evalset.digests import describe_file, describe_files_in_background
from evalset.errors import InputError
from evalset.keys import column_pieces, string_bytes, string_column
from evalset.parallel import parallel_map
from evalset.tables import (
    LogColumns,
    atomic_path,
    query_log_sql,
    read_query_list,
    read_query_log_table,
    sql_string,
    write_queries,
)

COUNT_BY = ("submissions", "users")
ENGINES = ("auto", "pandas", "duckdb")
# Window and column reasons first, then text reasons in the order they are tested (a query is counted once,
# under the first reason that applies).
WINDOW_REASONS = ("unparsable_timestamp", "outside_window", "no_user_id", "no_source")
TEXT_REASONS = ("empty", "credential_url", "email", "payment_card", "phone", "long_digits", "blocklist",
                "excluded")
DROP_REASONS = WINDOW_REASONS + TEXT_REASONS
DUCKDB_ABOVE_BYTES = 512 * 2**20

# RE2 patterns (pyarrow), applied to the NFKC-normalised, lower-cased text whatever the output normalisation.
_PII_PATTERNS = {
    "email": r"[a-z0-9._%+\-]+@[a-z0-9\-]+(\.[a-z0-9\-]+)*\.[a-z]{2,}",
    "credential_url": (r"[a-z][a-z0-9+.\-]*://[^/\s@:]+:[^/\s@]*@"
                       r"|[?&;](access_token|auth|api_?key|key|password|passwd|pwd|secret|session(id)?|sid"
                       r"|sig|signature|token)="),
    "phone": (r"\+\d{1,3}[ .\-]?(\(\d{1,4}\)|\d{1,4})([ .\-]?\d{2,4}){2,4}"
              r"|(^|[^\d])\(?\d{3}\)?[ .\-]?\d{3}[ .\-]\d{4}([^\d]|$)"
              r"|(^|[^\d])\d{3}[.\-]\d{4}([^\d]|$)"
              r"|(^|[^\d])0\d{2,4}[ .\-]?\d{3,4}[ .\-]?\d{3,4}([^\d]|$)"),
    "long_digits": r"\d([.\-]?\d){8,}",
}
_SUSPECT = r"[0-9@]|[?&;][a-z_]+="
_DIGIT_RUN = re.compile(r"(?<!\d)\d+(?:[ \-]\d+)*")
_LINE_BREAKS = r"[\t\n\r\x0b\x0c\x1c-\x1f\x{85}\x{2028}\x{2029}]"


# --------------------------------------------------------------------------------------------------- options
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
            raise ValueError(f"unknown normalisation step(s) {', '.join(sorted(unknown))}; "
                             f"expected case, nfkc, space or none")
        return cls("case" in steps, "nfkc" in steps, "space" in steps)


@dataclasses.dataclass(frozen=True)
class Strata:
    """Traffic strata: names and the cumulative traffic share at which each but the last ends."""

    names: tuple[str, ...] = ("head", "torso", "tail")
    cuts: tuple[float, ...] = (1 / 3, 2 / 3)

    def __post_init__(self) -> None:
        if len(self.names) != len(self.cuts) + 1 or len(set(self.names)) != len(self.names):
            raise ValueError("strata need distinct names and one cut point fewer than names")
        if any(not 0 < c < 1 for c in self.cuts) or list(self.cuts) != sorted(set(self.cuts)):
            raise ValueError("cut points must be increasing shares strictly between 0 and 1")
        if any(not n or "/" in n or not n.isprintable() or n.strip() != n for n in self.names):
            raise ValueError("stratum names must be printable, without '/' or surrounding spaces")

    @classmethod
    def parse(cls, text: str) -> Strata:
        """From ``head:0.5,torso:0.8,tail``: each name with the share where it ends, the last without."""
        parts = [part.strip() for part in text.split(",")]
        names, cuts = [], []
        for part in parts[:-1]:
            name, _, share = part.partition(":")
            try:
                cuts.append(float(share))
            except ValueError:
                raise ValueError(f"stratum {part!r} needs a cut point, as in head:0.5") from None
            names.append(name.strip())
        if ":" in parts[-1]:
            raise ValueError(f"the last stratum ({parts[-1]!r}) takes the rest of the traffic: no cut point")
        return cls(tuple([*names, parts[-1]]), tuple(cuts))


@dataclasses.dataclass(frozen=True)
class Window:
    """A time window ``since <= timestamp < until`` (naive datetimes, as written in the log).

    ``timestamp_format`` is a strptime format (``%y%m%d%H%M%S`` for the Excite log); ``None`` reads ISO 8601.
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
        return _stratified_frame(query_id, query, self.source_code, self.source_names, self.frequency, self.tier,
                                 self.strata)

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


@dataclasses.dataclass
class SampleResult:
    """What :func:`sample_log` returns: the ``queries.tsv`` frame, the counts behind it and the manifest."""

    queries: pd.DataFrame
    counts: QueryCounts
    manifest: dict


# ----------------------------------------------------------------------------------- step 2: screen texts
def normalise_queries(raw: pa.Array, normalisation: Normalisation) -> pa.Array:
    """Normalise query texts (vectorised); see :class:`Normalisation`."""
    if not normalisation.collapse_whitespace:
        text = pc.utf8_normalize(raw, "NFKC") if normalisation.nfkc else raw
        text = pc.utf8_lower(text) if normalisation.lowercase else text
        return pc.utf8_trim_whitespace(pc.replace_substring_regex(text, _LINE_BREAKS, " "))
    # A byte scan finds the texts that need more than ASCII lower-casing (non-ASCII characters, white space
    # other than single spaces between words): only they go through NFKC, Unicode lower case and the split.
    unusual = _texts_to_normalise(raw)
    text = pc.ascii_lower(raw) if normalisation.lowercase and _has_capitals(raw) else raw
    if not unusual.any():
        return text
    slow = raw.filter(unusual)
    slow = pc.utf8_normalize(slow, "NFKC") if normalisation.nfkc else slow
    slow = pc.utf8_lower(slow) if normalisation.lowercase else slow
    slow = pc.binary_join(pc.utf8_split_whitespace(pc.utf8_trim_whitespace(slow)), " ")  # as str.split()
    return pc.replace_with_mask(text, pa.array(unusual), slow.cast(raw.type))


def _texts_to_normalise(raw: pa.Array) -> np.ndarray:
    """The texts with a non-ASCII character, white space other than a space, two spaces in a row, or a space
    at either end."""
    starts, lengths, data = string_bytes(raw)

    def unusual_byte(block: np.ndarray) -> np.ndarray:
        found = block >= 128
        found |= (block >= 9) & (block <= 13)  # tab, line breaks
        found |= (block >= 28) & (block <= 31)  # the separators 0x1c-0x1f
        found[1:] |= (block[1:] == 32) & (block[:-1] == 32)
        return found

    unusual = _rows_of(starts, _byte_positions(data, unusual_byte))
    filled = np.flatnonzero(lengths > 0)
    unusual[filled] |= (data[starts[filled]] == 32) | (data[starts[filled] + lengths[filled] - 1] == 32)
    return unusual


def _has_capitals(raw: pa.Array) -> bool:
    return any(np.any((block >= 65) & (block <= 90)) for _, block in _scan_blocks(string_bytes(raw)[2]))


def _suspect_rows(text: pa.Array) -> np.ndarray:
    """The texts that hold a digit, an @ or an =: personal data needs one of them."""
    starts, _, data = string_bytes(text)

    def suspect_byte(block: np.ndarray) -> np.ndarray:
        marked = (block >= 48) & (block <= 57)
        marked |= block == 64
        marked |= block == 61
        return marked

    return np.flatnonzero(_rows_of(starts, _byte_positions(data, suspect_byte)))


def _byte_positions(data: np.ndarray, marked: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The positions of the bytes that ``marked`` (vectorised) flags, block by block: the temporaries stay
    small and are reused, where whole-buffer temporaries would be fresh memory."""
    found = [np.flatnonzero(marked(block)) + begin for begin, block in _scan_blocks(data, behind=1)]
    return np.concatenate([np.zeros(0, dtype=np.int64), *found])


def _scan_blocks(data: np.ndarray, behind: int = 0):
    """``(begin, data[begin:...])`` in blocks of 1 MiB, each reaching ``behind`` bytes into the block before
    (for pairs of bytes across blocks)."""
    size = 1 << 20
    for start in range(0, len(data), size):
        begin = max(start - behind, 0)
        yield begin, data[begin: start + size]


def _rows_of(starts: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Which texts (given their start offsets) hold any of the byte ``positions``."""
    found = np.zeros(len(starts), dtype=bool)
    found[np.searchsorted(starts, positions, side="right") - 1] = True
    return found


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check used by payment-card numbers."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def has_card_number(text: str) -> bool:
    """Whether ``text`` holds a payment-card number that passes the Luhn check: 13 to 19 digits written
    unbroken, in groups of four (the last may be shorter), or as 4-6-4/4-6-5 (American Express, Diners)."""
    for run in _DIGIT_RUN.finditer(text):
        groups = re.split(r"[ \-]", run.group())
        for start in range(len(groups)):
            for end in range(start + 1, len(groups) + 1):
                digits = "".join(groups[start:end])
                if 13 <= len(digits) <= 19 and _card_layout(groups[start:end]) and luhn_valid(digits):
                    return True
    return False


def _card_layout(groups: list[str]) -> bool:
    lengths = [len(group) for group in groups]
    if len(lengths) == 1:
        return True
    fours = all(n == 4 for n in lengths[:-1]) and 1 <= lengths[-1] <= 4
    return fours or lengths in ([4, 6, 4], [4, 6, 5])


def _blocklist_pattern(terms: Sequence[str]) -> str | None:
    """One RE2 pattern matching any term as a whole word of the NFKC-normalised, lower-cased text."""
    words = [re.escape(" ".join(unicodedata.normalize("NFKC", term).lower().split())) for term in terms
             if term.strip()]
    return rf"(^|[^\w])({'|'.join(words)})([^\w]|$)" if words else None


def screen_queries(raw: pa.Array, normalisation: Normalisation = Normalisation(),
                   screen: Screen = Screen()) -> tuple[pa.Array, pa.Array]:
    """Normalise distinct raw query texts and give each its drop reason.

    Returns ``(normalised, reason)``: two arrays aligned with ``raw``; ``reason`` is null for a query that is
    kept, else the first of ``TEXT_REASONS`` that applies. Personal data is looked for in the NFKC-normalised,
    lower-cased text whatever ``normalisation`` says, so that full-width digits or capitals do not hide it.
    """
    normalised = normalise_queries(raw, normalisation)
    probe = normalised if normalisation == Normalisation() else normalise_queries(raw, Normalisation())
    codes = np.zeros(len(raw), dtype=np.int64)  # 0: kept, else 1 + index in TEXT_REASONS

    def mark(name: str, rows: np.ndarray) -> None:
        rows = rows[codes[rows] == 0]
        codes[rows] = 1 + TEXT_REASONS.index(name)

    mark("empty", np.flatnonzero(_mask(pc.equal(pc.utf8_length(normalised), 0))))
    # Personal data needs a digit, an @ or a URL parameter: the patterns run on those texts only.
    suspect = _suspect_rows(probe)
    suspect = suspect[_mask(pc.match_substring_regex(probe.take(pa.array(suspect, pa.int64())), _SUSPECT))]
    texts = probe.take(pa.array(suspect, pa.int64()))
    for name in TEXT_REASONS[1:6]:
        if name == "payment_card":
            found = _card_mask(texts)
        else:
            found = pc.match_substring_regex(texts, _PII_PATTERNS[name])
        mark(name, suspect[_mask(found)])
    if (pattern := _blocklist_pattern(screen.blocklist)) is not None:
        mark("blocklist", np.flatnonzero(_mask(pc.match_substring_regex(probe, pattern))))
    if screen.excluded:
        excluded = normalise_queries(pa.array(list(screen.excluded), pa.string()), normalisation)
        mark("excluded", np.flatnonzero(_mask(pc.is_in(normalised, value_set=excluded))))
    return normalised, pc.take(pa.array([None, *TEXT_REASONS], pa.string()), pa.array(codes))


def _mask(matches: pa.Array) -> np.ndarray:
    return np.asarray(matches.to_numpy(zero_copy_only=False), dtype=bool)


def _card_mask(probe: pa.Array) -> pa.Array:
    """Luhn-check only the texts with a long enough digit run (few), in Python."""
    has_digits = pc.match_substring_regex(probe, r"\d([ \-]?\d){12}")
    mask = np.zeros(len(probe), dtype=bool)
    for row in np.flatnonzero(has_digits.to_numpy(zero_copy_only=False)):
        mask[row] = has_card_number(probe[int(row)].as_py())
    return pa.array(mask)


def _screen_in_parallel(raw: pa.Array, normalisation: Normalisation,
                        screen: Screen) -> tuple[pa.Array, pa.Array]:
    """:func:`screen_queries` over slices of ``raw``, one per core (arrow's string kernels are serial)."""
    size = -(-len(raw) // (os.cpu_count() or 1)) or 1
    parts = parallel_map(lambda start: screen_queries(raw.slice(start, size), normalisation, screen),
                         range(0, max(len(raw), 1), size))
    return tuple(pa.concat_arrays([part[i] for part in parts]) for i in (0, 1))


def _screen_grouped(grouped: pa.Table, normalisation: Normalisation,
                    screen: Screen) -> tuple[pa.Table, dict[str, int]]:
    """Step 2 over the grouped rows of step 1: kept rows with the normalised ``query``, and drop counts."""
    dropped = dict.fromkeys(DROP_REASONS, 0)
    kept = grouped
    if pc.max(pc.binary_length(grouped["status"])).as_py():  # some rows have a drop reason
        for row in grouped.group_by("status").aggregate([("submissions", "sum")]).to_pylist():
            if row["status"]:
                dropped[row["status"]] += int(row["submissions_sum"])
        kept = grouped.filter(pc.equal(grouped["status"], ""))
    raw = kept["raw_query"].combine_chunks()
    if kept.num_columns == 3:  # status, raw_query, submissions: the texts are distinct already
        normalised, row_reason = _screen_in_parallel(raw, normalisation, screen)
    else:
        encoded = pc.dictionary_encode(raw)
        normalised, reason = _screen_in_parallel(encoded.dictionary, normalisation, screen)
        normalised, row_reason = normalised.take(encoded.indices), reason.take(encoded.indices)
    reasons = pa.table({"reason": row_reason, "submissions": kept["submissions"]})
    for row in reasons.group_by("reason").aggregate([("submissions", "sum")]).to_pylist():
        if row["reason"] is not None:
            dropped[row["reason"]] += int(row["submissions_sum"])
    keep = pc.is_null(row_reason)
    everything = row_reason.null_count == len(row_reason)

    def kept_rows(values: pa.Array) -> pa.Array:
        return values if everything else values.filter(keep)

    columns = {"query": kept_rows(normalised)}
    for name in ("user_id", "source", "submissions"):
        if name in kept.column_names:
            columns[name] = kept_rows(kept[name].combine_chunks())
    return pa.table(columns), dropped


# --------------------------------------------------------------------------- step 1: group rows (memory)
def _parse_timestamps(text: pa.ChunkedArray | pa.Array, timestamp_format: str | None) -> np.ndarray:
    values = pd.Series(text.to_numpy(zero_copy_only=False), dtype=object)
    if timestamp_format is None:
        parsed = pd.to_datetime(values, format="ISO8601", errors="coerce")
    else:
        parsed = pd.to_datetime(values, format=timestamp_format, errors="coerce")
    return parsed.to_numpy(dtype="datetime64[us]")


def _row_status(table: pa.Table, count_by: str, window: Window) -> np.ndarray:
    """Per row: "" (kept) or the first of ``WINDOW_REASONS`` that applies."""
    status = np.full(table.num_rows, "", dtype=object)

    def mark(name: str, mask: np.ndarray) -> None:
        status[(status == "") & mask] = name

    if window.active:
        stamps = _parse_timestamps(table["timestamp"], window.timestamp_format)
        mark("unparsable_timestamp", np.isnat(stamps))
        outside = np.zeros(len(stamps), dtype=bool)
        if window.since is not None:
            outside |= stamps < np.datetime64(window.since, "us")
        if window.until is not None:
            outside |= stamps >= np.datetime64(window.until, "us")
        mark("outside_window", outside)
    if count_by == "users":
        mark("no_user_id", pc.equal(pc.utf8_trim_whitespace(table["user_id"]), "").to_numpy())
    if "source" in table.column_names:
        mark("no_source", pc.equal(pc.utf8_trim_whitespace(table["source"]), "").to_numpy())
    return status


def group_log_rows(log: pa.Table | pd.DataFrame, count_by: str = "submissions",
                   window: Window = Window()) -> pa.Table:
    """Step 1 in memory: group log rows by ``status, raw_query[, user_id][, source]`` with ``submissions``.

    ``status`` is "" for rows kept and the drop reason otherwise (the other key columns are then null).
    ``log`` has the standard columns of :func:`evalset.tables.read_query_log_table`.
    """
    table = log if isinstance(log, pa.Table) else pa.Table.from_pandas(log, preserve_index=False)
    _check_log_columns(table.column_names, count_by, window, "<log>")
    for name in ("query", "user_id", "source"):  # missing text is empty text, as the readers give it
        if name in table.column_names:
            text = pc.fill_null(pc.cast(table[name], pa.string()), "")
            table = table.set_column(table.column_names.index(name), name, text)
    status = _row_status(table, count_by, window)
    kept = status == ""
    keys = ["raw_query"] + [name for name in ("user_id", "source") if _key_needed(name, table, count_by)]
    columns = {"status": pa.array(status, pa.string())}
    for key in keys:
        values = table["query" if key == "raw_query" else key].combine_chunks()
        columns[key] = pc.if_else(pa.array(kept), values, pa.scalar(None, pa.string()))
    counts = table["count"] if "count" in table.column_names else pa.array(np.ones(table.num_rows, np.int64))
    columns["submissions"] = pc.cast(counts, pa.int64())
    grouped = pa.table(columns).group_by(["status", *keys]).aggregate([("submissions", "sum")])
    return grouped.rename_columns({"submissions_sum": "submissions"})


def _key_needed(name: str, table_or_names, count_by: str) -> bool:
    names = table_or_names.column_names if isinstance(table_or_names, pa.Table) else table_or_names
    return name in names and (name == "source" or count_by == "users")


def _check_log_columns(names: Sequence[str], count_by: str, window: Window, source: str) -> None:
    if "query" not in names:
        raise InputError("the log has no query column", source)
    if count_by not in COUNT_BY:
        raise ValueError(f"count_by must be one of {', '.join(COUNT_BY)}, not {count_by!r}")
    if count_by == "users" and "user_id" not in names:
        raise InputError("counting by users needs a user column (--user)", source)
    if window.active and "timestamp" not in names:
        raise InputError("a time window (--since/--until) needs a timestamp column (--timestamp)", source)


# ------------------------------------------------------------------------ step 3: aggregate and stratify
def query_ids(queries: Sequence[str], sources: Sequence[str] | None = None) -> list[str]:
    """The stable ``query_id`` of each normalised query (see the module conventions)."""
    if sources is None:
        keys = queries
    else:
        keys = [s + "\t" + q if s else q for s, q in zip(sources, queries, strict=True)]
    return ["q" + hashlib.md5(key.encode("utf-8")).hexdigest()[:16] for key in keys]


def assign_strata(frequencies: pd.DataFrame, strata: Strata = Strata()) -> pd.DataFrame:
    """Add ``stratum`` to ``query_id, query, source, frequency`` by cumulative traffic share (boundary rule in
    the module docstring); rows come out ordered by source, stratum, query_id."""
    return _counts_from_frequencies(frequencies, strata, {}, 0, "submissions").queries


def _counts_from_frequencies(frequencies: pd.DataFrame, strata: Strata, dropped: dict[str, int], rows_read: int,
                             count_by: str) -> QueryCounts:
    frequencies = frequencies.reset_index(drop=True)
    sources = pd.factorize(frequencies["source"], sort=True)[0]
    ids = _id_sort_keys(pa.Array.from_pandas(frequencies["query_id"]))
    frequency = frequencies["frequency"].to_numpy(dtype=np.int64)
    ordered = np.lexsort((ids, -frequency, sources))
    before = np.empty(len(ordered), dtype=np.float64)
    total = np.empty(len(ordered), dtype=np.float64)
    for source in np.unique(sources):
        rows = ordered[sources[ordered] == source]
        traffic = np.cumsum(frequency[rows])
        before[rows] = traffic - frequency[rows]
        total[rows] = traffic[-1]
    tier = np.zeros(len(frequencies), dtype=np.int64)
    for cut in strata.cuts:
        tier += before >= cut * total
    order = _canonical_order(ids, tier, sources)
    texts = pa.table({"query_id": pa.array(frequencies["query_id"], pa.string()),
                      "query": pa.array(frequencies["query"], pa.string())})
    return QueryCounts(texts, order, sources[order], sorted(frequencies["source"].unique()), tier[order],
                       frequency[order], ids[order], dropped, rows_read, count_by, strata)


def _stratified_frame(query_ids, queries, source_codes: np.ndarray, source_names: Sequence[str],
                      frequency: np.ndarray, tier: np.ndarray, strata: Strata) -> pd.DataFrame:
    """The ``QueryCounts.queries`` frame; ``source`` and ``stratum`` are categoricals (few values)."""
    stratum_names = [name if source == "" else f"{source}/{name}" for source in source_names
                     for name in strata.names]
    return pd.DataFrame({
        "query_id": pd.Series(query_ids).reset_index(drop=True),
        "query": pd.Series(queries).reset_index(drop=True),
        "source": pd.Categorical.from_codes(source_codes, categories=list(source_names)),
        "frequency": frequency.astype(np.int64),
        "stratum": pd.Categorical.from_codes(source_codes * len(strata.names) + tier,
                                             categories=stratum_names),
    })


def _canonical_order(id_keys: np.ndarray, tiers: np.ndarray, source_codes: np.ndarray) -> np.ndarray:
    """Row order by source, tier, query_id: sorted by id, then (stably) by group."""
    groups = source_codes.astype(np.int64) * (int(tiers.max(initial=0)) + 1) + tiers
    order = _argsort_distinct(id_keys)
    small = np.uint16 if groups.max(initial=0) < 2**16 else np.int64  # 16-bit keys take a radix sort
    return order[np.argsort(groups[order].astype(small), kind="stable")]


def _argsort_distinct(keys: np.ndarray) -> np.ndarray:
    """``np.argsort`` of distinct keys (no stable sort needed), the lower and upper half of their range
    sorted side by side."""
    if len(keys) < 1 << 16:
        return np.argsort(keys)
    middle = (keys.min() >> np.uint64(1)) + (keys.max() >> np.uint64(1))
    upper = keys > middle
    halves = [np.flatnonzero(~upper), np.flatnonzero(upper)]
    return np.concatenate(parallel_map(lambda rows: rows[np.argsort(keys[rows])], halves))


_HEX_VALUE = np.full(256, 16, dtype=np.uint8)  # 16: not a lower-case hex digit
_HEX_VALUE[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = np.arange(16, dtype=np.uint8)


def _id_sort_keys(query_ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Keys that sort like the ``query_id`` strings: for ids of the form ``q`` + 16 hex digits, the number
    they write, read straight from the Arrow buffers (numbers sort far faster than strings); for any other
    ids, their rank."""
    column = string_column(query_ids)
    pieces = list(column_pieces(column))
    keys = parallel_map(_hex_id_numbers, pieces)
    if column.null_count == 0 and all(part is not None for part in keys):
        return np.concatenate([np.zeros(0, dtype=np.uint64), *keys])
    return pc.rank(column.combine_chunks(), sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.uint64)


def _hex_id_numbers(piece: pa.Array) -> np.ndarray | None:
    """The numbers that ids ``q`` + 16 hex digits write, or None if some id has another form."""
    _, lengths, data = string_bytes(piece)
    if not np.all(lengths == 17):
        return None
    text = data.reshape(-1, 17)
    digits = _HEX_VALUE[text[:, 1:]]
    if not (np.all(text[:, 0] == ord("q")) and np.all(digits < 16)):
        return None
    number = (digits[:, 0::2] << 4) | digits[:, 1::2]  # the 8 bytes, most significant first
    return np.ascontiguousarray(number).view(">u8").ravel().astype(np.uint64)


def _aggregate_in_memory(kept: pa.Table, count_by: str) -> pd.DataFrame:
    sources = ["source"] if "source" in kept.column_names else []
    if count_by == "users":
        pairs = kept.group_by([*sources, "query", "user_id"]).aggregate([])
        grouped = pairs.group_by([*sources, "query"]).aggregate([("user_id", "count")])
        grouped = grouped.rename_columns({"user_id_count": "frequency"})
    else:
        grouped = kept.group_by([*sources, "query"]).aggregate([("submissions", "sum")])
        grouped = grouped.rename_columns({"submissions_sum": "frequency"})
    frame = grouped.to_pandas()
    if not sources:
        frame["source"] = ""
    frame["query_id"] = query_ids(frame["query"].tolist(), frame["source"].tolist())
    frame["frequency"] = frame["frequency"].astype(np.int64)
    return frame.loc[:, ["query_id", "query", "source", "frequency"]]


# ------------------------------------------------------------------------------------ counting, memory
def count_queries(log: pa.Table | pd.DataFrame, *, count_by: str = "submissions",
                  normalisation: Normalisation = Normalisation(), window: Window = Window(),
                  screen: Screen = Screen(), strata: Strata = Strata()) -> QueryCounts:
    """Count, screen and stratify the queries of a log held in memory (steps 1-3).

    Parameters
    ----------
    log : rows with a ``query`` column and optionally ``count``, ``timestamp``, ``user_id``, ``source``.
    count_by : ``"submissions"`` (each row, or its ``count``) or ``"users"`` (distinct users per query).
    """
    grouped = group_log_rows(log, count_by, window)
    kept, dropped = _screen_grouped(grouped, normalisation, screen)
    frequencies = _aggregate_in_memory(kept, count_by)
    rows_read = int(pc.sum(grouped["submissions"]).as_py() or 0)
    return _counts_from_frequencies(frequencies, strata, dropped, rows_read, count_by)


# ------------------------------------------------------------------------------------ counting, DuckDB
def group_rows_sql(log_sql: str, names: Sequence[str], count_by: str, window: Window) -> str:
    """Step 1 as SQL over ``log_sql`` (a SELECT giving the standard columns ``names``).

    Plain SQL (CASE, COALESCE, GROUP BY); only the timestamp parsing (``try_strptime``/``TRY_CAST``) is
    DuckDB's own: on Spark SQL write ``to_timestamp(timestamp, '<java pattern>')`` there.
    """
    statuses = []
    if window.active:
        parsed = "TRY_CAST(timestamp AS TIMESTAMP)"
        if window.timestamp_format:
            parsed = f"try_strptime(timestamp, {sql_string(window.timestamp_format)})"
        statuses.append(f"WHEN {parsed} IS NULL THEN 'unparsable_timestamp'")
        bounds = []
        if window.since is not None:
            bounds.append(f"{parsed} < CAST('{window.since.isoformat(' ')}' AS TIMESTAMP)")
        if window.until is not None:
            bounds.append(f"{parsed} >= CAST('{window.until.isoformat(' ')}' AS TIMESTAMP)")
        statuses.append(f"WHEN {' OR '.join(bounds)} THEN 'outside_window'")
    if count_by == "users":
        statuses.append("WHEN trim(user_id) = '' THEN 'no_user_id'")
    if "source" in names:
        statuses.append("WHEN trim(source) = '' THEN 'no_source'")
    status = f"CASE {' '.join(statuses)} ELSE '' END" if statuses else "''"
    keys = ["raw_query"] + [name for name in ("user_id", "source") if _key_needed(name, names, count_by)]
    kept_keys = ", ".join(f"CASE WHEN status = '' THEN {'query' if k == 'raw_query' else k} END AS {k}"
                          for k in keys)
    count = "count" if "count" in names else "1"
    return (f"SELECT status, {', '.join(keys)}, SUM(n) AS submissions FROM ("
            f"SELECT status, {kept_keys}, n FROM ("
            f"SELECT *, {status} AS status, {count} AS n FROM ({log_sql}) AS log_rows) AS marked) AS keyed "
            f"GROUP BY status, {', '.join(keys)}")


def stratify_sql(table: str, has_source: bool, count_by: str, strata: Strata = Strata(),
                 materialized: bool = False) -> str:
    """Step 3 as plain SQL (window functions, ``md5``; runs on DuckDB and Spark SQL) over ``table`` with
    ``query[, source][, user_id], submissions``: one row per query with ``query_id, query, source, frequency,
    tier, stratum`` (``tier`` numbers the traffic strata from 0), in no particular order.

    Traffic before a query is counted per frequency level (few rows) rather than per query: a query's
    ``traffic_before`` is its level's plus ``frequency x`` its position among the level's queries by
    ``query_id``, and positions are only numbered in the levels that straddle a cut point.
    ``materialized``: compute the per-query frequencies once (``AS MATERIALIZED``: DuckDB, not Spark SQL).
    """
    source = "source" if has_source else "''"
    key = "CASE WHEN source = '' THEN query ELSE source || chr(9) || query END" if has_source else "query"
    frequency = "COUNT(DISTINCT user_id)" if count_by == "users" else "SUM(submissions)"
    names = " ".join(f"WHEN {index} THEN '{name}'" for index, name in enumerate(strata.names))

    def tier(before: str) -> str:
        cuts = " ".join(f"WHEN {before} < CAST({cut!r} AS DOUBLE) * source_traffic THEN {index}"
                        for index, cut in enumerate(strata.cuts))
        return f"CASE {cuts} ELSE {len(strata.cuts)} END" if cuts else "0"

    return f"""
WITH frequencies AS {"MATERIALIZED " if materialized else ""}(
  SELECT source, query, 'q' || substr(md5({key}), 1, 16) AS query_id, frequency FROM (
    SELECT {source} AS source, query, CAST({frequency} AS BIGINT) AS frequency
    FROM {table} GROUP BY {"source, query" if has_source else "query"}) AS grouped
), levels AS (
  SELECT source, frequency, COUNT(*) AS queries FROM frequencies GROUP BY source, frequency
), level_bounds AS (
  SELECT source, frequency, queries,
         SUM(frequency * queries) OVER (PARTITION BY source ORDER BY frequency DESC
                                        ROWS UNBOUNDED PRECEDING) - frequency * queries AS level_before,
         SUM(frequency * queries) OVER (PARTITION BY source) AS source_traffic
  FROM levels
), level_tiers AS (
  SELECT source, frequency, level_before, source_traffic, {tier("level_before")} AS first_tier,
         {tier("level_before + frequency * (queries - 1)")} AS last_tier
  FROM level_bounds
), positioned AS (
  SELECT f.source, f.query_id, l.source_traffic,
         l.level_before + f.frequency * (ROW_NUMBER() OVER (PARTITION BY f.source, f.frequency
                                                            ORDER BY f.query_id) - 1) AS traffic_before
  FROM frequencies AS f JOIN level_tiers AS l ON f.source = l.source AND f.frequency = l.frequency
  WHERE l.first_tier <> l.last_tier
), straddling AS (
  SELECT source, query_id, {tier("traffic_before")} AS tier FROM positioned
), tiered AS (
  SELECT f.query_id, f.query, f.source, f.frequency, COALESCE(s.tier, l.first_tier) AS tier
  FROM frequencies AS f
  JOIN level_tiers AS l ON f.source = l.source AND f.frequency = l.frequency
  LEFT JOIN straddling AS s ON f.source = s.source AND f.query_id = s.query_id
)
SELECT query_id, query, source, frequency, tier,
       CASE WHEN source = '' THEN '' ELSE source || '/' END || CASE tier {names} END AS stratum
FROM tiered"""



@contextlib.contextmanager
def _duckdb_connection(memory_limit: str):
    import duckdb

    with tempfile.TemporaryDirectory(prefix="evalset-duckdb-") as spill:
        con = duckdb.connect(config={"memory_limit": memory_limit, "temp_directory": spill})
        con.execute("SET enable_progress_bar = false")
        try:
            yield con
        finally:
            con.close()


def _arrow(relation) -> pa.Table:
    fetch = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table  # newer DuckDB name first
    return fetch()


def _duckdb_error(exc: Exception, paths: Sequence[str]) -> InputError:
    """A one-line InputError from a DuckDB error (its detail lines may quote log text: left out)."""
    text = str(exc)
    message = text.splitlines()[0] if text else type(exc).__name__
    line = re.search(r"on Line:? (\d+)", text)
    fields = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
    if fields:
        message = f"expected {fields.group(1)} fields (as on line 1), found {fields.group(2)}"
    where = next((p for p in paths if p in text), paths[0] if len(paths) == 1 else None)
    return InputError(message, where, int(line.group(1)) if line else None)


def count_queries_duckdb(paths: Sequence[str | os.PathLike], columns: LogColumns | None = None, *,
                         fmt: str | None = None, header: bool = True, count_by: str = "submissions",
                         normalisation: Normalisation = Normalisation(), window: Window = Window(),
                         screen: Screen = Screen(), strata: Strata = Strata(),
                         memory_limit: str = "1GB") -> QueryCounts:
    """:func:`count_queries` out of core: steps 1 and 3 run in DuckDB over the files, with the same result.

    DuckDB spills to a temporary folder beyond ``memory_limit``. Step 2 runs in memory over the distinct
    raw texts only (and, with ``count_by="users"``, distinct (text, user) pairs).
    """
    import duckdb

    paths = [os.fspath(p) for p in paths]
    columns = columns or LogColumns()
    selects = [query_log_sql(path, columns, fmt=fmt, header=header) for path in paths]
    names = [field for field in ("query", "count", "timestamp", "user_id", "source")
             if getattr(columns, field) is not None]
    _check_log_columns(names, count_by, window, paths[0])
    union = " UNION ALL ".join(f"({select})" for select in selects)
    with _duckdb_connection(memory_limit) as con:
        try:
            grouped = _arrow(con.sql(group_rows_sql(union, names, count_by, window)))
            kept, dropped = _screen_grouped(grouped, normalisation, screen)
            con.register("kept", kept)
            stratified = stratify_sql("kept", "source" in names, count_by, strata, materialized=True)
            columns = "query_id, query, source" if "source" in names else "query_id, query"
            queries = _arrow(con.sql(f"SELECT {columns}, frequency, tier FROM ({stratified})"))
        except duckdb.Error as exc:
            raise _duckdb_error(exc, paths) from None
    if "source" in names:
        source = pc.dictionary_encode(queries["source"].combine_chunks())
        source_names = sorted(source.dictionary.to_pylist())
        rank = np.argsort(np.argsort(np.asarray(source.dictionary.to_pylist(), dtype=object)))
        source_codes = rank[source.indices.to_numpy()] if len(source_names) else np.zeros(0, np.int64)
    else:  # one source, ""
        source_names, source_codes = [""] if queries.num_rows else [], np.zeros(queries.num_rows, np.int64)
    tier = queries["tier"].to_numpy()
    ids = _id_sort_keys(queries["query_id"])
    order = _canonical_order(ids, tier, source_codes)
    rows_read = int(pc.sum(grouped["submissions"]).as_py() or 0)
    return QueryCounts(queries.select(["query_id", "query"]), order, source_codes[order], source_names, tier[order],
                       queries["frequency"].to_numpy()[order], ids[order], dropped, rows_read, count_by, strata)


# ------------------------------------------------------------------------------------------------ sampling
def parse_per_stratum(text: str) -> int | dict[str, int]:
    """``50`` (every stratum) or ``head=100,torso=50,tail=20`` (by stratum or traffic-stratum name)."""
    try:
        if "=" not in text:
            return int(text)
        pairs = (part.split("=", 1) for part in text.split(",") if part.strip())
        return {name.strip(): int(count) for name, count in pairs}
    except ValueError:
        raise ValueError(f"per-stratum count must be a number or name=number pairs, not {text!r}") from None


def _count_for(stratum: str, per_stratum: int | Mapping[str, int]) -> int:
    if isinstance(per_stratum, int):
        count = per_stratum
    elif stratum in per_stratum:
        count = per_stratum[stratum]
    elif stratum.rsplit("/", 1)[-1] in per_stratum:
        count = per_stratum[stratum.rsplit("/", 1)[-1]]
    else:
        raise ValueError(f"no per-stratum count for stratum {stratum!r}")
    if count < 0:
        raise ValueError(f"per-stratum count for {stratum!r} must not be negative")
    return count


def sample_queries(counts: QueryCounts, per_stratum: int | Mapping[str, int], *, seed: int = 0,
                   holdout: float = 0.0) -> pd.DataFrame:
    """Draw queries uniformly among the distinct queries of each stratum, without replacement.

    Returns the ``queries.tsv`` frame (``query_id, query, stratum, frequency, stratum_share, weight, split``),
    strata in order, then by ``query_id``. ``weight`` is the stratum's traffic share / queries drawn in it;
    ``split`` marks ``round(holdout * n)`` of each stratum's n drawn queries ``test`` (the rest ``dev``), so a
    stratum keeps its size whatever the holdout. Raises ValueError before drawing anything if a stratum is
    smaller than its count.
    """
    if not 0 <= holdout < 1:
        raise ValueError(f"holdout must be a fraction in [0, 1), not {holdout}")
    if seed < 0:
        raise ValueError("seed must be a non-negative integer")
    summary = counts.summary
    wanted = {row.stratum: _count_for(row.stratum, per_stratum) for row in summary.itertuples()}
    for row in summary.itertuples():
        if wanted[row.stratum] > row.distinct_queries:
            raise ValueError(f"stratum {row.stratum!r} has {row.distinct_queries} distinct queries, "
                             f"fewer than the {wanted[row.stratum]} asked for")
    codes = counts.stratum_code
    parts = [_draw(counts, np.flatnonzero(codes == index), row, wanted[row.stratum], seed, holdout)
             for index, row in enumerate(summary.itertuples()) if wanted[row.stratum]]
    if not parts:
        return pd.DataFrame(columns=["query_id", "query", "stratum", "frequency", "stratum_share", "weight",
                                     "split"])
    return pd.concat(parts, ignore_index=True)


def _draw(counts: QueryCounts, positions: np.ndarray, row, size: int, seed: int, holdout: float) -> pd.DataFrame:
    """Draw ``size`` of the queries at ``positions`` (one stratum) in query_id order; mark the test split."""
    rng = np.random.default_rng([seed, zlib.crc32(row.stratum.encode("utf-8"))])
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


# -------------------------------------------------------------------------------------------- whole stage
def choose_engine(paths: Sequence[str | os.PathLike], engine: str = "auto") -> str:
    """``pandas`` (in memory) or ``duckdb``; ``auto`` picks DuckDB when the logs exceed 512 MiB on disk."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine != "auto":
        return engine
    size = sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
    return "duckdb" if size > DUCKDB_ABOVE_BYTES else "pandas"


def sample_log(paths: Sequence[str | os.PathLike], per_stratum: int | Mapping[str, int], *,
               columns: LogColumns | None = None, fmt: str | None = None, header: bool = True,
               count_by: str = "submissions", normalisation: Normalisation = Normalisation(),
               window: Window = Window(), strata: Strata = Strata(), seed: int = 0, holdout: float = 0.0,
               blocklists: Sequence[str | os.PathLike] = (), exclusions: Sequence[str | os.PathLike] = (),
               engine: str = "auto", memory_limit: str = "1GB",
               described: concurrent.futures.Future | None = None) -> SampleResult:
    """The ``evalset sample`` stage: read the logs, count, screen, stratify, sample, and describe it all.

    ``blocklists`` are files of terms (one a line); ``exclusions`` files of queries to leave out (one a line,
    or the ``query`` column of an earlier ``queries.tsv``). ``described``: the logs'
    :func:`~evalset.digests.describe_files_in_background`, when the caller started hashing them earlier.
    Nothing is written; see :func:`write_sample`.
    """
    if not paths:
        raise ValueError("no query log given")
    paths = [os.fspath(p) for p in paths]
    screen = Screen(tuple(t for f in blocklists for t in read_query_list(f)),
                    tuple(q for f in exclusions for q in read_query_list(f)))
    engine = choose_engine(paths, engine)
    described = described or describe_files_in_background(paths)  # sha256 of the logs while counting
    options = dict(count_by=count_by, normalisation=normalisation, window=window, screen=screen,
                   strata=strata)
    if engine == "duckdb":
        counts = count_queries_duckdb(paths, columns, fmt=fmt, header=header, memory_limit=memory_limit,
                                      **options)
    else:
        tables = [read_query_log_table(p, columns, fmt=fmt, header=header) for p in paths]
        counts = count_queries(pa.concat_tables(tables, promote_options="permissive"), **options)
    queries = sample_queries(counts, per_stratum, seed=seed, holdout=holdout)
    manifest = build_manifest(counts, queries, inputs=described.result(),
                              blocklists=[describe_file(p) for p in blocklists],
                              exclusions=[describe_file(p) for p in exclusions],
                              seed=seed, holdout=holdout, per_stratum=per_stratum, window=window,
                              normalisation=normalisation, columns=columns or LogColumns(), engine=engine)
    return SampleResult(queries, counts, manifest)


def build_manifest(counts: QueryCounts, queries: pd.DataFrame, *, inputs: list[dict],
                   blocklists: list[dict], exclusions: list[dict], seed: int, holdout: float,
                   per_stratum: int | Mapping[str, int], window: Window,
                   normalisation: Normalisation, columns: LogColumns, engine: str) -> dict:
    """The ``queries.manifest.json`` content: inputs with sha256, options, cut points, strata, drops.

    ``inputs``, ``blocklists`` and ``exclusions`` are :func:`describe_file` entries. It holds counts only,
    never a query that was dropped, and no clock time (same inputs, same bytes).
    """
    sampled = queries.groupby("stratum").size().to_dict()
    tested = queries[queries["split"] == "test"].groupby("stratum").size().to_dict()
    strata = [{
        "stratum": row.stratum, "distinct_queries": row.distinct_queries, "traffic": row.traffic,
        "traffic_share": row.traffic_share, "sampled": int(sampled.get(row.stratum, 0)),
        "test": int(tested.get(row.stratum, 0)),
        "weight": row.traffic_share / sampled[row.stratum] if sampled.get(row.stratum) else None,
    } for row in counts.summary.itertuples()]
    kept = counts.rows_read - sum(counts.dropped.values())
    return {
        "evalset_version": __version__,
        "stage": "sample",
        "inputs": inputs,
        "blocklists": blocklists,
        "exclusions": exclusions,
        "columns": dataclasses.asdict(columns),
        "engine": engine,
        "count_by": counts.count_by,
        "normalisation": dataclasses.asdict(normalisation),
        "window": {"since": _iso(window.since), "until": _iso(window.until),
                   "timestamp_format": window.timestamp_format},
        "seed": seed,
        "holdout": holdout,
        "per_stratum": per_stratum if isinstance(per_stratum, int) else dict(per_stratum),
        "cut_points": dict(zip(counts.strata.names, [*counts.strata.cuts, 1.0], strict=True)),
        "boundary_rule": "frequency descending, then query_id ascending; a query belongs to the first "
                         "stratum whose cut point is above the traffic share of the queries before it",
        "submissions": {"read": counts.rows_read, "kept": kept, "dropped": counts.dropped},
        "distinct_queries": len(counts.frequency),
        "strata": strata,
    }


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def manifest_path(queries_path: str | os.PathLike) -> str:
    """``queries.tsv`` -> ``queries.manifest.json`` (beside it)."""
    queries_path = os.fspath(queries_path)
    stem = queries_path[: -len(".tsv")] if queries_path.endswith(".tsv") else queries_path
    return stem + ".manifest.json"


def write_sample(result: SampleResult, queries_path: str | os.PathLike) -> tuple[str, str]:
    """Write ``queries.tsv`` and its manifest; both appear together or, on failure, neither does."""
    target = manifest_path(queries_path)
    with atomic_path(target) as manifest_tmp, atomic_path(queries_path) as queries_tmp:
        write_queries(result.queries, queries_tmp)
        with open(manifest_tmp, "w", encoding="utf-8") as handle:
            json.dump(result.manifest, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    return os.fspath(queries_path), target


def report_lines(result: SampleResult, written: Sequence[str] = ()) -> list[str]:
    """What ``evalset sample`` prints: rows read and dropped by reason, distinct queries, strata, output."""
    counts, manifest = result.counts, result.manifest
    dropped = ", ".join(f"{reason} {n:,}" for reason, n in counts.dropped.items() if n) or "none"
    lines = [
        f"read {counts.rows_read:,} submissions ({manifest['engine']}); kept "
        f"{manifest['submissions']['kept']:,}; dropped: {dropped}",
        f"{len(counts.frequency):,} distinct normalised queries, counted by {counts.count_by}",
    ]
    for stratum in manifest["strata"]:
        lines.append(f"  {stratum['stratum']:<12} {stratum['distinct_queries']:>9,} queries "
                     f"{stratum['traffic']:>12,} traffic ({stratum['traffic_share']:.1%})  "
                     f"sampled {stratum['sampled']} (test {stratum['test']})")
    lines += [f"wrote {path}" for path in written]
    return lines
