"""``evalset freeze`` from files: the labels, queries, guideline, adjudication and document sample read (each by its
reader in :mod:`evalset.io`, refused with its file and line), their sha256 recorded, and :func:`freeze` called."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from evalset.contract import DEFAULT_METRIC, EvaluationContract
from evalset.io.annotations import labels_from_file
from evalset.io.digests import file_sha256
from evalset.io.guideline import read_guideline
from evalset.io.irds import collection_record, is_irds
from evalset.io.queries import read_queries
from evalset.io.samplerecord import read_sample
from evalset.judgments.spec import MergePolicy
from evalset.sets.freezing import FrozenVersion, freeze
from evalset.sets.inputs import read_judgments, set_contract

FilePath = str | os.PathLike


def freeze_files(labels: Sequence[FilePath], queries: FilePath, guideline: FilePath, name: str, sets_dir: FilePath,
                 *, llm_labels: Sequence[FilePath] = (), version: int | None = None,
                 contract: EvaluationContract | None = None, headline: str = DEFAULT_METRIC,
                 weighting: str = "traffic", merge: MergePolicy = MergePolicy(),
                 adjudication: FilePath | None = None, planned: Sequence[tuple[str, str]] = (),
                 conflicting_grades: str = "refuse", sample: FilePath | None = None) -> FrozenVersion:
    """Freeze the ``labels`` files (labels tables, or qrels as one human annotator each; ``llm_labels``: an LLM
    judge's) with the ``queries`` file and the ``guideline`` file into ``sets_dir/name/vN`` (:func:`freeze`): the
    set's contract is ``contract`` with its ``headline`` metric and stratum ``weighting``
    (:func:`~evalset.sets.inputs.set_contract`), ``adjudication`` a labels or qrels file that settles pairs,
    ``sample`` the document sample the human labels were drawn by (its record or folder). The sha256 of every
    labels and queries file is recorded in the manifest; of a collection read by ir_datasets id (``irds:ID``),
    the id, ir_datasets' version and the sha256 of what it gave (:func:`evalset.io.irds.collection_record`)."""
    recorded = set_contract(contract, headline, weighting)
    return freeze(read_judgments(labels, llm_labels), read_queries(queries), read_guideline(guideline), name,
                  sets_dir, version=version, contract=recorded, merge=merge,
                  adjudication=labels_from_file(adjudication) if adjudication else None, planned=list(planned),
                  inputs=_recorded([*labels, *llm_labels], queries),
                  conflicting_grades=conflicting_grades, queries_source=os.fspath(queries),
                  sample=read_sample(sample) if sample else None)


def _recorded(labels: Sequence[FilePath], queries: FilePath) -> dict[str, Any]:
    """The manifest's ``inputs``: each file's sha256, each collection's record (one source may give both the
    labels, as qrels, and the queries)."""
    read_as: dict[str, set[str]] = {}
    for path, part in [*((os.fspath(p), "qrels") for p in labels), (os.fspath(queries), "queries")]:
        read_as.setdefault(path, set()).add(part)
    return {path: collection_record(path, parts) if is_irds(path) else file_sha256(path)
            for path, parts in read_as.items()}
