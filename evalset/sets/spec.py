"""What ``evalset freeze`` is asked: the rules of its parameters, declared once beside the functions that apply
them. Light: the command line reads it before the stage loads."""

from __future__ import annotations

from evalset.params import POSITIVE_INT, Constraint

FREEZE_RULES: dict[str, Constraint] = {"version": POSITIVE_INT}
"""evalset.sets.freeze."""
