"""``evalset score``: runs scored on qrels or a frozen set, the score table with judged@k beside nDCG@k, the
means per stratum and across strata, and the printed forms (:mod:`~evalset.scoring.scores`)."""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.scoring.scores": ("DEFAULT_METRICS", "RunScores", "score", "score_runs"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
