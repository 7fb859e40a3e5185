"""The document sample: which pooled pairs humans grade, each drawn on its own with a known inclusion probability.

The design (statAP's, Aslam, Pavlu & Yilmaz, SIGIR 2006; infNDCG's, Yilmaz, Kanoulas & Aslam, SIGIR 2008)
--------------------------------------------------------------------------------------------------------------
- A pair's **prior** ``a`` is how much the runs put it where it counts: the sum over the runs that rank it in
  their top ``depth`` of ``(1 / log2(rank + 1)) ** PRIOR_POWER`` (:data:`PRIOR_POWER`), floored at
  :data:`PRIOR_FLOOR` (a pair no run ranks high is still drawn, so that every pair has a known probability above 0
  and the estimate stays unbiased).
- Its **inclusion probability** is ``pi = min(1, c * a)``, ``c`` solved so that the probabilities sum to the
  budget ``B`` (the expected number of human judgments): the largest priors are capped at 1 and the rest share
  what is left, in proportion to their prior (:func:`inclusion_probabilities`; exact, no iteration).
- The **draw** is Poisson: pair ``i`` is in the sample when ``u_i < pi_i``, the ``u`` uniform from
  ``numpy.random.default_rng(seed)`` in the order of the pairs given (:func:`poisson_sample`), so the same pairs,
  probabilities and seed give the same sample. The sample's size is random, ``B`` in expectation.
- **The minimum** (:func:`check_sample_size`): a sample of fewer than :data:`MINIMUM_PER_QUERY` drawn pairs a query
  on average, or over fewer than 2 queries, is too small for the design's estimators and is refused, by ``estimate
  select documents`` when it draws one (before anyone grades it) and by the estimate when it reads one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.metrics.decomposition import discount
from evalset.params import POSITIVE_INT, check
from evalset.seeds import generator

PRIOR_FLOOR = 0.3
"""The smallest prior of a pair (``1 / log2(rank + 1)`` of one run's rank 9 is 0.30): no pair is left out."""
PRIOR_POWER = 0.25
"""The power of each run's rank weight ``1 / log2(rank + 1)`` in the prior: a run's rank 1 weighs 1, its rank 10
0.84. Measured on TREC DL 2019 (scripts/bench_document_sample.py --prior-power, 200 draws, Llama-3-70B, B = 1,000):
the issue's prototype, power 1 (rank 10 weighs 0.29), spends the budget on the very top and samples P@10's lower
ranks thinly: P@10's ranking tau 0.868 against 0.885 at 0.25, nDCG@10's 0.900 against 0.907; at power 1 nDCG@10's
run means cover 0.994, over the target's 0.99, at 0.25 0.988 (docs/estimate.md)."""


MINIMUM_PER_QUERY = 3
"""The fewest drawn pairs a query, on average, a document sample needs (at least ``3 Q`` of them over ``Q`` queries).
Each query's estimate rests on its own sampled pairs (a pair's re-centring on the query's *other* sampled pairs,
so that a query needs 2 to correct anything and 3 for each to have 2 others), and below 3 a query many queries have
none at all: their estimate is then the judge's uncorrected prediction, or 0 without a judge. Measured on TREC
DL 2019's depth-10 pool of the 37 runs (2,495 pairs, 58 a query; NIST's grades, Llama-3-70B the judge, 30 draws a
budget): the share of queries with no drawn pair was 36% at 1 drawn pair a query, 13% at 2, 3.6% at 2.9 and 0.9%
at 3.9; some run's nDCG@10 or P@10 mean left [0, 1] in 93%, 87%, 60% and 33% of the draws with the judge (90%,
87%, 80%, 67% without). Above the minimum such an estimate is clipped to the range and named, and carries no
verdict (:func:`evalset.stats.verdicts.bounded`)."""


def check_sample_size(drawn: float, queries: int, advice: str = "draw a larger sample (estimate select documents "
                      "POOL --budget B)", source: str | None = None, noun: str = "drawn pairs") -> None:
    """Refuse a document sample of ``drawn`` pairs over ``queries`` queries below the design's minimum: fewer than
    2 queries (the "new queries" interval has ``Q - 1`` degrees of freedom), or fewer than
    :data:`MINIMUM_PER_QUERY` drawn pairs a query on average. One line (:class:`~evalset.errors.InputError`) ending
    in ``advice``; ``source`` names the record, ``noun`` what ``drawn`` counts."""
    need = MINIMUM_PER_QUERY * queries
    if queries < 2:
        raise InputError(f"a document sample over {queries} query is too small for the design's estimators: the "
                         "\"new queries\" interval needs 2 queries or more; draw it from a pool of several queries",
                         source)
    if drawn < need:
        noun = noun.replace("pairs", "pair") if drawn == 1 else noun
        raise InputError(f"a document sample of {drawn:,.6g} {noun} over {queries:,} queries ({drawn / queries:.2f} "
                         f"a query) is too small for the design's estimators: they need at least {MINIMUM_PER_QUERY} "
                         f"a query on average ({need:,} here); {advice}", source)


def refuse_traffic_strata(weighting: str, strata: int, source: str, doing: str = "estimate") -> None:
    """Refuse a set that weights ``strata`` (more than one) by traffic: the document design weights every query
    alike (one line naming the set's folder ``source``; ``doing``: what to do with each stratum's set instead)."""
    if weighting == "traffic" and strata > 1:
        raise InputError(f"the document design weights every query alike, but this set weights its {strata} strata "
                         f"by traffic: {doing} each stratum's set apart", source)


def document_prior(pairs: pd.DataFrame, sources: pd.DataFrame, depth: int,
                   floor: float = PRIOR_FLOOR, power: float = PRIOR_POWER) -> np.ndarray:
    """The prior of each of ``pairs`` (``query_id, doc_id``), in their order, from ``sources`` (``query_id, doc_id,
    system, rank``: which run ranked which pair where, a pool's ``pool_sources.tsv``): the sum over runs of
    ``(1 / log2(rank + 1)) ** power`` for the ranks within ``depth``, at least ``floor`` (0: the number of runs
    ranking the pair within the depth)."""
    depth = check("depth", depth, POSITIVE_INT)
    within = sources[sources["rank"].astype(np.int64) <= depth]
    weight = discount(within["rank"].to_numpy(dtype=np.float64) - 1.0) ** power
    summed = (pd.Series(weight, index=pd.MultiIndex.from_frame(within[["query_id", "doc_id"]].astype(str)))
              .groupby(level=[0, 1]).sum())
    keys = pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]].astype(str))
    return np.maximum(summed.reindex(keys).fillna(0.0).to_numpy(), floor)


