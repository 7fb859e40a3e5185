"""The document sample's record (``sample.tsv`` and ``sample.json``) of ``evalset estimate select documents``.

Conventions
-----------
- ``sample.tsv``: one line per pair of the source pool, in the pool's judging order, with the columns
  ``pair_id, query_id, doc_id, prior, pi, sampled``: the pair's prior, its inclusion probability ``pi`` (in
  (0, 1], written to round-trip exactly) and whether it was drawn (``1``) or not (``0``).
  :mod:`evalset.estimate.documents.sample` says how the priors, ``pi`` and the draw are made.
- ``sample.json``: evalset's version, the design (``documents``), the budget (expected human judgments: the sum
  of ``pi``), the fraction of the pool's pairs when the budget was given as one, the seed, the pool's depth, the
  prior's floor and power, the pool it was drawn from (``source``: path and sha256 of its ``pool.tsv``) and the counts.
- Both files sit beside the drawn pairs' pool folder (``pool.tsv``, ``tasks.jsonl``, ...); ``evalset push`` and
  ``evalset judge`` read only ``pool.tsv`` and ``tasks.jsonl``, so nothing of the record reaches an annotator.
- :func:`read_sample` checks what the estimate relies on and refuses, naming the file and line, a ``pi`` outside
  (0, 1] or missing (a sampled pair without its ``pi`` first), a ``sampled`` that is not 0 or 1, a repeated pair,
  ``pi`` that do not sum to the recorded budget, and, when the drawn pairs' ``pool.tsv`` is beside the record,
  one that does not hold exactly the sampled pairs; :func:`check_source` refuses a record drawn from another pool
  than the one given (its ``pool.tsv`` hash).
"""

from __future__ import annotations

import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.digests import file_sha256
from evalset.io.files import check_file, read_tsv_with_header, refuse_blank, refuse_repeats
from evalset.io.poolfiles import read_pool_pairs

TABLE_NAME = "sample.tsv"
RECORD_NAME = "sample.json"
RECORD_FILES = (TABLE_NAME, RECORD_NAME)
COLUMNS = ("pair_id", "query_id", "doc_id", "prior", "pi", "sampled")
BUDGET_TOLERANCE = 1e-6
"""How far (relative to the budget) the sum of ``pi`` may be from the recorded budget."""


@dataclass(frozen=True)
class SampleRecord:
    """A drawn document sample: ``pairs`` (:data:`COLUMNS`; ``prior`` and ``pi`` floats, ``sampled`` bool: every
    pair of the pool, in its judging order) with how they were drawn."""

    budget: float
    fraction: float | None  # the budget as a share of the pool's pairs, when given so
    seed: int
    depth: int
    floor: float
    source: dict[str, Any]
    pairs: pd.DataFrame
    design: str = "documents"
    prior_power: float = 1.0  # each run's rank weight in the prior to this power (1: a record that names none)

    @property
    def drawn(self) -> pd.DataFrame:
        """The sampled pairs, in the pool's judging order."""
        return self.pairs[self.pairs["sampled"].to_numpy()].reset_index(drop=True)

    def frame(self) -> pd.DataFrame:
        """What the estimate reads: ``query_id, doc_id, pi, sampled`` of every pooled pair."""
        return self.pairs[["query_id", "doc_id", "pi", "sampled"]].reset_index(drop=True)

    def counts(self) -> dict[str, int]:
        """Pairs of the pool, pairs drawn, pairs with ``pi`` = 1, queries."""
        return {"pairs": len(self.pairs), "drawn": int(self.pairs["sampled"].sum()),
                "certain": int((self.pairs["pi"] >= 1.0).sum()), "queries": int(self.pairs["query_id"].nunique())}

    def to_dict(self) -> dict[str, Any]:
        """The record as ``sample.json`` holds it, but for evalset's version (the pairs are ``sample.tsv``)."""
        settings = ({"budget": int(self.budget)} if self.fraction is None and float(self.budget).is_integer()
                    else {"budget": self.budget, "fraction": self.fraction})
        return {"design": self.design, **settings, "seed": self.seed, "depth": self.depth, "floor": self.floor,
                "prior_power": self.prior_power,
                "source": self.source, "counts": self.counts(), "pairs": TABLE_NAME}


def record_texts(record: SampleRecord, version: str) -> dict[str, str]:
    """The record's two files (:data:`RECORD_FILES`) as text, ``sample.json`` stamped with evalset's ``version``
    (given by the writer: a foundation imports nothing of the package's top)."""
    table = record.pairs[list(COLUMNS)].astype({"pair_id": str, "query_id": str, "doc_id": str})
    table = table.assign(prior=[repr(float(v)) for v in table["prior"]], pi=[repr(float(v)) for v in table["pi"]],
                         sampled=np.where(table["sampled"].to_numpy(), "1", "0"))
    buffer = io.StringIO()
    table.to_csv(buffer, sep="\t", index=False, lineterminator="\n")
    return {TABLE_NAME: buffer.getvalue(),
            RECORD_NAME: json.dumps({"evalset_version": version, **record.to_dict()}, indent=2,
                                    ensure_ascii=False) + "\n"}


