"""Document texts: JSON Lines ``{"doc_id", "text"[, "title", "url"]}`` (BEIR's ``corpus.jsonl``, with ``_id`` for
``doc_id``, among them) or TSV ``doc_id<TAB>text``.
"""

from __future__ import annotations

import os
from collections.abc import Collection

import pandas as pd

from evalset.errors import InputError
from evalset.io.files import content_kind, json_objects, local_file, refuse_repeats, text_lines
from evalset.io.irds import irds_documents, is_irds

_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


def read_corpus(path: str | os.PathLike, doc_ids: Collection[str] | None = None) -> pd.DataFrame:
    """Read document texts: JSON Lines ``{"doc_id", "text"[, "title", "url"]}`` or TSV ``doc_id<TAB>text``.

    A JSON line may name its id ``_id`` instead of ``doc_id`` (BEIR's ``corpus.jsonl``: ``_id, title, text``); a
    line with both is refused when they differ. The title is kept as a column of its own (an empty title, as BEIR's
    MS MARCO has, stays empty), never joined to the text. ``-`` or a pipe is read once (``local_file``).

    The format follows the name (``.jsonl``/``.ndjson``/``.json`` or ``.tsv``/``.txt``, each optionally
    ``.gz``), else the first character (``{`` means JSON Lines). A TSV may start with a ``doc_id<TAB>text``
    header. Every line is validated (a line without ``doc_id`` or ``text`` is refused with its line number);
    only documents in ``doc_ids`` are kept when it is given, so a large corpus costs memory only for the
    documents needed. A document id given twice among the kept documents is refused.

    Returns ``doc_id, text`` (strings), plus ``title`` and ``url`` when a JSON corpus has them. ``irds:ID`` reads
    the documents ``doc_ids`` from an ir_datasets collection's docs store instead (:mod:`evalset.io.irds`).
    """
    if is_irds(path):
        return irds_documents(path, doc_ids)
    path = local_file(os.fspath(path))
    wanted = None if doc_ids is None else set(map(str, doc_ids))
    stem = path[:-3] if path.endswith(".gz") else path
    if stem.lower().endswith(_JSONL_SUFFIXES):
        is_json = True
    elif stem.lower().endswith((".tsv", ".txt")):
        is_json = False
    else:
        is_json = content_kind(path) == "json"
    records, line_numbers = (_corpus_jsonl if is_json else _corpus_tsv)(path, wanted)
    columns = ["doc_id", "text"] + [c for c in ("title", "url") if any(c in r for r in records)]
    frame = pd.DataFrame.from_records(records, columns=columns).astype(object)
    refuse_repeats(frame, ["doc_id"], line_numbers, path, "document id")
    return frame.fillna("").astype(str).reset_index(drop=True)


def _corpus_jsonl(path: str, wanted: set[str] | None) -> tuple[list[dict], list[int]]:
    records, line_numbers = [], []
    for number, record in json_objects(path):
        doc_id = record.get("doc_id", record.get("_id"))
        if "doc_id" in record and "_id" in record and str(record["_id"]) != str(record["doc_id"]):
            raise InputError(f"document has two ids: doc_id {record['doc_id']!r} and _id {record['_id']!r}", path,
                             number)
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or not str(doc_id).strip():
            keys = ", ".join(sorted(record)) or "none"
            raise InputError(f"document has no doc_id (keys: {keys})", path, number)
        if not isinstance(record.get("text"), str):
            raise InputError(f"document {doc_id} has no text string", path, number)
        doc_id = str(doc_id).strip()
        if wanted is None or doc_id in wanted:
            kept = {key: record[key] for key in ("title", "url") if isinstance(record.get(key), str)}
            records.append({"doc_id": doc_id, "text": record["text"], **kept})
            line_numbers.append(number)
    return records, line_numbers


def _corpus_tsv(path: str, wanted: set[str] | None) -> tuple[list[dict], list[int]]:
    records, line_numbers = [], []
    with text_lines(path) as lines:
        for number, line in lines:
            if not line.strip() or (number == 1 and line.startswith("doc_id\t")):
                continue
            doc_id, tab, text = line.partition("\t")
            if not tab or not doc_id.strip():
                raise InputError(f"expected `doc_id<TAB>text`, found {line[:80]!r}", path, number)
            doc_id = doc_id.strip()
            if wanted is None or doc_id in wanted:
                records.append({"doc_id": doc_id, "text": text})
                line_numbers.append(number)
    return records, line_numbers
