"""Do two annotators rank systems alike? Kendall's tau and tau_AP between system rankings.

Each annotator's grades become qrels; every run is scored per query through the evaluation room. For a pair
of annotators, a run's score is its mean over the queries defined under *both* annotators' qrels (a query with
no relevant document under one of them has no nDCG there), so that both rankings average the same queries.

- Kendall's tau, tau_AP and the ranks are :mod:`evalset.stats.rankings`'. tau_AP is asymmetric: a pair reports it
  with the first annotator as reference (``tau_ap``) and the other way round (``tau_ap_reverse``).
- The runs that move most are those with the largest absolute rank change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_METRIC, EvaluationContract
from evalset.evaluation import Evaluation, per_query_values, refuse_geometric
from evalset.metrics import Measure, parse_measure
from evalset.stats.rankings import kendall_tau, system_ranks, tau_ap


def per_query_scores(grades: pd.DataFrame, runs: Mapping[str, pd.DataFrame], measure: Measure,
                     contract: EvaluationContract) -> pd.DataFrame:
    """One annotator's grades (``query_id, doc_id, grade``) as qrels: per-query scores, queries x runs."""
    refuse_geometric(str(measure), "agreement's system rankings")
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
    tau, p = kendall_tau(mean_a, mean_b) if common else (math.nan, math.nan)
    rank_a = system_ranks(mean_a) if common else np.full(len(names), np.nan)
    rank_b = system_ranks(mean_b) if common else np.full(len(names), np.nan)
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
                    measure: Measure | str = DEFAULT_METRIC, contract: EvaluationContract | None = None,
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
