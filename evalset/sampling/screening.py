"""Step 2: screen each distinct raw query text once: normalise it, and drop it when it is empty, carries
personal data (e-mail, phone, payment card, long digit runs, credentials in a URL), is blocked or excluded.

Shared by both counting engines, so the rules exist once. The work is pyarrow compute kernels over the
distinct texts, on both cores; a byte scan picks the few texts that need NFKC, Unicode lower case or the
white-space split, and the PII patterns run only on texts with a digit, an ``@`` or an ``=``.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalset.sampling.options import DROP_REASONS, TEXT_REASONS, Normalisation, Screen
from evalset.speed.parallel import parallel_map
from evalset.speed.strings import string_bytes

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
_SUSPECT = r"[0-9@]|[?&;][a-z_]+="  # personal data needs one of these: the patterns run on such texts only

_DIGIT_RUN = re.compile(r"(?<!\d)\d+(?:[ \-]\d+)*")  # digits, grouped by spaces or hyphens (payment cards)
_LINE_BREAKS = r"[\t\n\r\x0b\x0c\x1c-\x1f\x{85}\x{2028}\x{2029}]"  # always become spaces


def normalise_texts(raw: pa.Array, normalisation: Normalisation) -> pa.Array:
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
    normalised = normalise_texts(raw, normalisation)
    probe = normalised if normalisation == Normalisation() else normalise_texts(raw, Normalisation())
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
        excluded = normalise_texts(pa.array(list(screen.excluded), pa.string()), normalisation)
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


def screen_grouped_rows(grouped: pa.Table, normalisation: Normalisation,
                        screen: Screen) -> tuple[pa.Table, dict[str, int]]:
    """Step 2 over the grouped rows of step 1 (either engine's): the kept rows, with the normalised ``query``
    in place of ``raw_query``, and the submissions dropped by reason (every reason of ``DROP_REASONS``)."""
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
