"""What runs are evaluated against: the qrels and the contract in force, and on a frozen set its split and strata.

Conventions
-----------
- On qrels (a file, a frame ``query_id, doc_id, grade`` or ir_measures' and pytrec_eval's shapes:
  :func:`evalset.io.frames.qrels_frame`) the contract is the default with the options given.
- On a frozen set it is the set's recorded contract: an option that contradicts it is refused
  (:class:`~evalset.errors.InputError`) unless ``override_contract``, and the contradictions are kept in
  :attr:`Evaluation.overridden` so that every output says so (:meth:`evalset.contract.ContractOptions.applied_to`).
  Only the queries of the split count: the qrels are the split's, the strata and traffic shares the set's.
- Which conventions were chosen explicitly (an option given, or a whole :class:`EvaluationContract` passed) is
  kept (:meth:`Evaluation.chose`): ``compare`` refuses a run missing judged queries unless ``missing`` was chosen.
- The qrels are indexed for the engine once (:attr:`Evaluation.prepared`) and reused by every run scored. Qrels read
  from a file are held only so indexed (their document ids and grades are the frame's own arrays): the frame
  (:attr:`Evaluation.qrels`) is built again when asked, equal to the one read, so that scoring a big run does not
  also hold a second copy of every judgment's query id (10M judgments: 120 MiB).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import cached_property

import pandas as pd
import pyarrow as pa

from evalset.contract import DEFAULT_METRIC, SPLIT_RULES, ContractOptions, EvaluationContract
from evalset.errors import InputError
from evalset.io.files import shown_name
from evalset.io.frames import QrelsLike, qrels_frame
from evalset.io.setfiles import QRELS_FILE
from evalset.io.setfolder import FrozenSet, load_set, select_split
from evalset.io.trec import read_qrels
from evalset.metrics import PreparedQrels, parse_measure, prepare_qrels
from evalset.params import validate_params

Options = ContractOptions | EvaluationContract | None


@dataclass(frozen=True)
class Evaluation:
    """The qrels and contract runs are scored by; on a frozen set also the set, the split and its queries."""

    contract: EvaluationContract
    held: pd.DataFrame | PreparedQrels  # the qrels frame, or qrels read from a file, indexed (module docstring)
    frozen: FrozenSet | None = None
    split: str | None = None
    queries: pd.DataFrame | None = None
    overridden: tuple[str, ...] = field(default=())
    source: str | None = None  # the qrels file or the set's folder, for messages
    given: tuple[str, ...] = field(default=())  # the contract's conventions chosen explicitly (options given)
    counted: dict = field(default_factory=dict, repr=False)  # qrels held indexed: what reading their file counted
    may_override: bool = False  # on a set: options may contradict its contract (said in the output)

    @classmethod
    def on_qrels(cls, qrels: str | os.PathLike | QrelsLike, options: Options = None) -> Evaluation:
        """Evaluation on qrels: a qrels file (TREC's, BEIR's), or qrels held in Python: a frame ``query_id, doc_id,
        grade``, ir_measures' frame or ``Qrel`` namedtuples, pytrec_eval's ``{qid: {docid: grade}}``
        (:func:`evalset.io.frames.qrels_frame`)."""
        given = _given(options)
        if not isinstance(options, EvaluationContract):
            options = (options or ContractOptions()).applied_to()[0]
        if not isinstance(qrels, str | os.PathLike):
            return cls(options, qrels_frame(qrels), given=given)
        source = shown_name(os.fspath(qrels))
        frame = read_qrels(qrels)
        prepared = prepare_qrels(frame, options, source)
        return cls(options, prepared, source=source, given=given, counted=dict(frame.attrs))

    @classmethod
    @validate_params(SPLIT_RULES)
    def on_set(cls, frozen: FrozenSet | str | os.PathLike, split: str = "test", options: ContractOptions | None = None,
               *, override_contract: bool = False) -> Evaluation:
        """Evaluation on a frozen set's ``split`` (``test``, ``dev``, ``all``) under its contract (module
        docstring); ``options`` that contradict the contract are refused unless ``override_contract``."""
        frozen = frozen if isinstance(frozen, FrozenSet) else load_set(frozen, check_headline=parse_measure)
        contract, overridden = (options or ContractOptions()).applied_to(frozen.contract.evaluation,
                                                                        override=override_contract)
        queries = select_split(frozen.queries, split)
        qrels = frozen.qrels[frozen.qrels["query_id"].isin(queries["query_id"])]
        if not (qrels["grade"] >= 0).any():
            raise InputError(f"no judgments on the {split} split of the set ({len(queries)} queries, none judged)",
                             os.fspath(frozen.path))
        return cls(contract, qrels, frozen, split, queries, overridden, os.fspath(frozen.path), _given(options),
                   may_override=override_contract)

    @property
    def headline(self) -> str:
        """The set's headline metric, or :data:`evalset.contract.DEFAULT_METRIC` on qrels."""
        return self.frozen.contract.headline if self.frozen else DEFAULT_METRIC

    @property
    def weighted(self) -> bool:
        """Whether a run's headline mean is the traffic-weighted mean across strata (a set weighted by traffic)."""
        return self.frozen is not None and self.frozen.contract.weighting == "traffic"

    @property
    def qrels_file(self) -> str | None:
        """The file the qrels were read from (a set's ``qrels.txt``), if any."""
        return os.path.join(self.frozen.path, QRELS_FILE) if self.frozen is not None else self.source

    @cached_property
    def qrels(self) -> pd.DataFrame:
        """The qrels in force: ``query_id, doc_id, grade``, with the ``attrs`` of :func:`evalset.io.trec.read_qrels`
        when read from a file."""
        if not isinstance(self.held, PreparedQrels):
            return self.held
        held = self.held
        frame = pd.DataFrame({"query_id": pa.array(held.query_ids.to_numpy(), pa.large_string()).take(held.query_code)
                              .to_pandas(), "doc_id": held.doc_id.to_pandas(), "grade": held.grade.copy()})
        frame.attrs.update(self.counted)
        return frame

    @property
    def grades(self) -> pd.Series:
        """The qrels' grades, in the qrels' order (without building :attr:`qrels`)."""
        if isinstance(self.held, PreparedQrels):
            return pd.Series(self.held.grade, name="grade", copy=False)
        return self.held["grade"]

    @property
    def read_attrs(self) -> dict:
        """What reading the qrels counted (``attrs`` of :func:`evalset.io.trec.read_qrels`), without building
        :attr:`qrels`."""
        return self.counted if isinstance(self.held, PreparedQrels) else self.held.attrs

    @cached_property
    def prepared(self) -> PreparedQrels:
        """The qrels indexed for the engine under the contract (computed once)."""
        if isinstance(self.held, PreparedQrels):
            return self.held.under(self.contract)
        return prepare_qrels(self.held, self.contract, self.source)

    def with_qrels(self, qrels: pd.DataFrame) -> Evaluation:
        """The same evaluation on other qrels (the holes of a comparison filled, an annotator's grades)."""
        return replace(self, held=qrels, counted={})

    def chose(self, convention: str) -> bool:
        """Whether ``convention`` (e.g. ``missing``) was chosen explicitly: an option given, or a whole contract."""
        return convention in self.given

    def with_contract(self, **changes: object) -> Evaluation:
        """The same evaluation under a contract changed in ``changes`` (e.g. ``ties="expected"``)."""
        return replace(self, contract=replace(self.contract, **changes))


def _given(options: Options) -> tuple[str, ...]:
    if isinstance(options, EvaluationContract):
        return tuple(options.to_dict())
    return tuple(options.given()) if options is not None else ()
