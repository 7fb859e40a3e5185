"""Power of a paired comparison: the queries it needs, the smallest difference N queries detect, and a simulation.

Conventions
-----------
- ``sd`` is the standard deviation (ddof 1) of the per-query differences; ``delta`` the mean difference to
  detect; ``alpha`` the threshold (already divided by the family's Bonferroni count).
- The formula is the paired t-test: a one-sample t-test on the differences, two-sided, solved by statsmodels'
  ``TTestPower`` for effect size ``delta / sd``. :func:`queries_needed` is the smallest whole number of queries
  (at least 2) whose power reaches the target; :func:`detectable_difference` is ``sd x`` the solved effect size.
- The simulation resamples the pilot's differences with replacement (bootstrap) at each size N, after shifting
  them so that their mean is ``delta`` (with the sign of the observed mean; their spread and shape are the
  pilot's), and counts how often the paired permutation test
  (:func:`evalset.stats.paired.permutation_p_values`, the test ``compare`` makes) gives p below ``alpha``. For
  speed it uses 999 sign flips (``compare`` uses 9,999), and the resamples of one batch of :data:`SIGN_BATCH`
  share their sign flips (each resample's test is still a valid permutation test; the batches draw fresh flips).
  Its standard error is the binomial one, ``sqrt(p (1 - p) / resamples)``. Every draw comes from
  ``numpy.random.default_rng([seed, N])``, so the power at N does not depend on which other sizes are simulated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.power import TTestPower

from evalset.contract import DEFAULT_POWER, DEFAULT_SEED, SIMULATION_PERMUTATIONS, SIMULATION_RESAMPLES
from evalset.params import POSITIVE_INT, PROBABILITY, check
from evalset.seeds import generator
from evalset.stats.paired import permutation_p_values

SIGN_BATCH = 25
MAX_SIMULATED = 20_000
"""Sizes above this are not simulated (the formula alone is reported): a bootstrap of that size adds little."""

_SOLVER = TTestPower()


def check_probability(value: float, what: str) -> None:
    """Raise :class:`InputError` unless ``0 < value < 1``."""
    check(what, value, PROBABILITY)


def power_at(sd: float, delta: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired t-test with ``n`` queries to detect a mean difference ``delta``."""
    if n < 2:
        return math.nan
    if sd == 0:
        return 1.0 if delta != 0 else alpha
    value = float(_SOLVER.power(effect_size=abs(delta) / sd, nobs=n, alpha=alpha, alternative="two-sided"))
    if math.isnan(value):  # statsmodels' lower tail underflows to NaN for a large effect, where it is ~0
        df, noncentrality = n - 1, abs(delta) * math.sqrt(n) / sd
        value = float(stats.nct.sf(stats.t.ppf(1 - alpha / 2, df), df, noncentrality))
    return value


def queries_needed(sd: float, delta: float, power: float = DEFAULT_POWER, alpha: float = 0.05) -> tuple[int, float]:
    """The number of queries for the paired t-test to detect ``delta`` with ``power`` at ``alpha``.

    Returns ``(whole, solved)``: the smallest whole number of queries (at least 2) whose power reaches the
    target, and statsmodels' real-valued solution. A zero ``delta`` (with sd > 0) needs infinitely many.
    """
    check_probability(power, "power")
    check_probability(alpha, "alpha")
    if math.isnan(sd) or math.isnan(delta):
        return math.nan, math.nan
    if delta == 0 and sd > 0:
        return math.inf, math.inf
    if sd == 0 or power_at(sd, delta, 2, alpha) >= power:
        return 2, 2.0
    solved = float(_SOLVER.solve_power(effect_size=abs(delta) / sd, nobs=None, alpha=alpha, power=power,
                                       alternative="two-sided"))
    # the solver finds no root (NaN) for an effect far beyond the pilot's spread: the count starts at 2 then
    whole = max(2, math.ceil(solved - 1e-9)) if math.isfinite(solved) else 2
    while power_at(sd, delta, whole, alpha) < power:  # guard against the solver's tolerance
        whole += 1
    return whole, solved


def detectable_difference(sd: float, n: int, power: float = DEFAULT_POWER, alpha: float = 0.05) -> float:
    """The smallest mean difference the paired t-test detects with ``n`` queries at ``power`` and ``alpha``."""
    check_probability(power, "power")
    if n < 2 or math.isnan(sd):
        return math.nan
    if sd == 0:
        return 0.0
    effect = _SOLVER.solve_power(effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided")
    return float(sd * effect)


@dataclass(frozen=True)
class SimulatedPower:
    """Share of bootstrap resamples in which the permutation test found the difference, with its standard error."""

    n: int
    power: float
    se: float
    resamples: int
    permutations: int


def simulated_power(differences: np.ndarray, delta: float, n: int, alpha: float, *,
                    resamples: int = SIMULATION_RESAMPLES, permutations: int = SIMULATION_PERMUTATIONS,
                    seed: int = DEFAULT_SEED) -> SimulatedPower:
    """Bootstrap power of the permutation test at ``n`` queries for a true mean difference ``delta``.

    ``differences`` (the pilot's, NaN-free) are shifted to mean ``delta`` (sign of their observed mean) and
    resampled with replacement; see the module docstring.
    """
    differences = np.asarray(differences, dtype=np.float64)
    if len(differences) == 0 or n < 2:
        return SimulatedPower(n, math.nan, math.nan, 0, permutations)
    check("resamples", resamples, POSITIVE_INT)
    check("permutations", permutations, POSITIVE_INT)
    mean = differences.mean()
    target = math.copysign(abs(delta), mean if mean != 0 else 1.0)
    shifted = differences - mean + target
    rng = generator(seed, n)
    found = 0
    for start in range(0, resamples, SIGN_BATCH):
        size = min(SIGN_BATCH, resamples - start)
        samples = shifted[rng.integers(0, len(shifted), size=(size, n))]
        found += int(np.sum(permutation_p_values(samples, permutations, rng) < alpha))
    power = found / resamples
    return SimulatedPower(n, power, math.sqrt(power * (1 - power) / resamples), resamples, permutations)
