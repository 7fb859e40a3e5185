"""Estimates on a frozen set with an LLM-graded part: its human-graded queries as the slice, its labels as the
grades, its contract, strata and comparison family (``evalset estimate run set`` and the report); or, on a set frozen
with a document sample (``freeze --sample``), the document design's estimate from the sample it records.

Conventions
-----------
- A set that records a **document sample** is estimated by the document design
  (:func:`evalset.estimate.documents.report.sample_report`): the sample's pairs on the split's queries, the human grade
  of each sampled pair the set's own (``qrels.txt``: its human labels merged by the set's rule, adjudicated; such a
  set merges human grades only), each LLM annotator of the labels a judge of its own
  (none: Horvitz-Thompson's estimator), the set's contract, its headline by default (a measure the design
  estimates: ndcg@k, dcg@k, p@k, ap), its comparison family. Its means weight every query alike, so a set that
  weights several strata by traffic is refused.
- A set has an **LLM-graded part** on a split when its labels hold LLM labels (kind ``llm``) and some queries of
  the split have LLM grades and no human grade. The estimate is then about the split's LLM-graded queries; those of
  them with a human grade are the **slice**, taken *as frozen* (design ``as frozen``): the set does not record how
  they were chosen, and the estimate holds only if they are a random slice of the LLM-graded queries.
- No estimate (``None``): no LLM label, fewer than 2 human-graded queries among the LLM-graded ones, or no
  LLM-graded query without a human grade (the humans graded everything the LLM did: their mean is the score).
- The grades are the set's labels (``labels.tsv``) as ``evalset estimate run --human/--llm`` reads them: per pair the
  lower median of its human labels, and of its LLM labels (:func:`evalset.estimate.grades_of`). Human-graded
  queries of the split without an LLM grade are left out of the estimate, and counted in its notes.
- **Another judge's labels** (``llm_labels``, ``estimate run set --set S --llm FILE``) replace the set's LLM labels, and
  the LLM-graded part is theirs. The set records the judges of its LLM labels (the manifest's ``judges``:
  annotator and source, :mod:`evalset.judgments.identity`); labels of another judge (a new model, prompt or
  guideline) are refused unless ``other_judge``, and then a ``JUDGE CHANGED`` caveat says what changed. The
  estimate stays valid either way (the human slice corrects whichever judge graded), but the set's agreement
  summary and every earlier estimate are of the recorded judge: compare the two first (``evalset judge recheck``).
- Strata: the set's strata and traffic shares when it weights by traffic; one stratum when it weights uniformly.
- The set's evaluation contract (contract options that contradict it are refused unless overridden, and an
  override is said in the notes: the rule of ``score --set``, :meth:`evalset.contract.ContractOptions.applied_to`);
  by default its headline metric and the planned comparisons whose runs were
  given, each at the threshold of the set's comparison family on the split (as ``compare --set`` would use; the
  estimate records nothing in the comparison log).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from evalset.comparing.setlog import set_family
from evalset.contract import ContractOptions, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.report import DocumentReport, sample_report
from evalset.estimate.documents.sample import refuse_traffic_strata
from evalset.estimate.figures import Estimate, estimate_runs
from evalset.estimate.sources import grades_of
from evalset.estimate.spec import EstimateSettings, check_pairs
from evalset.io.samplerecord import RECORD_NAME
from evalset.io.setfiles import LABELS_FILE, QRELS_FILE
from evalset.io.setfolder import FrozenSet, select_split
from evalset.io.slicerecord import SliceRecord
from evalset.judgments.identity import judge_identities, recorded_judges
from evalset.params import rules_of, validate_params

DESIGN = "as frozen"
DOCUMENT_INTERVALS = ("the document design's intervals are its own (\"this set\" and \"new queries\"): give no "
                      "--interval")
"""The refusal of ``--interval`` on a set frozen with a document sample (the set, not the command, says its design)."""


def set_slice(frozen: FrozenSet, split: str = "test", labels: pd.DataFrame | None = None) -> SliceRecord | None:
    """The slice record of the set's LLM-graded part on ``split`` (module docstring), or ``None``; ``labels``
    default to the set's."""
    queries = select_split(frozen.queries, split)
    labels = frozen.labels if labels is None else labels
    labels = labels[labels["query_id"].isin(queries["query_id"])]
    llm_graded = set(labels.loc[labels["kind"] == "llm", "query_id"])
    human_graded = set(labels.loc[labels["kind"] == "human", "query_id"])
    in_slice = sorted(llm_graded & human_graded)
    if len(in_slice) < 2 or not llm_graded - human_graded:
        return None
    table = queries[queries["query_id"].isin(llm_graded)][["query_id", "stratum", "stratum_share"]]
    if frozen.contract.weighting == "uniform":
        table = table.assign(stratum="all", stratum_share=1.0)
    table = table.sort_values(["stratum", "query_id"], kind="stable").reset_index(drop=True)
    source = {"set": str(frozen.path), "split": split,
              "drawn": "not recorded: the set's human-graded queries are taken as the random slice"}
    return SliceRecord(DESIGN, None, table, tuple(in_slice), {}, source)


