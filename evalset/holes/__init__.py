"""The holes: the pairs of the runs' top k that the judgments do not grade. Every hole a score, a comparison, a
pool, a movement or a sample speaks of is found here, and what it could cost is bounded here.

- :mod:`evalset.holes.find`: the runs' top k graded (judged or a hole), the holes found (:class:`Holes`: the one
  type of them), the depth k, and holes filled at a grade.
- :mod:`evalset.holes.bounds`: per run scored on a set, its holes and its score with every hole relevant
  (``evalset score --set``).
- :mod:`evalset.holes.comparison`: per comparison, the range of its difference over fills of the holes and whether
  its verdict could flip (``evalset holes``, ``compare``'s established verdicts).
- :mod:`evalset.holes.pool`: the pool folder of the holes that settles the comparisons.

A seeded sample of a set's holes, sized for a precision, and the full-judgment score estimated from it are the hole
design's (:mod:`evalset.estimate.documents.holes`, :mod:`evalset.estimate.documents.holesizing`): what the sample
is drawn from is :func:`find_holes`'s.
"""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.holes.find": ("Holes", "depth_of", "filled_qrels", "find_holes", "graded_top_k", "judged_pairs",
                           "top_grade"),
    "evalset.holes.bounds": ("RunBounds", "run_bounds"),
    "evalset.holes.comparison": ("ComparisonBounds", "comparison_bounds"),
    "evalset.holes.pool": ("HolesPool", "format_holes", "holes_pool"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
