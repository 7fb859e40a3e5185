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
  2. the **normaliser is not floored** at the sampled pairs' own: the set's judgments keep a query's ideal away
     from 0, and the floor only truncated it upward, biasing nDCG low: the largest |bias| of a run's nDCG@10
     0.0038 -> 0.0022, the least coverage of its interval 0.868 -> 0.918;
  3. "this set"'s variance is ``max(V, F)``, the **whole floor** (the variance the calibrated prediction says
     the draw has, from every hole drawn or not), on the **normal quantile**: the floor rests on the
     calibration's thousands of pairs, not on the draw's few holes, and Satterthwaite's 6-15 degrees of freedom
     put t's quantile at 2.1-2.6 where the 95th percentile of the standardised error was 1.9-2.1. With 1-3 the
     least coverage over the 37 runs was 0.942 (nDCG@10's run means), 0.936 (P@10), 0.922 (nDCG@10's
     differences with the best run), none below 0.94 by more than two Monte Carlo errors (0.0097 at 500 draws).
     Runs with few holes (18-40) over-cover (0.976-1.0): their error takes few values.
- A design's rules are the pool's (:class:`evalset.estimate.documents.estimate.DocumentPool`): a simulation, an
  estimate and a command of the same design use the same ones.
"""

from __future__ import annotations

from dataclasses import dataclass

STRATUM_PSEUDO_COUNT = 10.0
"""The pseudo-count of a stratum's calibration cell toward its coarser one (module docstring, 1)."""


@dataclass(frozen=True)
class DesignRules:
    """A design's rules (module docstring): the share of the floor "this set"'s variance is never below, its
    quantile (``satterthwaite``: Student's t on the terms' effective degrees of freedom; ``normal``), whether the
    estimated normaliser is held at the sampled pairs' own, whether the calibration is split by stratum."""

    name: str
    floor_share: float
    quantile: str
    normaliser_floor: bool
    stratified: bool

    @property
    def this_set(self) -> str:
        """How "this set"'s interval is made, in a few words (the estimate's header)."""
        quantile = "Student's t" if self.quantile == "satterthwaite" else "normal"
        floor = "its floor" if self.floor_share == 1 else f"{self.floor_share:g} of its floor"
        return f"{quantile}, within-query sampling variance never below {floor}"


DOCUMENT_SAMPLE = DesignRules("a document sample", floor_share=0.25, quantile="satterthwaite", normaliser_floor=True,
                              stratified=False)
HOLE_SAMPLE = DesignRules("a sample of a set's holes", floor_share=1.0, quantile="normal", normaliser_floor=False,
                          stratified=True)
