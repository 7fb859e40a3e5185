"""Query tables: ``queries.tsv`` (written by ``evalset sample``), TREC topics files, BEIR's ``queries.jsonl``,
and lists of queries.
"""

from __future__ import annotations

import csv
import os
import re

import numpy as np
import pandas as pd

from evalset.errors import InputError, quoted
from evalset.io.files import (
    atomic_path,
    check_file,
    content_kind,
    json_objects,
    local_file,
    open_file,
    read_tsv_with_header,
    refuse_blank,
    refuse_repeats,
    text_lines,
)
from evalset.io.irds import irds_queries, is_irds

# --- corpus, queries and labels
QUERIES_COLUMNS = ("query_id", "query", "stratum", "frequency", "stratum_share", "weight", "split")


def read_queries(path: str | os.PathLike) -> pd.DataFrame:
    """Read queries: a ``queries.tsv`` written by ``sample``, a TREC topics file ``qid<TAB>query``, or JSON Lines
    ``{"_id", "text"}`` (BEIR's ``queries.jsonl``; ``query_id`` and ``query`` are accepted as the names too).

    A JSON file (first character ``{``) keeps only the id and the text (BEIR's ``metadata`` is not a query's
    field); ``-`` or a pipe is read once (:func:`evalset.io.files.local_file`).

    A file whose first field is ``query_id`` is a ``queries.tsv`` (a header, tab separated, never quoted, all
    columns kept as strings: :func:`write_queries`; a file pandas wrote with its quoting reads as written too);
    anything else is a headerless topics file, split at
    the first tab. Returns a frame with ``query_id`` and ``query`` first, in file order, with each row's line
    number in ``frame.attrs["line_numbers"]`` (for error messages downstream). A file without a query, an empty query id
    or query text, a line with the wrong number of fields, or a repeated query id is refused with its line; so
    are a ``split`` other than ``test`` or ``dev`` and, within one stratum, a ``stratum_share`` that differs from
    the stratum's other lines (a stratum has one traffic share; every command reading strata gets this rule).
    ``irds:ID`` reads an ir_datasets collection's topics instead (:mod:`evalset.io.irds`), under the same checks.
    """
    path = os.fspath(path)
    kind = "irds" if is_irds(path) else content_kind(path := local_file(path))
    if kind == "irds":
        frame = irds_queries(path)
        line_numbers = list(range(1, len(frame) + 1))
    elif kind == "queries-tsv":
        rows, line_numbers, columns = read_tsv_with_header(path, required=("query_id", "query"), quoted=None)
        frame = pd.DataFrame([[unquoted(field) for field in row] for row in rows], columns=columns, dtype=object)
    elif kind == "json":
        frame, line_numbers = _queries_jsonl(path)
    else:
        rows, line_numbers = [], []
        with text_lines(path) as lines:
            for number, line in lines:
                if not line.strip():
                    continue
                if "\t" not in line:
                    raise InputError(f"expected `qid<TAB>query`, found {quoted(line)}", path, number)
                query_id, query = line.split("\t", 1)
                rows.append((query_id.strip(), query.strip()))
                line_numbers.append(number)
        frame = pd.DataFrame(rows, columns=["query_id", "query"], dtype=object)
    if frame.empty:
        raise InputError("no query in the file (expected `qid<TAB>query` lines, a queries.tsv or JSON Lines)", path)
    refuse_blank(frame, ("query_id", "query"), line_numbers, path)
    refuse_repeats(frame, ["query_id"], line_numbers, path, "query id")
    _refuse_bad_splits(frame, line_numbers, path)
    _refuse_conflicting_shares(frame, line_numbers, path)  # before their sum: it names the line that differs
    if "stratum_share" in frame:
        stratum_shares(frame, path, line_numbers)
    ordered = ["query_id", "query", *[c for c in frame.columns if c not in ("query_id", "query")]]
    frame = frame[ordered].astype(str).reset_index(drop=True)
    frame.attrs["line_numbers"] = line_numbers
    return frame


def _queries_jsonl(path: str) -> tuple[pd.DataFrame, list[int]]:
    rows, line_numbers = [], []
    for number, record in json_objects(path):
        fields = []
        for names in (("_id", "query_id"), ("text", "query")):
            found = [record[name] for name in names if name in record]
            if not found or isinstance(found[0], bool) or not isinstance(found[0], (str, int)):
                keys = ", ".join(sorted(record)) or "none"
                raise InputError(f"a query needs {' or '.join(names)} (a string; keys: {keys})", path, number)
            fields.append(str(found[0]).strip())
        rows.append(tuple(fields))
        line_numbers.append(number)
    return pd.DataFrame(rows, columns=["query_id", "query"], dtype=object), line_numbers


SPLITS = ("test", "dev")
"""The values of the ``split`` column."""


def _refuse_bad_splits(frame: pd.DataFrame, line_numbers: list[int], path: str) -> None:
    if "split" not in frame:
        return
    bad = ~frame["split"].astype(str).isin(SPLITS)
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise InputError(f"split must be one of {', '.join(SPLITS)}, found {frame['split'].iloc[row]!r}", path,
                         line_numbers[row])


