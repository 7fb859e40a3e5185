"""``evalset compare``: a baseline against candidates with a verdict (:mod:`evalset.comparing.compare`), and behind
a comparison (``--holes`` and ``--why``) what the judgments do not know and why each query moved.

- :mod:`evalset.comparing.compare`: the comparisons in their family, with the per-query values they rest on.
- :mod:`evalset.comparing.topk`: the top k of the runs compared, each document with its grade (or unjudged).
- :mod:`evalset.comparing.holes`: the unjudged documents of the top k (the holes), the range of the difference
  over extreme fills of them, whether the verdict could flip, and the pool folder that settles it.
- :mod:`evalset.comparing.explain`: both added to ``compare``'s comparisons, printed and as JSON.
- :mod:`evalset.comparing.many`: many systems at once (``--all``, ``--baseline``): every pair or every run against
  one, family-wise corrected (randomised Tukey HSD, Holm, Bonferroni), with the groups of runs not distinguishable.
- :mod:`evalset.comparing.movement`: each query's change classified (relevant documents lost, rescued, promoted,
  demoted; an unjudged document entering; a tie artefact), and the movements that cancelled.
"""

from evalset.comparing.compare import Comparisons, compare_runs
from evalset.comparing.explain import ExplainedComparisons, explain_comparisons
from evalset.comparing.holes import ComparisonHoles, HolesPool, comparison_holes, format_holes, holes_pool
from evalset.comparing.many import ManyComparisons, PairVerdict, compare_many
from evalset.comparing.movement import MOVEMENT_CLASSES, QueryMovements, query_movements
from evalset.comparing.topk import depth_of, graded_top_k

__all__ = ["MOVEMENT_CLASSES", "ComparisonHoles", "Comparisons", "ExplainedComparisons", "HolesPool",
           "ManyComparisons", "PairVerdict", "QueryMovements", "compare_many", "compare_runs", "comparison_holes",
           "depth_of", "explain_comparisons", "format_holes", "graded_top_k", "holes_pool", "query_movements"]
