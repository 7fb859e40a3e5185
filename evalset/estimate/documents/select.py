"""The document sample drawn from a pool folder, and written: the drawn pairs' pool folder, with the record beside.

Conventions
-----------
- The pool is a folder of ``evalset pool``: ``pool.tsv`` (the pairs, in judging order), ``pool_sources.tsv``
  (which run ranked which pair where: the priors need it) and ``pool.json`` (its ``depth``: the prior counts the
  ranks within it, also for a system pooled deeper).
- The budget is ``budget`` human judgments in expectation (an integer, at least 1, below the pool's pairs) or
  ``fraction`` (in (0, 1)) of the pool's pairs; ``pi`` sums to it. The priors, ``pi`` and the seeded Poisson draw
  are :mod:`evalset.estimate.documents.sample`'s, the uniforms drawn in the pool's judging order. A draw that takes no
  pair is refused (nothing for humans to grade), and so is a draw below the design's minimum
  (:func:`~evalset.estimate.documents.sample.check_sample_size`: at least
  :data:`~evalset.estimate.documents.sample.MINIMUM_PER_QUERY` drawn pairs a query on average, over 2 queries or more),
  before anyone grades it: the estimate would refuse it.
- **A pair without text** (``pool.json``'s ``missing_text``: the corpus had none, so ``tasks.jsonl`` does not hold
  it and neither an annotator nor ``evalset judge`` can grade it) is left out of the draw's frame: the record does
  not hold it, so the estimate counts it as it counts any document outside the pool, unjudged (0, or under
  ``unjudged=condensed`` out of the ranking), as trec_eval counts a pair nobody judged. The record's ``source``
  lists those pairs' ids (``no_text``), and the draw and the estimate say how many.
- The written folder holds the pool's files restricted to the drawn pairs, lines kept in the pool's order:
  ``pool.tsv``, ``pool_sources.tsv``, ``tasks.jsonl`` (``push`` and ``judge`` read these as they are),
  ``pool.json`` (the sample's counts and the source pool's manifest), and the record ``sample.tsv`` /
  ``sample.json`` (:mod:`evalset.io.samplerecord`: every pooled pair's prior, ``pi`` and draw), which no command
  shows an annotator. Built aside and renamed into place (:func:`~evalset.io.files.folder_built_aside`).
- **A sample of a set's holes** (``frozen_set``: the pool is ``holes --set SET ... -o DIR``'s): the set's
  judged pairs on the pool's queries are certain in the estimate (:mod:`evalset.estimate.documents.holes`), so they
  count toward the design's minimum; a pool holding a pair the set judges is refused (not the set's holes), and the
  record's ``source`` names the set and its manifest's sha256, which the estimate checks.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalset import __version__
from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.estimate.documents.holesizing import sized_probabilities
from evalset.estimate.documents.sample import (
    PRIOR_FLOOR,
    PRIOR_POWER,
    check_sample_size,
    document_prior,
    inclusion_probabilities,
    poisson_sample,
)
from evalset.estimate.spec import DOCUMENT_SAMPLE_RULES, HOLE_SIZING_RULES
from evalset.holes.find import judged_pairs, refuse_judged
from evalset.io.digests import file_sha256
from evalset.io.files import read_tsv_with_header
from evalset.io.poolfiles import (
    MANIFEST_FILE,
    PAIRS_FILE,
    SOURCES_FILE,
    TASKS_FILE,
    pool_tsv_lines,
    read_pool_manifest,
    read_pool_pairs,
    task_lines,
    write_pool_folder,
)
from evalset.io.samplerecord import RECORD_NAME, TABLE_NAME, SampleRecord, record_texts
from evalset.io.setfiles import MANIFEST_FILE as SET_MANIFEST_FILE
from evalset.io.setfolder import load_set
from evalset.io.trec import read_runs
from evalset.metrics import parse_measure
from evalset.params import POSITIVE_INT, check, validate_params


def read_pool_sources(path: str | os.PathLike) -> pd.DataFrame:
    """Read a pool's ``pool_sources.tsv`` (``query_id, doc_id, system, rank``; rank a positive integer)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError("no such file: the document sample's priors need the runs' ranks (the pool_sources.tsv "
                         "`evalset pool` writes)", path)
    rows, lines, header = read_tsv_with_header(path, required=("query_id", "doc_id", "system", "rank"))
    frame = pd.DataFrame(rows, columns=header, dtype=object)[["query_id", "doc_id", "system", "rank"]]
    rank = pd.to_numeric(frame["rank"], errors="coerce")
    bad = rank.isna() | (rank != rank.round()) | (rank < 1)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"rank must be a positive integer, found {frame['rank'].iloc[row]!r}", path, lines[row])
    return frame.astype(str).assign(rank=rank.to_numpy(dtype=np.int64))


