"""Grades of the qrels in force that could dominate a score: a note, never a refusal."""

from __future__ import annotations

from evalset.evaluation.scope import Evaluation

UNUSUAL_GRADE_ABOVE = 10
"""Without a scale (qrels read from elsewhere), a grade above this is noted as unusual."""


def unusual_grades(evaluation: Evaluation) -> tuple[dict[int, int], str]:
    """Grades outside the set's scale (on a set) or above :data:`UNUSUAL_GRADE_ABOVE` (on qrels), with their
    number of judgments, and the rule they break. A gain grows with the grade, so one such grade (a typo, 999
    for 3) can move nDCG more than every other judgment; negative grades mean "not judged" and are never
    unusual."""
    grade = evaluation.grades
    scale = (evaluation.frozen.manifest.get("scale") or {}) if evaluation.frozen is not None else {}
    if scale:
        allowed = sorted(int(g) for g in scale)
        unusual = (grade >= 0) & ~grade.isin(allowed)
        rule = "the set's scale is " + ", ".join(map(str, allowed))
    else:
        unusual = grade > UNUSUAL_GRADE_ABOVE
        rule = f"grades above {UNUSUAL_GRADE_ABOVE} are unusual"
    counts = grade[unusual].value_counts().sort_index()
    return {int(g): int(n) for g, n in counts.items()}, rule


def unusual_grades_note(evaluation: Evaluation) -> str | None:
    """The note on unusual grades (see :func:`unusual_grades`), or None."""
    counts, rule = unusual_grades(evaluation)
    if not counts:
        return None
    shown = ", ".join(f"{g} ({n}x)" for g, n in list(counts.items())[:5]) + (", ..." if len(counts) > 5 else "")
    return (f"note: {evaluation.source}: {sum(counts.values())} judgment(s) with an unusual grade, {shown} ({rule}): "
            "a gain grows with the grade, so such a grade can dominate nDCG; check the qrels")
