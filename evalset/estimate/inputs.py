"""What an estimate is made of: the human and LLM grades, one per pair, checked against the slice record, and
the per-query values of each run under each.

Conventions
-----------
- Grades come from :mod:`evalset.estimate.sources` (labels tables or qrels, one grade per pair).
- The human grades must cover every query of the slice and no query outside it; the LLM grades must cover every
  query of the set (the record's queries). LLM grades of queries outside the set are left out and counted.
- Only labels of the kind asked for count (a labels table may hold human and LLM rows); the others are counted.
- Pairs of slice queries that a human graded and the LLM did not are counted in a note (an LLM that graded part
  of the pool predicts "not relevant" for the rest, and its mean moves), with a warning when they are more than a
  tenth of the human-graded pairs. Grades that could dominate a score are noted as ``score`` notes them
  (:func:`evalset.evaluation.unusual_grades_note`): above 10 for grades read from files.
- The settings are checked before any work, by the rules :class:`evalset.estimate.spec.EstimateSettings` declares.
- A run's value under a set of grades follows the evaluation contract. A slice query whose human value is
  undefined for some run (no relevant document under the human grades) leaves the labelled set and is counted.
  The other queries cannot be screened the same way (they have no human grade), so the estimate is then of the
  mean over every query with such queries' values taken as the LLM predicts them: say so, and prefer a contract
  where every query is defined (``undefined=zero``) when many are. An undefined LLM value is a prediction of 0
  (any fixed rule keeps the estimate unbiased), counted.
- **Missing queries**: a query of the set a run lacks follows the one rule of every analysis
  (:func:`evalset.evaluation.missing_queries`): refused, naming the run, its file and the count, unless the contract's
  ``missing`` was chosen (``chosen``: the conventions the user gave; by default every one when a whole contract is
  passed, none otherwise, as :class:`~evalset.evaluation.Evaluation` counts them). Chosen, the estimate says how many
  (:class:`Missing`): ``zero``, they score 0; ``skip``, they are left out of that run's estimate and of its
  comparisons (its mean is over the queries it answered).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.estimate.sources import Grades
from evalset.evaluation import (
    Evaluation,
    PerQuery,
    missing_queries,
    per_query_values,
    refuse_geometric,
    unusual_grades_note,
)
from evalset.io.annotations import grade_line
from evalset.judgments.ensemble import ensemble_grades

LLM_GAP_WARNING = 0.1
"""The share of the slice's human-graded pairs without an LLM grade above which the note is a warning."""


def ensemble_of(llm: Grades, human: Grades) -> tuple[Grades, str]:
    """The LLM files' judges (each file's annotators kept apart) as one ensemble calibrated on the human grades
    (:mod:`evalset.judgments.ensemble`; the scale: the human grades seen), as the LLM grades, and its note."""
    scale = sorted(set(human.judgments["grade"].astype(int)))
    ensemble = ensemble_grades(llm.judgments, human.judgments, scale)
    judgments = ensemble.labels().assign(file=", ".join(llm.files))
    return replace(llm, qrels=ensemble.grades[["query_id", "doc_id", "grade"]], judgments=judgments,
                   merged_pairs=0, tied_pairs=0), ensemble.note


def check_coverage(human: Grades, llm: Grades, queries: Sequence[str], slice_ids: Sequence[str],
                   record_source: str | None = None) -> list[str]:
    """Refuse human grades that do not match the slice, or LLM grades missing for a query of the set; return
    notes on what is left out (module docstring)."""
    in_slice, every = set(slice_ids), set(queries)
    outside = human.judgments[~human.judgments["query_id"].isin(in_slice)]
    if len(outside):
        row = outside.iloc[0]
        raise InputError(f"a human grade of query {row['query_id']}, which is not in the slice ({len(outside)} such "
                         f"grades); the slice record is {record_source or 'the one given'}", row["file"],
                         grade_line(row["file"], row["query_id"], row["doc_id"], int(row["grade"])))
    ungraded = sorted(in_slice - human.query_ids)
    if ungraded:
        raise InputError(f"{len(ungraded)} slice queries have no human grade (e.g. {', '.join(ungraded[:3])}): "
                         "the slice's queries must be graded in full, or the human slice is no longer random",
                         record_source)
    missing = sorted(every - llm.query_ids)
    if missing:
        raise InputError(f"{len(missing)} of the set's {len(every)} queries have no LLM grade (e.g. "
                         f"{', '.join(missing[:3])}): the LLM must grade every query", llm.files[0] if llm.files
                         else None)
    notes = []
    extra = llm.query_ids - every
    if extra:
        notes.append(f"{len(extra)} LLM-graded queries are not in the set's queries and were left out")
    slice_pairs = llm.qrels[llm.qrels["query_id"].isin(in_slice)]
    unjudged = len(slice_pairs.merge(human.qrels[["query_id", "doc_id"]], how="left", indicator=True)
                   .query("_merge == 'left_only'"))
    if unjudged:
        notes.append(f"warning: {unjudged} pairs of slice queries have an LLM grade and no human grade (they count "
                     "as not relevant under the human grades): the humans did not judge the whole slice pool")
    notes += _llm_gaps(human, llm, in_slice)
    for grades, who in ((human, "human"), (llm, "LLM")):
        source = ", ".join(grades.files) or who
        unusual = unusual_grades_note(Evaluation(EvaluationContract(), grades.qrels, source=source))
        if unusual:
            notes.append(unusual)
        if grades.other_kind:
            notes.append(f"{grades.other_kind} labels of the other kind in the {who} files were left out")
        if grades.merged_pairs:
            notes.append(f"{grades.merged_pairs} pairs had several {who} grades: their median was used "
                         f"({grades.tied_pairs} ties took the lower middle grade)")
    return notes


