"""The document design's two ways from the inputs of ``evalset estimate run documents`` and ``estimate validate
documents``: the estimate from a drawn sample's record, its human grades and every pooled pair's LLM grades
(:func:`document_sample_report`), and the validation on fully human-graded data (:func:`document_validation`).

Conventions
-----------
- The record is ``sample.json`` or ``sample.tsv`` of ``evalset estimate select documents`` (or their folder),
  read checked by :func:`evalset.io.samplerecord.sample_frame`: every pooled pair's ``pi`` (in (0, 1]) and draw.
- Human grades are read as the slice design reads them (:func:`evalset.estimate.sources.read_grades`: labels of
  ``evalset pull`` or qrels, one grade per pair, several annotators' median with ties settled low); they must be
  exactly the sampled pairs' (:func:`evalset.estimate.documents.estimate.sample_arrays`).
- Each LLM file is one judge (its own annotators' median, as above), named by the file's name (by its path when
  two files share a name); the judges are kept apart, each a column of the calibration
  (:mod:`evalset.judgments.calibration`), never merged. Each must grade every pooled pair: the first file that
  misses one is named. ``no_llm``: Horvitz-Thompson's estimator, and no LLM file. Which of them, and the human
  grades and the budget a validation needs, are the settings' rules (:mod:`evalset.estimate.spec`).
- The measures default to :data:`~evalset.contract.DEFAULT_METRIC`, spelt as ``evalset score`` takes them; the
  design estimates those that decompose over a query's documents (:func:`evalset.metrics.documents.document_terms`:
  p@k, dcg@k, ndcg@k, ap@k); any other, or a convention it does not cover, is refused before a file is read. The
  comparisons are the pairs given (none by default: the table shows each run's mean and the pairs asked for).
- Verdicts by the one rule of every verdict (:func:`evalset.stats.verdicts.decide`), under the comparison family
  of the pairs (``planned`` overrides their count; :class:`~evalset.stats.family.ComparisonFamily`): each pair at
  the threshold ``alpha / size``, its intervals recomputed at level ``1 - threshold`` from the standard errors and
  clipped to the difference's range (:func:`~evalset.stats.verdicts.bounded`). The verdict rests on "this set"'s
  interval, or "new queries"' when the estimate says "this set"'s is unreliable (a small sample; no LLM), and
  names it; a comparison whose estimate or either interval left the range (clipped) carries none. The verdict's
  ``rule`` is kept beside it.
- The missing-queries rule and the sample's minimum are the estimate's (:mod:`evalset.estimate.documents.estimate`):
  ``chosen`` the contract's conventions the user gave, ``sources`` run name -> file, named in a refusal.
- The validation's pool is the human qrels' pairs (every one graded); it draws ``draws`` samples of ``budget``
  expected judgments (:func:`evalset.estimate.documents.validation.simulate_documents`, the query slice beside).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.differences import PairedDifference
from evalset.estimate.documents.estimate import SMALL_SAMPLE, DocumentEstimate, estimate_documents
from evalset.estimate.documents.rules import DOCUMENT_SAMPLE, DesignRules
from evalset.estimate.documents.validation import simulate_documents
from evalset.estimate.simulate import Validation
from evalset.estimate.sources import read_grades, read_judges
from evalset.io.samplerecord import SampleRecord, read_sample
from evalset.metrics.documents import document_terms
from evalset.render import number, records, text_table
from evalset.stats.family import ComparisonFamily
from evalset.stats.quantiles import around, two_sided
from evalset.stats.verdicts import bounded

FilePath = str | os.PathLike


@dataclass(frozen=True)
class DocumentReport:
    """The estimate of a document sample, its comparisons' verdicts (one row each) and what it rests on."""

    estimate: DocumentEstimate
    comparisons: pd.DataFrame
    settings: dict[str, Any]

    def to_text(self) -> str:
        s = self.settings
        known = f", with the set's {s['known']:,} judgments" if "known" in s else ""  # a sample of a set's holes
        no_text = (f"; {s['no_text']:,} pooled pair(s) without text left out of the draw: unjudged"
                   if s.get("no_text") else "")
        lines = [f"sample: {s['record']} (budget {s['budget']:,g} judgments expected; drawn and "
                 f"human-graded {s['sampled']:,}{known}{no_text}); judges: "
                 f"{', '.join(s['judges']) or 'none (Horvitz-Thompson)'}",
                 replace(self.estimate, caveats=[]).to_text()]
        for row in self.comparisons.itertuples():
            lines += ["", f"{row.candidate} vs {row.baseline} on {row.measure} ({row.kind}, threshold "
                          f"{row.threshold:.4g}: intervals at level {row.level:.4g})"]
            lines += ["  " + line for line in text_table([
                ["estimate", number(row.estimate, 4, sign=True)],
                ["this set", f"[{number(row.set_low, 4, sign=True)}, {number(row.set_high, 4, sign=True)}]"],
                ["new queries", f"[{number(row.new_low, 4, sign=True)}, {number(row.new_high, 4, sign=True)}]"],
                ["verdict", row.verdict]])]
        return "\n".join([*lines, *self.estimate.caveats])

    def to_dict(self) -> dict[str, Any]:
        return {**self.estimate.to_dict(), "design": "documents", "record": self.settings,
                "comparisons": records(self.comparisons)}


