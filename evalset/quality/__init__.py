"""Annotator quality: annotators scored against gold tasks (:mod:`evalset.quality.gold`; the gold tasks themselves,
read, mixed blind into a Label Studio project and found again by a pull, are :mod:`evalset.judgments.gold`'s, also
importable from here); per-annotator quality without gold (leave-one-out consensus agreement, Dawid-Skene
confusion matrices: :mod:`evalset.agreement.annotators`, a section of the agreement report, also importable from
here). crowd-kit's aggregation rules are merge rules, in :mod:`evalset.judgments`."""

from evalset.agreement.annotators import (
    AnnotatorQuality,
    annotator_quality,
    kappas,
    leave_one_out_consensus,
    write_confusion_plot,
)
from evalset.judgments.gold import GoldCheck, GoldPlan, plan_gold, prepare_gold_push, read_gold, split_gold
from evalset.quality.gold import GoldPolicy, GoldReport, gold_check, gold_report, score_annotators

__all__ = [
    "AnnotatorQuality",
    "GoldCheck",
    "GoldPlan",
    "GoldPolicy",
    "GoldReport",
    "annotator_quality",
    "gold_check",
    "gold_report",
    "kappas",
    "leave_one_out_consensus",
    "plan_gold",
    "prepare_gold_push",
    "read_gold",
    "score_annotators",
    "split_gold",
    "write_confusion_plot",
]
