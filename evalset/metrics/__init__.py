"""The shared metrics module: every score evalset prints comes from here.

Measures are registered value objects, each declared once (:mod:`evalset.metrics.measures`); one vectorised
engine computes them (:mod:`evalset.metrics.engine`) on rankings ordered by a declared tie rule
(:mod:`evalset.metrics.ranking`).
This package imports no pipeline stage.
"""

from evalset.metrics.engine import PreparedQrels, evaluate, evaluate_runs, prepare_qrels, summarize
from evalset.metrics.measures import MEASURES, Measure, MeasureKind, parse_measure, trec_eval_name
from evalset.metrics.ranking import TIE_RULES, OrderedRun, order_run, top_k
from evalset.metrics.streaming import evaluate_file, evaluate_run_files
from evalset.metrics.trec_eval_names import expand_measures

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
