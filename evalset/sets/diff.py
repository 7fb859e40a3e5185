"""Two versions of a set side by side: the judgments that changed, the contract fields that differ, and how runs
move when each version scores them under its own contract."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalset.contract import SPLIT_RULES
from evalset.evaluation import Evaluation, per_query_values
from evalset.evaluation.values import Runs
from evalset.io.annotations import read_labels
from evalset.io.irds import is_irds, recheck
from evalset.io.setfolder import (
    FrozenSet,
    Verification,
    contract_changes,
    diff_sets,
    load_set,
    read_set_manifest,
    verify_set,
)
from evalset.io.trec import read_runs
from evalset.judgments.revisions import grade_revisions, revision_lines
from evalset.metrics import parse_measure
from evalset.params import validate_params
from evalset.render import json_safe, number, records, text_table


@dataclass(frozen=True)
class VersionDiff:
    """Two versions of a set: the judgments that changed (:func:`evalset.io.setfolder.diff_sets`), the contract fields
    that differ (:func:`evalset.io.setfolder.contract_changes`) and, when runs were given, their scores under each
    version (``run, old, new, change``; each version's own headline metric and contract; ``change`` is NaN
    when the headline metrics differ); ``revisions``: the old version's grades revised or withdrawn upstream in
    the new one's labels (:func:`evalset.judgments.revisions.grade_revisions`)."""

    old: FrozenSet
    new: FrozenSet
    changes: pd.DataFrame
    scores: pd.DataFrame | None = None
    contract: list[tuple[str, Any, Any]] = field(default_factory=list)
    revisions: pd.DataFrame | None = None

    def to_text(self, shown: int = 50) -> str:
        """The contract differences first (each version is then scored under its own), the counts of judgments
        added, removed and changed, the first ``shown`` of them, and the runs' scores."""
        return _text(self, shown)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset diff --format json``: both versions, the contract differences, every judgment
        changed, the runs' scores and the grades revised upstream."""
        return {"old": os.fspath(self.old.path), "new": os.fspath(self.new.path),
                "contract": [{"field": name, "old": json_safe(old), "new": json_safe(new)}
                             for name, old, new in self.contract],
                "changes": records(self.changes), "scores": records(self.scores),
                "revisions": records(self.revisions)}


@validate_params(SPLIT_RULES)
def diff_versions(old_path: str | os.PathLike, new_path: str | os.PathLike,
                  runs: Runs | None = None, split: str = "all") -> VersionDiff:
    """The judgments changed between two versions, their contract differences, and how ``runs`` move: each
    run's score on each version under that version's own contract (headline metric, evaluation contract,
    weighting) and queries of ``split`` (the weighted mean)."""
    old, new = (load_set(path, check_headline=parse_measure) for path in (old_path, new_path))
    if runs and not isinstance(runs, Mapping):  # run files, read once for both versions
        runs = read_runs(runs)
    differ = contract_changes(old, new)
    revisions = grade_revisions(old.labels, new.labels)
    if not runs:
        return VersionDiff(old, new, diff_sets(old, new), contract=differ, revisions=revisions)
    scores = {}
    for frozen in (old, new):
        values = per_query_values(Evaluation.on_set(frozen, split), runs)
        scores[frozen.version] = {name: values.summary(name, frozen.contract.headline).weighted_mean
                                  for name in values.runs}
    table = pd.DataFrame({"run": list(scores[old.version]), "old": list(scores[old.version].values()),
                          "new": [scores[new.version][name] for name in scores[old.version]]})
    same_metric = parse_measure(old.contract.headline) == parse_measure(new.contract.headline)
    change = table["new"] - table["old"] if same_metric else float("nan")
    return VersionDiff(old, new, diff_sets(old, new), table.assign(change=change), differ, revisions)