@validate_params(rules_of(EstimateSettings, "split", "planned", "alpha", "level", "interval"))
def set_estimate(frozen: FrozenSet, runs: Mapping[str, pd.DataFrame], *, split: str = "test",
                 metrics: list[str] | None = None, pairs: list[tuple[str, str]] | None = None,
                 planned: int | None = None, exploratory: bool = False, alpha: float = 0.05, level: float = 0.95,
                 interval: str = "t", options: ContractOptions | None = None,
                 override_contract: bool = False, llm_labels: pd.DataFrame | None = None,
                 other_judge: bool = False,
                 sources: Mapping[str, str] | None = None) -> Estimate | DocumentReport | None:
    """The estimates of ``runs`` on the set's LLM-graded part of ``split`` (module docstring), or ``None`` when it
    has none. ``metrics`` default to the set's headline, ``pairs`` to its planned comparisons whose runs were
    given; ``planned`` overrides the family's planned count. Raises :class:`~evalset.errors.InputError` when the
    set has an LLM-graded part but no estimate can be made (a stratum with fewer than 2 human-graded queries,
    ppi_py not installed). ``options`` are contract options, under the override rule (module docstring).
    ``llm_labels`` (judgments with ``file``) replace the set's LLM labels, refused when they come from another
    judge than the set records unless ``other_judge`` (module docstring). A run that lacks queries of the split is
    refused unless ``options`` chose the contract's ``missing`` (the set's own convention does not count, as in
    ``compare --set``); ``sources``: run name -> its file, named then."""
    check_pairs(pairs or ())
    options = options or ContractOptions()
    contract, overridden = options.applied_to(frozen.contract.evaluation, override=override_contract)
    given = {"chosen": tuple(options.given()), "sources": sources, "split": split}
    if frozen.sample is not None:
        if interval != "t":
            raise InputError(DOCUMENT_INTERVALS, str(frozen.path))
        if llm_labels is not None:
            raise InputError("the set was frozen with a document sample and holds its LLM grades: give no --llm",
                             str(frozen.path))
        return _sample_estimate(frozen, runs, split, metrics, pairs, planned, exploratory, alpha, level, contract,
                                overridden, given)
    files = (str(frozen.path / LABELS_FILE),)
    labels = frozen.labels.assign(file=files[0])
    caveats = ["CONTRACT OVERRIDDEN: " + ", ".join(overridden)] if overridden else []
    if llm_labels is not None:
        caveats += _judge_changes(frozen, llm_labels, other_judge)
        labels = pd.concat([labels[labels["kind"] != "llm"], llm_labels], ignore_index=True)
        files = (*files, *dict.fromkeys(llm_labels["file"]))
    record = set_slice(frozen, split, labels)
    if record is None:
        return None
    every = set(record.queries["query_id"])
    human = grades_of(labels[(labels["kind"] == "human") & labels["query_id"].isin(record.slice)], files[:1])
    llm = grades_of(labels[(labels["kind"] == "llm") & labels["query_id"].isin(every)], files[1:] or files)
    split_ids = select_split(frozen.queries, split)["query_id"]
    human_only = set(labels.loc[(labels["kind"] == "human") & labels["query_id"].isin(split_ids), "query_id"]) - every
    if human_only:
        caveats.append(f"{len(human_only)} human-graded queries of the split have no LLM grade and were left out")
    pairs = [pair for pair in frozen.planned if set(pair) <= set(runs)] if pairs is None else pairs
    family = set_family(len(pairs), planned=planned, frozen=frozen, split=split)
    return estimate_runs(runs, human, llm, record, metrics=metrics or [frozen.contract.headline],
                         contract=contract, pairs=pairs, family=family, exploratory=exploratory,
                         alpha=alpha, level=level, interval=interval, caveats=caveats, record_source=files[0],
                         **given)


