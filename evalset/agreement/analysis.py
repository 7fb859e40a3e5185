"""Agreement between annotators: every pair's kappas with intervals, Krippendorff's alpha, the calibration of
the LLM judges against the humans, system-ranking agreement with each LLM judge's favouritism of runs, and the
disagreements table.

Annotators are matched on ``(query_id, doc_id)``; every pair is scored on the items both graded.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from evalset.agreement.favouritism import Favouritism, favouritism_pairs
from evalset.agreement.kappa import (
    asymptotic_se,
    binarise,
    disagreement_weights,
    kappa_from_confusion,
    landis_koch,
    query_bootstrap,
    wald_interval,
)
from evalset.agreement.systems import RankingAgreement, system_rankings
from evalset.contract import AGREEMENT_REPORT_RULES, DEFAULT_METRIC, DEFAULT_SEED, KAPPA_KINDS, EvaluationContract
from evalset.errors import InputError
from evalset.judgments.scale import OutOfScale, apply_scale
from evalset.params import validate_params

KAPPA_KEYS = {"unweighted": "kappa", "linear": "kappa_linear", "quadratic": "kappa_quadratic"}


# ------------------------------------------------------------------------------------------------ the items
@dataclass(frozen=True)
class Annotations:
    """Grades as a matrix: ``positions[a, i]`` is annotator a's grade of item i as a position on the scale
    (-1: not graded). Items are the distinct ``(query_id, doc_id)`` pairs, in order of first appearance."""

    scale: tuple[int, ...]
    annotators: tuple[str, ...]
    kinds: tuple[str, ...]
    query_ids: np.ndarray
    doc_ids: np.ndarray
    item_query: np.ndarray
    queries: np.ndarray
    positions: np.ndarray

    @classmethod
    def from_grades(cls, grades: pd.DataFrame, scale: Sequence[int]) -> Annotations:
        """From on-scale grades (``query_id, doc_id, annotator, kind, grade``)."""
        scale = tuple(sorted(scale))
        annotator_code, annotators = pd.factorize(grades["annotator"], sort=False)
        kinds = grades[["annotator", "kind"]].drop_duplicates()
        mixed = kinds[kinds["annotator"].duplicated(keep=False)]
        if len(mixed):
            name = mixed["annotator"].iloc[0]
            both = " and ".join(sorted(mixed["kind"][mixed["annotator"] == name]))
            raise InputError(f"annotator {name} is given as both {both}")
        kind_of = dict(zip(kinds["annotator"], kinds["kind"], strict=True))
        item_code = grades.groupby(["query_id", "doc_id"], sort=False).ngroup().to_numpy()
        first = grades.drop_duplicates(["query_id", "doc_id"])  # the items, in the order ngroup numbers them
        query_ids = first["query_id"].astype(str).to_numpy(dtype=object)
        doc_ids = first["doc_id"].astype(str).to_numpy(dtype=object)
        item_query, queries = pd.factorize(pd.Series(query_ids, dtype=object), sort=False)
        positions = np.full((len(annotators), len(first)), -1, dtype=np.int8)
        positions[annotator_code, item_code] = np.searchsorted(scale, grades["grade"].to_numpy())
        return cls(scale, tuple(annotators), tuple(kind_of[name] for name in annotators), query_ids, doc_ids,
                   np.asarray(item_query), np.asarray(queries, dtype=object), positions)


# ------------------------------------------------------------------------------------------------ the pairs
@dataclass(frozen=True)
class KappaEstimate:
    """One kappa with its two intervals and reading."""

    value: float
    ci_asymptotic: tuple[float, float]
    ci_bootstrap: tuple[float, float]
    bootstrap_undefined: int
    reading: str


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of annotators ``a`` and ``b`` on the ``n`` items (``queries`` queries) both graded.

    ``confusion[i][j]`` counts items a graded ``scale[i]`` and b graded ``scale[j]``. ``kappas`` holds the
    unweighted, linear and quadratic kappa; ``binary`` the unweighted kappa of "grade >= level" per level.
    """

    a: str
    b: str
    kind_a: str
    kind_b: str
    n: int
    queries: int
    raw_agreement: float
    kappas: dict[str, KappaEstimate]
    binary: dict[int, KappaEstimate]
    confusion: list[list[int]]
    notes: list[str] = field(default_factory=list)


