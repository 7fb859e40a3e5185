"""Intervals of a share: the Wilson score interval of ``successes`` out of ``trials``.

Conventions
-----------
- The interval is statsmodels' ``proportion_confint(method="wilson")`` at ``level`` (two-sided); it stays inside
  [0, 1] and is not degenerate at 0 or ``trials`` successes, unlike the normal approximation.
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
    return float(low), float(high)
