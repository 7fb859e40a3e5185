"""Every random choice evalset makes draws from a generator made here, from a seed checked once: a seed is a
non-negative integer (:data:`SEED`), refused in one line naming the parameter (``--seed -1``: ``seed must be a
non-negative integer, got -1``) wherever it is given, the library or the command line.

``generator(seed)`` is ``numpy.random.default_rng(seed)``; ``generator(seed, n)`` is
``numpy.random.default_rng([seed, n])``, a stream of its own for each ``n`` (a sample size, a stratum's checksum).
"""

from __future__ import annotations

import numpy as np

from evalset.params import SEED, check

__all__ = ["SEED", "generator"]


def generator(seed: int, *streams: int, name: str = "seed") -> np.random.Generator:
    """numpy's generator of ``seed`` (and ``streams``: module docstring), the seed checked against :data:`SEED`."""
    seed = check(name, seed, SEED)
    return np.random.default_rng([seed, *streams] if streams else seed)
