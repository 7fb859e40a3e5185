"""What ``evalset score`` is asked: the rules of its parameters, declared once beside the functions that apply them.
Light: the command line reads it before the stage loads."""

from __future__ import annotations

from evalset.params import POSITIVE_INT, Constraint

SCORE_RULES: dict[str, Constraint] = {"max_retrieved": POSITIVE_INT}
"""evalset.scoring.score_runs."""
