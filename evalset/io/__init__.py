"""Readers and writers of the files the stages hand each other, one module per kind of file.

All input validation lives here: a reader returns a clean DataFrame or raises
:class:`~evalset.errors.InputError` naming the file and line; a writer writes a temporary file and renames it.

================  =====================================================================================
module            files
================  =====================================================================================
``files``         existence checks, text lines (plain or ``.gz``), TSV with a header, atomic writes
``outputs``       a command's outputs checked first: none is an input or another output, each can be written
``trec``          TREC runs and qrels, run folders, run names (JSON runs: ``jsonrun``; TSV/CSV/Parquet: ``tablerun``)
``runframe``      a run given as a DataFrame, validated: the one check of a run's values for the frame readers
``frames``        qrels and runs held in Python (ir_measures' frames and namedtuples, pytrec_eval's dicts)
``queries``       ``queries.tsv``, TREC topics, query lists
``corpus``        document texts (JSON Lines or TSV)
``annotations``   labels tables, qrels as one annotator, the grades of several annotators
``querylog``      query logs (TSV, CSV, JSON Lines, Parquet) in memory or as DuckDB SQL
``poolfiles``     a pool folder: its file names, ``pool.tsv``, ``tasks.jsonl``, the manifest; the folder written
================  =====================================================================================

The readers and writers are also importable from here for notebook use (``from evalset.io import read_run``),
loaded when first asked for, so that importing one module (``evalset.io.digests``) does not load them all; the
library imports from the modules themselves.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "GRADES_COLUMNS": "annotations", "LABELS_COLUMNS": "annotations", "LABEL_KINDS": "annotations",
    "LogColumns": "querylog", "POOL_FILES": "poolfiles", "QUERIES_COLUMNS": "queries", "TASK_FIELDS": "poolfiles",
    "atomic_path": "files",
    "expand_run_paths": "trec", "labels_from_file": "annotations", "qrels_frame": "frames", "qrels_from_frame": "trec",
    "query_log_sql": "querylog", "read_annotations": "annotations", "read_corpus": "corpus",
    "read_judged_pairs": "annotations", "read_labels": "annotations", "read_pairs_and_tasks": "poolfiles",
    "read_pool_manifest": "poolfiles", "read_pool_pairs": "poolfiles",
    "read_qrels": "trec", "read_queries": "queries", "read_query_list": "queries", "read_query_log": "querylog",
    "read_query_log_table": "querylog", "read_run": "trec", "read_tasks": "poolfiles", "run_frame": "frames",
    "run_from_frame": "runframe",
    "run_name": "trec", "write_labels": "annotations", "write_qrels": "trec", "write_queries": "queries",
    "write_pool_folder": "poolfiles", "write_run": "trec",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'evalset.io' has no attribute {name!r}")
    return getattr(importlib.import_module(f"evalset.io.{_EXPORTS[name]}"), name)
