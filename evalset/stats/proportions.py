"""Intervals of a share: the Wilson score interval of ``successes`` out of ``trials``.

Conventions
-----------
- The interval is statsmodels' ``proportion_confint(method="wilson")`` at ``level`` (two-sided); it stays inside
  [0, 1] and is not degenerate at 0 or ``trials`` successes, unlike the normal approximation; there its bound
  at the end is that end exactly (0 or 1).
- No trial: the share and its interval are undefined (NaN), never 0.
"""

from __future__ import annotations

import math


def wilson_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of the share ``successes / trials`` at ``level``; ``(nan, nan)`` without a trial."""
    if trials <= 0:
        return math.nan, math.nan
    from statsmodels.stats.proportion import proportion_confint  # slow to import: imported where used

    low, high = proportion_confint(successes, trials, alpha=1 - level, method="wilson")
    # at 0 (or every) success the bound is 0 (1) exactly; statsmodels' arithmetic leaves about 1e-18
    return (0.0 if successes == 0 else float(low)), (1.0 if successes == trials else float(high))
