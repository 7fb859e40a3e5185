"""Annotator quality and label aggregation: gold tasks mixed blind into a Label Studio project and annotators
scored against them (:mod:`evalset.quality.gold`); crowd-kit's aggregation rules (Dawid-Skene, one-coin, MACE,
GLAD) and per-annotator quality without gold (leave-one-out consensus agreement, Dawid-Skene confusion
matrices)."""

from evalset.quality.aggregation import (
    AGGREGATION_PARAMETERS,
    AGGREGATION_RULES,
    Aggregate,
    CrowdFrame,
    aggregate,
    crowd_frame,
    crowdkit_version,
)
from evalset.quality.annotators import (
    AnnotatorQuality,
    annotator_quality,
    kappas,
    leave_one_out_consensus,
    quality_lines,
    quality_to_dict,
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
    "AGGREGATION_PARAMETERS",
    "AGGREGATION_RULES",
    "Aggregate",
    "AnnotatorQuality",
    "CrowdFrame",
    "GoldPlan",
    "GoldPolicy",
    "aggregate",
    "annotator_quality",
    "check_gold_rate",
    "crowd_frame",
    "crowdkit_version",
    "kappas",
    "leave_one_out_consensus",
    "plan_gold",
    "prepare_gold_push",
    "quality_lines",
    "quality_to_dict",
    "read_gold",
    "report_dict",
    "report_lines",
    "score_annotators",
    "split_gold",
    "write_confusion_plot",
    "write_gold_report",
]
