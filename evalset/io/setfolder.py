"""A frozen set version as a folder on disk: its manifest and contract, its verification, and reading it back.

A version ``SETS/NAME/vN/`` holds ``qrels.txt``, ``queries.tsv``, ``labels.tsv`` and ``manifest.json``
(:data:`SET_FILES`), and when it was frozen with a document sample (``freeze --sample``) the sample's record,
``sample.tsv`` and ``sample.json`` (:data:`SAMPLE_FILES`, :mod:`evalset.io.samplerecord`: every pooled pair's
``pi`` and whether it was drawn), or when it added a graded sample of its parent's holes :data:`HOLES_FILE`;
``SETS/NAME/versions.tsv`` records each version's manifest sha256. Writing a
version is :func:`evalset.sets.freeze`'s; this module reads and checks one.

A set's headline metric is a measure's spelling, which only the metrics room parses (``io`` is below it): this
module checks the contract's declared rules alone, and a reader that must know the headline names a measure hands
:func:`verify_set` and :func:`load_set` the parser as ``check_headline``
(:func:`evalset.metrics.measures.parse_measure`: the evaluation room, ``evalset verify``, the sets stage, which
also checks it before freezing, :func:`evalset.sets.set_contract`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_METRIC, SET_CONTRACT_RULES, SPLIT_RULES, EvaluationContract
from evalset.errors import InputError
from evalset.io.annotations import read_labels
from evalset.io.digests import file_sha256
from evalset.io.queries import read_queries
from evalset.io.samplerecord import RECORD_FILES, RECORD_NAME, SampleRecord, read_sample
from evalset.io.setfiles import (
    HOLES_FILE,
    LABELS_FILE,
    MANIFEST_FILE,
    QRELS_FILE,
    QUERIES_FILE,
    SET_FILES,
    VERSIONS_FILE,
)
from evalset.io.trec import read_qrels
from evalset.params import Constraint, check_fields, validate_params

SAMPLE_FILES = RECORD_FILES
"""A version's files when it was frozen with a document sample, beside :data:`SET_FILES`."""
HeadlineCheck = Callable[[str], object]
"""A check of a headline's spelling, raising :class:`InputError` (a ``ValueError``) for one that names no measure."""


@dataclass(frozen=True)
class SetContract:
    """What a frozen set is scored by: the evaluation contract, the headline metric and the weighting.

    ``weighting="traffic"`` averages strata by their traffic share (sum of share x stratum mean); ``uniform``
    averages all queries alike (checked against :data:`RULES`). The headline is not parsed here (the module
    docstring): whoever makes or reads a set checks it with the metrics room's parser.
    """

    evaluation: EvaluationContract = field(default_factory=EvaluationContract)
    headline: str = DEFAULT_METRIC
    weighting: str = "traffic"

    RULES: ClassVar[dict[str, Constraint]] = SET_CONTRACT_RULES

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)

    def to_dict(self) -> dict[str, Any]:
        return {**self.evaluation.to_dict(), "headline": self.headline, "weighting": self.weighting}

    @classmethod
    def from_dict(cls, values: dict[str, Any], check_headline: HeadlineCheck | None = None) -> SetContract:
        """The contract a manifest records (a field it lacks takes its default); ``check_headline`` checks the
        headline first when given."""
        evaluation, headline = EvaluationContract.from_dict(values), values.get("headline", DEFAULT_METRIC)
        if check_headline is not None:
            check_headline(headline)
        return cls(evaluation, headline, values.get("weighting", "traffic"))


@dataclass(frozen=True)
class FrozenSet:
    """A loaded set version: its qrels, queries, raw labels, contract and manifest, and the document sample its
    human labels were drawn by (``None`` when it records none)."""

    path: Path
    name: str
    version: str
    qrels: pd.DataFrame
    queries: pd.DataFrame
    labels: pd.DataFrame
    contract: SetContract
    manifest: dict[str, Any]
    unverified: str | None = None  # why the manifest could not be checked (see unverified_manifest)
    sample: SampleRecord | None = None

    @property
    def planned(self) -> list[tuple[str, str]]:
        """The planned comparisons (baseline, candidate) recorded at freeze time."""
        return [tuple(pair) for pair in self.manifest.get("planned_comparisons", [])]


