"""Collections by ir_datasets id: ``irds:msmarco-passage/trec-dl-2019/judged`` wherever a file of qrels, topics or
document texts is read.

Conventions
-----------
- A source written ``irds:ID`` is read by ir_datasets (the optional extra ``ir-datasets``): ``ID`` is the dataset's
  id as ``ir_datasets.load`` takes it. ir_datasets reads its own cache (``IR_DATASETS_HOME``, else
  ``~/.ir_datasets``) and downloads what it lacks on first use; a download that fails is refused in one line naming
  the id and the cache, never taken for an empty collection.
- Qrels are the dataset's ``qrels_iter()``: ``query_id, doc_id, grade`` (its ``relevance``), as
  :func:`evalset.io.trec.read_qrels` returns a file's, under the same checks (nothing judged, a pair graded twice).
- Topics are its ``queries_iter()``: ``query_id, query`` (each query's ``default_text()``: a TREC topic's title),
  checked as a topics file is (:func:`evalset.io.queries.read_queries`).
- Documents are read by id from its docs store (``docs_store().get_many``: ir_datasets' on-disk lookup, built on
  first use), never the whole collection into memory: only the ids asked for, and a collection read without ids
  is refused. ``doc_id, text`` (each document's ``default_text()``: title and body joined as the dataset says). A
  document id the store lacks is refused, naming it: the ids of a run and of a collection that do not meet mean
  another collection.
- An unknown id, a dataset without what is asked (qrels, queries, documents), or ir_datasets not installed: one
  line each (:class:`InputError`).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Collection
from typing import Any

import numpy as np
import pandas as pd

from evalset.errors import InputError

PREFIX = "irds:"
EXTRA = "pip install 'evalset[ir-datasets]'"


def is_irds(source: str | os.PathLike) -> bool:
    """Whether ``source`` names an ir_datasets collection (``irds:ID``), not a file."""
    return isinstance(source, str) and source.startswith(PREFIX)


def load_dataset(source: str) -> Any:
    """The ir_datasets dataset ``source`` (``irds:ID``) names; an unknown id is refused naming it."""
    dataset_id = source.removeprefix(PREFIX)
    try:
        import ir_datasets
    except ImportError:
        raise InputError(f"reading {source} needs ir_datasets: {EXTRA}", source) from None
    except OSError as error:  # it makes its cache folders on import
        raise InputError(f"ir_datasets cannot use its cache folder {_home()}: {error.strerror or error}",
                         source) from None
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {dataset_id!r} (its ids: `ir_datasets list`, or "
                         "https://ir-datasets.com)", source) from None


def irds_qrels(source: str) -> pd.DataFrame:
    """``query_id, doc_id, grade`` of the dataset ``source`` (``irds:ID``) names, as it gives them (module
    docstring: :func:`evalset.io.trec.read_qrels` checks them); the frame's ``attrs["irds"]`` holds the id and
    ir_datasets' version."""
    dataset = _having(source, "qrels", "qrels (relevance judgments)")
    rows = _fetched(source, lambda: [(q.query_id, q.doc_id, q.relevance) for q in dataset.qrels_iter()])
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"]).astype(
        {"query_id": str, "doc_id": str, "grade": np.int64})
    frame.attrs["irds"] = provenance(source)
    return frame


def irds_queries(source: str) -> pd.DataFrame:
    """``query_id, query`` of the dataset ``source`` names, in its order (module docstring)."""
    dataset = _having(source, "queries", "topics")
    rows = _fetched(source, lambda: [(q.query_id, q.default_text()) for q in dataset.queries_iter()])
    frame = pd.DataFrame(rows, columns=["query_id", "query"], dtype=object)
    frame.attrs["irds"] = provenance(source)
    return frame