def inclusion_probabilities(prior: np.ndarray, budget: float) -> np.ndarray:
    """``pi = min(1, c * prior)`` with ``c`` such that ``pi`` sums to ``budget`` (module docstring).

    ``budget`` must be above 0 and below the number of pairs (all of them is no sample: judge the pool); every
    prior must be finite and above 0.
    """
    prior = np.asarray(prior, dtype=np.float64)
    n = len(prior)
    if not np.all(np.isfinite(prior)) or np.any(prior <= 0):
        raise InputError("every prior must be a finite number above 0")
    if not 0 < budget < n:
        raise InputError(f"the budget must be above 0 and below the {n} pairs of the pool, got {budget:g}"
                         + (" (all of them: judge the whole pool)" if budget >= n else ""))
    ordered = np.sort(prior)[::-1]
    rest = np.cumsum(ordered[::-1])[::-1]  # rest[m]: the sum of the priors not capped when the m largest are
    capped = np.arange(n)
    scale = (budget - capped) / rest  # c when the m largest are capped at 1
    # the fewest capped for which the largest uncapped prior stays at or below 1
    m = int(np.flatnonzero(scale * ordered <= 1.0 + 1e-12)[0])
    return np.minimum(1.0, scale[m] * prior)


def poisson_sample(pi: np.ndarray, seed: int) -> np.ndarray:
    """Which pairs are drawn: pair ``i`` when its uniform draw is below ``pi[i]`` (module docstring)."""
    return generator(seed).random(len(pi)) < np.asarray(pi)
