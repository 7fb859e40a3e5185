"""Do two annotators rank systems alike? Kendall's tau and tau_AP between system rankings.

Each annotator's grades become qrels; every run is scored per query through the evaluation room. For a pair
of annotators, a run's score is its mean over the queries defined under *both* annotators' qrels (a query with
no relevant document under one of them has no nDCG there), so that both rankings average the same queries.

- Kendall's tau is scipy's ``kendalltau`` (tau-b: ties in either ranking are accounted for).
- tau_AP (Yilmaz, Aslam & Robertson 2008) weighs swaps near the top more: with the runs ordered by the
  *estimate* ranking, ``tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1``, where ``C(i)`` counts the runs
  above position i that the *reference* ranking also places above the run at i. It is asymmetric: a pair reports
  it with the first annotator as reference (``tau_ap``) and the other way round (``tau_ap_reverse``). tau_AP needs
  strict orders: equal scores are ordered by run name, ascending.
- Ranks are 1 for the best run; the runs that move most are those with the largest absolute rank change
  (ties in score share the lower rank: scipy's ``rankdata(method="min")`` on negated scores).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evalset.contract import EvaluationContract
from evalset.evaluation import Evaluation, per_query_values
from evalset.metrics import Measure, parse_measure


def tau_ap(reference: np.ndarray, estimate: np.ndarray, names: list[str] | None = None) -> float:
    """tau_AP of the ranking by ``estimate`` scores against the ranking by ``reference`` scores (higher is better).

    Equal scores are ordered by ``names`` ascending (default: position). NaN for fewer than 2 systems.
    """
    reference = np.asarray(reference, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)
    count = len(reference)
    if count < 2:
        return math.nan
    names = list(names) if names is not None else [f"{i:09d}" for i in range(count)]
    name_rank = np.argsort(np.argsort(np.array(names, dtype=object)))

    def positions(scores: np.ndarray) -> np.ndarray:
        order = np.lexsort((name_rank, -scores))  # score descending, then name ascending
        position = np.empty(count, dtype=np.int64)
        position[order] = np.arange(count)
        return position

    true_position = positions(reference)
    by_estimate = np.argsort(positions(estimate))
    total = 0.0
    for i in range(1, count):
        above = by_estimate[:i]
        correct = int(np.sum(true_position[above] < true_position[by_estimate[i]]))
        total += correct / i
    return 2.0 * total / (count - 1) - 1.0


def per_query_scores(grades: pd.DataFrame, runs: Mapping[str, pd.DataFrame], measure: Measure,
                     contract: EvaluationContract) -> pd.DataFrame:
    """One annotator's grades (``query_id, doc_id, grade``) as qrels: per-query scores, queries x runs."""
    return per_query_values(Evaluation.on_qrels(grades, contract), runs, [str(measure)]).values(str(measure))


@dataclass(frozen=True)
class RankingAgreement:
    """System-ranking agreement of one pair of annotators."""

    a: str
    b: str
    queries: int
    runs: int
    kendall_tau: float
    kendall_p: float
    tau_ap: float
    tau_ap_reverse: float
    scores_a: dict[str, float] = field(repr=False)
    scores_b: dict[str, float] = field(repr=False)
    moves: list[dict[str, Any]] = field(default_factory=list)


def ranking_agreement(a: str, b: str, scores_a: pd.DataFrame, scores_b: pd.DataFrame,
                      largest_moves: int = 5) -> RankingAgreement:
    """Compare the system rankings two annotators' per-query scores give, on the queries both define."""
    defined_a = scores_a.notna().all(axis=1)
    defined_b = scores_b.notna().all(axis=1)
    common = sorted(set(defined_a[defined_a].index) & set(defined_b[defined_b].index))
    names = list(scores_a.columns)
    mean_a = scores_a.loc[common, names].mean().to_numpy(dtype=np.float64)
    mean_b = scores_b.loc[common, names].mean().to_numpy(dtype=np.float64)
    if len(common) < 1 or len(names) < 2:
        tau, p = math.nan, math.nan
    else:
        result = stats.kendalltau(mean_a, mean_b)
        tau, p = float(result.statistic), float(result.pvalue)
    rank_a = stats.rankdata(-mean_a, method="min") if common else np.full(len(names), np.nan)
    rank_b = stats.rankdata(-mean_b, method="min") if common else np.full(len(names), np.nan)
    moved = pd.DataFrame({"run": names, "score_a": mean_a, "score_b": mean_b, "rank_a": rank_a, "rank_b": rank_b})
    moved["shift"] = moved["rank_b"] - moved["rank_a"]
    moved = moved.assign(size=moved["shift"].abs()).sort_values(["size", "run"], ascending=[False, True],
                                                                 kind="stable")
    moves = [{"run": row.run, "rank_a": int(row.rank_a), "rank_b": int(row.rank_b), "shift": int(row.shift),
              "score_a": float(row.score_a), "score_b": float(row.score_b)}
             for row in moved.head(largest_moves).itertuples() if common and row.size > 0]
    defined = bool(common)
    return RankingAgreement(
        a=a, b=b, queries=len(common), runs=len(names), kendall_tau=tau, kendall_p=p,
        tau_ap=tau_ap(mean_a, mean_b, names) if defined else math.nan,
        tau_ap_reverse=tau_ap(mean_b, mean_a, names) if defined else math.nan,
        scores_a=dict(zip(names, map(float, mean_a), strict=True)),
        scores_b=dict(zip(names, map(float, mean_b), strict=True)),
        moves=moves,
    )


def system_rankings(grades_by_annotator: Mapping[str, pd.DataFrame], runs: Mapping[str, pd.DataFrame],
                    measure: Measure | str = "ndcg@10", contract: EvaluationContract | None = None,
                    largest_moves: int = 5) -> tuple[dict[str, pd.DataFrame], list[RankingAgreement]]:
    """Score every run under each annotator's qrels and compare the rankings of every pair of annotators.

    Returns the per-query scores of each annotator (queries x runs) and one :class:`RankingAgreement` per pair,
    in the order of ``grades_by_annotator``.
    """
    measure = measure if isinstance(measure, Measure) else parse_measure(measure)
    contract = contract or EvaluationContract()
    scores = {name: per_query_scores(grades, runs, measure, contract) for name, grades in grades_by_annotator.items()}
    names = list(scores)
    pairs = [ranking_agreement(a, b, scores[a], scores[b], largest_moves)
             for i, a in enumerate(names) for b in names[i + 1:]]
    return scores, pairs
