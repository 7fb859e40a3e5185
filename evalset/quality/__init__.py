"""Annotator quality: gold tasks mixed blind into a Label Studio project and annotators scored against them
(:mod:`evalset.quality.gold`); per-annotator quality without gold (leave-one-out consensus agreement, Dawid-Skene
confusion matrices: :mod:`evalset.agreement.annotators`, a section of the agreement report, also importable from
here). crowd-kit's aggregation rules are merge rules, in :mod:`evalset.judgments`."""

from evalset.agreement.annotators import (
    AnnotatorQuality,
    annotator_quality,
    kappas,
    leave_one_out_consensus,
    write_confusion_plot,
)
from evalset.quality.gold import (
    GoldPlan,
    GoldPolicy,
    GoldReport,
    gold_report,
    plan_gold,
    prepare_gold_push,
    read_gold,
    score_annotators,
    split_gold,
)

__all__ = [
    "AnnotatorQuality",
    "GoldPlan",
    "GoldPolicy",
    "GoldReport",
    "annotator_quality",
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