def pool_depth(pool_dir: str | os.PathLike) -> int:
    """The pool's depth, from its ``pool.json``."""
    path = str(Path(pool_dir) / MANIFEST_FILE)
    manifest = read_pool_manifest(pool_dir)
    if "depth" not in manifest:
        raise InputError(f"no pool depth: expected the {MANIFEST_FILE} of `evalset pool` (a slice's or a sample's "
                         "folder is no pool to draw from)", path)
    return check("depth", manifest["depth"], POSITIVE_INT, path)


@validate_params({**DOCUMENT_SAMPLE_RULES, **HOLE_SIZING_RULES})
def select_documents(pool_dir: str | os.PathLike, *, budget: int | None = None, fraction: float | None = None,
                     seed: int = DEFAULT_SEED, floor: float = PRIOR_FLOOR,
                     frozen_set: str | os.PathLike | None = None, precision: float | None = None,
                     runs: Sequence[str | os.PathLike] = (), llm: Sequence[str | os.PathLike] = (),
                     measures: Sequence[str] = ()) -> SampleRecord:
    """Draw the document sample of the pool in ``pool_dir`` (module docstring): ``budget`` judgments expected, or
    ``fraction`` of the pool's pairs; ``frozen_set``: the set whose holes the pool holds, and then ``precision``
    instead: the holes of each of the ``runs`` (files or folders) drawn for that standard error of its mean on
    ``measures``, sized from the ``llm`` grades (:mod:`evalset.estimate.documents.holesizing`). Writes nothing."""
    if sum(given is not None for given in (budget, fraction, precision)) != 1:
        raise InputError("give one of a budget (--budget: expected human judgments, or a share of the pool's pairs) "
                         "or a precision (--precision, with the set whose holes the pool holds)")
    if precision is not None and (frozen_set is None or not runs or not llm):
        raise InputError("a precision sizes the sample of a set's holes per run: give the set (--set), the runs "
                         "whose holes the pool holds (--runs) and the LLM's grades of their pairs (--llm)")
    folder = Path(pool_dir)
    pool_tsv = folder / PAIRS_FILE
    pairs, no_text = _with_text(read_pool_pairs(pool_tsv), folder)
    if pairs.empty:
        raise InputError("the pool has no pair" + (" with text" if no_text else "") + ": nothing to draw a sample "
                         "from", str(pool_tsv))
    if budget is not None and budget >= len(pairs):
        raise InputError(f"a budget of {budget:,} judgments for a pool of {len(pairs):,} pairs: give fewer than "
                         "all (all of them is no sample: push the pool itself)")
    sources = read_pool_sources(folder / SOURCES_FILE)
    depth = pool_depth(folder)
    certain, source = 0, {"pool": os.fspath(pool_dir), "pool_sha256": file_sha256(pool_tsv)}
    if no_text:
        source["no_text"] = no_text
    if precision is not None:
        named = read_runs(runs)
        pi, sized = sized_probabilities(pairs, frozen_set, named, llm, precision=precision, depth=depth,
                                        measures=measures, source=str(pool_tsv))
        prior, expected, power = pi, float(pi.sum()), 1.0
        source.update(precision=precision, runs={row.run: {"holes": int(row.holes), "fraction": float(row.fraction),
                                                            "se": float(row.se)} for row in sized.itertuples()})
    else:
        expected = float(budget) if budget is not None else fraction * len(pairs)
        prior, power = document_prior(pairs, sources, depth, floor, PRIOR_POWER), PRIOR_POWER
        pi = inclusion_probabilities(prior, expected)
    drawn = poisson_sample(pi, seed)
    if not drawn.any():
        raise InputError(f"the draw (seed {seed}) took none of the {len(pairs):,} pairs: a budget of {expected:g} "
                         "is too small for anyone to grade; give a larger one")
    if frozen_set is not None:
        certain = _judged_by_set(pairs, frozen_set, str(pool_tsv))
        source.update(set=os.fspath(frozen_set), set_manifest_sha256=file_sha256(Path(frozen_set) / SET_MANIFEST_FILE))
    check_sample_size(int(drawn.sum()) + certain, int(pairs["query_id"].nunique()),
                      f"drawn with seed {seed} at a budget of {expected:,.6g}: give a larger budget (a draw's size "
                      "varies around it)")
    table = pairs[["pair_id", "query_id", "doc_id"]].assign(prior=prior, pi=pi, sampled=drawn)
    return SampleRecord(expected, fraction, seed, depth, floor, source, table, prior_power=power)


