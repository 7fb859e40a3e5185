"""Collections by ir_datasets id: ``irds:msmarco-passage/trec-dl-2019/judged`` wherever a file of qrels is read.

Conventions
-----------
- A source written ``irds:ID`` is read by ir_datasets (the optional extra ``ir-datasets``): ``ID`` is the dataset's
  id as ``ir_datasets.load`` takes it. ir_datasets reads its own cache (``IR_DATASETS_HOME``, else
  ``~/.ir_datasets``) and downloads what it lacks on first use; a download that fails is refused in one line naming
  the id and the cache, never taken for an empty collection.
- Qrels are the dataset's ``qrels_iter()``: ``query_id, doc_id, grade`` (its ``relevance``), as
  :func:`evalset.io.trec.read_qrels` returns a file's, under the same checks (nothing judged, a pair graded twice).
- An unknown id, a dataset without qrels, or ir_datasets not installed: one line each (:class:`InputError`).
"""

from __future__ import annotations

import logging
import os
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
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {dataset_id!r} (its ids: `ir_datasets list`, or "
                         "https://ir-datasets.com)", source) from None


def irds_qrels(source: str) -> pd.DataFrame:
    """``query_id, doc_id, grade`` of the dataset ``source`` (``irds:ID``) names, as it gives them (module
    docstring: :func:`evalset.io.trec.read_qrels` checks them); the frame's ``attrs["irds"]`` holds the id and
    ir_datasets' version."""
    dataset = load_dataset(source)
    if not dataset.has_qrels():
        raise InputError("the dataset has no qrels (relevance judgments): name one of its subsets that has them "
                         "(e.g. msmarco-passage/trec-dl-2019/judged)", source)
    rows = _fetched(source, lambda: [(q.query_id, q.doc_id, q.relevance) for q in dataset.qrels_iter()])
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"]).astype(
        {"query_id": str, "doc_id": str, "grade": np.int64})
    frame.attrs["irds"] = provenance(source)
    return frame


def provenance(source: str) -> dict[str, str]:
    """What a frozen set records of a collection read by id: the id and ir_datasets' version."""
    import ir_datasets

    return {"id": source.removeprefix(PREFIX), "ir_datasets": ir_datasets.__version__}


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
        home = os.environ.get("IR_DATASETS_HOME", "~/.ir_datasets")
        raise InputError(f"ir_datasets has not got it in its cache ({home}) and could not download it: run once "
                         "where the network is reachable, or set IR_DATASETS_HOME to a cache that holds it",
                         source) from None
    finally:
        logging.disable(silenced)
