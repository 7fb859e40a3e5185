"""Frozen evaluation sets: versioned, immutable qrels that carry their evaluation contract.

A set version is a folder ``SETS/NAME/vN/`` holding ``qrels.txt`` (merged grades), ``queries.tsv`` (strata,
weights, splits), ``labels.tsv`` (every raw judgment) and ``manifest.json``. It is built in a temporary folder
beside it and renamed into place (a killed freeze leaves no version folder), made read-only, and never
rewritten. ``SETS/NAME/versions.tsv`` records each version's manifest sha256, so that ``verify`` also catches an
edited manifest; ``SETS/NAME/comparisons.jsonl`` (outside the frozen folders) logs every comparison made on a set
(:mod:`evalset.stats.family`).

Merging grades per (query, document), over human annotators only unless LLM grades are allowed:

``median``
    the median grade; an even number of grades whose two middle grades differ is a tie (unresolved).
``majority``
    the most frequent grade; two grades equally frequent is a tie (unresolved).
``annotator-priority``
    the grade of the first annotator in the priority list who graded the pair (then the others in name order).

A pair whose grades span more than ``max_gap`` is unresolved under every rule. Unresolved pairs block the
freeze unless an adjudication file (a labels table or qrels) grades them; adjudicated grades always win.

Before merging, each annotator has one judgment per pair: :func:`evalset.io.annotations.settle_repeats` (the rule
``evalset agreement`` applies too) collapses exact repeats and refuses one annotator's different grades for one
pair unless ``conflicting_grades`` says which judgment stands; the manifest records the rule and its counts.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalset import __version__
from evalset.contract import MERGE_RULES, WEIGHTINGS, EvaluationContract
from evalset.errors import InputError
from evalset.guideline import Guideline
from evalset.io.annotations import read_labels, settle_repeats, write_labels
from evalset.io.digests import file_sha256
from evalset.io.files import writing_to
from evalset.io.queries import QUERIES_COLUMNS, read_queries, write_queries
from evalset.io.trec import read_qrels, write_qrels
from evalset.metrics import parse_measure

SET_FILES = ("qrels.txt", "queries.tsv", "labels.tsv", "manifest.json")


@dataclass(frozen=True)
class SetContract:
    """What a frozen set is scored by: the evaluation contract, the headline metric and the weighting.

    ``weighting="traffic"`` averages strata by their traffic share (sum of share x stratum mean); ``uniform``
    averages all queries alike.
    """

    evaluation: EvaluationContract = field(default_factory=EvaluationContract)
    headline: str = "ndcg@10"
    weighting: str = "traffic"

    def __post_init__(self) -> None:
        parse_measure(self.headline)
        if self.weighting not in WEIGHTINGS:
            raise InputError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got {self.weighting!r}")

    def to_dict(self) -> dict[str, Any]:
        return {**self.evaluation.to_dict(), "headline": self.headline, "weighting": self.weighting}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> SetContract:
        return cls(EvaluationContract.from_dict(values), values.get("headline", "ndcg@10"),
                   values.get("weighting", "traffic"))


@dataclass(frozen=True)
class FrozenSet:
    """A loaded set version: its qrels, queries, raw labels, contract and manifest."""

    path: Path
    name: str
    version: str
    qrels: pd.DataFrame
    queries: pd.DataFrame
    labels: pd.DataFrame
    contract: SetContract
    manifest: dict[str, Any]

    @property
    def planned(self) -> list[tuple[str, str]]:
        """The planned comparisons (baseline, candidate) recorded at freeze time."""
        return [tuple(pair) for pair in self.manifest.get("planned_comparisons", [])]


# ------------------------------------------------------------------------------------------------- merging
@dataclass(frozen=True)
class MergeResult:
    """Merged grades (``query_id, doc_id, grade``), the unresolved pairs, and counts for the manifest."""

    qrels: pd.DataFrame
    unresolved: pd.DataFrame
    counts: dict[str, int]


def merge_grades(labels: pd.DataFrame, rule: str = "median", *, allow_llm: bool = False, max_gap: int | None = 2,
                 priority: list[str] | None = None, adjudication: pd.DataFrame | None = None) -> MergeResult:
    """Merge the judgments of several annotators into one grade per pair (see the module docstring).

    ``labels`` hold one judgment per annotator and pair (:func:`~evalset.io.annotations.settle_repeats`): an
    exact repeat is collapsed and one annotator's different grades for one pair are refused here.
    """
    if rule not in MERGE_RULES:
        raise InputError(f"merge rule must be one of {', '.join(MERGE_RULES)}, got {rule!r}")
    used = labels if allow_llm else labels[labels["kind"] == "human"]
    used, _ = settle_repeats(used)
    grouped = used.groupby(["query_id", "doc_id"], sort=True)["grade"]
    stats = pd.DataFrame({"n": grouped.size(), "low": grouped.min(), "high": grouped.max()})
    if rule == "median":
        lower = grouped.quantile(0.5, interpolation="lower")
        upper = grouped.quantile(0.5, interpolation="higher")
        stats["grade"], stats["tie"] = lower, lower != upper
    elif rule == "majority":
        counts = used.groupby(["query_id", "doc_id", "grade"]).size().rename("votes").reset_index()
        counts = counts.sort_values(["query_id", "doc_id", "votes", "grade"], ascending=[True, True, False, True])
        best = counts.groupby(["query_id", "doc_id"]).head(2)
        top = best.groupby(["query_id", "doc_id"])
        stats["grade"] = top["grade"].first()
        stats["tie"] = top["votes"].apply(lambda v: len(v) > 1 and v.iloc[0] == v.iloc[1])
    else:
        order = {name: i for i, name in enumerate(priority or [])}
        ranked = used.assign(rank=used["annotator"].map(lambda a: (order.get(a, len(order)), a)))
        first = ranked.sort_values("rank", kind="stable").groupby(["query_id", "doc_id"]).head(1)
        stats["grade"] = first.set_index(["query_id", "doc_id"])["grade"]
        stats["tie"] = False
    gap_too_large = (stats["high"] - stats["low"] > max_gap) if max_gap is not None else False
    stats["unresolved"] = stats["tie"] | gap_too_large
    adjudicated = 0
    if adjudication is not None and len(adjudication):
        decided = adjudication.drop_duplicates(["query_id", "doc_id"], keep="last").set_index(["query_id", "doc_id"])
        common = stats.index.intersection(decided.index)
        stats.loc[common, "grade"] = decided.loc[common, "grade"]
        stats.loc[common, "unresolved"] = False
        adjudicated = len(common)
    unresolved = stats[stats["unresolved"]].reset_index()
    detail = used.merge(unresolved[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    merged = stats[~stats["unresolved"]].reset_index()[["query_id", "doc_id", "grade"]]
    merged["grade"] = merged["grade"].astype(np.int64)
    return MergeResult(
        qrels=merged,
        unresolved=detail[["query_id", "doc_id", "annotator", "kind", "grade"]],
        counts={"pairs": len(stats), "merged": len(merged), "unresolved": len(unresolved),
                "adjudicated": adjudicated, "multiply_judged": int((stats["n"] > 1).sum()),
                "llm_labels_left_out": int(len(labels) - len(labels[labels["kind"] == "human"])) if not allow_llm
                else 0},
    )


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
    frame["stratum_share"] = pd.to_numeric(frame["stratum_share"], errors="raise")
    if "weight" not in frame:
        sizes = frame.groupby("stratum")["query_id"].transform("size")
        frame["weight"] = frame["stratum_share"] / sizes
    frame["weight"] = pd.to_numeric(frame["weight"], errors="raise")
    return frame[list(QUERIES_COLUMNS)].astype({"query_id": str, "query": str, "stratum": str, "split": str})


# ------------------------------------------------------------------------------------------------- freezing
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


def freeze(
    labels: pd.DataFrame,
    queries: pd.DataFrame,
    guideline: Guideline,
    name: str,
    sets_dir: str | os.PathLike,
    *,
    version: int | None = None,
    contract: SetContract | None = None,
    merge: str = "median",
    allow_llm: bool = False,
    max_gap: int | None = 2,
    priority: list[str] | None = None,
    adjudication: pd.DataFrame | None = None,
    planned: list[tuple[str, str]] | None = None,
    agreement: dict[str, Any] | None = None,
    inputs: dict[str, str] | None = None,
    conflicting_grades: str = "refuse",
) -> Path:
    """Freeze labels into ``sets_dir/name/vN`` and return that folder (see the module docstring).

    ``labels`` are judgments as read (:func:`evalset.io.annotations.read_annotations`, or a labels table):
    repeats are settled first by ``conflicting_grades`` (``refuse``, ``latest`` or ``first``), and
    ``labels.tsv`` holds the judgments that stand. Every grade must be on the guideline's scale. Labels of
    queries not in ``queries`` are refused (they would be silently dropped otherwise). Raises
    :class:`InputError` listing unresolved pairs when some remain.
    """
    if not name or "/" in name or name.startswith("."):
        raise InputError(f"a set name is a plain folder name, got {name!r}")
    contract = contract or SetContract()
    labels, reading = settle_repeats(labels, conflicting_grades)
    settled = {"conflicting_grades": conflicting_grades, **{
        key: sum(entry[key] for entry in reading.values())
        for key in ("unjudged", "collapsed_duplicates", "conflicting_grades_settled")}}
    guideline.check_grades(labels["grade"], source="labels")
    queries = as_queries_table(queries)
    unknown = sorted(set(labels["query_id"]) - set(queries["query_id"]))
    if unknown:
        raise InputError(f"{len(unknown)} labelled queries are not in the queries file (e.g. {unknown[:3]})")
    merged = merge_grades(labels, merge, allow_llm=allow_llm, max_gap=max_gap, priority=priority,
                          adjudication=adjudication)
    if merged.counts["unresolved"]:
        sample = merged.unresolved.head(6).to_string(index=False)
        raise InputError(f"{merged.counts['unresolved']} pairs have unresolved disagreement; grade them in an "
                         f"adjudication file (--adjudication) and freeze again:\n{sample}")
    if agreement is None and labels["annotator"].nunique() > 1:
        agreement = agreement_summary(labels, guideline.grades)
    set_dir = Path(sets_dir) / name
    with writing_to(set_dir):
        set_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_builds(set_dir)
    existing = _versions(set_dir)
    number = version if version is not None else (existing[-1] + 1 if existing else 1)
    if number < 1:
        raise InputError(f"versions start at 1, got {number}")
    target = set_dir / f"v{number}"
    if target.exists():
        raise InputError(f"version v{number} exists and a frozen version is never rewritten", str(target))
    parent = f"v{max(v for v in existing if v < number)}" if any(v < number for v in existing) else None

    with writing_to(set_dir):
        build = Path(tempfile.mkdtemp(prefix=f".build-{os.getpid()}-", dir=set_dir))
    try:
        write_qrels(merged.qrels, build / "qrels.txt")
        write_queries(queries, build / "queries.tsv")
        write_labels(labels.sort_values(["query_id", "doc_id", "annotator"], kind="stable"), build / "labels.tsv")
        manifest = _manifest(name, f"v{number}", parent, guideline, contract, merge, allow_llm, max_gap, priority,
                             merged, settled, labels, queries, planned, agreement, inputs, build)
        with writing_to(target):
            (build / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
            _make_read_only(build)
            os.rename(build, target)  # atomic; fails if the version appeared meanwhile
    except BaseException:
        with contextlib.suppress(OSError):
            build.chmod(0o755)
        shutil.rmtree(build, ignore_errors=True)
        raise
    digest = file_sha256(target / "manifest.json")
    with writing_to(set_dir / "versions.tsv"), open(set_dir / "versions.tsv", "a") as log:
        log.write(f"v{number}\t{manifest['created']}\t{digest}\n")
    return target


def agreement_summary(labels: pd.DataFrame, scale: list[int], resamples: int = 1000) -> dict[str, Any]:
    """The agreement block of a manifest: ``evalset agreement``'s JSON (kappa matrix, every pair's kappas with
    query-bootstrap intervals, Krippendorff's alpha, the calibration verdict) without the disagreement rows."""
    from evalset.agreement import agreement_report
    from evalset.agreement.report import to_json_dict

    grades = labels[["query_id", "doc_id", "annotator", "kind", "grade"]].assign(file="labels")
    summary = to_json_dict(agreement_report(grades, scale, resamples=resamples), top=0)
    summary["disagreements"] = {"items": summary["disagreements"]["items"]}
    return summary


