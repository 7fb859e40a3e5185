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
    check_gold_rate,
    plan_gold,
    prepare_gold_push,
    read_gold,
    report_dict,
    report_lines,
    score_annotators,
    split_gold,
    write_gold_report,
)

__all__ = [
    "AnnotatorQuality",
    "GoldPlan",
    "GoldPolicy",
    "annotator_quality",
    "check_gold_rate",
    "kappas",
    "leave_one_out_consensus",
    "plan_gold",
    "prepare_gold_push",
    "read_gold",
    "report_dict",
    "report_lines",
    "score_annotators",
    "split_gold",
    "write_confusion_plot",
    "write_gold_report",
]
