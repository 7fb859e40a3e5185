"""Annotator quality: gold tasks mixed blind into a Label Studio project, annotators scored against them
(:mod:`evalset.quality.gold`)."""

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
    "GoldPlan", "GoldPolicy", "check_gold_rate", "plan_gold", "prepare_gold_push", "read_gold", "report_dict",
    "report_lines", "score_annotators", "split_gold", "write_gold_report",
]