def _manifest(name, version, parent, guideline, contract, merge, allow_llm, max_gap, priority, merged, settled,
              labels, queries, planned, agreement, inputs, build) -> dict[str, Any]:
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
        "merge": {"rule": merge, "allow_llm": allow_llm, "max_gap": max_gap, "priority": priority or [],
                  **merged.counts, **settled},
        "agreement": agreement,
        "counts": {"queries": len(queries), "judgments": len(merged.qrels), "labels": len(labels),
                   "per_stratum": per_stratum},
        "inputs": inputs or {},
        "files": {f: file_sha256(build / f) for f in SET_FILES if f != "manifest.json"},
    }


# ------------------------------------------------------------------------------------------------- reading
def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        return json.loads((path / "manifest.json").read_text())
    except FileNotFoundError:
        raise InputError("not a frozen set (no manifest.json)", str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"manifest.json is not valid JSON: {exc}", str(path / "manifest.json")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", str(path / "manifest.json")) from None


def verify_set(path: str | os.PathLike) -> list[str]:
    """Check every hash and the manifest of a set version; returns the problems (empty when intact)."""
    path = Path(path)
    manifest = _read_manifest(path)
    problems = []
    listed = manifest.get("files", {})
    for name in SET_FILES:
        if name != "manifest.json" and name not in listed:
            problems.append(f"{path / 'manifest.json'}: no hash recorded for {name}")
    for name, digest in listed.items():
        file = path / name
        if not file.exists():
            problems.append(f"{file}: missing")
        elif file_sha256(file) != digest:
            problems.append(f"{file}: content changed (sha256 differs from the manifest)")
    extra = sorted(p.name for p in path.iterdir() if p.name not in SET_FILES)
    problems += [f"{path / name}: not part of the frozen set" for name in extra]
    if manifest.get("version") != path.name or manifest.get("name") != path.parent.name:
        problems.append(f"{path / 'manifest.json'}: names {manifest.get('name')}/{manifest.get('version')}, "
                        f"but the folder is {path.parent.name}/{path.name}")
    log = path.parent / "versions.tsv"
    if log.exists():
        recorded = {line.split("\t")[0]: line.rstrip("\n").split("\t")[2] for line in log.read_text().splitlines()
                    if line.count("\t") >= 2}
        if path.name in recorded and recorded[path.name] != file_sha256(path / "manifest.json"):
            problems.append(f"{path / 'manifest.json'}: content changed (sha256 differs from {log})")
    try:
        SetContract.from_dict(manifest.get("contract", {}))
    except (ValueError, TypeError) as exc:
        problems.append(f"{path / 'manifest.json'}: invalid contract: {exc}")
    return problems


def load_set(path: str | os.PathLike, verify: bool = True) -> FrozenSet:
    """Load a frozen set version: qrels, queries, labels, contract and manifest (verified first by default)."""
    path = Path(path)
    if verify:
        problems = verify_set(path)
        if problems:
            raise InputError("the set fails verification: " + "; ".join(problems), str(path))
    manifest = _read_manifest(path)
    queries = read_queries(path / "queries.tsv")
    queries = queries.astype({"stratum_share": float, "weight": float})
    return FrozenSet(
        path=path,
        name=manifest["name"],
        version=manifest["version"],
        qrels=read_qrels(path / "qrels.txt"),
        queries=queries,
        labels=read_labels(path / "labels.tsv"),
        contract=SetContract.from_dict(manifest["contract"]),
        manifest=manifest,
    )


def diff_sets(old: FrozenSet, new: FrozenSet) -> pd.DataFrame:
    """Judgments added, removed and changed between two versions: ``query_id, doc_id, old, new, change``."""
    both = old.qrels.merge(new.qrels, on=["query_id", "doc_id"], how="outer", suffixes=("_old", "_new"))
    both = both.rename(columns={"grade_old": "old", "grade_new": "new"})
    change = np.select([both["old"].isna(), both["new"].isna(), both["old"] != both["new"]],
                       ["added", "removed", "changed"], "same")
    both["change"] = change
    changed = both[both["change"] != "same"].sort_values(["change", "query_id", "doc_id"]).reset_index(drop=True)
    return changed.astype({"old": "Int64", "new": "Int64"})


# ------------------------------------------------------------------------------------------------- scoring
def select_split(queries: pd.DataFrame, split: str) -> pd.DataFrame:
    """The queries of one split (``test``, ``dev``) or all of them (``all``)."""
    if split == "all":
        return queries
    chosen = queries[queries["split"] == split]
    if chosen.empty:
        raise InputError(f"the set has no queries in split {split!r} (splits: {sorted(queries['split'].unique())})")
    return chosen