def record_file(path: str | os.PathLike) -> Path:
    """The record's ``sample.json``: ``path`` itself, or the one in the folder ``path`` (or beside its table)."""
    path = Path(path)
    if path.is_dir():
        return path / RECORD_NAME
    return path.with_name(RECORD_NAME) if path.name == TABLE_NAME else path


def _key_line(path: Path, key: str) -> int | None:
    """The line of ``sample.json`` where ``key`` is, to name it in a message."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith(f'"{key}"'):
            return number
    return None


def _numbers(frame: pd.DataFrame, column: str, lines: list[int], path: str) -> np.ndarray:
    values = pd.to_numeric(frame[column].str.strip().replace("", np.nan), errors="coerce")
    bad = values.isna() & (frame[column].str.strip() != "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{column} must be a number, found {frame[column].iloc[row]!r}", path, lines[row])
    return values.to_numpy(dtype=np.float64)


def read_pairs(path: str | os.PathLike) -> pd.DataFrame:
    """Read ``sample.tsv`` (:data:`COLUMNS`) and check each line (module docstring); its pairs in file order."""
    path = os.fspath(path)
    rows, lines, header = read_tsv_with_header(path, required=COLUMNS)
    frame = pd.DataFrame(rows, columns=header, dtype=object)[list(COLUMNS)].fillna("").astype(str)
    refuse_blank(frame, ("pair_id", "query_id", "doc_id"), lines, path)
    sampled = frame["sampled"].str.strip()
    if not sampled.isin(["0", "1"]).all():
        row = int(np.flatnonzero(~sampled.isin(["0", "1"]).to_numpy())[0])
        raise InputError(f"sampled must be 1 (drawn) or 0, found {frame['sampled'].iloc[row]!r}", path, lines[row])
    drawn = (sampled == "1").to_numpy()
    pi = _numbers(frame, "pi", lines, path)
    missing = np.isnan(pi)
    if missing.any():
        row = int(np.flatnonzero(missing & drawn)[0]) if (missing & drawn).any() else int(np.flatnonzero(missing)[0])
        what = "a sampled pair without its pi" if drawn[row] else "pi missing"
        raise InputError(f"{what} ({frame['query_id'].iloc[row]} {frame['doc_id'].iloc[row]}): every pair's "
                         "inclusion probability is recorded", path, lines[row])
    outside = ~((pi > 0) & (pi <= 1))
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise InputError(f"pi {frame['pi'].iloc[row]} is outside (0, 1]: an inclusion probability is above 0 and at "
                         "most 1", path, lines[row])
    prior = _numbers(frame, "prior", lines, path)
    if not (np.isfinite(prior) & (prior > 0)).all():
        row = int(np.flatnonzero(~(np.isfinite(prior) & (prior > 0)))[0])
        raise InputError(f"prior must be a number above 0, found {frame['prior'].iloc[row]!r}", path, lines[row])
    refuse_repeats(frame, ["pair_id"], lines, path, "pair_id")
    refuse_repeats(frame, ["query_id", "doc_id"], lines, path, "pair")
    return frame[["pair_id", "query_id", "doc_id"]].assign(prior=prior, pi=pi, sampled=drawn)


def read_sample(path: str | os.PathLike) -> SampleRecord:
    """Read a document sample's record: a ``sample.json`` (with its ``sample.tsv`` beside it), or the folder
    holding both; every check of the module docstring."""
    record_path = record_file(path)
    if Path(path).is_dir() and not record_path.exists():
        raise InputError(f"no {RECORD_NAME} here: not the folder of a document sample (the -o folder of `evalset "
                         "estimate select documents`)", os.fspath(path))
    check_file(str(record_path))
    try:
        data = json.loads(record_path.read_text(encoding="utf-8"))
        if data["design"] != "documents":
            raise ValueError(f"design {data['design']!r}, not 'documents'")
        settings = (float(data["budget"]), None if data.get("fraction") is None else float(data["fraction"]),
                    int(data["seed"]), int(data["depth"]), float(data["floor"]), dict(data["source"]))
        power = float(data.get("prior_power", 1.0))
        expected = int(data["counts"]["pairs"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"not a document sample's record ({type(exc).__name__}: {exc}); expected the sample.json "
                         "written by `evalset estimate select documents`", str(record_path)) from None
    table_path = record_path.with_name(TABLE_NAME)
    pairs = read_pairs(table_path)
    if len(pairs) != expected:
        raise InputError(f"{len(pairs):,} pairs, but {record_path.name} records {expected:,}: the record's two files "
                         "do not belong together", str(table_path))
    total, budget = float(pairs["pi"].sum()), settings[0]
    if not math.isclose(total, budget, rel_tol=BUDGET_TOLERANCE, abs_tol=BUDGET_TOLERANCE):
        raise InputError(f"the pairs' pi sum to {total:.6g}, not the recorded budget {budget:g}: a pi was changed "
                         "after the draw (draw a new sample instead)", str(table_path))
    _check_folder_pairs(record_path.with_name("pool.tsv"), pairs)
    return SampleRecord(*settings, pairs, prior_power=power)


def _check_folder_pairs(pool_tsv: Path, pairs: pd.DataFrame) -> None:
    """Beside the record, the drawn pairs' ``pool.tsv`` (when there) must hold exactly the sampled pairs: a folder
    edited after the draw is refused, naming the first pair that differs."""
    if not pool_tsv.exists():
        return
    folder = read_pool_pairs(pool_tsv)
    sampled = set(pairs.loc[pairs["sampled"], "pair_id"])
    extra = [p for p in folder["pair_id"] if p not in sampled]
    if extra:
        raise InputError(f"pair_id {extra[0]} is not a sampled pair of {TABLE_NAME}: the folder was changed after "
                         "the draw (draw a new sample instead)", str(pool_tsv))
    missing = sampled - set(folder["pair_id"])
    if missing:
        first = next(p for p in pairs["pair_id"] if p in missing)
        raise InputError(f"the sampled pair_id {first} of {TABLE_NAME} is not in pool.tsv: the folder was changed "
                         "after the draw (draw a new sample instead)", str(pool_tsv))


def check_source(record: SampleRecord, pool_dir: str | os.PathLike, record_path: str | os.PathLike) -> None:
    """Refuse a record that was not drawn from the pool in ``pool_dir`` (the sha256 of its ``pool.tsv`` differs),
    naming ``sample.json``'s line of the hash."""
    path = record_file(record_path)
    pool_tsv = Path(pool_dir) / "pool.tsv"
    check_file(str(pool_tsv))
    recorded = record.source.get("pool_sha256")
    if recorded != file_sha256(pool_tsv):
        raise InputError(f"the sample was drawn from another pool than {pool_tsv} (its sha256 differs from the "
                         "recorded pool_sha256): give the pool the sample was drawn from", str(path),
                         _key_line(path, "pool_sha256"))