def _estimate(confusion: np.ndarray, weights: np.ndarray, value: float, interval, level: float) -> KappaEstimate:
    se = asymptotic_se(confusion, weights)
    return KappaEstimate(value, wald_interval(value, se, level), (interval.low, interval.high), interval.undefined,
                         landis_koch(value))


def pair_confusions(annotations: Annotations, i: int, j: int) -> np.ndarray:
    """``(Q, K, K)``: the confusion matrix of annotators ``i`` (rows) and ``j`` (columns) on each query where they
    have an item in common (queries in order of first appearance)."""
    size = len(annotations.scale)
    first, second = annotations.positions[i], annotations.positions[j]
    both = (first >= 0) & (second >= 0)
    cells = (annotations.item_query[both].astype(np.int64) * size * size + first[both].astype(np.int64) * size
             + second[both])
    per_query = np.bincount(cells, minlength=len(annotations.queries) * size * size).reshape(-1, size, size)
    return per_query[per_query.sum(axis=(1, 2)) > 0]


def pair_agreements(annotations: Annotations, pairs: Sequence[tuple[int, int]] | None = None,
                    resamples: int = 1000, level: float = 0.95, seed: int = DEFAULT_SEED) -> list[PairAgreement]:
    """Kappas, intervals and confusion matrices of the given pairs of annotator indices (default: every pair
    ``i < j`` in input order)."""
    count = len(annotations.annotators)
    pairs = list(pairs) if pairs is not None else [(i, j) for i in range(count) for j in range(i + 1, count)]
    scale, size = annotations.scale, len(annotations.scale)
    weights = [disagreement_weights(size, kind) for kind in KAPPA_KINDS]
    levels = list(range(1, size))
    binary_weights = disagreement_weights(2, "unweighted")
    statistics = [(_identity, w) for w in weights] + [(functools.partial(binarise, level_index=k), binary_weights)
                                                      for k in levels]
    per_query = [pair_confusions(annotations, i, j) for i, j in pairs]
    intervals = query_bootstrap(per_query, statistics, resamples, level, seed)
    results = []
    for (i, j), confusions, pair_intervals in zip(pairs, per_query, intervals, strict=True):
        confusion = confusions.sum(axis=0) if len(confusions) else np.zeros((size, size), dtype=np.int64)
        n = int(confusion.sum())
        kappas = {kind: _estimate(confusion, w, float(kappa_from_confusion(confusion, w)), interval, level)
                  for kind, w, interval in zip(KAPPA_KINDS, weights, pair_intervals, strict=False)}
        binary = {}
        for k, interval in zip(levels, pair_intervals[len(weights):], strict=True):
            collapsed = binarise(confusion, k)
            value = float(kappa_from_confusion(collapsed, binary_weights))
            binary[scale[k]] = _estimate(collapsed, binary_weights, value, interval, level)
        a, b = annotations.annotators[i], annotations.annotators[j]
        results.append(PairAgreement(
            a=a, b=b, kind_a=annotations.kinds[i], kind_b=annotations.kinds[j], n=n, queries=len(confusions),
            raw_agreement=float(np.trace(confusion) / n) if n else math.nan, kappas=kappas, binary=binary,
            confusion=confusion.astype(int).tolist(), notes=_pair_notes(a, b, confusion)))
    return results


def _identity(confusion: np.ndarray) -> np.ndarray:
    return confusion


def _pair_notes(a: str, b: str, confusion: np.ndarray) -> list[str]:
    if confusion.sum() == 0:
        return ["no item in common: nothing to compare"]
    notes = []
    constant = [name for name, margin in ((a, confusion.sum(axis=1)), (b, confusion.sum(axis=0)))
                if np.count_nonzero(margin) == 1]
    if constant:
        notes.append(f"{' and '.join(constant)} gave one grade only on these items: kappa is 0 by construction "
                     "(observed = chance agreement whatever the other did), or undefined when both gave the same "
                     "one; read the raw agreement")
    return notes


