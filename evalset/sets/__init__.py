"""Frozen evaluation sets: ``freeze`` (:mod:`~evalset.sets.freezing`, checked first by :mod:`~evalset.sets.inputs`),
and two versions side by side (:mod:`~evalset.sets.diff`). Reading and verifying a version is
:mod:`evalset.io.setfolder`'s; the contract a version is frozen under, its headline checked, is
:func:`~evalset.sets.inputs.set_contract`."""

from evalset.sets.diff import CheckedVersion, UpstreamChanges, VersionDiff, diff_versions, upstream_changes
from evalset.sets.freezing import FrozenVersion, MergeResult, agreement_summary, as_queries_table, freeze, merge_grades
from evalset.sets.inputs import set_contract

__all__ = ["CheckedVersion", "FrozenVersion", "MergeResult", "UpstreamChanges", "VersionDiff", "agreement_summary",
           "as_queries_table", "diff_versions", "freeze", "merge_grades", "set_contract", "upstream_changes"]
