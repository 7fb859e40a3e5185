"""A set grown by the graded sample of its holes: the next version holds the set's judgments and the drawn holes'
grades, so that the next comparison starts from a less stale set, and records the sample's design.

Conventions
-----------
- The sample is the record of ``evalset estimate select holes DIR --set SET`` (:mod:`evalset.io.samplerecord`): its
  ``source`` names the set version it was drawn for and that version's manifest sha256. The new version is the
  one after it (``SETS/NAME/vN+1``; a sample already frozen finds it there and is refused), with the set's
  queries, guideline (the file its manifest names, whose sha256 must still match, unless another ``guideline``
  with that sha256 is given), contract, merge rule and planned comparisons; its labels are the set's
  ``labels.tsv`` and the new grades.
- The grades must be exactly the drawn holes' (:func:`evalset.io.samplerecord.sampled_grades`: a grade of an
  undrawn hole, of a pair outside the sample's pool, or a drawn hole without one is refused): a sample with a hole
  left ungraded is no longer random, and the estimates that rest on it would not hold.
- The manifest's ``hole_sample`` keeps the record (its design: the source set, the precision or budget, each run's
  share, the seed) and ``holes.tsv`` its table (every pooled hole's ``pi`` and draw). The new version is a plain set:
  its holes are the ones left undrawn, and a new system's are sampled from it again.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from evalset.errors import InputError
from evalset.io.digests import file_sha256
from evalset.io.guideline import Guideline, read_guideline
from evalset.io.samplerecord import SampleRecord, sampled_grades
from evalset.io.setfiles import MANIFEST_FILE
from evalset.io.setfolder import load_set
from evalset.judgments.spec import MergePolicy
from evalset.metrics import parse_measure
from evalset.sets.freezing import FrozenVersion, freeze


def hole_sample_set(record: SampleRecord, record_path: str) -> Path:
    """The set version a sample of holes was drawn for, checked unchanged since (module docstring)."""
    drawn_for = record.source.get("set")
    if drawn_for is None:
        raise InputError("a document sample, not a sample of a set's holes: freeze it as a new set's sample "
                         "(evalset freeze LABELS --sample SAMPLE --queries Q --guideline G --name N)", record_path)
    path = Path(drawn_for)
    if not (path / MANIFEST_FILE).is_file():
        raise InputError(f"the sample was drawn for the set {drawn_for}, which is not here", record_path)
    if file_sha256(path / MANIFEST_FILE) != record.source.get("set_manifest_sha256"):
        raise InputError(f"the set {drawn_for} changed since the sample was drawn (its manifest's sha256 differs)",
                         record_path)
    return path


def freeze_hole_sample(grades: pd.DataFrame, record: SampleRecord, *, record_path: str,
                       guideline: Guideline | None = None, version: int | None = None,
                       inputs: dict[str, str] | None = None) -> FrozenVersion:
    """The next version of the set ``record`` was drawn for, with ``grades`` (labels as read: ``query_id, doc_id,
    grade, annotator, kind``...) of exactly its drawn holes added (module docstring)."""
    base = load_set(hole_sample_set(record, record_path), check_headline=parse_measure)
    source = str(grades.attrs.get("source", "the grades"))
    judged = grades[grades["grade"] >= 0] if "judged" not in grades else grades[grades["judged"]]
    sampled_grades(record.pairs[["query_id", "doc_id"]], record.pairs["sampled"].to_numpy(dtype=bool),
                   judged[["query_id", "doc_id", "grade"]], source)
    recorded = base.manifest["guideline"]
    if guideline is None:
        if not os.path.isfile(recorded["path"]):
            raise InputError(f"the set's guideline {recorded['path']} is not there: give it (--guideline)",
                             str(base.path))
        guideline = read_guideline(recorded["path"])
    if guideline.sha256 != recorded["sha256"]:
        raise InputError(f"the guideline {guideline.path} is not the one the set was frozen with (its sha256 "
                         "differs): give that one (--guideline)", str(base.path))
    merge = base.manifest["merge"]
    version = version if version is not None else int(base.path.name.removeprefix("v")) + 1
    if (base.path.parent / f"v{version}").exists():
        raise InputError(f"{base.path.parent / f'v{version}'} exists: the sample is frozen already, or the set grew "
                         "since it was drawn (draw a new sample from its latest version)", record_path)
    labels = pd.concat([base.labels.assign(judged=True), grades], ignore_index=True)  # the set's labels stand
    return freeze(labels, base.queries, guideline,
                  base.manifest["name"], base.path.parent.parent, version=version, contract=base.contract,
                  merge=MergePolicy(merge["rule"], "yes" if merge["allow_llm"] else "no", merge["max_gap"],
                                    ",".join(merge["priority"]) or None),
                  planned=[tuple(pair) for pair in base.planned], inputs=inputs, hole_sample=record)
