"""What ``evalset pool`` is asked: the rules of its parameters, declared once beside the functions that apply them.
Light: the command line reads it before the stage loads."""

from __future__ import annotations

from evalset.contract import TIE_RULES
from evalset.params import DEPTH, POSITIVE_INT, SEED, Choice, Constraint

POOL_SPEC_RULES: dict[str, Constraint] = {"depth": DEPTH, "ties": Choice(TIE_RULES), "seed": SEED,
                                          "budget": POSITIVE_INT}
"""evalset.pooling.PoolSpec and build_pool (each run's own depth by the depth's rule)."""
