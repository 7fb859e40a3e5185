"""A pool from its specification (a TOML file or the command's options) to its folder: ``pool.tsv`` (blind
judging pairs), ``pool_sources.tsv`` (provenance), ``tasks.jsonl`` (what annotators see), ``pool.json`` (inputs,
settings and counts); :class:`PoolBuild` renders the summary the command prints.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from evalset import __version__
from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.io.annotations import read_judged_pairs
from evalset.io.corpus import read_corpus
from evalset.io.digests import file_sha256
from evalset.io.documents import read_toml
from evalset.io.irds import is_irds
from evalset.io.irds import provenance as irds_provenance
from evalset.io.poolfiles import POOL_FILES, write_pool_folder
from evalset.io.queries import read_queries
from evalset.io.runtext import ReadAhead
from evalset.io.trec import expand_run_paths
from evalset.params import Constraint, check, check_fields
from evalset.pooling.pool import PAIR_ID_DIGITS, Pool, UnknownQueriesError, attach_texts, build_pool
from evalset.pooling.spec import POOL_SPEC_RULES
from evalset.pooling.topk import read_top_k
from evalset.render import counted


@dataclass(frozen=True)
class PoolSpec:
    """Everything that defines a pool; a TOML file in ``pools/`` holds the same keys.

    Relative paths in a spec file are resolved against the spec file's folder joined with its ``base`` key
    (default ``"."``); ``pools/dl19-demo.toml`` sets ``base = ".."`` so its paths read from the repository
    root. Keys: ``runs`` (list of files or folders), ``depth``, ``depths`` (a table, system name -> k),
    ``ties``, ``seed``, ``budget``, ``queries``, ``exclude_judged``, ``corpus``, ``output``. The depth, each run's
    depth, the tie rule, the seed and the budget are checked against :data:`RULES` when the spec is made.
    """

    runs: tuple[str, ...] = ()
    depth: int | None = None
    depths: dict[str, int] = field(default_factory=dict)
    ties: str = "trec"
    seed: int = DEFAULT_SEED
    budget: int | None = None
    queries: str | None = None
    exclude_judged: str | None = None
    corpus: str | None = None
    output: str | None = None
    spec_file: str | None = None

    RULES: ClassVar[dict[str, Constraint]] = POOL_SPEC_RULES

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)
        object.__setattr__(self, "depths", {name: check(f"depth of {name}", k, self.RULES["depth"])
                                            for name, k in self.depths.items()})

    @classmethod
    def from_toml(cls, path: str | os.PathLike) -> PoolSpec:
        """Read a pool specification; unknown keys and wrong types are refused naming the file."""
        path = os.fspath(path)
        data = read_toml(path)
        known = {f.name for f in fields(cls)} - {"spec_file"}
        unknown = sorted(set(data) - known - {"base"})
        if unknown:
            raise InputError(f"unknown key(s) {', '.join(unknown)}; expected {', '.join(sorted(known))}", path)
        base = Path(path).parent / str(data.pop("base", "."))

        def resolve(value: Any, key: str) -> str:
            if not isinstance(value, str) or not value:
                raise InputError(f"{key} must be a path (a non-empty string), got {value!r}", path)
            return os.path.normpath(base / value) if not os.path.isabs(value) else value

        runs = data.get("runs", [])
        if isinstance(runs, str):
            runs = [runs]
        if not isinstance(runs, list):
            raise InputError(f"runs must be a list of paths, got {runs!r}", path)
        values = {key: resolve(data[key], key) for key in ("queries", "exclude_judged", "corpus", "output")
                  if key in data}
        depths = data.get("depths", {})
        if not isinstance(depths, dict):
            raise InputError(f"depths must be a table of system = k, got {depths!r}", path)
        scalars = {key: data[key] for key in ("depth", "ties", "seed", "budget") if key in data}
        try:
            return cls(runs=tuple(resolve(run, "runs") for run in runs), depths=dict(depths), spec_file=path,
                       **scalars, **values)
        except InputError as exc:  # a value off its rule, named with the file it came from
            raise InputError(exc.message, path) from None

    def with_overrides(self, **overrides: Any) -> PoolSpec:
        """A copy where every override that is not None (or empty) replaces the spec's value."""
        given = {key: value for key, value in overrides.items() if value not in (None, (), [], {})}
        if "runs" in given:
            given["runs"] = tuple(given["runs"])
        if "depths" in given:
            given["depths"] = {**self.depths, **given["depths"]}
        return replace(self, **given)


