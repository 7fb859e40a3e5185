"""Frozen evaluation sets: ``freeze`` (:mod:`~evalset.sets.freezing`, checked first by :mod:`~evalset.sets.inputs`),
and two versions side by side (:mod:`~evalset.sets.diff`). Reading and verifying a version is
:mod:`evalset.io.setfolder`'s; the contract a version is frozen under, its headline checked, is
:func:`~evalset.sets.inputs.set_contract`."""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.sets.diff": ("CheckedVersion", "UpstreamChanges", "VersionDiff", "check_version", "diff_versions",
                          "upstream_changes"),
    "evalset.sets.freezing": ("FrozenVersion", "MergeResult", "agreement_summary", "as_queries_table", "freeze",
                              "merge_grades"),
    "evalset.sets.files": ("freeze_files",),
    "evalset.sets.inputs": ("set_contract",),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
