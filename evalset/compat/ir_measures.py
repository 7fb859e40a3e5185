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
without judgments is left out, ties are broken as trec_eval does (evalset's ``trec`` rule), and ``calc_aggregate``
is ir_measures' own mean over those rows.

The measures are the rows of :data:`COUNTERPARTS` (ir_measures' name -> evalset's, and the ir_measures parameters
evalset takes besides the cutoff, whose rule is evalset's): P, R, RR, AP, nDCG, Rprec, Bpref, Success, Judged, ERR,
NumRet (without ``rel``: ir_measures' ``NumRet(rel=N)`` is evalset's ``num_rel_ret``), NumRel, SetP, SetF and infAP
(not IPrec: evalset's follows trec_eval 10, pytrec_eval's 9), with
``rel``, ``judged_only`` and ``dcg`` (``'log2'``, ``'exp-log2'``) where evalset's measure takes them, each value
checked by evalset's own rule (``rel`` >= 1). Not ``nDCG(gains=...)``. RR takes a cutoff here (pytrec_eval's has
none). One measure differs from ir_measures' reference:

- ``Judged@k`` is evalset's: documents with a grade >= 0 in the top k (ties as trec_eval) / k, also for a ranking
  shorter than k. ir_measures' judged provider divides by the ranking's length when it is shorter, breaks ties
  by document id ascending and counts a document with a negative grade as judged. ``Judged`` needs a cutoff.

A new row of :data:`COUNTERPARTS` adds a measure of evalset's registry (:mod:`evalset.metrics.measures`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.metrics import MEASURES, Measure, evaluate, prepare_qrels
from evalset.metrics.parameters import PARAMS
from evalset.params import POSITIVE_INT, check

try:
    import ir_measures
    from ir_measures import providers
    from ir_measures.providers.base import NOT_PROVIDED, Choices, ParamSpec
    from ir_measures.util import Metric, QrelsConverter, RunConverter
except ImportError:
    raise ImportError("evalset.compat.ir_measures needs ir_measures: pip install 'evalset[ir_measures]'") from None

COUNTERPARTS: dict[str, tuple[str, tuple[str, ...]]] = {
    # ir_measures' name: (evalset's name, the ir_measures parameters evalset takes besides the cutoff)
    "P": ("p", ("rel", "judged_only")),
    "R": ("recall", ("rel", "judged_only")),
    "RR": ("rr", ("rel", "judged_only")),
    "AP": ("ap", ("rel", "judged_only")),
    "nDCG": ("ndcg", ("dcg", "judged_only")),
    "Rprec": ("rprec", ("rel", "judged_only")),
    "Bpref": ("bpref", ("rel",)),
    "Success": ("success", ("rel", "judged_only")),
    "Judged": ("judged", ()),
    "ERR": ("err", ()),
    "NumRet": ("num_ret", ()),
    "NumRel": ("num_rel", ("rel",)),
    "SetP": ("set_p", ("rel", "judged_only")),
    "SetF": ("f", ("rel", "beta", "judged_only")),
    "infAP": ("infap", ("rel",)),
}
"""The ir_measures measures evalset computes: one line each."""

CONTRACT = EvaluationContract(missing="skip", undefined="zero", ties="trec")
"""ir_measures' pytrec_eval provider's conventions; the queries absent from a run are ir_measures' Evaluator's."""


class Takes(ParamSpec):
    """The values of an ir_measures parameter that evalset takes: those ``check`` returns for (it raises
    ``ValueError`` for the others), and no value at all when the parameter is ``optional``."""

    def __init__(self, check_value: Callable[[Any], Any], optional: bool):
        self.check_value, self.optional = check_value, optional

    def validate(self, value: Any) -> bool:
        if value is NOT_PROVIDED:
            return self.optional
        try:
            self.check_value(value)
        except ValueError:
            return False
        return True

    def __repr__(self) -> str:
        return "ANY" if self.optional else "REQUIRED"  # as ir_measures prints its Any


def _positive_cutoff(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a cutoff is an integer")
    return check("cutoff", value, POSITIVE_INT)


def _supported(name: str, ours: str, params: tuple[str, ...]) -> ir_measures.Measure:
    """ir_measures' measure ``name`` with a specification of each parameter it has: what evalset takes of it
    (:class:`Takes`), else only its default (ir_measures' ``supports`` accepts any value of an unlisted one)."""
    theirs = ir_measures.measures.registry[name]
    rule = MEASURES[ours].cutoff
    specs: dict[str, ParamSpec] = {}
    for param, info in theirs.SUPPORTED_PARAMS.items():
        if param == "cutoff" and rule != "none":
            specs[param] = Takes(_positive_cutoff, rule == "optional")
        elif param in params:
            specs[param] = Takes(PARAMS[param].check, True)
        else:
            specs[param] = Choices(info.default)  # measure[param] is the default when not given
    return theirs(**specs)


def evalset_measure(measure: ir_measures.Measure) -> Measure:
    """evalset's :class:`~evalset.metrics.Measure` for a supported ir_measures measure (``P(rel=2)@10`` ->
    ``p(rel=2)@10``); a parameter at ir_measures' default is left out."""
    name, _ = COUNTERPARTS[measure.NAME]
    info = measure.SUPPORTED_PARAMS
    params = tuple((k, v) for k, v in measure.params.items() if k != "cutoff" and v != info[k].default)
    return Measure(name, measure.params.get("cutoff"), params)


class EvalsetEvaluator(providers.Evaluator):
    """Scores runs against qrels prepared once (:func:`evalset.metrics.prepare_qrels`), each run in one call of
    evalset's engine (:func:`evalset.metrics.evaluate`)."""

    def __init__(self, measures: list[ir_measures.Measure], qrels: pd.DataFrame):
        self._prepared = prepare_qrels(qrels, CONTRACT, "<ir_measures qrels>")
        super().__init__(measures, set(self._prepared.query_ids))
        self._ours = {measure: evalset_measure(measure) for measure in measures}

    def _iter_calc(self, run: Any) -> Iterator[Metric]:
        table = evaluate(_run_frame(run), self._prepared, list(dict.fromkeys(self._ours.values())))
        columns = [(measure, table[str(ours)].tolist()) for measure, ours in self._ours.items()]
        for row, query_id in enumerate(table.index):
            for measure, values in columns:
                yield Metric(query_id=query_id, measure=measure, value=values[row])


class EvalsetProvider(providers.Provider):
    """evalset's engine behind ir_measures' interface (module docstring: the measures, the conventions)."""

    NAME = "evalset"
    SUPPORTED_MEASURES: ClassVar[list[ir_measures.Measure]] = [
        _supported(name, ours, params) for name, (ours, params) in COUNTERPARTS.items()]

    def _evaluator(self, measures: Iterable[ir_measures.Measure], qrels: Any) -> EvalsetEvaluator:
        measures = list(measures)
        refused = [str(measure) for measure in measures if not self.supports(measure)]
        if refused:
            raise InputError(f"the evalset provider does not compute {', '.join(refused)}; it computes "
                             f"{', '.join(COUNTERPARTS)} (evalset.compat.ir_measures)")
        return EvalsetEvaluator(measures, _qrels_frame(qrels))

    def install_instructions(self) -> str:
        return "pip install 'evalset[ir_measures]'"


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