def _checked_measures(metrics: Sequence[str], contract: EvaluationContract | None) -> list[str]:
    """The measures (default the default metric), each refused before any file is read if the design cannot
    estimate it under the contract (:func:`evalset.metrics.documents.document_terms`)."""
    metrics = list(metrics) or [DEFAULT_METRIC]
    for metric in metrics:
        document_terms(metric, contract or EvaluationContract())
    return metrics


def _comparisons(estimate: DocumentEstimate, pairs: Sequence[tuple[str, str]], family: ComparisonFamily,
                 exploratory: bool, alpha: float, split: str | None = None) -> pd.DataFrame:

    table, settings = estimate.table, estimate.settings
    queries = settings["queries"]
    # the estimate's caveats (documents.estimate): "this set" is unreliable below SMALL_SAMPLE pairs per query, and
    # without a judge
    rely_on_new = settings["sampled"] / queries < SMALL_SAMPLE or not settings["judges"]
    rows = []
    for baseline, candidate in pairs:
        for measure in estimate.settings["measures"]:
            pair = PairedDifference.of(baseline, candidate, measure, family, alpha=alpha, exploratory=exploratory)
            row = table[(table["measure"] == measure) & (table["name"] == pair.name)].iloc[0]
            lowest, highest = settings["ranges"][measure]
            within = (lowest - highest, highest - lowest)
            answered = queries - len(estimate.left_out(baseline, candidate))
            z = two_sided(pair.level)
            t = two_sided(pair.level, answered - 1) if answered > 1 else np.nan
            centre = row["estimate"]
            # a centre clipped to the range (named in the table's row) takes its intervals out of it: no verdict
            this = bounded(np.nan, *around(centre, row["se_set"], z), within, f'"this set" at {pair.level:.4g}')
            new = bounded(np.nan, *around(centre, row["se_new"], t), within, f'"new queries" at {pair.level:.4g}')
            clipped = "; ".join(text for text in (this.clipped, new.clipped) if text)
            rests = new if rely_on_new else this
            decided = pair.decided(centre, rests.low, rests.high, n=answered, clipped=clipped, split=split,
                                   interval="\"new queries\" interval" if rely_on_new else "\"this set\" interval")
            rows.append({"baseline": baseline, "candidate": candidate, "measure": measure, **decided,
                         "estimate": centre, "set_low": this.low, "set_high": this.high, "new_low": new.low,
                         "new_high": new.high, "interval": "new queries" if rely_on_new else "this set"})
    columns = ["baseline", "candidate", "measure", "kind", "threshold", "level", "estimate", "set_low", "set_high",
               "new_low", "new_high", "interval", "verdict", "rule"]
    return pd.DataFrame(rows, columns=columns)


