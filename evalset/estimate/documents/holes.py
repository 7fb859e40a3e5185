"""A frozen set and a new system: the system's full-judgment score estimated from the set's judgments, the grades
of a seeded sample of its holes and an LLM's grades of every hole (the document design,
:mod:`evalset.estimate.documents`, with the set's pairs known). The holes are found, drawn and sized in
:mod:`evalset.holes` (:mod:`~evalset.holes.find`, :mod:`~evalset.holes.sample`,
:mod:`~evalset.estimate.documents.holesizing`).

Conventions
-----------
- The **design**: every judged pair of the set is in the sample for certain (``pi`` 1, its grade the set's); each
  hole is drawn by a seeded Poisson draw (:func:`evalset.estimate.documents.sample.poisson_sample`, the uniforms
  in the holes' order: query, then document id) with one inclusion probability, ``fraction`` or ``budget`` /
  holes, or each its own (sized per run for a precision: :mod:`evalset.estimate.documents.holesizing`).
- The estimate is the document design's (:func:`evalset.estimate.documents.estimate.estimate_documents`) under the
  hole sample's rules (:data:`evalset.estimate.documents.rules.HOLE_SAMPLE`: the LLM calibrated by stratum, judged
  in a run's top k, judged deeper, hole, by :func:`hole_strata`; no floor on nDCG's estimated ideal; "this set"'s
  variance the larger of the sampled one and its floor, on the normal quantile): the LLM's grades of every pair
  calibrated on the sampled pairs of the other queries (the set's own judgments, paid for already, and the graded
  holes), the difference estimator per query, "this set" and "new queries" intervals; without an LLM,
  Horvitz-Thompson's.
- Unbiased where the measure is a sum over a query's documents (P@k, DCG@k): the expectation over every draw is
  the score under full judgments (``tests/estimate/documents/test_hole_sample.py`` enumerates every draw of a
  small set). nDCG's ideal is estimated too, so its estimate is a ratio's, unbiased to first order.
- Bad input is an :class:`~evalset.errors.InputError`: a run without a judged query, no hole in any run (nothing
  to judge), a budget of every hole or more (judge them all), a human grade for an undrawn hole or a pair outside
  the pool, a drawn hole without one, an LLM grade missing for a pair of the pool (the document design's checks).
- **From the command line** (:func:`hole_sample_report`: ``evalset estimate run holes RUN... --set SET --sample
  OUT``), the holes are the pool of ``evalset holes --set ... -o DIR`` and the sample the record of ``estimate
  select holes DIR --set SET --budget B|P%`` (its own inclusion probabilities, the runs' ranks as priors): every
  pair of the record must be a hole of the set (a pair the set judges is refused: not a sample of its holes), and
  every hole of every run given must be in the record at its depth (a run pooled with other runs, or a set changed
  since, leaves holes no one could draw: refused, naming the run). The verdicts are the document design's
  (:func:`evalset.estimate.documents.report.sample_report`), in the set's comparison family on the split."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from evalset.comparing.setlog import set_family
from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED, ContractOptions, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.estimate import DocumentEstimate, estimate_documents
from evalset.estimate.documents.report import DocumentReport, sample_report
from evalset.estimate.documents.rules import HOLE_SAMPLE
from evalset.estimate.documents.sample import poisson_sample, refuse_traffic_strata
from evalset.estimate.sources import read_grades, read_judges
from evalset.estimate.spec import DOCUMENT_SAMPLE_RULES
from evalset.evaluation import Evaluation
from evalset.holes.find import Holes, find_holes, holes_outside, judged_pairs, refuse_judged
from evalset.io.digests import file_sha256
from evalset.io.samplerecord import read_sample
from evalset.io.setfiles import MANIFEST_FILE
from evalset.params import validate_params


def hole_strata(pairs: pd.DataFrame, holes: Holes) -> np.ndarray:
    """Per pair of a design (``query_id, doc_id``) its calibration strata (:mod:`evalset.estimate.documents.rules`),
    coarse to fine: whether a run retrieves it in its top k (a hole always), whether it is a hole."""
    keys = pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]].astype(str))
    judged = holes.judged
    hole = ~keys.isin(pd.MultiIndex.from_frame(judged[["query_id", "doc_id"]]))
    top = keys.isin(pd.MultiIndex.from_frame(judged.loc[judged["top"], ["query_id", "doc_id"]])) | hole
    return np.c_[top, hole].astype(np.int64)


@validate_params(DOCUMENT_SAMPLE_RULES)
def draw_holes(holes: Holes, *, fraction: float | None = None, budget: int | None = None,
               probabilities: np.ndarray | None = None, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """The design's pairs (module docstring): ``query_id, doc_id, pi, sampled, hole``, the judged pairs first
    (``pi`` 1, sampled) then every hole with its inclusion probability and draw: one for every hole (``fraction``,
    or ``budget`` / holes) or each its own (``probabilities``, in the holes' order:
    :func:`evalset.estimate.documents.holesizing.hole_probabilities`)."""
    if sum(given is not None for given in (fraction, budget, probabilities)) != 1:
        raise InputError("give one of a budget (expected human judgments of holes), a fraction of the holes or "
                         "their inclusion probabilities")
    count = len(holes.holes)
    if budget is not None and budget >= count:
        raise InputError(f"a budget of {budget:,} judgments for {count:,} holes: judge them all (the holes' pool) "
                         "rather than a sample")
    if probabilities is not None:
        pi = np.asarray(probabilities, dtype=np.float64)
        if pi.shape != (count,) or not ((pi > 0) & (pi <= 1)).all():
            raise ValueError(f"one inclusion probability in (0, 1] per hole ({count}), got {pi.shape}")
    else:
        pi = np.full(count, fraction if fraction is not None else budget / count)
    drawn = poisson_sample(pi, seed)
    judged = holes.judged[["query_id", "doc_id"]].assign(pi=1.0, sampled=True, hole=False)
    open_ = holes.holes[["query_id", "doc_id"]].assign(pi=pi, sampled=drawn, hole=True)
    return pd.concat([judged, open_], ignore_index=True)


def estimate_holes(holes: Holes, pairs: pd.DataFrame, hole_grades: pd.DataFrame, llm: pd.DataFrame | None,
                   runs: Mapping[str, pd.DataFrame], *, measures: Sequence[str] = (DEFAULT_METRIC,),
                   contract: EvaluationContract | None = None,
                   comparisons: Sequence[tuple[str, str]] | None = None, level: float = 0.95) -> DocumentEstimate:
    """The runs' full-judgment means and paired differences from the set's judgments, the drawn holes' human
    grades (``hole_grades``: ``query_id, doc_id, grade`` of exactly the drawn holes) and the LLM's grades of every
    pair of the design (``llm``: ``query_id, doc_id, judge, grade``; ``None``: Horvitz-Thompson's estimator)."""
    drawn = hole_grades[["query_id", "doc_id", "grade"]].astype({"query_id": str, "doc_id": str})
    human = pd.concat([holes.judged[["query_id", "doc_id", "grade"]], drawn], ignore_index=True)
    human.attrs["source"] = hole_grades.attrs.get("source", "the holes' grades")
    return estimate_documents(pairs, human, llm, runs, measures=measures, contract=contract,
                              comparisons=comparisons, level=level, rules=HOLE_SAMPLE,
                              strata=hole_strata(pairs, holes))


def hole_sample_report(runs: Mapping[str, pd.DataFrame], *, set_path: str | os.PathLike, sample_path: str | os.PathLike,
                       human: Sequence[str | os.PathLike], llm: Sequence[str | os.PathLike] = (), no_llm: bool = False,
                       split: str = "test", metrics: Sequence[str] = (), pairs: Sequence[tuple[str, str]] = (),
                       planned: int | None = None, exploratory: bool = False, alpha: float = 0.05, level: float = 0.95,
                       conflicting_grades: str = "refuse", options: ContractOptions | None = None,
                       override_contract: bool = False, sources: Mapping[str, str] | None = None) -> DocumentReport:
    """The runs' full-judgment estimate on the set at ``set_path`` (its ``split``, under its contract) from the
    record at ``sample_path`` of a sample of its holes, the ``human`` grades of the drawn holes and the ``llm``
    grades of every pair of the set and of the holes (module docstring, "From the command line")."""
    evaluation = Evaluation.on_set(set_path, split, options, override_contract=override_contract)
    frozen, contract = evaluation.frozen, evaluation.contract
    refuse_traffic_strata(frozen.contract.weighting, evaluation.queries["stratum"].nunique(), os.fspath(set_path))
    record = read_sample(sample_path)
    if record.source.get("set_manifest_sha256") != file_sha256(frozen.path / MANIFEST_FILE):
        drawn_for = record.source.get("set")
        raise InputError(f"the sample was drawn for {'the set ' + drawn_for if drawn_for else 'no set'}, not this one: "
                         "draw it from the holes' pool of this set with `evalset estimate select holes DIR --set SET "
                         "--budget B`", os.fspath(sample_path))
    judged = judged_pairs(evaluation.qrels)
    refuse_judged(record.pairs, judged, "sample", "; draw it from the holes' pool (evalset holes --set SET ... "
                  "-o DIR, then estimate select holes DIR --set SET)", os.fspath(sample_path))
    holes = find_holes(evaluation.qrels, runs, record.depth, contract.ties)
    shown = holes_outside(holes, record.pairs)
    if shown:
        raise InputError(f"holes in the top {record.depth} that the sample could not draw (not in its pool): "
                         f"{shown}; draw the sample from the holes' pool of these runs on this set",
                         os.fspath(sample_path))
    design = pd.concat([judged[["query_id", "doc_id"]].assign(pair_id="", prior=1.0, pi=1.0, sampled=True),
                        record.pairs], ignore_index=True)
    grades = read_grades(human, "human", conflicting_grades).qrels[["query_id", "doc_id", "grade"]]
    both = pd.concat([judged, grades.astype({"query_id": str, "doc_id": str})], ignore_index=True)
    judges = None if no_llm else read_judges(llm, conflicting_grades, design[["query_id", "doc_id"]])
    pairs = list(pairs) or [pair for pair in frozen.planned if set(pair) <= set(runs)]
    files = {"human": [os.fspath(evaluation.qrels_file), *map(os.fspath, human)], "llm": [os.fspath(p) for p in llm]}
    report = sample_report(runs, replace(record, pairs=design), both, judges, record_path=os.fspath(sample_path),
                           files=files, metrics=list(metrics) or [frozen.contract.headline], pairs=pairs,
                           family=set_family(len(pairs), planned=planned, frozen=frozen, split=split),
                           exploratory=exploratory, alpha=alpha, level=level, contract=contract,
                           sources=sources, split=split, rules=HOLE_SAMPLE, strata=hole_strata(design, holes))
    per_run = {row.run: row.holes for row in holes.per_run.itertuples()}
    drawn = int(record.pairs["sampled"].sum())
    report.settings.update(set=os.fspath(set_path), holes=per_run, known=len(judged), sampled=drawn)
    report.estimate.caveats.insert(0, (
        f"holes: {drawn:,} of the {len(record.pairs):,} in the sample's pool drawn and graded; the set's "
        f"{len(judged):,} judgments on the {split} split known (pi 1); holes in each run's top {record.depth}: "
        + ", ".join(f"{name} {count:,}" for name, count in per_run.items())))
    return report