def _judge_changes(frozen: FrozenSet, llm_labels: pd.DataFrame, other_judge: bool) -> list[str]:
    """Refuse LLM labels of another judge than the set records (module docstring), or with ``other_judge`` the
    caveat that says what changed."""
    recorded, given = recorded_judges(frozen.manifest, frozen.labels), judge_identities(llm_labels)
    if set(given) == set(recorded):
        return []
    was = "; ".join(judge.annotator for judge in recorded) or "none (no LLM labels)"
    now = "; ".join(judge.annotator for judge in given)
    changed = [change for old, new in zip(recorded, given, strict=False) for change in old.changes(new)]
    what = f" ({'; '.join(changed)})" if changed else ""
    if not other_judge:
        raise InputError(f"these LLM labels come from another judge than the set's calibration: {now}, the set "
                         f"records {was}{what}; compare them first (evalset judge recheck) and give --other-judge "
                         "to estimate with them", str(llm_labels["file"].iloc[0]))
    return [f"JUDGE CHANGED: the set's calibration judge is {was}, these LLM labels are {now}{what}: the set's "
            "agreement summary and earlier estimates are of the recorded judge"]


def _sample_estimate(frozen: FrozenSet, runs: Mapping[str, pd.DataFrame], split: str, metrics: list[str] | None,
                     pairs: list[tuple[str, str]] | None, planned: int | None, exploratory: bool, alpha: float,
                     level: float, contract: EvaluationContract, overridden: list[str],
                     given: dict) -> DocumentReport:
    """The document design's estimate of a set that records its sample (module docstring)."""
    queries = select_split(frozen.queries, split)
    refuse_traffic_strata(frozen.contract.weighting, queries["stratum"].nunique(), str(frozen.path))
    record = frozen.sample
    keep = set(queries["query_id"])
    record = replace(record, pairs=record.pairs[record.pairs["query_id"].isin(keep)].reset_index(drop=True))
    if record.pairs.empty:
        raise InputError(f"the document sample holds no query of the split {split!r}", str(frozen.path))
    labels = frozen.labels[frozen.labels["query_id"].isin(keep)]
    files = [str(frozen.path / QRELS_FILE), str(frozen.path / LABELS_FILE)]
    human = frozen.qrels[frozen.qrels["query_id"].isin(keep)][["query_id", "doc_id", "grade"]]
    llm = labels[labels["kind"] == "llm"]
    judges = None if llm.empty else llm.rename(columns={"annotator": "judge"})[["query_id", "doc_id", "judge",
                                                                                  "grade"]]
    pairs = [pair for pair in frozen.planned if set(pair) <= set(runs)] if pairs is None else pairs
    report = sample_report(runs, record, human, judges, record_path=str(frozen.path / RECORD_NAME),
                           files={"human": files[:1], "llm": files[1:] if judges is not None else []},
                           metrics=metrics or [frozen.contract.headline], pairs=pairs,
                           family=set_family(len(pairs), planned=planned, frozen=frozen, split=split),
                           exploratory=exploratory, alpha=alpha, level=level, contract=contract, **given)
    if overridden:
        report.estimate.caveats.insert(0, "CONTRACT OVERRIDDEN: " + ", ".join(overridden))
    return report


NO_LLM_PART = ("the set has no LLM-graded part on this split to estimate: it needs LLM labels (freeze --llm) "
               "on every query and human grades on 2 or more of them, not all; score the set instead")
