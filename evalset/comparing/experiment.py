"""What PyTerrier's ``pt.Experiment`` takes, compared as ``evalset compare`` compares runs: the verdict table with
judged@k and the holes' bound, the family threshold, abstentions where the data cannot decide.

Conventions
-----------
- ``systems`` are ``pt.Experiment``'s ``retr_systems``: a sequence or a name -> system mapping, each a result frame
  (pandas or polars; PyTerrier's ``qid, docno, score[, rank]`` or evalset's names) or a transformer, anything with
  ``transform(topics)`` that returns one (a PyTerrier pipeline; evalset imports no PyTerrier).
- ``names`` and ``baseline`` as ``pt.Experiment``'s: the names of a sequence (default: ``str(system)`` of a
  transformer, ``run1, run2, ...`` of a frame); the baseline by index or name (default: the first). The baseline is
  compared with every other system, in one family (:func:`evalset.comparing.compare_runs`).
- The queries are the ``topics``' (``qid``, or ``query_id``): the results and the qrels are kept to them, as
  ``pt.Experiment`` filters by topics; a judged query a system did not answer is the contract's ``missing`` rule's
  (scored 0 unless ``options`` say otherwise), never dropped in silence.
- ``qrels``: PyTerrier's frame (``qid, docno, label``), any qrels :func:`evalset.io.frames.qrels_frame` takes, or a
  qrels file or ``irds:ID``. ``metric`` is an evalset or ir_measures name, or an ir_measures measure object
  (``nDCG@10``): its ``str()`` is the name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from evalset.comparing.compare import Comparisons, compare_runs
from evalset.contract import ContractOptions
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.io.frames import is_frame, qrels_frame, run_frame
from evalset.io.trec import read_qrels


def compare_systems(systems: Sequence[Any] | Mapping[str, Any], topics: pd.DataFrame, qrels: Any, *,
                    names: Sequence[str] | None = None, baseline: int | str | None = None, metric: Any = None,
                    contract: ContractOptions | None = None, **options: Any) -> Comparisons:
    """The ``baseline`` system compared with every other one on ``topics`` against ``qrels`` (module docstring),
    under ``contract`` (default: evalset's); ``options`` are the comparison's settings
    (:class:`~evalset.comparing.spec.CompareSpec`: ``alpha``, ``permutations``, ``seed``, ``planned``, ...).
    ``Comparisons.to_frame()`` is the verdict table, ``to_text()`` what ``evalset compare`` prints."""
    named = _named(systems, names)
    order = list(named)
    first = order[baseline] if isinstance(baseline, int) else baseline if baseline is not None else order[0]
    if first not in named:
        raise InputError(f"no system named {first!r} to be the baseline (the systems: {', '.join(order)})")
    wanted = set(_query_ids(topics))
    runs = {name: _on_topics(_results(named[name], topics, name), wanted)
            for name in [first, *(name for name in order if name != first)]}
    given = read_qrels(qrels) if isinstance(qrels, str | os.PathLike) else qrels_frame(qrels)
    kept = given[given["query_id"].isin(wanted)]
    if kept.empty:
        raise InputError("the qrels judge none of the topics' queries")
    return compare_runs(Evaluation.on_qrels(kept.reset_index(drop=True), contract), runs,
                        str(metric) if metric is not None else None, **options)


def _named(systems: Sequence[Any] | Mapping[str, Any], names: Sequence[str] | None) -> dict[str, Any]:
    if isinstance(systems, Mapping):
        if names is not None:
            raise InputError("systems given by name: give no names as well")
        return {str(name): system for name, system in systems.items()}
    systems = list(systems)
    if names is not None and len(names) != len(systems):
        raise InputError(f"{len(names)} names for {len(systems)} systems")
    chosen = list(names) if names is not None else [
        f"run{i}" if is_frame(system) else str(system) for i, system in enumerate(systems, start=1)]
    if len(set(chosen)) != len(chosen):
        raise InputError(f"two systems share a name ({', '.join(chosen)}): give names")
    if len(systems) < 2:
        raise InputError("one system: a comparison needs a baseline and at least one other system")
    return dict(zip(chosen, systems, strict=True))


def _results(system: Any, topics: pd.DataFrame, name: str) -> pd.DataFrame:
    """A system's results on ``topics``: a frame as it is, a transformer's ``transform(topics)``."""
    if is_frame(system):
        return run_frame(system, name)
    if not hasattr(system, "transform"):
        raise InputError(f"system {name}: expected a result frame or a transformer (with transform(topics)), found "
                         f"{type(system).__name__}")
    return run_frame(system.transform(topics), name)


def _query_ids(topics: pd.DataFrame) -> pd.Series:
    column = next((c for c in ("qid", "query_id") if c in topics.columns), None)
    if column is None:
        raise InputError(f"the topics have no qid (or query_id) column, only {', '.join(map(str, topics.columns))}")
    return topics[column].astype(str)


def _on_topics(run: pd.DataFrame, wanted: set[str]) -> pd.DataFrame:
    return run[run["query_id"].isin(wanted)].reset_index(drop=True)