@dataclass(frozen=True)
class PoolBuild:
    """A pool with what it was built from: the manifest (``pool.json``), and tasks when texts were given."""

    pool: Pool
    manifest: dict[str, Any]
    tasks: pd.DataFrame | None
    missing_text: pd.DataFrame | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset pool --format json``: the manifest (``pool.json``), nothing left to judge or not,
        and the pairs without text."""
        missing = [] if self.missing_text is None else self.missing_text.astype(str).to_dict(orient="records")
        return {"manifest": self.manifest, "nothing_left": self.nothing_left, "missing_text": missing}

    @property
    def nothing_left(self) -> bool:
        """Every pair of the top-k union is already judged (``exclude_judged``): nothing to judge, nothing written."""
        return self.pool.pairs.empty

    def to_text(self) -> str:
        """What ``evalset pool`` prints before the files it wrote: the counts, the per-system figures, and a
        warning naming pairs without text; or that nothing is left to judge."""
        pool, counts = self.pool, self.manifest["counts"]
        if self.nothing_left:
            judged = self.manifest["inputs"]["exclude_judged"]["path"]
            return (f"nothing left to judge: all {counts['candidates']:,} pairs of the top-k union (depth {pool.depth},"
                    f" {counted(len(pool.systems), 'run')}) are already judged in {judged}; no pool written")
        lines = [f"pooled {counted(counts['pairs'], 'pair', grouped=True)} over "
                 f"{counted(counts['queries'], 'query', 'queries', grouped=True)} from "
                 f"{counted(len(pool.systems), 'run')} "
                 f"(depth {pool.depth}, ties {pool.ties}, seed {pool.seed}); top-k union {counts['candidates']:,}, "
                 f"already judged {counts['judged_excluded']:,}, over budget {counts['budget_dropped']:,}"]
        table = pool.systems.copy()
        if "judged_at_k" in table:
            table["judged_at_k"] = table["judged_at_k"].map("{:.3f}".format)
        lines += table.reset_index().to_string(index=False).splitlines()
        if self.missing_text is not None and len(self.missing_text):
            shown = ", ".join(f"{q}/{d}" for q, d in self.missing_text[["query_id", "doc_id"]].head(5).to_numpy())
            lines.append(f"warning: {len(self.missing_text):,} pair(s) have no text in the corpus and are not in "
                         f"tasks.jsonl (listed in pool.json): {shown}")
        return "\n".join(lines)


def _empty_pool_cause(pool) -> str:
    if pool.candidates == 0:
        return "nothing to pool: the runs have no document in their top k"
    return f"nothing to pool: {pool.candidates:,} pairs in the top-k union, none kept"


def build_from_spec(spec: PoolSpec) -> PoolBuild:
    """Read every input of ``spec``, validate it, and build the pool, tasks and manifest (writes nothing)."""
    if not spec.runs:
        raise InputError("no runs to pool (give RUN files/folders or `runs` in the spec)")
    if spec.depth is None:
        raise InputError("no depth (give --depth or `depth` in the spec)")
    run_files = expand_run_paths(spec.runs)
    queries = read_queries(spec.queries) if spec.queries else None
    judged = read_judged_pairs(spec.exclude_judged) if spec.exclude_judged else None
    try:
        # the next run is read on a thread of its own while this one is ranked (one run ahead)
        runs = ReadAhead((name, read_top_k(path, (spec.depths or {}).get(name, spec.depth), spec.ties))
                         for name, path in run_files.items())
        pool = build_pool(runs, spec.depth,
                          depths=spec.depths, ties=spec.ties, seed=spec.seed, budget=spec.budget,
                          query_ids=None if queries is None else queries["query_id"], judged=judged)
    except UnknownQueriesError as exc:
        raise exc.in_file(queries, spec.queries) from None
    if pool.pairs.empty and not (pool.candidates and pool.judged_excluded == pool.candidates):
        raise InputError(_empty_pool_cause(pool), spec.spec_file)
    tasks = missing = None
    if spec.corpus:
        corpus = read_corpus(spec.corpus, doc_ids=pool.pairs["doc_id"].unique())
        tasks, missing = attach_texts(pool.pairs, corpus, queries)
    manifest = pool_manifest(pool, spec, run_files, missing)
    return PoolBuild(pool, manifest, tasks if queries is not None else None, missing)


def _input_record(path: str) -> dict[str, str]:
    """A file by its sha256; a collection by ir_datasets id (``irds:ID``) by the id and ir_datasets' version."""
    return {"path": path, **(irds_provenance(path) if is_irds(path) else {"sha256": file_sha256(path)})}


