"""Annotator quality: annotators scored against gold tasks (:mod:`evalset.quality.gold`; the gold tasks themselves,
read, mixed blind into a Label Studio project and found again by a pull, are :mod:`evalset.judgments.gold`'s, also
importable from here); per-annotator quality without gold (leave-one-out consensus agreement, Dawid-Skene
confusion matrices: :mod:`evalset.agreement.annotators`, a section of the agreement report, also importable from
here). crowd-kit's aggregation rules are merge rules, in :mod:`evalset.judgments`."""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.agreement.annotators": ("AnnotatorQuality", "annotator_quality", "kappas", "leave_one_out_consensus",
                                     "write_confusion_plot"),
    "evalset.judgments.gold": ("GoldCheck", "GoldPlan", "plan_gold", "prepare_gold_push", "read_gold", "split_gold"),
    "evalset.quality.gold": ("GoldReport", "gold_check", "gold_report", "score_annotators"),
    "evalset.quality.spec": ("GoldPolicy",),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