# -------------------------------------------------------------------------------------------------- alpha
def alpha_ordinal(annotations: Annotations) -> float:
    """Krippendorff's alpha, ordinal metric, over all annotators (the ``krippendorff`` package), missing grades
    allowed; items graded once add nothing. NaN when fewer than two grades are pairable or all agree trivially."""
    if len(annotations.annotators) < 2 or annotations.positions.shape[1] == 0:
        return math.nan
    values = np.where(annotations.positions >= 0, np.asarray(annotations.scale)[annotations.positions], np.nan)
    pairable = (annotations.positions >= 0).sum(axis=0) >= 2
    if not pairable.any():
        return math.nan
    try:
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore")
            value = krippendorff.alpha(reliability_data=values[:, pairable].astype(np.float64),
                                       value_domain=list(annotations.scale), level_of_measurement="ordinal")
    except (ValueError, ZeroDivisionError):
        return math.nan
    return float(value)


# ------------------------------------------------------------------------------------------------ calibration
def calibration(pairs: Sequence[PairAgreement], kappa: str = "quadratic",
                humans: Sequence[str] | None = None) -> dict[str, Any]:
    """The LLM judges against the humans, on one kappa kind (default quadratic).

    The human range runs from the lowest to the highest human-vs-human kappa (point estimates; each with its
    bootstrap interval in ``human_pairs``). An LLM-vs-human kappa is "within the human range" when its bootstrap
    interval reaches into the range, "below" ("above") when the whole interval lies below (above) it. With one
    human annotator (or no human pair with a defined kappa) the human range is unknown and so is the verdict.
    ``humans`` names the human annotators (default: those in ``pairs``).
    """
    human_pairs = [p for p in pairs if p.kind_a == p.kind_b == "human"]
    llm_pairs = [p for p in pairs if {p.kind_a, p.kind_b} == {"human", "llm"}]
    if humans is None:  # the human annotators that occur in a pair, in order of appearance
        named = [name for p in pairs for name, kind in ((p.a, p.kind_a), (p.b, p.kind_b)) if kind == "human"]
        humans = list(dict.fromkeys(named))
    humans = list(humans)
    defined = [p.kappas[kappa].value for p in human_pairs if not math.isnan(p.kappas[kappa].value)]
    if defined:
        low, high = min(defined), max(defined)
        note = f"human range from {len(defined)} human pair(s)"
    else:
        low = high = math.nan
        note = ("human range unknown: one human annotator only" if len(humans) == 1 else
                "human range unknown: no human annotator" if not humans else
                "human range unknown: no human pair with a defined kappa")
    judges = []
    for p in llm_pairs:
        llm, human = (p.a, p.b) if p.kind_a == "llm" else (p.b, p.a)
        estimate = p.kappas[kappa]
        judges.append({"llm": llm, "human": human, "n": p.n, "kappa": estimate.value,
                       "ci_bootstrap": estimate.ci_bootstrap, "reading": estimate.reading,
                       "verdict": _verdict(estimate, low, high, note)})
    return {
        "kappa": KAPPA_KEYS[kappa],
        "humans": humans,
        "human_pairs": [{"a": p.a, "b": p.b, "n": p.n, "kappa": p.kappas[kappa].value,
                         "ci_bootstrap": p.kappas[kappa].ci_bootstrap} for p in human_pairs],
        "human_range": None if math.isnan(low) else (low, high),
        "human_range_note": note,
        "judges": judges,
    }


def _verdict(estimate: KappaEstimate, low: float, high: float, note: str) -> str:
    if math.isnan(estimate.value):
        return "undefined kappa"
    if math.isnan(low):
        return note
    ci_low, ci_high = estimate.ci_bootstrap
    if math.isnan(ci_low):
        ci_low = ci_high = estimate.value
    if ci_high < low:
        return "below the human range"
    if ci_low > high:
        return "above the human range"
    return "within the human range"