def _llm_gaps(human: Grades, llm: Grades, in_slice: set[str]) -> list[str]:
    """The note on pairs of slice queries with a human grade and no LLM grade (module docstring)."""
    graded = human.qrels.loc[human.qrels["query_id"].isin(in_slice), ["query_id", "doc_id"]]
    if graded.empty:
        return []
    missing = len(graded.merge(llm.qrels[["query_id", "doc_id"]], how="left", indicator=True)
                  .query("_merge == 'left_only'"))
    if not missing:
        return []
    share = missing / len(graded)
    lead = "warning: " if share > LLM_GAP_WARNING else "note: "
    return [f"{lead}{missing} of the {len(graded)} human-graded pairs of the slice ({share:.0%}) have no LLM grade "
            "(they count as not relevant under the LLM grades): the LLM did not grade the whole pool, so its "
            "figures, and the PPI++ correction, rest on part of it"]


def values_by_run(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, query_ids: Sequence[str], metric: str,
                  contract: EvaluationContract) -> pd.DataFrame:
    """Per-query values (``query_ids`` x runs) of ``metric`` under ``qrels``; a query without a judgment is NaN."""
    return query_values(runs, qrels, query_ids, metric, contract).values(metric).reindex(list(query_ids))


def chosen_conventions(contract: EvaluationContract | None, chosen: Collection[str] | None) -> tuple[str, ...]:
    """The contract's conventions the user chose: ``chosen`` when given, else every one when a whole ``contract``
    is passed and none without one (module docstring)."""
    if chosen is not None:
        return tuple(chosen)
    return tuple(contract.to_dict()) if contract is not None else ()


def query_values(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, query_ids: Sequence[str], metric: str,
                 contract: EvaluationContract, chosen: Collection[str] | None = None) -> PerQuery:
    """The runs scored per query on ``metric`` under the ``qrels`` of ``query_ids`` (the evaluation room's
    :func:`~evalset.evaluation.per_query_values`), the conventions ``chosen`` recorded for the missing-queries rule
    (default: every one)."""
    refuse_geometric(metric, "an estimate")
    used = Evaluation.on_qrels(qrels[qrels["query_id"].isin(set(query_ids))], contract)
    if chosen is not None:
        used = replace(used, given=tuple(chosen))
    return per_query_values(used, runs, [metric])


@dataclass(frozen=True)
class Missing:
    """The missing-queries rule applied to an estimate (module docstring): per run, how many of the set's
    ``queries`` it lacks (``counts``), the contract's ``policy`` (``zero``, ``skip``), and under ``skip`` which
    queries are left out of each run's estimate (``left_out``; empty otherwise)."""

    counts: dict[str, int]
    policy: str
    queries: int
    left_out: dict[str, frozenset[str]] = field(default_factory=dict)

    def notes(self) -> list[str]:
        """One line per run that lacks queries: the count and what became of them."""
        how = ("they score 0 (-c missing=zero)" if self.policy == "zero" else
               "left out of its estimate and its comparisons (-c missing=skip)")
        return [f"note: {run} lacks {count} of the {self.queries} queries of the set: {how}"
                for run, count in self.counts.items() if count]

    def of_pair(self, baseline: str, candidate: str) -> frozenset[str]:
        """The queries left out of a paired difference: those either run lacks (under ``skip``)."""
        return self.left_out.get(baseline, frozenset()) | self.left_out.get(candidate, frozenset())


def missing_rule(values: PerQuery, query_ids: Sequence[str], sources: Mapping[str, object] | None = None) -> Missing:
    """The rule on ``values`` scored over the set's ``query_ids``: refused unless chosen
    (:func:`evalset.evaluation.missing_queries`, naming the run's file from ``sources``, name -> path), else what it
    decided (:class:`Missing`)."""
    counts = missing_queries(values, {run: (sources or {}).get(run) for run in values.runs})
    policy = values.evaluation.contract.missing
    every = frozenset(map(str, query_ids))
    left_out = {run: every - set(map(str, values.tables[run].index)) for run, count in counts.items()
                if count and policy == "skip"}
    return Missing(counts, policy, len(every), left_out)


def refuse_skip(missing: Missing) -> Missing:
    """``missing`` unless a run lacks queries under ``-c missing=skip``, which a simulation refuses: its columns and
    their truths are over every query of the set."""
    if missing.left_out:
        run = next(iter(missing.left_out))
        raise InputError(f"run {run} lacks {missing.counts[run]} of the {missing.queries} queries: a simulation scores "
                         "every run on every query, so give -c missing=zero (they score 0); -c missing=skip is for an "
                         "estimate")
    return missing