def _text(diff: VersionDiff, shown: int) -> str:
    old, new, changes = diff.old, diff.new, diff.changes
    lines = []
    if diff.contract:
        lines.append(f"CONTRACT CHANGED between {old.version} and {new.version}: "
                     + ", ".join(f"{key} {before} -> {after}" for key, before, after in diff.contract)
                     + "; each version is scored under its own contract")
    counts = changes["change"].value_counts()
    lines.append(f"{old.name} {old.version} -> {new.name} {new.version}: {counts.get('added', 0)} added, "
                 f"{counts.get('removed', 0)} removed, {counts.get('changed', 0)} changed")
    if len(changes):
        lines.append(changes.head(shown).to_string(index=False))
        if len(changes) > shown:
            lines.append(f"... and {len(changes) - shown} more")
    if diff.revisions is not None:
        lines += revision_lines(diff.revisions, f"{old.version} (upstream, by each judgment's source)", shown)
    if diff.scores is not None:
        same_metric = parse_measure(old.contract.headline) == parse_measure(new.contract.headline)
        header = ["run", f"{old.contract.headline} {old.version}", f"{new.contract.headline} {new.version}"]
        rows = [[row.run, number(row.old), number(row.new), *([number(row.change, sign=True)] if same_metric else [])]
                for row in diff.scores.itertuples()]
        lines.append("\n" + "\n".join(text_table([header + (["change"] if same_metric else []), *rows])))
        if not same_metric:
            lines.append(f"no change column: the headline metrics differ ({old.contract.headline} in {old.version}, "
                         f"{new.contract.headline} in {new.version})")
        elif diff.contract:
            lines.append("the change comes from the contract change (" + ", ".join(key for key, _, _ in diff.contract)
                         + ") as well as from the judgments")
    return "\n".join(lines)


@dataclass(frozen=True)
class UpstreamChanges:
    """A set version's grades revised or withdrawn in a later labels table (``revisions``, as
    :func:`evalset.judgments.revisions.grade_revisions`): what ``evalset verify --labels`` adds."""

    version: str
    labels: tuple[str, ...]
    revisions: pd.DataFrame

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset verify --labels ... --format json``'s upstream part."""
        return {"version": self.version, "labels": list(self.labels),
                "revisions": records(self.revisions)}

    def to_text(self) -> str:
        lines = revision_lines(self.revisions, f"{self.version} was frozen (in {', '.join(self.labels)})")
        return "\n".join(lines) if lines else (f"no grade of {self.version} changed upstream (in "
                                                f"{', '.join(self.labels)})")


@dataclass(frozen=True)
class CheckedVersion:
    """What ``evalset verify`` finds: the version's verification and, with later labels, its grades changed
    upstream."""

    verification: Verification
    upstream: UpstreamChanges | None = None
    collections: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per collection the set read by ir_datasets id, per part read (``qrels``, ``queries``): ``same`` as when
    frozen, ``changed`` upstream, or ``not checked: ...`` (:func:`evalset.io.irds.recheck`). Reported, not failed:
    the frozen version holds its own copy."""

    def to_text(self) -> str:
        said = {"same": "as when the set was frozen", "changed": "CHANGED upstream since the set was frozen (the set "
                "keeps its own copy: freeze a new version to follow it)"}
        collections = [f"{source} ({part}): {said.get(status, status)}" for source, parts in self.collections.items()
                       for part, status in parts.items()]
        return "\n".join([self.verification.to_text(), *collections,
                          *([self.upstream.to_text()] if self.upstream else [])])

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset verify --format json``."""
        return {**self.verification.to_dict(), "collections": self.collections,
                "upstream": None if self.upstream is None else self.upstream.to_dict()}


def upstream_changes(set_path: str | os.PathLike, labels_paths: list[str | os.PathLike]) -> UpstreamChanges:
    """The grades of the set version at ``set_path`` revised or withdrawn in the labels tables at ``labels_paths``
    (a later pull): the judgments are followed by their ``source``."""
    frozen = load_set(set_path, check_headline=parse_measure)
    later = pd.concat([read_labels(path) for path in labels_paths], ignore_index=True)
    return UpstreamChanges(f"{frozen.name} {frozen.version}", tuple(map(os.fspath, labels_paths)),
                           grade_revisions(frozen.labels, later))


def check_version(set_path: str | os.PathLike, manifest_sha256: str | None = None,
                  labels_paths: Sequence[str | os.PathLike] = ()) -> CheckedVersion:
    """``evalset verify``: every hash and the manifest of the set version at ``set_path``
    (:func:`evalset.io.setfolder.verify_set`, the manifest against ``manifest_sha256`` when given), and, when it
    holds and later labels tables are given, its grades revised or withdrawn upstream (:func:`upstream_changes`);
    each collection it read by ir_datasets id read again (:attr:`CheckedVersion.collections`)."""
    verification = verify_set(set_path, manifest_sha256, check_headline=parse_measure)
    upstream = upstream_changes(set_path, list(labels_paths)) if labels_paths and not verification.problems else None
    inputs = read_set_manifest(set_path).get("inputs", {}) if not verification.problems else {}
    collections = {source: recheck(source, record) for source, record in inputs.items() if is_irds(source)}
    return CheckedVersion(verification, upstream, collections)