SHARE_TOLERANCE = 0.01
"""How far from 1 the strata's traffic shares may sum (shares are written rounded)."""


def stratum_shares(frame: pd.DataFrame, source: str | None = None,
                   line_numbers: list[int] | None = None) -> pd.Series:
    """The ``stratum_share`` column as numbers, or one error naming the first query (and its line, when
    ``line_numbers`` are known) whose share is not a number >= 0 or that has no stratum: the one rule of every
    reader of strata (``read_queries``, compare's strata, estimate's slices)."""
    shares = pd.to_numeric(frame["stratum_share"], errors="coerce")
    bad = shares.isna() | (shares < 0)
    if "stratum" in frame:
        bad |= frame["stratum"].isna() | (frame["stratum"].astype(str).str.strip() == "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        line = line_numbers[row] if line_numbers is not None else None
        raise InputError(f"query {frame['query_id'].iloc[row]}: a stratum and a traffic share (stratum_share) >= 0 "
                         f"are needed, got {frame['stratum_share'].iloc[row]!r}", source, line)
    total = float(shares.groupby(frame["stratum"].astype(str)).first().sum()) if "stratum" in frame else 1.0
    if abs(total - 1) > SHARE_TOLERANCE:  # a share is of the whole traffic: renormalising a typo would hide it
        raise InputError(f"the strata's traffic shares sum to {total:.4g}, not 1: fix stratum_share (each "
                         "stratum's share of the whole traffic)", source)
    return shares


def _refuse_conflicting_shares(frame: pd.DataFrame, line_numbers: list[int], path: str) -> None:
    """Refuse a stratum whose lines give different traffic shares, naming the first line that differs from the
    stratum's most common share (a share that is not a number is left to the commands that read it)."""
    if not {"stratum", "stratum_share"} <= set(frame.columns):
        return
    shares = pd.to_numeric(frame["stratum_share"], errors="coerce")
    for stratum, group in shares.groupby(frame["stratum"].astype(str), sort=False):
        values = group.dropna()
        if values.nunique() < 2:
            continue
        common = values.value_counts(sort=True).index[0]
        row = int(values.index[values != common][0])
        others = int((values == common).sum())
        raise InputError(f"stratum {stratum}: stratum_share {frame['stratum_share'].iloc[row]} here, "
                         f"{common:g} on {others} other line(s) of the stratum: a stratum has one traffic share",
                         path, line_numbers[row])


def read_query_list(path: str | os.PathLike) -> list[str]:
    """Queries listed in a file: the ``query`` column of a TSV with a header (e.g. an earlier
    ``queries.tsv``), otherwise one query per line. Blank lines and lines starting with ``#`` are skipped."""
    path = local_file(os.fspath(path))
    check_file(path)
    try:
        with open_file(path, "rt", encoding="utf-8-sig") as handle:
            lines = [line.rstrip("\r\n") for line in handle]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path) from None
    if lines and "\t" in lines[0] and "query" in lines[0].split("\t"):
        rows, _, header = read_tsv_with_header(path, required=("query",), quoted=None)  # read as read_queries does
        return [unquoted(row[header.index("query")]) for row in rows]
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


_OLD_QUOTED = re.compile(r'"((?:[^"]|"")*""(?:[^"]|"")*)"')
"""A field as the csv module quoted it in a ``queries.tsv`` written before 2026-12-06: wrapped in quotes, its own
quotes doubled (it was quoted only because it held one)."""


def unquoted(field: str) -> str:
    """A ``queries.tsv`` field as written: itself, or, in the csv module's quoting of an older file, its text."""
    match = _OLD_QUOTED.fullmatch(field)
    return match.group(1).replace('""', '"') if match else field


def write_queries(queries: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``queries.tsv`` (atomically): the columns of ``QUERIES_COLUMNS``, tab separated, with a header, never
    quoted: a query holds no tab or line break (``sample`` makes them spaces), so each field is its text as it is,
    read back unchanged by :func:`read_queries` and ``pandas.read_csv(sep="\\t", quoting=csv.QUOTE_NONE)``. A
    field with a tab or a line break, or one a reader would take for an older file's quoting (``"a ""b"" c"``), is
    refused naming its query."""
    columns = queries.loc[:, list(QUERIES_COLUMNS)]
    texts = columns.astype(str)
    for name in texts:
        bad = texts[name].str.contains(r"[\t\r\n]") | texts[name].map(lambda text: unquoted(text) != text)
        if bad.any():
            row = texts[bad].iloc[0]
            raise InputError(f"query {row['query_id']}: its {name} {quoted(row[name])} holds a tab or a line break, or "
                             "reads as an older file's quoting: queries.tsv writes each field as it is")
    with atomic_path(path) as tmp:
        columns.to_csv(tmp, sep="\t", index=False, lineterminator="\n", quoting=csv.QUOTE_NONE)
