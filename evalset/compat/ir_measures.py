"""evalset as an ir_measures provider: existing ir_measures code switches to evalset's engine with one line.

``import evalset.compat.ir_measures`` registers the provider ``evalset`` in ``ir_measures.providers.registry``
and beside ir_measures' own (``ir_measures.pytrec_eval``, ``ir_measures.judged``) as ``ir_measures.evalset``::

    import ir_measures
    import evalset.compat.ir_measures  # noqa: F401 (registers the provider)
    from ir_measures import AP, P, nDCG

    ir_measures.evalset.calc_aggregate([nDCG@10, AP(rel=2), P@10], qrels, run)  # was ir_measures.calc_aggregate
    evaluator = ir_measures.evalset.evaluator([nDCG@10], qrels)  # qrels prepared once, then a run at a time
    for metric in evaluator.iter_calc(run): ...

Qrels and runs are ir_measures' shapes (:class:`ir_measures.util.QrelsConverter`, :class:`~ir_measures.util.
RunConverter`): a DataFrame (``query_id, doc_id, relevance`` / ``query_id, doc_id, score``), a dict of dicts, or an
iterable of namedtuples (``ir_measures.read_trec_qrels``, ``read_trec_run``); a pair given twice keeps its last
value, as their dict of dicts does.

Conventions: those of ir_measures' pytrec_eval provider (trec_eval's), so that the per-query rows are the same
rows with the same values: a query without a relevant document scores 0 (``undefined="zero"``), a judged query
absent from the run scores ``measure.DEFAULT`` (0; ir_measures' Evaluator adds it, as for every provider), a query
without judgments is left out, ties are broken as trec_eval does (evalset's ``trec`` rule), IPrec and the ties
follow trec_eval 9 (pytrec_eval builds 9; ``EvalsetProvider(trec_eval_version=10)`` for 10's rules), and
``calc_aggregate`` is ir_measures' own mean over those rows (its sum for NumRet, NumRel).

The measures are those of :data:`COUNTERPARTS` (ir_measures' name -> evalset's): P, R, RR, AP, nDCG, Rprec, Bpref,
Success, Judged, ERR, RBP, NumRet (``NumRet(rel=N)``, alias NumRelRet, is evalset's ``num_rel_ret``), NumRel, SetP,
SetR (evalset's recall without a cutoff), SetF, SetAP (trec_eval's set_map), IPrec and infAP; ``SetP(relative=True)``
is evalset's ``set_relative_p`` (trec_eval's set_relative_P). A measure is read by evalset's own parser in
ir_measures' spelling (:func:`evalset_measure`): the provider computes exactly what ``evalset score -m`` takes, each
parameter checked by evalset's rule (``rel`` >= 1, ``dcg`` ``'log2'`` or ``'exp-log2'``, RBP's ``p`` in (0, 1)),
and refuses the rest: ``nDCG(gains=...)`` (evalset's gains are the grade or 2^grade - 1) and NumQ (a count of
queries, not a value per query: ``--format trec_eval`` prints it as ``num_q``). Where it departs from ir_measures'
providers (docs/python.md, "evalset as an ir_measures provider", the table of ir_measures' own tests that fail against
it, tests/compat/test_ir_measures_suite.py):

- ``Judged@k`` is evalset's: documents with a grade >= 0 in the top k (ties as trec_eval) / k, also for a ranking
  shorter than k. ir_measures' judged provider divides by the ranking's length when it is shorter, breaks ties
  by document id ascending and counts a document with a negative grade as judged. ``Judged`` without a cutoff is
  the whole ranking's share (/ its length), as the judged provider's.
- ``RR@k`` takes its cutoff and ``nDCG(dcg='exp-log2')`` its 2^grade - 1 gains; pytrec_eval's provider refuses
  both in ``supports`` and, called directly (``ir_measures.pytrec_eval.iter_calc``), ignores both: its values are
  RR's without a cutoff and nDCG's with the grade as gain (README: on DL19).
- ERR is gdeval's rule (gdeval prints 5 decimal places; evalset's values are unrounded); RBP without ``rel`` is
  evalset's graded RBP (gain = grade / the query's highest grade when above 1, trec_eval's rbp), not compared with
  a provider here (cwl_eval and trectools are not installed with evalset's test extra).

A new row of :data:`COUNTERPARTS` adds a measure of evalset's registry (:mod:`evalset.metrics.measures`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.metrics import Measure, evaluate, parse_measure, prepare_qrels

try:
    import ir_measures
    from ir_measures import providers
    from ir_measures.util import Metric, QrelsConverter, RunConverter
except ImportError:
    raise ImportError("evalset.compat.ir_measures needs ir_measures: pip install 'evalset[ir-measures]'") from None

COUNTERPARTS: dict[str, str] = {
    # ir_measures' name: evalset's (ir_measures' aliases, MAP, NDCG, ..., carry these names)
    "P": "p", "R": "recall", "RR": "rr", "AP": "ap", "nDCG": "ndcg", "Rprec": "rprec", "Bpref": "bpref",
    "Success": "success", "Judged": "judged", "ERR": "err", "RBP": "rbp", "NumRet": "num_ret", "NumRel": "num_rel",
    "SetP": "set_p", "SetR": "recall", "SetF": "f", "SetAP": "set_ap", "IPrec": "iprec", "infAP": "infap",
}
"""The ir_measures measures with an evalset counterpart: one line each."""


CONTRACT = EvaluationContract(missing="skip", undefined="zero", ties="trec")
"""ir_measures' pytrec_eval provider's conventions; the queries absent from a run are ir_measures' Evaluator's."""


def evalset_measure(measure: ir_measures.Measure) -> Measure:
    """evalset's :class:`~evalset.metrics.Measure` for an ir_measures measure of :data:`COUNTERPARTS`: its
    spelling (ir_measures' own, which leaves out a parameter at its default) under evalset's name, read by evalset's
    parser (:func:`evalset.metrics.parse_measure`, the CLI's), so that the provider takes what the CLI takes:
    ``P(rel=2)@10`` -> ``p(rel=2)@10``, ``NumRet(rel=1)`` -> ``num_rel_ret(rel=1)``, ``SetR`` -> ``recall``,
    ``IPrec@0.5`` -> ``iprec@0.5``. A measure or parameter evalset does not take raises
    :class:`~evalset.errors.InputError` (``nDCG(gains=...)``, ``AP(rel=0)``)."""
    if measure.NAME not in COUNTERPARTS:
        raise InputError(f"{measure} has no evalset counterpart")
    spelled = repr(measure)
    return parse_measure(COUNTERPARTS[measure.NAME] + spelled[len(measure.__name__):])


class EvalsetEvaluator(providers.Evaluator):
    """Scores runs against qrels prepared once (:func:`evalset.metrics.prepare_qrels`), each run in one call of
    evalset's engine (:func:`evalset.metrics.evaluate`)."""

    def __init__(self, measures: list[ir_measures.Measure], qrels: pd.DataFrame, contract: EvaluationContract):
        self._prepared = prepare_qrels(qrels, contract, "<ir_measures qrels>")
        super().__init__(measures, set(self._prepared.query_ids))
        self._ours = {measure: evalset_measure(measure) for measure in measures}

    def _iter_calc(self, run: Any) -> Iterator[Metric]:
        table = evaluate(_run_frame(run), self._prepared, list(dict.fromkeys(self._ours.values())))
        columns = [(measure, table[str(ours)].tolist()) for measure, ours in self._ours.items()]
        for row, query_id in enumerate(table.index):
            for measure, values in columns:
                yield Metric(query_id=query_id, measure=measure, value=values[row])


class EvalsetProvider(providers.Provider):
    """evalset's engine behind ir_measures' interface (module docstring: the measures, the conventions).

    ``trec_eval_version`` (9, the registered provider's, as pytrec_eval builds trec_eval 9; or 10) is the rule of
    IPrec (:mod:`evalset.metrics.trec_procedures`) and of tied scores (9 compares them as 32-bit floats, as
    pytrec_eval does; 10 as doubles: :func:`evalset.metrics.order_run`)."""

    NAME = "evalset"
    SUPPORTED_MEASURES: ClassVar[list[ir_measures.Measure]] = [
        ir_measures.measures.registry[name] for name in COUNTERPARTS]  # which parameters: supports()

    def __init__(self, trec_eval_version: int = 9):
        super().__init__()
        self.contract = replace(CONTRACT, trec_eval_version=trec_eval_version)  # the version checked by its rule

    def supports(self, measure: ir_measures.Measure) -> bool:
        """Whether evalset computes ``measure``: a row of :data:`COUNTERPARTS` that evalset's parser takes with its
        parameters (:func:`evalset_measure`)."""
        measure.validate_params()
        try:
            evalset_measure(measure)
        except InputError:
            return False
        return True

    def _evaluator(self, measures: Iterable[ir_measures.Measure], qrels: Any) -> EvalsetEvaluator:
        measures = list(measures)
        refused = [str(measure) for measure in measures if not self.supports(measure)]
        if refused:
            raise InputError(f"the evalset provider does not compute {', '.join(refused)}; it computes "
                             f"{', '.join(COUNTERPARTS)} (evalset.compat.ir_measures)")
        return EvalsetEvaluator(measures, _qrels_frame(qrels), self.contract)

    def install_instructions(self) -> str:
        return "pip install 'evalset[ir-measures]'"


def _frame(converted: Any, kind: str, error: str | None, value: str, what: str) -> pd.DataFrame:
    """``query_id, doc_id, <value>`` from ir_measures' qrels or run (``kind`` as its converter predicted it), ids as
    strings, the last value of a pair given twice (as a dict of dicts keeps)."""
    if kind == "dict_of_dict":
        frame = pd.DataFrame({
            "query_id": [query for query, docs in converted.items() for _ in docs],
            "doc_id": [doc for docs in converted.values() for doc in docs],
            value: [number for docs in converted.values() for number in docs.values()],
        })
    elif kind == "pd_dataframe":
        frame = converted[["query_id", "doc_id", value]]
    elif kind == "namedtuple_iter":
        frame = pd.DataFrame([(r.query_id, r.doc_id, getattr(r, value)) for r in converted],
                             columns=["query_id", "doc_id", value])
    else:
        raise InputError(f"ir_measures {what}: {error}")
    frame = pd.DataFrame({"query_id": frame["query_id"].astype(str).to_numpy(),
                          "doc_id": frame["doc_id"].astype(str).to_numpy(), value: frame[value].to_numpy()})
    repeated = frame.duplicated(["query_id", "doc_id"], keep="last").to_numpy()
    return frame[~repeated].reset_index(drop=True) if repeated.any() else frame


def _given(column: pd.Series, row: int) -> Any:
    """The value at ``row`` as the caller gave it (a Python number, not numpy's)."""
    return column.to_numpy(dtype=object)[row]


def _qrels_frame(qrels: Any) -> pd.DataFrame:
    converter = QrelsConverter(qrels)
    kind, error = converter.predict_type()
    source = converter.as_namedtuple_iter() if kind == "namedtuple_iter" else converter.qrels
    frame = _frame(source, kind, error, "relevance", "qrels")
    relevance = frame.pop("relevance")
    grade = pd.to_numeric(relevance, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(grade) | (grade != np.round(grade)))
    if bad.size:
        raise InputError(f"ir_measures qrels: relevance must be an integer, found {_given(relevance, bad[0])!r} "
                         f"(query {frame['query_id'].iloc[bad[0]]}, document {frame['doc_id'].iloc[bad[0]]})")
    frame["grade"] = grade.astype(np.int64)
    return frame


def _run_frame(run: Any) -> pd.DataFrame:
    converter = RunConverter(run)
    kind, error = converter.predict_type()
    source = converter.as_namedtuple_iter() if kind == "namedtuple_iter" else converter.run
    frame = _frame(source, kind, error, "score", "run")
    score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(score))
    if bad.size:
        raise InputError(f"ir_measures run: score must be a finite number, found {_given(frame['score'], bad[0])!r} "
                         f"(query {frame['query_id'].iloc[bad[0]]}, document {frame['doc_id'].iloc[bad[0]]})")
    frame["score"] = score
    return frame


provider = EvalsetProvider()
"""The registered provider (``ir_measures.providers.registry["evalset"]``, ``ir_measures.evalset``)."""
providers.register(provider)
ir_measures.evalset = provider
