"""Grades that changed upstream: the same judgment (its ``source``) with another grade in a later labels table, or
gone from it.

Conventions
-----------
- A judgment is identified by its ``source`` when no other row of its table shares it: a pulled grade's
  ``label-studio:<project>/<task>/<annotation>``. A source shared by several rows names a batch, not a judgment
  (a qrels file's name, a judge's model and prompt), and rows without a source cannot be followed: both are left
  out.
- ``revised``: the source is in both tables with another grade (``earlier_grade`` -> ``later_grade``, with both
  ``labeled_at``); ``withdrawn``: the source is in the earlier table only (the annotation was deleted upstream,
  or turned into a skip that holds no grade). A source only in the later table is a new judgment, not a change.
- Rows are sorted by query id, doc id, annotator and source, so the same tables give the same rows.
"""

from __future__ import annotations

import pandas as pd

from evalset.render import text_table

REVISION_COLUMNS = ("query_id", "doc_id", "annotator", "source", "change", "earlier_grade", "later_grade",
                    "earlier_at", "later_at")


def grade_revisions(earlier: pd.DataFrame, later: pd.DataFrame) -> pd.DataFrame:
    """The judgments of ``earlier`` (a labels table) revised or withdrawn in ``later`` (module docstring)."""
    keys = ["query_id", "doc_id", "annotator", "source"]
    before = _followed(earlier)[[*keys, "grade", "labeled_at"]]
    after = _followed(later)[["source", "grade", "labeled_at"]]
    joined = before.merge(after, on="source", how="left", suffixes=("_e", "_l"))
    withdrawn = joined["grade_l"].isna()
    changed = withdrawn | (joined["grade_e"] != joined["grade_l"])
    rows = joined[changed]
    table = pd.DataFrame({
        **{key: rows[key].astype(str) for key in keys},
        "change": ["withdrawn" if gone else "revised" for gone in withdrawn[changed]],
        "earlier_grade": rows["grade_e"].astype("Int64"), "later_grade": rows["grade_l"].astype("Int64"),
        "earlier_at": rows["labeled_at_e"].fillna("").astype(str),
        "later_at": rows["labeled_at_l"].fillna("").astype(str)}, columns=list(REVISION_COLUMNS))
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def _followed(labels: pd.DataFrame) -> pd.DataFrame:
    source = labels["source"].fillna("").astype(str)
    return labels.loc[(source != "") & ~source.duplicated(keep=False)]


def revision_lines(revisions: pd.DataFrame, what: str, shown: int = 20) -> list[str]:
    """``revisions`` as text: a count line naming ``what`` they were compared with, then the first ``shown``."""
    if revisions.empty:
        return []
    counts = revisions["change"].value_counts()
    lines = [f"grades changed since {what}: {counts.get('revised', 0)} revised, {counts.get('withdrawn', 0)} "
             "withdrawn"]
    rows = [["query", "doc", "annotator", "change", "grade", "at"]]
    for row in revisions.head(shown).itertuples():
        later = "-" if pd.isna(row.later_grade) else str(row.later_grade)
        rows.append([row.query_id, row.doc_id, row.annotator, row.change, f"{row.earlier_grade} -> {later}",
                     f"{row.earlier_at} -> {row.later_at or '-'}"])
    lines += ["  " + line for line in text_table(rows)]
    if len(revisions) > shown:
        lines.append(f"  ... and {len(revisions) - shown} more")
    return lines
