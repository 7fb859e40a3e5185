"""The shared metrics module: every score evalset prints comes from here.

Measures are registered value objects, each declared once (:mod:`evalset.metrics.measures`); one vectorised
engine computes them (:mod:`evalset.metrics.engine`) on rankings ordered by a declared tie rule
(:mod:`evalset.metrics.ranking`), from qrels prepared once under a contract (:mod:`evalset.metrics.prepared`, what
the engine hands every measure's computation).
This package imports no pipeline stage.
"""

from evalset.metrics import trec_measures  # noqa: F401  registers trec_eval's own measures
from evalset.metrics.engine import evaluate, summarize
from evalset.metrics.measures import MEASURES, Measure, MeasureKind, parse_measure
from evalset.metrics.prepared import PreparedQrels, prepare_qrels
from evalset.metrics.ranking import TIE_RULES, OrderedRun, order_run, top_k
from evalset.metrics.streaming import evaluate_file, evaluate_run_files, evaluate_runs
from evalset.metrics.trec_eval_names import expand_measures, trec_eval_name

__all__ = [
    "MEASURES",
    "TIE_RULES",
    "Measure",
    "MeasureKind",
    "OrderedRun",
    "PreparedQrels",
    "evaluate",
    "evaluate_file",
    "evaluate_run_files",
    "evaluate_runs",
    "expand_measures",
    "order_run",
    "parse_measure",
    "prepare_qrels",
    "summarize",
    "top_k",
    "trec_eval_name",
]