# ------------------------------------------------------------------------------------------------- reading
def read_set_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """A set version's ``manifest.json``, refused in one line when the folder is not a version."""
    path = Path(path)
    try:
        return json.loads((path / MANIFEST_FILE).read_text())
    except FileNotFoundError:
        if not path.exists():
            raise InputError("no such set version", str(path)) from None
        versions = sorted((child.name for child in path.iterdir() if (child / MANIFEST_FILE).is_file()),
                          key=lambda name: (len(name), name))
        if versions:
            raise InputError(f"a set's folder, not one of its versions: give {path / versions[-1]} (its latest)",
                             str(path)) from None
        raise InputError("not a frozen set (no manifest.json)", str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"manifest.json is not valid JSON: {exc}", str(path / MANIFEST_FILE)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", str(path / MANIFEST_FILE)) from None


def _recorded_digest(path: Path) -> str | None:
    """The manifest sha256 that ``versions.tsv`` beside the version records for it (the last line), or None; a
    version folder renamed is looked up by the version its manifest names."""
    log = path.parent / VERSIONS_FILE
    if not log.is_file():
        return None
    recorded = {line.split("\t")[0]: line.rstrip("\n").split("\t")[2] for line in log.read_text().splitlines()
                if line.count("\t") >= 2}
    return recorded.get(path.name) or recorded.get(str(read_set_manifest(path).get("version", "")))


def unverified_manifest(path: str | os.PathLike, manifest_sha256: str | None = None) -> str | None:
    """Why the manifest of a version could not be checked against a record kept outside its folder, or None.

    The manifest holds the hashes of the other files, so an edited manifest (another contract, other hashes)
    is caught only against ``SETS/NAME/versions.tsv`` or against an expected ``manifest_sha256``. A version
    copied without its ``versions.tsv`` (or into a set whose record does not hold it), with no expected sha256,
    cannot be checked: this says so.
    """
    path = Path(path)
    if manifest_sha256 or _recorded_digest(path):
        return None
    log = path.parent / VERSIONS_FILE
    held = f"{log} does not record {path.name}" if log.is_file() else f"{log} is absent"
    return (f"the manifest could not be checked against the record of versions ({held}: a version folder copied "
            "alone?); copy versions.tsv along, or give the manifest's sha256 from the original versions.tsv "
            "(evalset verify --manifest-sha256)")


@dataclass(frozen=True)
class Verification:
    """What :func:`verify_set` found in a version (``path`` as given): ``problems`` (each changed, missing or extra
    file; empty when intact) and, when the manifest itself could not be checked, why (:func:`unverified_manifest`).

    ``to_text()`` is what ``evalset verify`` prints: ``FAILED`` lines, else ``UNVERIFIED`` or ``OK``.
    """

    path: str
    problems: tuple[str, ...]
    unverified: str | None
    copy_of: str | None = None  # NAME/VERSION its manifest names, when its folders are named otherwise

    def to_text(self) -> str:
        if self.problems:
            return "\n".join(f"FAILED {problem}" for problem in self.problems)
        moved = (f" (a copy of {self.copy_of}, moved or renamed: its content is what counts)"
                 if self.copy_of else "")
        if self.unverified:
            return f"UNVERIFIED {self.path}: every file matches its manifest hash{moved}, but {self.unverified}"
        return f"OK {self.path}: every file matches its manifest hash{moved}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset verify --format json``: the status (``OK``, ``UNVERIFIED``, ``FAILED``) and why."""
        status = "FAILED" if self.problems else "UNVERIFIED" if self.unverified else "OK"
        return {"path": self.path, "status": status, "problems": list(self.problems), "unverified": self.unverified,
                "copy_of": self.copy_of}


def verify_set(path: str | os.PathLike, manifest_sha256: str | None = None, *,
               check_headline: HeadlineCheck | None = None) -> Verification:
    """Check every hash and the manifest of a set version.

    The manifest itself is checked against ``manifest_sha256`` when given and against ``versions.tsv`` when it
    records the version; when neither can be done, ``unverified`` says why (not a problem, but not a verified set
    either). A contract that breaks its rules, or whose headline ``check_headline`` refuses, is a problem.
    """
    given, path = os.fspath(path), Path(path)
    manifest = read_set_manifest(path)
    problems = []
    listed = manifest.get("files", {})
    for name in SET_FILES:
        if name != MANIFEST_FILE and name not in listed:
            problems.append(f"{path / MANIFEST_FILE}: no hash recorded for {name}")
    for name, digest in listed.items():
        file = path / name
        if not file.exists():
            problems.append(f"{file}: missing")
        elif file_sha256(file) != digest:
            problems.append(f"{file}: content changed (sha256 differs from the manifest)")
    sampled = [name for name in SAMPLE_FILES if name in listed] + [HOLES_FILE] * (HOLES_FILE in listed)
    if "hole_sample" in manifest and HOLES_FILE not in listed:
        problems.append(f"{path / MANIFEST_FILE}: records a sample of holes but no hash of {HOLES_FILE}")
    if ("sample" in manifest or set(sampled) & set(SAMPLE_FILES)) and len(set(sampled) & set(SAMPLE_FILES)) < len(
            SAMPLE_FILES):
        problems.append(f"{path / MANIFEST_FILE}: records a document sample but no hash of "
                        f"{', '.join(n for n in SAMPLE_FILES if n not in sampled)}")
    extra = sorted(p.name for p in path.iterdir() if p.name not in SET_FILES and p.name not in sampled)
    problems += [f"{path / name}: not part of the frozen set" for name in extra]
    named = f"{manifest.get('name')}/{manifest.get('version')}"
    copy_of = named if named != f"{path.parent.name}/{path.name}" else None  # a set moved, shared or restored
    actual = file_sha256(path / MANIFEST_FILE)
    recorded = _recorded_digest(path)
    if recorded is not None and recorded != actual:
        problems.append(f"{path / MANIFEST_FILE}: content changed (sha256 differs from "
                        f"{path.parent / VERSIONS_FILE})")
    if manifest_sha256 and manifest_sha256.strip().lower() != actual:
        problems.append(f"{path / MANIFEST_FILE}: content changed (sha256 {actual} differs from the expected "
                        f"{manifest_sha256.strip()})")
    try:
        SetContract.from_dict(manifest.get("contract", {}), check_headline)
    except (ValueError, TypeError) as exc:
        problems.append(f"{path / MANIFEST_FILE}: invalid contract: {exc}")
    return Verification(given, tuple(problems), unverified_manifest(path, manifest_sha256), copy_of)


def load_set(path: str | os.PathLike, verify: bool = True, manifest_sha256: str | None = None, *,
             check_headline: HeadlineCheck | None = None) -> FrozenSet:
    """Load a frozen set version: qrels, queries, labels, contract and manifest (verified first by default, the
    headline by ``check_headline`` when given: :func:`verify_set`).

    A version whose manifest cannot be checked (:func:`unverified_manifest`) is loaded with a warning on stderr
    (its contract may have been edited), and ``FrozenSet.unverified`` says why.
    """
    path = Path(path)
    unverified = None
    if verify:
        verification = verify_set(path, manifest_sha256, check_headline=check_headline)
        if verification.problems:
            raise InputError("the set fails verification: " + "; ".join(verification.problems), str(path))
        unverified = verification.unverified
        if unverified:
            print(f"warning: {path}: UNVERIFIED: {unverified}; its contract is used as it stands", file=sys.stderr)
    manifest = read_set_manifest(path)
    queries = read_queries(path / QUERIES_FILE)
    queries = queries.astype({"stratum_share": float, "weight": float})
    return FrozenSet(
        path=path,
        name=manifest["name"],
        version=manifest["version"],
        qrels=read_qrels(path / QRELS_FILE),
        queries=queries,
        labels=read_labels(path / LABELS_FILE),
        contract=SetContract.from_dict(manifest["contract"], check_headline),
        manifest=manifest,
        unverified=unverified,
        sample=read_sample(path / RECORD_NAME) if "sample" in manifest else None,
    )


def contract_changes(old: FrozenSet, new: FrozenSet) -> list[tuple[str, Any, Any]]:
    """``(field, old value, new value)`` for every field of the set contract (evaluation contract, headline,
    weighting) on which two versions differ, in the contract's order."""
    before, after = old.contract.to_dict(), new.contract.to_dict()
    return [(key, before.get(key), after.get(key)) for key in dict.fromkeys([*before, *after])
            if before.get(key) != after.get(key)]


def diff_sets(old: FrozenSet, new: FrozenSet) -> pd.DataFrame:
    """Judgments added, removed and changed between two versions: ``query_id, doc_id, old, new, change``."""
    both = old.qrels.merge(new.qrels, on=["query_id", "doc_id"], how="outer", suffixes=("_old", "_new"))
    both = both.rename(columns={"grade_old": "old", "grade_new": "new"})
    change = np.select([both["old"].isna(), both["new"].isna(), both["old"] != both["new"]],
                       ["added", "removed", "changed"], "same")
    both["change"] = change
    changed = both[both["change"] != "same"].sort_values(["change", "query_id", "doc_id"]).reset_index(drop=True)
    return changed.astype({"old": "Int64", "new": "Int64"})


@validate_params(SPLIT_RULES)
def select_split(queries: pd.DataFrame, split: str) -> pd.DataFrame:
    """The queries of one split (``test``, ``dev``) or all of them (``all``)."""
    if split == "all":
        return queries
    chosen = queries[queries["split"] == split]
    if chosen.empty:
        held = sorted(queries["split"].unique())
        raise InputError(f"the set has no queries in split {split!r} (its splits: {', '.join(held)}): give --split "
                         f"{' or --split '.join([*held, 'all'])}")
    return chosen