def document_sample_report(runs: Mapping[str, pd.DataFrame], *, sample_path: FilePath, human: Sequence[FilePath],
                           llm: Sequence[FilePath] = (), no_llm: bool = False, metrics: Sequence[str] = (),
                           pairs: Sequence[tuple[str, str]] = (), planned: int | None = None, exploratory: bool = False,
                           alpha: float = 0.05, level: float = 0.95, conflicting_grades: str = "refuse",
                           contract: EvaluationContract | None = None, chosen: Collection[str] | None = None,
                           sources: Mapping[str, str] | None = None) -> DocumentReport:
    """The estimate of ``runs`` from the record at ``sample_path``, the ``human`` grades of its sampled pairs and
    the ``llm`` grades of every pooled pair (``no_llm``: none; Horvitz-Thompson), with the verdicts of ``pairs``
    (module docstring)."""
    metrics = _checked_measures(metrics, contract)
    record = read_sample(sample_path)
    human_grades = read_grades(human, "human", conflicting_grades)
    judges = None if no_llm else read_judges(llm, conflicting_grades, record.frame())
    return sample_report(runs, record, human_grades.qrels, judges, record_path=os.fspath(sample_path),
                         files={"human": list(human_grades.files), "llm": [os.fspath(p) for p in llm]},
                         metrics=metrics, pairs=pairs, family=ComparisonFamily.of(len(pairs), planned=planned),
                         exploratory=exploratory, alpha=alpha, level=level, contract=contract, chosen=chosen,
                         sources=sources)


def sample_report(runs: Mapping[str, pd.DataFrame], record: SampleRecord, human: pd.DataFrame,
                  judges: pd.DataFrame | None, *, record_path: str, files: Mapping[str, list[str]],
                  metrics: Sequence[str], pairs: Sequence[tuple[str, str]], family: ComparisonFamily,
                  exploratory: bool = False, alpha: float = 0.05, level: float = 0.95,
                  contract: EvaluationContract | None = None, chosen: Collection[str] | None = None,
                  sources: Mapping[str, str] | None = None, split: str | None = None,
                  rules: DesignRules = DOCUMENT_SAMPLE, strata: np.ndarray | None = None) -> DocumentReport:
    """The estimate of ``runs`` from a read ``record``, one ``human`` grade per sampled pair (``query_id, doc_id,
    grade``) and the ``judges``' grades of every pooled pair (:func:`read_judges`' frame; ``None``:
    Horvitz-Thompson), with the verdicts of ``pairs`` under ``family``; ``record_path`` and ``files`` (``human``,
    ``llm``: the files read) name the inputs in the settings and in errors; ``split``: a set's (its dev split's
    comparisons are exploratory); ``rules`` and ``strata``: the design's (:func:`estimate_documents`)."""
    frame = record.frame()
    frame.attrs["source"] = record_path
    human = human.copy()
    human.attrs["source"] = ", ".join(files["human"])
    estimate = estimate_documents(frame, human, judges, runs, measures=_checked_measures(metrics, contract),
                                  contract=contract, comparisons=list(pairs), level=level, chosen=chosen,
                                  sources=sources, rules=rules, strata=strata)
    settings = {"record": record_path, "budget": float(record.budget), "sampled": estimate.settings["sampled"],
                "no_text": len(record.source.get("no_text", [])),
                "judges": estimate.settings["judges"], **files, "alpha": alpha, "planned": family.planned_count,
                "exploratory": exploratory}
    return DocumentReport(estimate, _comparisons(estimate, pairs, family, exploratory, alpha, split), settings)


def document_validation(runs: Mapping[str, pd.DataFrame], *, human: Sequence[FilePath], llm: Sequence[FilePath] = (),
                        no_llm: bool = False, draws: int, budget: float, metrics: Sequence[str] = (),
                        level: float = 0.95, seed: int = DEFAULT_SEED, conflicting_grades: str = "refuse",
                        contract: EvaluationContract | None = None,
                        progress: Callable[[Iterable], Iterable] = iter, chosen: Collection[str] | None = None,
                        sources: Mapping[str, str] | None = None) -> Validation:
    """``draws`` document samples of ``budget`` expected judgments from the fully graded ``human`` pairs, with
    the ``llm`` judges (or ``no_llm``), the query slice beside (module docstring)."""
    measures = _checked_measures(metrics, contract)
    qrels = read_grades(human, "human", conflicting_grades).qrels
    if not np.isfinite(budget) or not 0 < budget < len(qrels):
        raise InputError(f"the budget must be above 0 and below the {len(qrels):,} graded pairs of the pool, got "
                         f"{budget:g}", ", ".join(os.fspath(p) for p in human))
    judges = None if no_llm else read_judges(llm, conflicting_grades, qrels)
    return simulate_documents(runs, qrels, judges, budget=budget, draws=draws, measures=measures, contract=contract,
                              level=level, seed=seed, progress=progress, chosen=chosen, sources=sources)