def _with_text(pairs: pd.DataFrame, folder: Path) -> tuple[pd.DataFrame, list[str]]:
    """The pool's pairs but those ``pool.json`` lists without text, and those pairs' ids (module docstring)."""
    listed = read_pool_manifest(folder).get("missing_text") or []
    no_text = {str(row["pair_id"]) for row in listed if isinstance(row, dict) and "pair_id" in row}
    left_out = pairs["pair_id"].astype(str).isin(no_text).to_numpy()
    return pairs[~left_out].reset_index(drop=True), pairs.loc[left_out, "pair_id"].astype(str).tolist()


def _judged_by_set(pairs: pd.DataFrame, frozen_set: str | os.PathLike, pool_tsv: str) -> int:
    """The set's judged pairs on the pool's queries (certain in a holes estimate); a pool pair it judges is refused."""
    judged = judged_pairs(load_set(frozen_set, check_headline=parse_measure).qrels)
    refuse_judged(pairs, judged, "pool", " (evalset holes --set SET ... -o DIR writes one)", pool_tsv)
    return int(judged["query_id"].isin(set(pairs["query_id"].astype(str))).sum())


def write_document_pool(pool_dir: str | os.PathLike, record: SampleRecord, output: str | os.PathLike, *,
                        replace: bool = False) -> list[str]:
    """Write the pool of ``pool_dir`` restricted to the drawn pairs, and the record, as ``output`` (module
    docstring); an existing non-empty ``output`` is refused unless ``replace``. Returns the paths written."""
    folder = Path(pool_dir)
    drawn = record.drawn
    pair_ids = set(drawn["pair_id"])
    keys = set(zip(drawn["query_id"], drawn["doc_id"], strict=True))
    pairs = pool_tsv_lines(folder / PAIRS_FILE, ("pair_id",), {(p,) for p in pair_ids})
    sources = pool_tsv_lines(folder / SOURCES_FILE, ("query_id", "doc_id"), keys)
    tasks = task_lines(folder / TASKS_FILE, "pair_id", pair_ids) if (folder / TASKS_FILE).exists() else None
    counts = record.counts()
    manifest = {"evalset_version": __version__,
                "sample": {"record": [TABLE_NAME, RECORD_NAME], "drawn": counts["drawn"], "of": counts["pairs"]},
                "counts": {"queries": int(drawn["query_id"].nunique()), "pairs": counts["drawn"]},
                "source_pool": read_pool_manifest(folder)}
    return write_pool_folder(output, manifest, pairs=pairs, sources=sources, tasks=tasks,
                             records=record_texts(record, __version__), replace=replace)


