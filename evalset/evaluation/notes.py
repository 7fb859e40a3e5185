"""What reading and scoring left out, said the same way by every analysis that scores runs (score, compare): one
note per run (repeated documents counted once, queries without judgments ignored, judged queries absent from the
run, unjudged documents removed under a condensed contract, documents beyond ``max_retrieved``, repeated qrels lines
collapsed), and one on unusual grades."""

from __future__ import annotations

from evalset.evaluation.grades import unusual_grades_note
from evalset.evaluation.values import PerQuery

LEFT_OUT = {"duplicates_removed": "repeated documents counted once",
            "unjudged_queries": "queries with no qrels ignored",
            "missing_queries": "judged queries absent from the run",
            "unjudged_removed": "unjudged documents removed before scoring (condensed)",
            "beyond_max_retrieved": "documents beyond --max-retrieved left out"}
"""A run table's count (``attrs``) -> what it says."""


def input_notes(values: PerQuery, missing: bool = True) -> list[str]:
    """The notes on what was left out (module docstring); ``missing=False`` leaves the absent queries to an
    analysis that says what it did with them (:func:`evalset.evaluation.missing_notes`)."""
    counted = values.evaluation.read_attrs
    collapsed = counted.get("collapsed_duplicates")
    notes = [f"note: the qrels: {collapsed} repeated lines collapsed"] if collapsed else []  # the judgments', no run's
    said = {key: text for key, text in LEFT_OUT.items() if missing or key != "missing_queries"}
    for name, table in values.tables.items():
        parts = [f"{table.attrs[key]} {text}" for key, text in said.items() if table.attrs.get(key)]
        if parts:
            notes.append(f"note: {name}: " + "; ".join(parts))
    unusual = unusual_grades_note(values.evaluation)
    return notes + ([unusual] if unusual else [])
