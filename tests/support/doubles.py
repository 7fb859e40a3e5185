"""pytrec_eval builds trec_eval 9, which compares a run's scores as 32-bit floats; evalset, as trec_eval 10, compares
them as doubles. :func:`ordered_as_doubles` gives pytrec_eval a run whose scores it orders as doubles order the
originals: each score becomes minus its dense rank among its query's distinct doubles (small integers, exact as
floats), so equal doubles stay tied (trec_eval's doc id rule breaks them) and no two distinct ones do."""


def ordered_as_doubles(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """``{query: {doc: score}}`` with each score replaced by minus its dense rank, highest first."""
    ranked = {}
    for query, scores in run.items():
        dense = {score: rank for rank, score in enumerate(sorted(set(scores.values()), reverse=True))}
        ranked[query] = {doc: -float(dense[score]) for doc, score in scores.items()}
    return ranked
