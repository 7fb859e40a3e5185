"""The evaluation room: the one door to per-query values.

:class:`Evaluation` resolves the contract once (on qrels, or on a frozen set's split under the override rule) and
holds the prepared qrels; :func:`per_query_values` scores runs given as files, folders or frames (streamed when
big) into a :class:`PerQuery` with the defined, undefined and missing queries, judged@k beside nDCG@k, and the
set's strata and weights. Every analysis (score, compare, explain, holes, plan, report, estimate,
reusability, agreement's system rankings) gets its values here; ``tests/test_architecture.py`` checks it.
"""

from evalset.evaluation.grades import unusual_grades, unusual_grades_note
from evalset.evaluation.missing import judged_count, missing_notes, missing_queries
from evalset.evaluation.notes import input_notes
from evalset.evaluation.scope import Evaluation
from evalset.evaluation.values import PerQuery, metric_spellings, per_query_values, refuse_geometric

__all__ = ["Evaluation", "PerQuery", "input_notes", "judged_count", "metric_spellings", "missing_notes",
           "missing_queries", "per_query_values", "refuse_geometric", "unusual_grades", "unusual_grades_note"]