def _keys(frame: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])


def refuse_ungraded(pairs: pd.DataFrame, graded: pd.DataFrame, who: str, source: str | None) -> None:
    """Refuse the grades ``graded`` (``query_id, doc_id``) of ``who`` (``"the LLM"``, ``"judge X"``) when they miss
    a pair of ``pairs`` (every pooled pair), naming the first and ``source``: the design needs a prediction of each."""
    missing = ~_keys(pairs).isin(_keys(graded))
    if missing.any():
        first = pairs[missing].iloc[0]
        raise InputError(f"{who} has no grade of the pooled pair {first['query_id']} {first['doc_id']} "
                         f"({int(missing.sum())} such pairs): the LLM must grade every pooled pair", source)


def sampled_grades(pairs: pd.DataFrame, sampled: np.ndarray, human: pd.DataFrame, source: str | None) -> np.ndarray:
    """The human grade of each pair of ``pairs`` (``query_id, doc_id``; 0 where not ``sampled``) from ``human``
    (``query_id, doc_id, grade``), which must grade exactly the sampled pairs: a grade of a pair outside the pool
    or not sampled, two grades of a pair, or a sampled pair without one is refused, naming ``source``."""
    keys = _keys(human)
    where = _keys(pairs).get_indexer(keys)
    if keys.duplicated().any():
        raise InputError("a pair has two human grades: give one per sampled pair", source)
    if (where < 0).any():
        row = human.iloc[int(np.flatnonzero(where < 0)[0])]
        raise InputError(f"a human grade of {row['query_id']} {row['doc_id']}, which is not in the pool", source)
    unsampled = ~sampled[where]
    if unsampled.any():
        row = human.iloc[int(np.flatnonzero(unsampled)[0])]
        raise InputError(f"a human grade of {row['query_id']} {row['doc_id']}, which was not sampled "
                         f"({int(unsampled.sum())} such grades): the sample record does not match the labels", source)
    grade = np.zeros(len(pairs), dtype=np.int64)
    grade[where] = human["grade"].to_numpy(dtype=np.int64)
    ungraded = np.setdiff1d(np.flatnonzero(sampled), where)
    if len(ungraded):
        row = pairs.iloc[int(ungraded[0])]
        raise InputError(f"the sampled pair {row['query_id']} {row['doc_id']} has no human grade ({len(ungraded)} "
                         "such pairs): every sampled pair must be graded, or the sample is no longer random", source)
    return grade


def sample_frame(path: str | os.PathLike, pool_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The frame the document estimate reads from a record (``sample.json``, ``sample.tsv`` or their folder):
    ``query_id, doc_id, pi, sampled`` of every pooled pair, checked (:func:`read_sample`; with ``pool_dir``, also
    :func:`check_source`)."""
    record = read_sample(path)
    if pool_dir is not None:
        check_source(record, pool_dir, path)
    return record.frame()
