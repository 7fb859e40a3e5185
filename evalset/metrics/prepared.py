"""What the engine hands a measure: qrels prepared once under a contract (:class:`PreparedQrels`, reused to score
many runs), the run's rows that can contribute with their tie-group statistics (:class:`Rows`), and the two with
the measure as one input (:class:`MeasureInput`), which every computation registered in
:mod:`evalset.metrics.measures` reads.

A module of its own, below the engine (:mod:`evalset.metrics.engine`, which builds the rows and calls the
computations) and below the registry and its computations (:mod:`evalset.metrics.measures`,
:mod:`~evalset.metrics.graded`, :mod:`~evalset.metrics.trec_procedures`, :mod:`~evalset.metrics.trec_measures`),
so that each imports it and none imports the engine.

Conventions
-----------
- Qrels are indexed by query in byte order of the query ids; ``query_ids`` are the judged queries (at least one
  qrels line, any grade). A grade at least the contract's relevance level is relevant; a negative grade (pooled, not
  judged) is neither relevant nor judged non-relevant.
- Under exponential gain a grade above :data:`MAX_EXPONENTIAL_GRADE` is refused (its gain would overflow).
- A measure's value for every judged query is an array in ``PreparedQrels.query_ids`` order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.metrics.decomposition import discount
from evalset.metrics.decomposition import gain as grade_gain
from evalset.metrics.ranking import by_query_highest_first, position_in_group
from evalset.speed.keys import query_codes
from evalset.speed.strings import string_column


@dataclass(frozen=True)
class PreparedQrels:
    """Qrels indexed for the engine under one contract (reuse it to score many runs).

    ``query_ids`` are the judged queries (those with at least one qrels line, any grade), in byte order.
    :meth:`under` gives the same qrels under another contract (a measure's own relevance level or gain).
    """

    query_ids: pd.Index
    query_code: np.ndarray
    doc_id: pa.ChunkedArray  # the qrels' own column, chunks and all (no copy)
    grade: np.ndarray
    num_relevant: np.ndarray
    num_judged_nonrelevant: np.ndarray
    ideal_query_code: np.ndarray
    ideal_gain: np.ndarray
    ideal_position: np.ndarray
    contract: EvaluationContract
    _under: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def under(self, contract: EvaluationContract) -> PreparedQrels:
        """These qrels under ``contract``: the counts of relevant documents and the ideal gains recomputed when its
        relevance level or gain differs (once per contract), else the same arrays."""
        if contract == self.contract:
            return self
        if (contract.rel_level, contract.gain) == (self.contract.rel_level, self.contract.gain):
            return replace(self, contract=contract)
        if contract not in self._under:
            self._under[contract] = _indexed(self.query_ids, self.query_code, self.doc_id, self.grade, contract)
        return self._under[contract]

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        within = self.ideal_position < (cutoff if cutoff is not None else np.iinfo(np.int64).max)
        weights = self.ideal_gain * discount(self.ideal_position) * within
        return np.bincount(self.ideal_query_code, weights=weights, minlength=len(self.query_ids))


MAX_EXPONENTIAL_GRADE = 1000
"""The largest grade scored under ``gain = exponential``: 2^grade - 1 stays finite in a sum of a million gains."""


def prepare_qrels(qrels: pd.DataFrame, contract: EvaluationContract | None = None,
                  source: str | None = None) -> PreparedQrels:
    """Index qrels (``query_id, doc_id, grade``, as from :func:`evalset.io.trec.read_qrels`) for scoring; under
    exponential gain a grade above :data:`MAX_EXPONENTIAL_GRADE` is refused (its gain would overflow). ``source``
    names the qrels in messages."""
    contract = contract or EvaluationContract()
    query_ids, query_code = query_codes(qrels["query_id"])
    grade = qrels["grade"].to_numpy(dtype=np.int64)
    return _indexed(query_ids, query_code, string_column(qrels["doc_id"]), grade, contract, source)


def _indexed(query_ids: pd.Index, query_code: np.ndarray, doc_id: pa.ChunkedArray, grade: np.ndarray,
             contract: EvaluationContract, source: str | None = None) -> PreparedQrels:
    if contract.gain == "exponential" and len(grade) and grade.max() > MAX_EXPONENTIAL_GRADE:
        row = int(np.argmax(grade))
        raise InputError(f"grade {grade[row]} (query {query_ids[query_code[row]]}, document "
                         f"{doc_id[row].as_py()}) cannot be scored with exponential gain: 2^grade - 1 "
                         f"overflows; grades up to {MAX_EXPONENTIAL_GRADE} can (-c gain=linear helps every measure but "
                         "err, which is on 2^grade - 1 whatever the gain)", source)
    count = len(query_ids)
    # each temporary freed when done (10M judgments: 10-80 MiB apiece): the peak is what is alive at once
    relevant = grade >= contract.rel_level
    # float even for empty qrels (np.bincount of nothing is int64, which later divisions cannot write into)
    num_relevant = np.bincount(query_code[relevant], minlength=count).astype(np.float64)
    relevant |= grade < 0
    num_judged_nonrelevant = np.bincount(query_code[~relevant], minlength=count).astype(np.float64)
    del relevant
    has_gain = grade > 0  # where the gain (the grade, or 2^grade - 1, which grows with it) is positive
    ideal_query_code, ideal_grade = by_query_highest_first(query_code, grade, has_gain)
    del has_gain
    ideal_gain = grade_gain(ideal_grade, contract.gain)
    del ideal_grade
    return PreparedQrels(
        query_ids=query_ids,
        query_code=query_code,
        doc_id=doc_id,
        grade=grade,
        num_relevant=num_relevant,
        num_judged_nonrelevant=num_judged_nonrelevant,
        ideal_query_code=ideal_query_code,
        ideal_gain=ideal_gain,
        ideal_position=position_in_group(ideal_query_code),
        contract=contract,
    )


@dataclass
class Rows:
    """The run's rows for judged queries, in evaluation order, with their tie-group statistics."""

    query: np.ndarray  # index into PreparedQrels.query_ids
    position: np.ndarray  # 0-based rank
    expected_relevant: np.ndarray  # r/n
    expected_gain: np.ndarray  # G/n
    expected_judged: np.ndarray  # J/n
    ap_term: np.ndarray
    first_relevant: np.ndarray  # P(first relevant document of the query is here)
    bpref_term: np.ndarray  # sum over the group's relevant documents, on the group's first row
    queries_in_run: np.ndarray  # bool per judged query
    retrieved: np.ndarray  # per judged query: the ranking's length (a repeated document once; condensed: judged)
    pooled_above: np.ndarray | None = None  # entries graded < 0 (pooled, unjudged) above; only when asked (infAP)


class MeasureAsked(Protocol):
    """What a computation reads of the measure it computes (:class:`evalset.metrics.measures.Measure` is one): its
    cutoff, its parameters, and its spelling (``str``) for a message."""

    @property
    def cutoff(self) -> int | None: ...

    def param(self, name: str, default: Any = None) -> Any: ...


@dataclass(frozen=True)
class MeasureInput:
    """What a measure's computation (:attr:`evalset.metrics.measures.MeasureKind.compute`) reads: the measure,
    the run's rows that can contribute (:class:`Rows`, in evaluation order) and the prepared qrels, whose contract
    names the trec_eval version a measure defined by trec_eval's procedure follows
    (:mod:`evalset.metrics.trec_procedures`)."""

    measure: MeasureAsked
    rows: Rows
    prepared: PreparedQrels

    @property
    def trec_eval_version(self) -> int:
        return self.prepared.contract.trec_eval_version

    @property
    def cutoff(self) -> int | None:
        return self.measure.cutoff

    @property
    def relevant(self) -> np.ndarray:
        """R of every judged query."""
        return self.prepared.num_relevant

    @cached_property
    def within(self) -> np.ndarray:
        """The rows ranked within the cutoff (all rows without one)."""
        position = self.rows.position
        return position < self.cutoff if self.cutoff is not None else np.ones(len(position), dtype=bool)

    def per_query(self, weights: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """The sum of the rows' ``weights`` per judged query, over the rows within the cutoff (or ``mask``'s)."""
        mask = self.within if mask is None else mask
        return np.bincount(self.rows.query, weights=weights * mask, minlength=len(self.prepared.query_ids))