@dataclass(frozen=True)
class DocumentSelection:
    """A document sample drawn from a pool and written (:func:`select_document_pool`): its record, the folder and
    the files written in it."""

    record: SampleRecord
    folder: str
    written: tuple[str, ...]

    def per_query(self) -> pd.Series:
        """Drawn pairs per query of the pool (0 for a query with none drawn), by query id."""
        pairs = self.record.pairs
        return pairs.groupby("query_id", sort=True)["sampled"].sum().astype(int)

    def figures(self) -> dict[str, Any]:
        """The summary's figures: pairs, budget, drawn, pairs with pi = 1, smallest pi, drawn per query."""
        per_query = self.per_query()
        return {**self.record.counts(), "budget": self.record.budget, "fraction": self.record.fraction,
                "seed": self.record.seed, "smallest_pi": float(self.record.pairs["pi"].min()),
                "per_query": {"min": int(per_query.min()), "median": float(per_query.median()),
                              "max": int(per_query.max())}}

    def to_text(self) -> str:
        """What ``evalset estimate select documents`` prints: the draw's figures and what to do with the folder."""
        f, record = self.figures(), self.record
        share = "" if record.fraction is None else f" ({record.fraction:.4g} of the pairs)"
        q = f["per_query"]
        if "precision" in record.source:
            how = [f"sized per run for a standard error of {record.source['precision']:g} (predicted before any hole "
                   "is graded; a hole takes the largest share of the runs retrieving it):"]
            how += [f"  {name}: " + (f"{row['fraction']:.1%} of its {row['holes']:,} holes" if row["holes"] else
                                     f"no hole in its top {record.depth}: nothing to judge")
                    for name, row in record.source["runs"].items()]
        else:
            how = [f"pi = 1 for {f['certain']:,} pairs; smallest pi {f['smallest_pi']:.4f} (priors: the runs' ranks "
                   f"within depth {record.depth}, power {record.prior_power:g}, floor {record.floor:g})"]
        no_text = len(record.source.get("no_text", []))
        if no_text:
            how.append(f"left out {no_text:,} pooled pair(s) without text (pool.json): nobody can grade them, so "
                       "they count as unjudged, as a document outside the pool")
        return "\n".join([
            f"{f['pairs']:,} pairs in the pool{' with text' if no_text else ''}; budget {record.budget:,.6g} "
            f"judgments expected{share}; drawn "
            f"{f['drawn']:,} (seed {record.seed})",
            *how,
            f"drawn per query ({f['queries']} queries): min {q['min']}, median {q['median']:g}, max {q['max']}",
            f"wrote {self.folder}: pool.tsv and tasks.jsonl hold the drawn pairs (push them as they are); "
            f"{TABLE_NAME} and {RECORD_NAME} are the record (every pooled pair's pi), never shown to annotators"])

    def to_dict(self) -> dict[str, Any]:
        """The record (as ``sample.json`` holds it), the summary's figures, the folder and the files written."""
        return {"record": self.record.to_dict(), "figures": self.figures(), "folder": self.folder,
                "written": list(self.written)}


def select_document_pool(pool_dir: str | os.PathLike, output: str | os.PathLike, *, replace: bool = False,
                         **options: Any) -> DocumentSelection:
    """Draw the document sample of the pool in ``pool_dir`` (:func:`select_documents`, which takes ``options``)
    and write its folder as ``output`` (:func:`write_document_pool`)."""
    record = select_documents(pool_dir, **options)
    written = write_document_pool(pool_dir, record, output, replace=replace)
    return DocumentSelection(record, os.fspath(output), tuple(written))
