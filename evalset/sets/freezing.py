"""Frozen evaluation sets: versioned, immutable qrels that carry their evaluation contract.

A set version is a folder ``SETS/NAME/vN/`` holding ``qrels.txt`` (merged grades), ``queries.tsv`` (strata,
weights, splits), ``labels.tsv`` (every raw judgment) and ``manifest.json``. It is built in a temporary folder
beside it and renamed into place (a killed freeze leaves no version folder), made read-only, and never
rewritten. ``SETS/NAME/versions.tsv`` records each version's manifest sha256, so that ``verify`` also catches an
edited manifest; ``SETS/NAME/comparisons.jsonl`` (outside the frozen folders) logs every comparison made on a set
(:mod:`evalset.stats.family`'s rule, :mod:`evalset.comparing.setlog`).

Grades are merged per (query, document) by the rules of :mod:`evalset.judgments` (median, majority,
annotator-priority, or crowd-kit's Dawid-Skene, one-coin, MACE, GLAD), over human annotators only unless LLM
grades are allowed. Unresolved pairs block the freeze unless an adjudication file (a labels table or qrels) grades
them; adjudicated grades always win. Everything is checked before anything is written, and the built version is
read back before it is renamed into place (:mod:`evalset.sets.inputs`): a version that exists reads back.

A manifest can only be checked against a record kept outside its folder (``versions.tsv``, or an expected
sha256): a version without one is *unverified* (:func:`unverified_manifest`), which ``verify`` reports and
:func:`load_set` warns about.

Before merging, each annotator has one judgment per pair: :func:`evalset.io.annotations.settle_repeats` (the rule
``evalset agreement`` applies too) collapses exact repeats and refuses one annotator's different grades for one
pair unless ``conflicting_grades`` says which judgment stands; the manifest records the rule and its counts.

A version frozen with a document sample (``sample``: the record of ``evalset estimate select documents``)
holds the record (``sample.tsv``, ``sample.json``) and its summary in the manifest (``sample``), so the set's
estimates know which pairs were drawn and their ``pi``; its human labels must be exactly the sampled pairs and each
LLM judge must grade every pooled pair (:func:`evalset.sets.inputs.check_sample`); its ``qrels.txt`` merges the
human grades only (no ``allow_llm``): the human grades of the sampled pairs, which the estimates read.

A version with a parent records how many of the parent's grades were revised or withdrawn upstream since
(``revised_since_parent``: the same judgment by its ``source``, :mod:`evalset.judgments.revisions`), and says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalset import __version__
from evalset.errors import InputError, ServiceError
from evalset.io.annotations import read_labels, settle_repeats, write_labels
from evalset.io.digests import file_sha256
from evalset.io.documents import read_json
from evalset.io.files import writing_to
from evalset.io.guideline import Guideline
from evalset.io.queries import QUERIES_COLUMNS, write_queries
from evalset.io.samplerecord import TABLE_NAME, SampleRecord, record_texts
from evalset.io.setfiles import LABELS_FILE, MANIFEST_FILE, MAX_NAME_BYTES, QRELS_FILE, QUERIES_FILE, VERSIONS_FILE
from evalset.io.setfolder import HOLES_FILE, SAMPLE_FILES, SET_FILES, SetContract
from evalset.io.trec import write_qrels
from evalset.judgments.identity import judge_identities
from evalset.judgments.merging import MergeResult, merge_grades  # noqa: F401  (re-exported: part of the sets API)
from evalset.judgments.revisions import grade_revisions
from evalset.judgments.spec import MergePolicy
from evalset.metrics.measures import parse_measure
from evalset.params import validate_params
from evalset.render import counted
from evalset.sets.spec import FREEZE_RULES

# ------------------------------------------------------------------------------------------------- queries


def as_queries_table(queries: pd.DataFrame) -> pd.DataFrame:
    """Queries in the ``queries.tsv`` shape: a topics file (``query_id, query`` only) becomes one stratum
    ``all`` with traffic share 1, weight 1/n, every query in the test split."""
    frame = queries.copy()
    if "stratum" not in frame:
        frame["stratum"] = "all"
    if "frequency" not in frame:
        frame["frequency"] = ""
    if "split" not in frame:
        frame["split"] = "test"
    if "stratum_share" not in frame:
        frame["stratum_share"] = 1.0 / frame["stratum"].nunique() if len(frame) else 1.0
    frame["stratum_share"] = _numbers(frame, "stratum_share")
    if "weight" not in frame:
        sizes = frame.groupby("stratum")["query_id"].transform("size")
        frame["weight"] = frame["stratum_share"] / sizes
    frame["weight"] = _numbers(frame, "weight")
    return frame[list(QUERIES_COLUMNS)].astype({"query_id": str, "query": str, "stratum": str, "split": str})


def _numbers(frame: pd.DataFrame, column: str) -> pd.Series:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna().to_numpy() | ~np.isfinite(values.to_numpy(dtype=float))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        lines = frame.attrs.get("line_numbers")
        where = f"line {lines[row]}" if lines and len(lines) == len(frame) else f"row {row + 1}"
        raise InputError(f"queries: {column} must be a finite number, found {frame[column].iloc[row]!r} ({where})")
    return values


# ------------------------------------------------------------------------------------------------- freezing
@dataclass(frozen=True)
class FrozenVersion:
    """The version a freeze made: its folder and the manifest written in it (counts, annotators, merge details).

    ``to_text()`` is what ``evalset freeze`` prints: one line of counts, then a ``note:`` line for each thing the
    merge left out or settled (on stdout, as the counts are).
    """

    path: Path
    manifest: dict[str, Any]
    same_as_parent: bool = False  # its judgments, queries, labels and contract are its parent's

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset freeze --format json``: the version's folder, its manifest, and the notes."""
        return {"path": os.fspath(self.path), "same_as_parent": self.same_as_parent, "manifest": self.manifest,
                "notes": [line for line in self.to_text().splitlines() if line.startswith(("note:", "warning:"))]}

    def to_text(self) -> str:
        counts, merged = self.manifest["counts"], self.manifest["merge"]
        lines = [f"froze {self.path}: {counted(counts['judgments'], 'judgment')} over "
                 f"{counted(counts['queries'], 'query', 'queries')} from {counted(counts['labels'], 'label')} by "
                 f"{counted(len(self.manifest['annotators']), 'annotator')} (merge: "
                 f"{merged['rule']}; {counted(merged['judged_more_than_once'], 'pair')} judged more than once, "
                 f"{merged['adjudicated']} adjudicated)"]
        judged = counts.get("judged_queries", counts["queries"])
        if judged < counts["queries"]:
            lines.append(f"note: {counts['queries'] - judged} of the {counts['queries']} queries have no merged "
                         "judgment: score and compare leave them out as undefined (and count them)")
        if merged["repeated_by_one_annotator"]:
            lines.append(f"note: {counted(merged['repeated_by_one_annotator'], 'pair')} judged more than once by one "
                         f"annotator ({merged['collapsed_duplicates']} exact repeats collapsed; labels.tsv holds the "
                         "judgments that stand)")
        if merged["unjudged"]:
            lines.append(f"note: {merged['unjudged']} qrels lines with a negative grade (pooled, not judged) were not "
                         "labels")
        if merged["conflicting_grades_settled"]:
            lines.append(f"note: {merged['conflicting_grades_settled']} conflicting judgments settled by "
                         f"--conflicting-grades {merged['conflicting_grades']}")
        lines += [f"note: {left_out} labels of {annotator} kept in labels.tsv but not merged (--merge exclude=NAMES)"
                  for annotator, left_out in merged.get("excluded_labels", {}).items()]
        if self.same_as_parent:
            lines.append(f"note: {self.path.name} holds the same qrels, queries, labels and contract as "
                         f"{self.manifest['parent']}: nothing changed since (evalset diff shows none)")
        planned = self.manifest.get("planned_comparisons") or []
        if planned:  # echoed: a typo in a run's name would make the real comparison exploratory forever
            lines.append(f"planned comparisons: {', '.join(f'{b}:{c}' for b, c in planned)} (compare decides these; "
                         "any other is exploratory)")
        in_test = sum(stratum["splits"].get("test", 0) for stratum in counts.get("per_stratum", {}).values())
        if not in_test:
            lines.append("warning: no query is in the test split (the sample's --holdout was 0?): score, compare and "
                         "report on the set read the test split by default; give them --split dev or --split all, "
                         "or sample again with --holdout (the share of each stratum held out for test)")
        revised = self.manifest.get("revised_since_parent")
        if revised and (revised["revised"] or revised["withdrawn"]):
            lines.append(f"note: since {self.manifest['parent']}, {revised['revised']} of its grades were revised "
                         f"and {revised['withdrawn']} withdrawn (the same judgment, by its source; evalset diff lists "
                         "them)")
        sample = self.manifest.get("sample")
        if sample:
            no_text = len(sample["source"].get("no_text", []))
            left_out = f"; {no_text:,} pair(s) without text left out: unjudged" if no_text else ""
            lines.append(f"note: recorded the document sample ({sample['counts']['drawn']:,} of "
                         f"{sample['counts']['pairs']:,} pooled pairs drawn, budget {sample['budget']:,g}{left_out}): "
                         "estimate run set and report estimate from it")
        holes = self.manifest.get("hole_sample")
        if holes:
            counts = holes["counts"]
            lines.append(f"note: added the graded sample of {self.manifest['parent']}'s holes ({counts['drawn']:,} of "
                         f"{counts['pairs']:,} drawn); its record is the manifest's hole_sample and holes.tsv")
        if merged["llm_labels_left_out"] and sample:
            lines.append(f"note: {merged['llm_labels_left_out']} LLM labels kept in labels.tsv as the estimates' "
                         "judges, not merged (a set frozen with a document sample merges human grades only)")
        elif merged["llm_labels_left_out"]:
            lines.append(f"note: {merged['llm_labels_left_out']} LLM labels kept in labels.tsv but not merged (use "
                         "--merge llm=yes to merge them)")
        return "\n".join(lines)


