"""A sample of a set's holes sized for a precision: per run, the share of its holes to judge so that the standard
error of its estimated mean is at most the precision, predicted before any hole is graded.

Conventions
-----------
- The prediction is the hole design's variance floor (:mod:`evalset.estimate.documents.variance`,
  :mod:`evalset.estimate.documents.rules`): with the LLM calibrated on the set's judgments alone (no hole graded
  yet: a hole's stratum cell is its parent's), each hole's weight ``w`` in the run's per-query value and the
  variance ``v`` of its quantity under its predicted grade give ``S^2 = sum over the run's holes of w^2 v / Q^2``;
  at a fraction ``f`` of its holes the variance of the run's mean is ``(1 - f) / f S^2``, at most ``precision^2``
  when ``f >= S^2 / (S^2 + precision^2)``. Each measure is sized so and the run takes the largest fraction, never
  below :data:`MIN_FRACTION`. A hole in the top k of several runs is drawn with the largest of their fractions
  (each run's holes are drawn at its fraction or more: its error only shrinks).
- On DL19's leave-one-group-out (the prototype: Llama-3-70B, 500 draws a run, precision 0.01, nDCG@10 and
  P(rel=2)@10): 22.4% of a run's holes judged on average (10-44%), the RMSE of its estimate 0.0071 (nDCG@10) and
  0.0091 (P@10) averaged over the 37 runs, the worst run's 0.0131 and 0.0122.
- A run without a hole has nothing to judge (its score on the set is its full-judgment score): fraction 0, said.
  A precision that every run reaches only by judging nearly all its holes (:data:`JUDGE_ALL` or more of each) is
  refused: judge the holes' pool itself. Needs an LLM grade of every pair of the set and of the holes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_METRIC, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.estimate import DocumentPool, prepare_pool
from evalset.estimate.documents.holes import hole_strata
from evalset.estimate.documents.rules import HOLE_SAMPLE
from evalset.estimate.documents.variance import column_weights
from evalset.estimate.sources import read_judges
from evalset.estimate.spec import HOLE_SIZING_RULES
from evalset.evaluation import Evaluation
from evalset.holes.find import Holes, find_holes, holes_outside
from evalset.metrics.documents import DocumentTerms, document_terms
from evalset.params import validate_params

MIN_FRACTION = 0.05
"""The least share of a run's holes drawn: the calibration's hole cells and the sampled variance rest on drawn holes
(the prototype's floor on DL19; a run sized below it would be judged from one or two holes)."""
JUDGE_ALL = 0.95
"""A fraction from which a sample costs about what every hole does."""


@validate_params(HOLE_SIZING_RULES)
def size_holes(holes: Holes, llm: pd.DataFrame, runs: Mapping[str, pd.DataFrame], *, precision: float,
               measures: Sequence[str] = (DEFAULT_METRIC,),
               contract: EvaluationContract | None = None) -> pd.DataFrame:
    """Per run (``run, holes, fraction, se``: ``se`` the predicted standard error at that fraction, the largest
    over ``measures``) the share of its holes to draw for ``precision`` (module docstring)."""
    contract = contract or EvaluationContract()
    pairs = holes.pairs
    pool = prepare_pool(pairs, llm, runs, contract, HOLE_SAMPLE, hole_strata(pairs, holes))
    known = np.r_[holes.judged["grade"].to_numpy(dtype=np.int64), np.zeros(len(holes.holes), dtype=np.int64)]
    unit = unit_variances(pool, known, np.arange(len(pairs)) >= len(holes.judged),
                          [document_terms(m, contract) for m in measures])
    count = holes.per_run.set_index("run")["holes"].reindex(pool.names).fillna(0).astype(int).to_numpy()
    sized = pd.DataFrame({"run": pool.names, "holes": count, **shares(unit, count, precision)})
    with_holes = sized[sized["holes"] > 0]
    if not with_holes.empty and (with_holes["fraction"] >= JUDGE_ALL).all():
        raise InputError(f"a precision of {precision:g} cannot be reached by a sample of the holes: every run needs "
                         f"{JUDGE_ALL:.0%} of its holes or more ({with_holes['fraction'].min():.0%} the least); "
                         "judge the holes' pool itself, or give a looser precision")
    return sized


def unit_variances(pool: DocumentPool, known: np.ndarray, hole: np.ndarray,
                   measures: Sequence[DocumentTerms], scale: np.ndarray | None = None) -> np.ndarray:
    """Per run of ``pool`` (the set's judged pairs, ``known`` their grades, and the ``hole`` pairs) the variance
    ``S^2`` of its mean per unit of ``(1 - f) / f`` (module docstring), the largest over ``measures``: the LLM
    calibrated on the set's pairs alone (no hole graded)."""
    sample = pool.sample(np.where(hole, 0.5, 1.0), ~hole, np.where(hole, 0, known), scale)
    unit = np.zeros(len(pool.names))
    for terms in measures:
        weights, spread = column_weights(terms, pool.ranking(terms.ranking), sample)
        per_run = (weights[:, hole] ** 2 * spread[hole][None, :]).sum(axis=1) / len(pool.query_ids) ** 2
        unit = np.maximum(unit, per_run)
    return unit


def shares(unit: np.ndarray, holes: np.ndarray, precision: float) -> dict[str, np.ndarray]:
    """Per run: the ``fraction`` of its holes for ``precision`` given its ``unit`` variance (never below
    :data:`MIN_FRACTION`; 0 without a hole) and the ``se`` predicted at it."""
    fraction = np.where(holes > 0, np.clip(unit / (unit + precision ** 2), MIN_FRACTION, 1.0), 0.0)
    se = np.sqrt(np.divide((1 - fraction) * unit, fraction, out=np.zeros(len(unit)), where=fraction > 0))
    return {"fraction": fraction, "se": se}


def hole_probabilities(holes: Holes, sized: pd.DataFrame) -> np.ndarray:
    """Each hole's inclusion probability: the largest fraction of the runs that retrieve it (module docstring)."""
    fraction = sized.set_index("run")["fraction"]
    retrieving = holes.holes["runs"].str.split(",")
    return np.array([max(float(fraction.get(name, 0.0)) for name in names) for names in retrieving])


def sized_probabilities(pool_pairs: pd.DataFrame, frozen_set: str | os.PathLike, runs: Mapping[str, pd.DataFrame],
                        llm: Sequence[str | os.PathLike], *, precision: float, depth: int,
                        measures: Sequence[str] = (), split: str = "test",
                        source: str = "the pool") -> tuple[np.ndarray, pd.DataFrame]:
    """Each pair of a holes' pool (``pool_pairs``: ``query_id, doc_id``, the pool of ``evalset holes --set SET ...
    -o DIR``) with its inclusion probability for ``precision`` on the runs given (module docstring), and the
    runs' sizes (:func:`size_holes`; ``measures`` default the set's headline). The pool must hold exactly the
    runs' holes in their top ``depth`` on the set's ``split``: a pair that is no hole of theirs, or a hole outside
    the pool, is refused."""
    evaluation = Evaluation.on_set(frozen_set, split)
    holes = find_holes(evaluation.qrels, runs, depth, evaluation.contract.ties)
    hole_keys = pd.MultiIndex.from_frame(holes.holes[["query_id", "doc_id"]])
    keys = pd.MultiIndex.from_frame(pool_pairs[["query_id", "doc_id"]].astype(str))
    foreign = ~keys.isin(hole_keys)
    if foreign.any():
        first = keys[int(np.flatnonzero(foreign)[0])]
        raise InputError(f"{int(foreign.sum()):,} pairs of the pool are not holes of the runs given in their top "
                         f"{depth} ({first[0]} {first[1]} first): give the runs whose holes the pool holds", source)
    lacking = holes_outside(holes, pool_pairs)
    if lacking:
        raise InputError(f"holes of the runs given that the pool lacks: {lacking}; pool these runs' holes (evalset "
                         "holes --set SET ... -o DIR) and draw from that pool", source)
    judges = read_judges(llm, "refuse", holes.pairs)
    sized = size_holes(holes, judges, runs, precision=precision, measures=list(measures) or [evaluation.headline],
                       contract=evaluation.contract)
    per_hole = pd.Series(hole_probabilities(holes, sized), index=hole_keys)
    return per_hole.reindex(keys).to_numpy(), sized