def pool_manifest(pool: Pool, spec: PoolSpec, run_files: Mapping[str, str],
                  missing_text: pd.DataFrame | None) -> dict[str, Any]:
    """The content of ``pool.json``: inputs with sha256, options, counts, per-system figures, overlap."""
    inputs: dict[str, Any] = {"runs": {name: _input_record(path) for name, path in sorted(run_files.items())}}
    for key in ("queries", "exclude_judged", "corpus", "spec_file"):
        if getattr(spec, key):
            inputs[key] = _input_record(getattr(spec, key))
    systems = pool.systems.round(6).astype(object).to_dict(orient="index")
    manifest = {
        "evalset_version": __version__,
        "inputs": inputs,
        "depth": pool.depth,
        "depths": pool.depths,
        "ties": pool.ties,
        "seed": pool.seed,
        "budget": pool.budget,
        "pair_id": f"first {PAIR_ID_DIGITS} hex digits of sha256(query_id TAB doc_id)",
        "order": "queries in seeded random order; within a query, documents in seeded random order",
        "counts": {
            "queries": len(pool.pairs_per_query),
            "candidates": pool.candidates,
            "judged_excluded": pool.judged_excluded,
            "budget_dropped": pool.budget_dropped,
            "pairs": len(pool.pairs),
        },
        "pairs_per_query": {q: int(n) for q, n in pool.pairs_per_query.items()},
        "systems": {name: {k: _plain(v) for k, v in row.items()} for name, row in systems.items()},
        "overlap": {name: {other: int(n) for other, n in row.items()}
                    for name, row in pool.overlap.to_dict(orient="index").items()},
    }
    if missing_text is not None:
        manifest["counts"]["missing_text"] = len(missing_text)
        manifest["missing_text"] = missing_text.astype(str).to_dict(orient="records")
    return manifest


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def pool_files(folder: str | os.PathLike) -> list[str]:
    """The paths :func:`write_pool` writes in ``folder``: what must not be an input of the pool."""
    return [os.path.join(folder, name) for name in POOL_FILES]


def write_pool(build: PoolBuild, folder: str | os.PathLike, *, replace: bool = False) -> list[str]:
    """Write ``pool.tsv``, ``pool_sources.tsv``, ``pool.json`` and (with tasks) ``tasks.jsonl`` as ``folder``
    (:func:`~evalset.io.poolfiles.write_pool_folder`: built aside and renamed into place, never half-written nor
    mixed with an earlier pool's files); an existing non-empty ``folder`` is refused unless ``replace``. Returns
    the paths written. A build with nothing left to judge (:attr:`PoolBuild.nothing_left`) writes nothing.
    """
    if build.nothing_left:
        return []
    return write_pool_folder(folder, build.manifest, pairs=build.pool.pairs[["pair_id", "query_id", "doc_id", "order"]],
                             sources=build.pool.sources, tasks=build.tasks, replace=replace)
