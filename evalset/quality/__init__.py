"""Annotator quality and label aggregation: crowd-kit's aggregation rules (Dawid-Skene, one-coin, MACE, GLAD)
and per-annotator quality without gold (leave-one-out consensus agreement, Dawid-Skene confusion matrices)."""

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

__all__ = [
    "AGGREGATION_PARAMETERS",
    "AGGREGATION_RULES",
    "Aggregate",
    "AnnotatorQuality",
    "CrowdFrame",
    "aggregate",
    "annotator_quality",
    "crowd_frame",
    "crowdkit_version",
    "kappas",
    "leave_one_out_consensus",
    "quality_lines",
    "quality_to_dict",
    "write_confusion_plot",
]
