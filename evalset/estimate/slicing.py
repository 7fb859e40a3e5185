"""The human slice: which queries humans grade in full, drawn at random, and the record ``estimate`` reads back.

Designs
-------
``uniform``
    ``size`` queries drawn without replacement from all the queries (one stratum, share 1).
``stratified``
    per traffic stratum (the ``stratum`` and ``stratum_share`` of ``queries.tsv``), ``per_stratum`` queries (2 or
    more), or the share ``fraction`` (in (0, 1]) of the stratum's queries rounded up and at least 2 (an interval
    needs two); at most all of a stratum's queries, never all the queries of the pool. The strata's traffic shares
    are carried over into the record; they must sum to 1 (within 0.01), and a stratum has one share.

A uniform slice with a queries file of several strata is refused: it would ignore the strata (draw a stratified
one, or give no queries file). The settings are checked before anything else (a size of 2 or more, fewer than
all the queries).

The draw is seeded: ``numpy.random.default_rng(seed)``, the queries sorted by id (per stratum, strata by name),
so the same queries and seed give the same slice. A slice of fewer than 2 queries is refused.

The record (``slice.json``, :mod:`evalset.io.slicerecord`) holds the design, the seed, every query of the set with
its stratum and share, the slice's query ids, and the pool it was cut from (path and sha256 of its ``pool.tsv``).
The slice's pool folder holds the pool's files restricted to the slice's queries, which ``evalset push`` and
``evalset judge`` take as they are.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalset import __version__
from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.estimate.spec import SELECT_RULES
from evalset.io.digests import file_sha256
from evalset.io.poolfiles import (
    PAIRS_FILE,
    SOURCES_FILE,
    TASKS_FILE,
    pool_tsv_lines,
    read_pool_manifest,
    read_pool_pairs,
    task_lines,
    write_pool_folder,
)
from evalset.io.queries import read_queries, stratum_shares
from evalset.io.slicerecord import RECORD_NAME, SliceRecord
from evalset.params import validate_params
from evalset.seeds import generator

DESIGNS = ("uniform", "stratified")


def _strata_of(query_ids: list[str], queries: pd.DataFrame) -> pd.DataFrame:
    source = queries.attrs.get("source")
    table = queries.drop_duplicates("query_id").set_index("query_id")
    unknown = sorted(set(query_ids) - set(table.index))
    if unknown:
        raise InputError(f"{len(unknown)} queries of the pool are not in the queries file (e.g. {unknown[:3]})",
                         source)
    if "stratum_share" not in table:
        raise InputError("a stratified slice needs the strata's traffic shares (a stratum_share column)", source)
    share = stratum_shares(table.reset_index(), source).set_axis(table.index)  # they sum to 1: its rule
    every = pd.DataFrame({"stratum": table["stratum"].astype(str), "stratum_share": share})
    return every.loc[query_ids].reset_index()


def _stratified(queries: pd.DataFrame | None) -> bool:
    return queries is not None and "stratum" in queries and queries["stratum"].nunique() > 1


@validate_params(SELECT_RULES)
def select_slice(query_ids: list[str], *, size: int | None = None, per_stratum: int | None = None,
                 fraction: float | None = None, queries: pd.DataFrame | None = None, seed: int = DEFAULT_SEED,
                 source: dict[str, Any] | None = None) -> SliceRecord:
    """Draw the human slice from ``query_ids`` (see the module docstring): ``size`` (uniform), or ``per_stratum``
    or ``fraction`` (stratified, strata from ``queries``: ``query_id, stratum, stratum_share``), each checked
    against :data:`evalset.contract.SELECT_RULES` (at least 2 queries, 2 per stratum, a share in (0, 1])."""
    if sum(v is not None for v in (size, per_stratum, fraction)) != 1:
        raise InputError("give exactly one of a slice size, a number per stratum, or a fraction per stratum")
    ids = sorted(set(map(str, query_ids)))
    if not ids:
        raise InputError("no query to draw a slice from")
    rng = generator(seed)
    if size is not None:
        if _stratified(queries):
            raise InputError("the queries file has strata: draw a stratified slice (a number per stratum or a "
                             "fraction), or give no queries file for a uniform one", queries.attrs.get("source"))
        if size >= len(ids):
            raise InputError(f"a slice of {size} queries out of {len(ids)}: give fewer than all (--size; the other "
                             "queries are the ones the LLM grades stand in for)")
        table = pd.DataFrame({"query_id": ids, "stratum": "all", "stratum_share": 1.0})
        chosen = [ids[i] for i in rng.choice(len(ids), size, replace=False)]
        design, settings = "uniform", {"size": size}
    else:
        if queries is None or "stratum" not in queries:
            raise InputError("a stratified slice needs a queries file with a stratum column (queries.tsv)")
        table = _strata_of(ids, queries).sort_values(["stratum", "query_id"], kind="stable")
        chosen = []
        for _, group in table.groupby("stratum", sort=True):
            members = group["query_id"].tolist()
            wanted = per_stratum if per_stratum is not None else math.ceil(fraction * len(members))
            take = min(len(members), max(2, wanted))
            chosen += [members[i] for i in rng.choice(len(members), take, replace=False)]
        if len(chosen) >= len(ids):
            raise InputError(f"the stratified slice takes all {len(ids)} queries of the pool: draw fewer per "
                             "stratum (the other queries are the ones the LLM grades stand in for)")
        design = "stratified"
        settings = {"per_stratum": per_stratum} if per_stratum is not None else {"fraction": fraction}
    if len(chosen) < 2:
        raise InputError(f"a slice of {len(chosen)} queries: an interval needs at least 2")
    return SliceRecord(design, seed, table.reset_index(drop=True), tuple(sorted(chosen)), settings, source or {})


def write_slice_pool(pool_dir: str | os.PathLike, record: SliceRecord, output: str | os.PathLike, *,
                     replace: bool = False) -> list[str]:
    """Write the pool of ``pool_dir`` restricted to the slice's queries, and the record, into ``output``.

    ``pool.tsv``, ``pool_sources.tsv`` and ``tasks.jsonl`` keep the pool's lines of the slice's queries (in their
    order); ``pool.json`` holds the slice's counts and the source pool's manifest. The folder is built aside and
    renamed into place (:func:`~evalset.io.files.folder_built_aside`): an existing non-empty ``output`` is
    refused unless ``replace``, and never left mixed.
    """
    pool_dir = Path(pool_dir)
    keep = set(record.slice)
    pairs, sources = (pool_tsv_lines(pool_dir / name, ("query_id",), {(query,) for query in keep})
                      for name in (PAIRS_FILE, SOURCES_FILE))
    tasks = task_lines(pool_dir / TASKS_FILE, "query_id", keep) if (pool_dir / TASKS_FILE).exists() else None
    manifest = {"evalset_version": __version__,
                "slice": {"record": RECORD_NAME, "queries": len(record.slice), "of": len(record.queries)},
                "counts": {"queries": len(record.slice), "pairs": len(pairs) - 1},
                "source_pool": read_pool_manifest(pool_dir, missing_ok=True)}
    texts = {RECORD_NAME: json.dumps({"evalset_version": __version__, **record.to_dict()}, indent=2,
                                     ensure_ascii=False) + "\n"}
    return write_pool_folder(output, manifest, pairs=pairs, sources=sources, tasks=tasks, records=texts,
                             replace=replace)


def select_from_pool(pool_dir: str | os.PathLike, *, queries: pd.DataFrame | None = None, seed: int = DEFAULT_SEED,
                     **design: Any) -> SliceRecord:
    """Draw the slice from the queries of the pool in ``pool_dir`` (``design``: see :func:`select_slice`)."""
    pool_tsv = Path(pool_dir) / PAIRS_FILE
    pairs = read_pool_pairs(pool_tsv)
    if pairs.empty:
        raise InputError("the pool has no pair: nothing to draw a slice from", str(pool_tsv))
    source = {"pool": os.fspath(pool_dir), "pool_sha256": file_sha256(pool_tsv)}
    return select_slice(pairs["query_id"].unique().tolist(), queries=queries, seed=seed, source=source, **design)


@dataclass(frozen=True)
class SliceSelection:
    """A slice drawn from a pool and written (:func:`select_slice_pool`): its record, the slice's folder and the
    files written in it."""

    record: SliceRecord
    folder: str
    written: tuple[str, ...]

    def to_text(self) -> str:
        """The line ``evalset estimate select`` prints: the slice per stratum, and what to do with its folder."""
        return (f"{self.record.summary()}; wrote {self.folder} (push it to Label Studio, then pass {self.folder} to "
                "`evalset estimate run slice --slice`)")

    def to_dict(self) -> dict[str, Any]:
        """The record (as ``slice.json`` holds it), the folder and the files written."""
        return {"record": self.record.to_dict(), "folder": self.folder, "written": list(self.written)}


def select_slice_pool(pool_dir: str | os.PathLike, output: str | os.PathLike, *,
                      queries_path: str | os.PathLike | None = None, seed: int = DEFAULT_SEED,
                      replace: bool = False, **design: Any) -> SliceSelection:
    """Draw the slice of the pool in ``pool_dir`` (strata from the ``queries.tsv`` at ``queries_path``; ``design``:
    see :func:`select_slice`) and write its pool folder and record as ``output`` (:func:`write_slice_pool`; an
    existing non-empty ``output`` is refused unless ``replace``)."""
    queries = read_queries(queries_path) if queries_path else None
    if queries is not None:
        queries.attrs["source"] = os.fspath(queries_path)
    record = select_from_pool(pool_dir, queries=queries, seed=seed, **design)
    return SliceSelection(record, os.fspath(output), tuple(write_slice_pool(pool_dir, record, output,
                                                                                replace=replace)))
