"""``evalset compare``: a baseline against candidates with a verdict (:mod:`evalset.comparing.compare`); and behind
a comparison, ``evalset holes`` (what the judgments do not know) and ``evalset explain`` (why each query moved).

- :mod:`evalset.comparing.spec`: what a comparison is asked (:class:`CompareSpec`), its rules declared once.
- :mod:`evalset.comparing.compare`: the comparisons in their family, with the per-query values they rest on.
- :mod:`evalset.comparing.setlog`: a set's comparison family, its log read (and, for ``compare``, appended).
- the holes of a comparison (the range of its difference over fills of them, whether the verdict could flip, and
  the pool folder that settles it) are :mod:`evalset.holes`'.
- :mod:`evalset.comparing.explain`: the three commands' one call each: :func:`make_comparisons` (compare),
  :func:`explain_runs` (explain), :func:`compare_with_holes` (holes), and their printed forms.
- :mod:`evalset.comparing.experiment`: what PyTerrier's ``pt.Experiment`` takes (result frames or transformers,
  topics, qrels), compared as ``compare`` compares runs (:func:`compare_systems`).
- :mod:`evalset.comparing.many`: many systems at once (``--all``, ``--baseline``): every pair or every run against
  one, family-wise corrected (randomised Tukey HSD, Holm, Bonferroni), with the groups of runs not distinguishable.
- :mod:`evalset.comparing.movement`: each query's change classified (relevant documents lost, rescued, promoted,
  demoted; an unjudged document entering; a tie artefact), and the movements that cancelled.
"""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.comparing.compare": ("Comparisons", "compare_runs"),
    "evalset.comparing.experiment": ("compare_systems",),
    "evalset.comparing.explain": ("ComparisonsWithHoles", "Explanations", "explain_runs", "compare_with_holes",
                                  "make_comparisons"),
    "evalset.comparing.many": ("ManyComparisons", "PairVerdict", "compare_many"),
    "evalset.comparing.movement": ("MOVEMENT_CLASSES", "QueryMovements", "query_movements"),
    "evalset.comparing.spec": ("CompareSpec",),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
