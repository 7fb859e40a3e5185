"""Where the document design's two uses differ: a sample of a pool (the budget spread over every pair) and a sample
of a frozen set's holes (the set's judgments known, a fraction of the holes drawn). One frozen value per design,
each rule measured on TREC DL 2019.

Conventions
-----------
- **A document sample** (:data:`DOCUMENT_SAMPLE`): the calibration learns from the sample itself (a few hundred
  to a few thousand pairs); "this set"'s variance is the sampled one never below a quarter of its floor, on
  Student's t with Satterthwaite's degrees of freedom; the estimated normaliser never below the sampled pairs' own
  (:mod:`evalset.estimate.documents.variance`, :mod:`evalset.estimate.documents.estimators`: the measurements).
- **A sample of a set's holes** (:data:`HOLE_SAMPLE`): thousands of pairs are known for certain (``pi`` 1), so
  1. the LLM's calibration is split by the pair's **stratum** (a ``stratum`` column of the pairs, coarse to fine:
     the set's judged pairs in the top k of a run given, the set's other judged pairs, the holes), each level
     shrunk toward the coarser one with :data:`STRATUM_PSEUDO_COUNT` pairs
     (:func:`evalset.judgments.calibration.stratified_models`). Learnt on the set's pairs alone, the LLM said
     what a deep pool pair is, not what a hole is: of the pairs Llama-3-70B grades 0, NIST grades 0 for 0.88 of
     the set's and 0.995 of the holes; of those it grades 3, 0.16 and 0.31. On DL19's leave-one-group-out
     (500 draws a run, 25% of each run's holes) the floor's standard error over the estimates' spread, median over
     the 37 runs, went from 1.20 (0.79-4.10) to 1.05 (0.76-1.85) for nDCG@10, 1.00 for P@10;
  2. the **normaliser is not floored** at the sampled pairs' own (the set's judgments keep a query's ideal away
     from 0), and a measure with a normaliser (nDCG, AP) is estimated by the **expanded estimator**
     (:mod:`evalset.estimate.documents.estimators`): the measure at the set's judgments and the holes' predictions,
     plus each drawn hole's change and each two's interaction over their inclusion probabilities. The plug-in ratio
     of estimated totals (before) biased nDCG@10 upward against the score a sample can reach (the run's own holes
     judged): summed squared z over the 35 runs 108 at 200 draws (p 2e-9), idst_bert_p1 +0.0037; expanded, 23.2 and
     31.4 at 500 draws and two seeds (p 0.94, 0.64);
  3. "this set"'s variance is, for a column drawn from fewer than 6 holes (``thin_below``: the sampled variance
     rests on a handful of terms, often 0), the larger of the sampled one ``V`` and its **floor** ``F`` (what the
     calibrated predictions say the draw's variance is, from every hole drawn or not: for the expanded estimator
     each hole's change at each grade weighted by its predicted probability); for any other, **0.6 V + 0.4 F**
     (``blend``), on the **normal quantile**. Measured on DL19's leave-one-group-out (200 draws at seeds 20191 and
     7, each run's share sized for 0.0105): ``V`` alone covered nDCG@10's run means 0.884 on average (0.600 the
     least: a run with 18 holes), its standard error 0.93x the estimates' spread, and even runs with hundreds of
     drawn holes under 0.94 (its spread and the error move together; UNH_exDL_bm25's P@10 0.87, its ``V`` 0.87x
     the spread: the calibration, learnt on the draw, moves too); ``max(V, F)`` on every column (before) covered
     0.985, its standard error 1.22x the spread (up to 1.52); ``max(V, F / 2)`` 0.953 but 0.87 the least; Student's
     t on Satterthwaite's degrees of freedom over-covered (0.965-0.977) at 1.18-1.21x; ``F`` alone below the
     threshold 0.865 the least (F misses a thin column's own departures). The rule kept covers 0.951-0.966 on average
     (nDCG@10's run means and differences, P@10's), 0.910 the least at 200 draws, its standard error 0.99-1.05x
     the spread (0.88 the least). The floor's share falling with the drawn units, ``0.4 + 0.6 n0 / (n0 + n)``,
     moved the mean and the least together (``n0`` 20 on every column: means 0.940-0.947, least 0.900; 6 above the
     threshold: differences 0.965-0.970): the runs that cover least (0.925-0.93) and most (0.99-1.0) both have a
     standard error 0.9-1.1x their spread, so what separates them is the shape of their error (a few holes that
     move it), not its size.
- A design's rules are the pool's (:class:`evalset.estimate.documents.estimate.DocumentPool`): a simulation, an
  estimate and a command of the same design use the same ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

STRATUM_PSEUDO_COUNT = 10.0
"""The pseudo-count of a stratum's calibration cell toward its coarser one (module docstring, 1)."""


@dataclass(frozen=True)
class DesignRules:
    """A design's rules (module docstring): the share of the floor "this set"'s variance is never below, its
    quantile (``satterthwaite``: Student's t on the terms' effective degrees of freedom; ``normal``), whether the
    estimated normaliser is held at the sampled pairs' own, whether the calibration is split by stratum, how a
    measure with a normaliser is estimated (``plug-in``: the ratio of the estimated totals; ``expanded``), and
    the drawn units below which a column's variance takes the floor (``thin_below``; every column when infinite),
    above them the floor's share of the blend ``(1 - blend) V + blend F``."""

    name: str
    floor_share: float
    quantile: str
    normaliser_floor: bool
    stratified: bool
    ratio: str = "plug-in"
    thin_below: float = math.inf
    blend: float = 0.0

    @property
    def this_set(self) -> str:
        """How "this set"'s interval is made, in a few words (the estimate's header)."""
        quantile = "Student's t" if self.quantile == "satterthwaite" else "normal"
        floor = "its floor" if self.floor_share == 1 else f"{self.floor_share:g} of its floor"
        if math.isinf(self.thin_below):
            return f"{quantile}, within-query sampling variance never below {floor}"
        return (f"{quantile}, within-query sampling variance: never below {floor} under {self.thin_below:g} drawn "
                f"units, else {1 - self.blend:g} of the sampled one and {self.blend:g} of the floor")


DOCUMENT_SAMPLE = DesignRules("a document sample", floor_share=0.25, quantile="satterthwaite", normaliser_floor=True,
                              stratified=False)
HOLE_SAMPLE = DesignRules("a sample of a set's holes", floor_share=1.0, quantile="normal", normaliser_floor=False,
                          stratified=True, ratio="expanded", thin_below=6, blend=0.4)
