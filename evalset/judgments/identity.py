"""Who an LLM judge is: the annotator and the ``source`` of its labels, and what differs between two versions.

=====================  ================================================================================================
convention             rule
=====================  ================================================================================================
a judge's identity     an LLM annotator and the ``source`` of its labels: ``evalset judge`` writes
                       ``model=M;prompt=NAME@sha256:X;guideline=NAME-vV@sha256:Y``
                       (:func:`evalset.judge.label_source`); a qrels file's source is its file name
two versions           the same annotator with two sources (the model, the prompt template or the guideline
                       changed) are two judges, named ``annotator [what differs]``
one judge's labels     LLM labels of one annotator with one source; a table mixing sources of one annotator holds
                       several judges
=====================  ================================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

PARTS = ("model", "prompt", "guideline")
"""The parts of a source written by ``evalset judge``, in its order."""


@dataclass(frozen=True)
class JudgeIdentity:
    """An LLM judge: its annotator and the source of its labels (module docstring)."""

    annotator: str
    source: str

    @property
    def parts(self) -> dict[str, str]:
        """``model``, ``prompt`` and ``guideline`` of a source ``evalset judge`` wrote; empty otherwise."""
        fields = dict(part.partition("=")[::2] for part in self.source.split(";"))
        return fields if set(fields) == set(PARTS) else {}

    def changes(self, other: JudgeIdentity) -> list[str]:
        """What differs from this judge to ``other``, each as ``what: this -> other`` (empty: the same judge)."""
        if self == other:
            return []
        mine, theirs = self.parts, other.parts
        changed = [f"{part}: {mine[part]} -> {theirs[part]}" for part in PARTS
                   if mine and theirs and mine[part] != theirs[part]]
        if self.annotator != other.annotator:
            changed.insert(0, f"annotator: {self.annotator} -> {other.annotator}")
        return changed or [f"source: {self.source} -> {other.source}"]

    def to_dict(self) -> dict[str, Any]:
        return {"annotator": self.annotator, "source": self.source, **self.parts}

    @classmethod
    def from_dict(cls, entry: dict[str, Any]) -> JudgeIdentity:
        return cls(str(entry["annotator"]), str(entry["source"]))


def source_fields(source: str) -> dict[str, str]:
    """``model``, ``prompt``, ``prompt_sha256``, ``guideline``, ``guideline_sha256`` of a source ``evalset judge``
    wrote (``NAME@sha256:HEX`` for the prompt and the guideline); empty for any other source."""
    parts = JudgeIdentity("", source).parts
    if not parts:
        return {}
    fields = {"model": parts["model"]}
    for part in ("prompt", "guideline"):
        name, marker, sha256 = parts[part].partition("@sha256:")
        if not marker or not sha256:
            return {}
        fields[part], fields[f"{part}_sha256"] = name, sha256
    return fields


def judge_identities(labels: pd.DataFrame) -> list[JudgeIdentity]:
    """The LLM judges of a labels table (rows of kind ``llm``), in order of appearance."""
    llm = labels[labels["kind"] == "llm"]
    pairs = llm[["annotator", "source"]].astype(str).drop_duplicates()
    return [JudgeIdentity(annotator, source) for annotator, source in pairs.itertuples(index=False)]


def judge_names(identities: list[JudgeIdentity]) -> list[str]:
    """A name for each judge: its annotator, followed by ``[what differs]`` when another judge shares it."""
    names = []
    for identity in identities:
        others = [other for other in identities if other.annotator == identity.annotator and other != identity]
        if not others:
            names.append(identity.annotator)
            continue
        parts = identity.parts
        differing = [part for part in PARTS if parts and all(other.parts and other.parts[part] != parts[part]
                                                                for other in others)]
        label = ", ".join(f"{part} {parts[part].split('@')[0]}" for part in differing) or identity.source
        names.append(f"{identity.annotator} [{label}]")
    if len(set(names)) < len(names):  # versions differing only in a sha: name them by position
        names = [f"{name} #{index + 1}" for index, name in enumerate(names)]
    return names


def named_judges(labels: pd.DataFrame) -> pd.DataFrame:
    """``labels`` with each LLM row's ``annotator`` replaced by its judge's name (:func:`judge_names`), so that two
    versions of one annotator are two annotators; the annotator as given is kept in ``given_annotator``."""
    identities = judge_identities(labels)
    names = dict(zip(identities, judge_names(identities), strict=True))
    llm = labels["kind"] == "llm"
    renamed = labels.assign(given_annotator=labels["annotator"])
    renamed.loc[llm, "annotator"] = [names[JudgeIdentity(str(a), str(s))]
                                     for a, s in zip(labels.loc[llm, "annotator"], labels.loc[llm, "source"],
                                                     strict=True)]
    return renamed


def recorded_judges(manifest: dict[str, Any], labels: pd.DataFrame) -> list[JudgeIdentity]:
    """The judges a frozen set records (its manifest's ``judges``; a set frozen before they were recorded: those of
    its labels, which carry their source)."""
    if "judges" in manifest:
        return [JudgeIdentity.from_dict(entry) for entry in manifest["judges"]]
    return judge_identities(labels)