def _created() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _versions(set_dir: Path) -> list[int]:
    if not set_dir.is_dir():
        return []
    names = [p.name for p in set_dir.iterdir() if p.is_dir()]
    return sorted(int(name[1:]) for name in names if name[:1] == "v" and name[1:].isdigit())


def _remove_stale_builds(set_dir: Path) -> None:
    """A freeze killed mid-way leaves its build folder: remove those whose process is gone."""
    for stale in set_dir.glob(".build-*"):
        pid = stale.name.split("-")[1]
        alive = pid.isdigit() and Path(f"/proc/{pid}").exists() and int(pid) != os.getpid()
        if not alive:
            shutil.rmtree(stale, ignore_errors=True)


def _make_read_only(folder: Path) -> None:
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)


@validate_params(FREEZE_RULES)
def freeze(
    labels: pd.DataFrame,
    queries: pd.DataFrame,
    guideline: Guideline,
    name: str,
    sets_dir: str | os.PathLike,
    *,
    version: int | None = None,
    contract: SetContract | None = None,
    merge: MergePolicy = MergePolicy(),
    adjudication: pd.DataFrame | None = None,
    planned: list[tuple[str, str]] | None = None,
    agreement: dict[str, Any] | None = None,
    inputs: dict[str, Any] | None = None,
    conflicting_grades: str = "refuse",
    queries_source: str | None = None,
    sample: SampleRecord | None = None,
    hole_sample: SampleRecord | None = None,
) -> FrozenVersion:
    """Freeze labels into ``sets_dir/name/vN`` and return that version (see the module docstring).

    ``labels`` are judgments as read (:func:`evalset.sets.inputs.read_judgments`, or a labels table): repeats are
    settled first by ``conflicting_grades`` (``refuse``, ``latest`` or ``first``), and ``labels.tsv`` holds the
    judgments that stand. Everything is checked before anything is written (:mod:`evalset.sets.inputs`): ids that
    TREC qrels cannot hold and grades off the guideline's scale are refused with their file and line, queries
    with ids qrels cannot hold (``queries_source`` names the queries file), labels of queries not in ``queries``
    (they would be silently dropped otherwise), and labels that leave no judgment to merge. Raises
    :class:`InputError` listing unresolved pairs when some remain. The built version is read back before it is
    renamed into place: a version that exists reads back. ``merge`` is the :class:`MergePolicy`; its excluded
    annotators take no part in the merge (their labels stay in ``labels.tsv``; the manifest counts those left
    out). ``sample``: the document sample the human labels were drawn by, checked against them and recorded (module
    docstring); ``hole_sample``: the sample of the parent's holes whose grades this version adds
    (:func:`evalset.sets.holes.freeze_hole_sample`), its table and record kept. ``version`` is checked first
    (:data:`evalset.contract.FREEZE_RULES`), ``merge`` when it is made.
    """
    from evalset.sets.inputs import check_labels, check_queries, check_reads_back, check_sample

    if not name or "/" in name or name.startswith(".") or len(name.encode()) > MAX_NAME_BYTES:
        shown = name if len(name) <= 60 else f"{name[:60]}... ({len(name.encode()):,} bytes)"
        raise InputError(f"a set name (--name) is a plain folder name of at most {MAX_NAME_BYTES} bytes, got {shown!r}")
    contract = contract or SetContract()
    parse_measure(contract.headline)  # a contract made without evalset.sets.set_contract: its headline checked too
    allow_llm = merge.allow_llm
    merged_kinds = judgments_as_read = labels[labels["judged"]] if "judged" in labels else labels
    if not allow_llm:
        merged_kinds = judgments_as_read[judgments_as_read["kind"] == "human"]
    repeats = {"judged_more_than_once": int((merged_kinds.groupby(["query_id", "doc_id"]).size() > 1).sum()),
               "repeated_by_one_annotator": int(judgments_as_read[judgments_as_read.duplicated(
                   ["query_id", "doc_id", "annotator"])].drop_duplicates(["query_id", "doc_id", "annotator"]).shape[0])}
    labels, reading = settle_repeats(labels, conflicting_grades)
    settled = {"conflicting_grades": conflicting_grades, **{
        key: sum(entry[key] for entry in reading.values())
        for key in ("unjudged", "collapsed_duplicates", "conflicting_grades_settled")}, **repeats}
    if labels.empty:
        unjudged = f" ({settled['unjudged']} qrels lines with a negative grade: pooled, not judged)"
        raise InputError("no judgment to freeze" + (unjudged if settled["unjudged"] else "") + ": the labels hold "
                         "no grade; a frozen set is made of judgments")
    check_labels(labels, guideline)
    check_queries(queries, queries_source)
    queries = as_queries_table(queries)
    unknown = sorted(set(labels["query_id"]) - set(queries["query_id"]))
    if unknown:
        raise InputError(f"{len(unknown)} labelled queries are not in the queries file (e.g. {unknown[:3]})",
                         queries_source)
    if sample is not None:
        if allow_llm:
            raise InputError("a set frozen with a document sample merges human grades only (its estimates correct "
                             "the LLM's grades by the humans' on the sampled pairs): give no --merge llm=yes")
        check_sample(labels, queries, sample)
    if adjudication is not None and len(adjudication):
        check_labels(adjudication, guideline, "adjudication")
    merged = merge_grades(labels, merge.rule, allow_llm=allow_llm, max_gap=merge.max_gap, priority=merge.priorities,
                          adjudication=adjudication, exclude=merge.excluded)
    if merged.counts["unresolved"]:
        raise InputError(_unresolved_said(merged.unresolved, Path(sets_dir) / f"{name}-adjudication.tsv"))
    if merged.qrels.empty:
        raise InputError(f"no judgment to freeze: the {len(labels)} labels are all LLM labels (kind llm), which "
                         "are merged only with --merge llm=yes")
    if agreement is None and labels["annotator"].nunique() > 1:
        agreement = agreement_summary(labels, guideline.grades)
    set_dir = Path(sets_dir) / name
    new_set = not set_dir.exists()
    with writing_to(set_dir):
        set_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_builds(set_dir)
    existing = _versions(set_dir)
    number = version if version is not None else (existing[-1] + 1 if existing else 1)
    target = set_dir / f"v{number}"
    if target.exists():
        raise InputError(f"version v{number} exists and a frozen version is never rewritten", str(target))
    if existing and number < existing[-1]:  # a version's parent is the one before it: versions only grow
        raise InputError(f"--version {number} comes before the latest version, v{existing[-1]}: versions only grow "
                         f"(give --version {existing[-1] + 1} or more, or none)", str(set_dir))
    parent = f"v{max(v for v in existing if v < number)}" if any(v < number for v in existing) else None

    try:
        with writing_to(target):
            build = Path(tempfile.mkdtemp(prefix=f".build-{os.getpid()}-", dir=set_dir))
    except ServiceError:
        _remove_new_set(set_dir, new_set)
        raise
    try:
        stand = labels.sort_values(["query_id", "doc_id", "annotator"], kind="stable")
        write_qrels(merged.qrels, build / QRELS_FILE)
        write_queries(queries, build / QUERIES_FILE)
        write_labels(stand, build / LABELS_FILE)
        if sample is not None:
            for file, text in record_texts(sample, __version__).items():
                (build / file).write_text(text, encoding="utf-8")
        if hole_sample is not None:
            (build / HOLES_FILE).write_text(record_texts(hole_sample, __version__)[TABLE_NAME], encoding="utf-8")
        check_reads_back(build, merged.qrels, queries, stand)
        manifest = _manifest(name, f"v{number}", parent, guideline, contract, merge, merged, settled, labels,
                             queries, planned, agreement, inputs, build)
        if sample is not None:
            manifest["sample"] = sample.to_dict()
        if hole_sample is not None:
            manifest["hole_sample"] = {**hole_sample.to_dict(), "pairs": HOLES_FILE}
        if parent is not None:
            changes = grade_revisions(read_labels(set_dir / parent / LABELS_FILE), stand)["change"].value_counts()
            manifest["revised_since_parent"] = {"revised": int(changes.get("revised", 0)),
                                                "withdrawn": int(changes.get("withdrawn", 0))}
        with writing_to(target):
            (build / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
            _make_read_only(build)
            os.rename(build, target)  # atomic; fails if the version appeared meanwhile
    except BaseException as exc:
        _remove_folder(build)
        _remove_new_set(set_dir, new_set)
        if isinstance(exc, ServiceError | OSError):  # the disk refused: name the version, not the build
            cause = exc.__cause__ if isinstance(exc, ServiceError) and exc.__cause__ is not None else exc
            raise ServiceError(f"cannot write {target}: {getattr(cause, 'strerror', None) or cause}") from exc
        raise
    digest = file_sha256(target / MANIFEST_FILE)
    try:
        with writing_to(set_dir / VERSIONS_FILE), open(set_dir / VERSIONS_FILE, "a") as log:
            log.write(f"v{number}\t{manifest['created']}\t{digest}\n")
    except BaseException:
        _remove_folder(target)  # a version the record of versions does not hold could never be verified
        raise
    return FrozenVersion(target, manifest, parent is not None and _same_files(set_dir / parent, manifest))


def _same_files(parent: Path, manifest: dict[str, Any]) -> bool:
    """Whether a new version's qrels, queries, labels and contract are those of its ``parent`` version."""
    try:
        before = read_json(parent / MANIFEST_FILE)
    except InputError:
        return False
    same = all(before.get("files", {}).get(f) == manifest["files"].get(f) for f in (QRELS_FILE, QUERIES_FILE,
                                                                                 LABELS_FILE))
    return same and before.get("contract") == manifest.get("contract")


def _unresolved_said(unresolved: pd.DataFrame, template: Path) -> str:
    """The pairs a merge left unresolved, each with every grade it got (the first few, and how many more), and the
    whole list written as an adjudication template (a labels table whose grades are to be filled), unless a file
    is there already."""
    pairs = unresolved.groupby(["query_id", "doc_id"], sort=True)
    said_grades = [", ".join(f"{row.annotator} {row.grade}" for row in rows.itertuples()) for _, rows in pairs]
    said = [f"  {query} {doc}: {grades}" for (query, doc), grades in zip(pairs.groups, said_grades, strict=True)]
    more = f"\n  ... and {len(said) - 6:,} more pairs" if len(said) > 6 else ""
    if template.exists():
        where = f"{template} exists and is kept: remove it for a new template"
    else:
        filled = pd.DataFrame([{"query_id": query, "doc_id": doc, "annotator": "adjudicator", "kind": "human",
                                "grade": "", "source": "adjudication", "labeled_at": "", "comment": "grades: " + grades}
                               for (query, doc), grades in zip(pairs.groups, said_grades, strict=True)])
        write_labels(filled, template)
        where = f"the {len(said):,} pairs are in {template}: fill its grade column and give it to --adjudication"
    return (f"{len(said):,} pairs have unresolved disagreement ({where}), and freeze again:\n" + "\n".join(said[:6])
            + more)


def _remove_new_set(set_dir: Path, new_set: bool) -> None:
    """Remove a set's folder this freeze made, when it failed before the folder held anything."""
    if new_set:
        with contextlib.suppress(OSError):
            set_dir.rmdir()


def _remove_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.chmod(0o755)
    shutil.rmtree(folder, ignore_errors=True)


def agreement_summary(labels: pd.DataFrame, scale: list[int], resamples: int = 1000) -> dict[str, Any]:
    """The agreement block of a manifest: ``evalset agreement``'s JSON (kappa matrix, every pair's kappas with
    query-bootstrap intervals, Krippendorff's alpha, the calibration verdict) without the disagreement rows."""
    from evalset.agreement import Agreement, agreement_report

    grades = labels[["query_id", "doc_id", "annotator", "kind", "grade"]].assign(file="labels")
    summary = Agreement(agreement_report(grades, scale, resamples=resamples), top=0).to_dict()
    summary["disagreements"] = {"items": summary["disagreements"]["items"]}
    return summary


def _manifest(name, version, parent, guideline, contract, merge, merged, settled, labels, queries, planned,
              agreement, inputs, build) -> dict[str, Any]:
    judged = merged.qrels.merge(queries[["query_id", "stratum"]], on="query_id")
    per_stratum = {}
    for stratum, group in queries.groupby("stratum", sort=True):
        in_stratum = judged[judged["stratum"] == stratum]
        per_stratum[stratum] = {
            "queries": len(group),
            "queries_judged": int(in_stratum["query_id"].nunique()),
            "traffic_share": float(group["stratum_share"].iloc[0]),
            "splits": {k: int(v) for k, v in group["split"].value_counts().sort_index().items()},
            "judgments": len(in_stratum),
            "grades": {str(k): int(v) for k, v in in_stratum["grade"].value_counts().sort_index().items()},
        }
    annotators = (labels.groupby(["annotator", "kind"]).size().rename("labels").reset_index()
                  .sort_values(["kind", "annotator"]).to_dict("records"))
    return {
        "name": name,
        "version": version,
        "parent": parent,
        "created": _created(),
        "evalset_version": __version__,
        "guideline": {"path": guideline.path, "name": guideline.name, "version": guideline.version,
                      "sha256": guideline.sha256},
        "scale": {str(g.value): g.name for g in guideline.scale},
        "contract": contract.to_dict(),
        "planned_comparisons": [list(pair) for pair in (planned or [])],
        "annotators": [{k: (int(v) if k == "labels" else v) for k, v in a.items()} for a in annotators],
        "judges": [judge.to_dict() for judge in judge_identities(labels)],
        "merge": {"rule": merge.rule, "allow_llm": merge.allow_llm, "max_gap": merge.max_gap,
                  "priority": merge.priorities or [],
                  **merged.counts, **settled, **merged.details},
        "agreement": agreement,
        "counts": {"queries": len(queries), "judgments": len(merged.qrels), "labels": len(labels),
                   "judged_queries": int(merged.qrels["query_id"].nunique()),
                   "per_stratum": per_stratum},
        "inputs": inputs or {},
        "files": {f: file_sha256(build / f) for f in (*SET_FILES, *SAMPLE_FILES, HOLES_FILE)
                  if f != MANIFEST_FILE and (build / f).exists()},
    }