def irds_documents(source: str, doc_ids: Collection[str] | None) -> pd.DataFrame:
    """``doc_id, text`` of the documents ``doc_ids`` of the dataset ``source`` names, read from its docs store
    (module docstring)."""
    if doc_ids is None:
        raise InputError("a collection by id is read by document id only, never whole: nothing here names the "
                         "documents wanted", source)
    dataset = _having(source, "docs", "documents")
    wanted = sorted(set(map(str, doc_ids)))
    found = _fetched(source, lambda: dataset.docs_store().get_many(wanted))
    lacking = [doc_id for doc_id in wanted if doc_id not in found]
    if lacking:
        raise InputError(f"{len(lacking):,} of the {len(wanted):,} documents asked for are not in the collection "
                         f"({', '.join(lacking[:3])}{' ...' if len(lacking) > 3 else ''}): the runs are of another "
                         "collection", source)
    frame = pd.DataFrame([(doc_id, found[doc_id].default_text()) for doc_id in wanted], columns=["doc_id", "text"],
                         dtype=object)
    frame.attrs["irds"] = provenance(source)
    return frame


def _having(source: str, part: str, said: str) -> Any:
    """The dataset ``source`` names, refused when it has no ``part`` (``queries``, ``docs``)."""
    dataset = load_dataset(source)
    if not getattr(dataset, f"has_{part}")():
        raise InputError(f"the dataset has no {said}: name one of its subsets that has them", source)
    return dataset


def provenance(source: str) -> dict[str, str]:
    """What a pool records of a collection read by id: the id and ir_datasets' version."""
    import ir_datasets

    return {"id": source.removeprefix(PREFIX), "ir_datasets": ir_datasets.__version__}


READ_AS = {"qrels": irds_qrels, "queries": irds_queries}
"""What a frozen set reads from a collection, by the name its manifest records."""


def collection_record(source: str, read_as: Collection[str]) -> dict[str, Any]:
    """What a frozen set records of a collection it read by id, as each of ``read_as`` (``qrels``, ``queries``):
    the id, ir_datasets' version and the sha256 of what each gave (:func:`content_sha256`), which ``verify``
    reads again."""
    return {**provenance(source), "sha256": {part: content_sha256(READ_AS[part](source)) for part in sorted(read_as)}}


def content_sha256(frame: pd.DataFrame) -> str:
    """The sha256 of a collection's part as read: its rows, tab separated, one per line, in its order."""
    lines = frame.astype(str).to_csv(sep="\t", header=False, index=False, lineterminator="\n")
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _fetched(source: str, read: Any) -> Any:
    """``read()``, a failed download refused in one line naming the cache it was not in (ir_datasets' own log
    lines of its retries silenced: the failure is said once)."""
    silenced = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        return read()
    except (OSError, RuntimeError) as error:  # ir_datasets: RuntimeError('All download sources failed', ...)
        if isinstance(error, RuntimeError) and error.args[:1] != ("All download sources failed",):
            raise
        if isinstance(error, OSError) and error.errno is not None:  # the file system's (a full disk), not the network's
            raise InputError(f"ir_datasets could not use its cache ({_home()}): {error.strerror}", source) from None
        raise InputError(f"ir_datasets has not got it in its cache ({_home()}) and could not download it: run once "
                         "where the network is reachable, or set IR_DATASETS_HOME to a cache that holds it",
                         source) from None
    finally:
        logging.disable(silenced)


def recheck(source: str, record: dict[str, Any]) -> dict[str, str]:
    """Per part a frozen set read from the collection ``source`` (its manifest's ``record``:
    :func:`collection_record`), whether ir_datasets gives it again as then: ``same``, ``changed``, or why it could
    not be read (``not checked: ...``)."""
    try:
        return {part: "same" if content_sha256(READ_AS[part](source)) == digest else "changed"
                for part, digest in record["sha256"].items()}
    except InputError as error:
        return dict.fromkeys(record["sha256"], f"not checked: {error.message}")


def _home() -> str:
    return os.environ.get("IR_DATASETS_HOME", "~/.ir_datasets")
