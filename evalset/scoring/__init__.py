"""``evalset score``: runs scored on qrels or a frozen set, the score table with judged@k beside nDCG@k, the
means per stratum and across strata, and the printed forms (:mod:`~evalset.scoring.scores`)."""

from evalset.scoring.scores import DEFAULT_METRICS, RunScores, score_runs

__all__ = ["DEFAULT_METRICS", "RunScores", "score_runs"]