# ------------------------------------------------------------------------------------------ disagreements
def disagreements(annotations: Annotations) -> pd.DataFrame:
    """Items graded by at least two annotators who differ, largest grade gap (max - min grade) first, then the
    larger spread (standard deviation of the grades), then query and document id.

    Columns: ``query_id, doc_id, gap, min_grade, max_grade, annotators`` (how many graded it), then each
    annotator's grade (``<NA>`` where not graded), in a column named after the annotator (``NAME (grade)`` when
    the name is one of the columns before).
    """
    scale = np.asarray(annotations.scale)
    graded = annotations.positions >= 0
    values = np.where(graded, scale[np.maximum(annotations.positions, 0)], np.nan)
    count = graded.sum(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        high, low, spread = np.nanmax(values, axis=0), np.nanmin(values, axis=0), np.nanstd(values, axis=0)
    keep = (count >= 2) & (high > low)
    frame = pd.DataFrame({
        "query_id": annotations.query_ids[keep], "doc_id": annotations.doc_ids[keep],
        "gap": (high - low)[keep].astype(np.int64), "min_grade": low[keep].astype(np.int64),
        "max_grade": high[keep].astype(np.int64), "annotators": count[keep].astype(np.int64),
        "_spread": spread[keep],
    })
    for index, name in enumerate(annotations.annotators):
        column = f"{name} (grade)" if name in frame.columns else name  # an annotator called "gap", say
        frame[column] = pd.array(np.where(graded[index, keep], values[index, keep], np.nan), dtype="Int64")
    frame = frame.sort_values(["gap", "_spread", "query_id", "doc_id"], ascending=[False, False, True, True],
                              kind="stable")
    return frame.drop(columns="_spread").reset_index(drop=True)


def with_texts(table: pd.DataFrame, queries: pd.DataFrame | None = None,
               corpus: pd.DataFrame | None = None) -> pd.DataFrame:
    """Add ``query`` and ``text`` columns (after the ids) from a queries table and a corpus, when given;
    a missing text is left empty."""
    out = table.copy()
    position = 2
    if queries is not None:
        out.insert(position, "query", out["query_id"].map(dict(zip(queries["query_id"], queries["query"],
                                                                   strict=True))).fillna(""))
        position += 1
    if corpus is not None:
        out.insert(position, "text", out["doc_id"].map(dict(zip(corpus["doc_id"], corpus["text"],
                                                                strict=True))).fillna(""))
    return out


# ---------------------------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class AgreementReport:
    """The statistics ``evalset agreement`` reports (:func:`agreement_report`); :class:`evalset.agreement.Agreement`
    renders them."""

    scale: tuple[int, ...]
    kappa: str
    level: float
    resamples: int
    seed: int
    annotators: list[dict[str, Any]]
    pairs: list[PairAgreement]
    alpha_ordinal: float
    calibration: dict[str, Any]
    disagreements: pd.DataFrame
    rankings: list[RankingAgreement] = field(default_factory=list)
    measure: str | None = None
    run_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    favouritism: list[Favouritism] = field(default_factory=list)
    favouritism_notes: list[str] = field(default_factory=list)

    def matrix(self, kind: str | None = None) -> pd.DataFrame:
        """The pairwise kappa matrix (annotators x annotators, 1 on the diagonal, NaN where undefined)."""
        kind = kind or self.kappa
        names = [a["annotator"] for a in self.annotators]
        matrix = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
        for pair in self.pairs:
            matrix.loc[pair.a, pair.b] = matrix.loc[pair.b, pair.a] = pair.kappas[kind].value
        return matrix


@validate_params(AGREEMENT_REPORT_RULES)
def agreement_report(
    grades: pd.DataFrame,
    scale: Sequence[int],
    *,
    out_of_scale: OutOfScale = "error",
    kappa: str = "quadratic",
    resamples: int = 1000,
    level: float = 0.95,
    seed: int = DEFAULT_SEED,
    runs: Mapping[str, pd.DataFrame] | None = None,
    measure: str = DEFAULT_METRIC,
    contract: EvaluationContract | None = None,
    input_counts: Mapping[str, Mapping[str, int]] | None = None,
) -> AgreementReport:
    """Agreement of every pair of annotators in ``grades`` (``query_id, doc_id, annotator, kind, grade[, file]``).

    Parameters
    ----------
    scale
        The guideline's full scale (e.g. ``[0, 1, 2, 3]``): confusion matrices and weights span all of it.
    out_of_scale
        See :func:`apply_scale`.
    kappa
        The kind (unweighted, linear, quadratic) of the matrix, the heatmap and the calibration verdict;
        every pair reports all three.
    resamples, level, seed
        The query bootstrap: resamples (0: no bootstrap interval), two-sided level, seed of the numpy Generator.
        Every parameter named in :data:`evalset.contract.AGREEMENT_REPORT_RULES` is checked against its rule.
    runs
        Named runs: each annotator's grades become qrels and the system rankings are compared (``measure``,
        scored under ``contract`` by the shared metrics module), and the favouritism of each LLM annotator
        against each human one is measured (:mod:`evalset.agreement.favouritism`, its gaps at ``level``).
    input_counts
        Per-annotator counts from reading (``unjudged``, ``collapsed_duplicates``), shown in the report.
    """
    if "file" not in grades:
        grades = grades.assign(file="<DataFrame>")
    annotators = list(dict.fromkeys(grades["annotator"]))
    if len(annotators) < 2:
        raise InputError(f"agreement compares two annotators or more, and the grades hold {len(annotators)} "
                         f"({', '.join(map(str, annotators)) or 'none'}): give another annotator's grades of the same "
                         "pairs")
    kept, scale_counts = apply_scale(grades, scale, out_of_scale)
    if kept.empty:
        raise InputError("no grades to compare: the inputs hold no judgment" + (" on the scale" if len(grades) else ""))
    annotations = Annotations.from_grades(kept, scale)
    pairs = pair_agreements(annotations, resamples=resamples, level=level, seed=seed)
    systems: dict[str, Any] = {}
    if runs:
        by_annotator = {name: group for name, group in kept.groupby("annotator", sort=False)}
        scores, rankings = system_rankings(by_annotator, runs, measure, contract)
        favoured, favour_notes = favouritism_pairs(scores, dict(zip(annotations.annotators, annotations.kinds,
                                                                    strict=True)), level=level, measure=measure)
        systems = {"rankings": rankings, "measure": measure,
                   "run_scores": {name: table.mean().to_dict() for name, table in scores.items()},
                   "favouritism": favoured, "favouritism_notes": favour_notes}
    return AgreementReport(
        scale=annotations.scale, kappa=kappa, level=level, resamples=resamples, seed=seed,
        annotators=_annotator_rows(annotations, kept, scale_counts, input_counts or {}),
        pairs=pairs, alpha_ordinal=alpha_ordinal(annotations),
        calibration=calibration(pairs, kappa, [n for n, k in zip(annotations.annotators, annotations.kinds,
                                                                  strict=True) if k == "human"]),
        disagreements=disagreements(annotations), **systems,
    )


def _annotator_rows(annotations: Annotations, grades: pd.DataFrame, scale_counts: Mapping[str, Mapping[str, int]],
                    input_counts: Mapping[str, Mapping[str, int]]) -> list[dict[str, Any]]:
    pairs = grades[["annotator", "file"]].drop_duplicates()
    files = {name: list(group) for name, group in pairs.groupby("annotator", sort=False)["file"]}
    rows = []
    for index, name in enumerate(annotations.annotators):
        graded = annotations.positions[index]
        counts = np.bincount(graded[graded >= 0], minlength=len(annotations.scale))
        rows.append({
            "annotator": name, "kind": annotations.kinds[index], "files": files[name],
            "items": int((graded >= 0).sum()),
            "grades": {str(g): int(c) for g, c in zip(annotations.scale, counts, strict=True)},
            "clipped": int(scale_counts.get(name, {}).get("clipped", 0)),
            "dropped": int(scale_counts.get(name, {}).get("dropped", 0)),
            **{key: int(value) for key, value in input_counts.get(name, {}).items()},
        })
    return rows
