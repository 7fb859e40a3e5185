"""Statistics in one place: paired tests and intervals, the comparison family, stratified means, power.

- :mod:`evalset.stats.paired`: the paired permutation test (one vectorised implementation), the paired t-test,
  the BCa interval of the mean difference, the effect size; :class:`~evalset.stats.paired.Comparison` and
  :func:`~evalset.stats.paired.compare_paired`.
- :mod:`evalset.stats.family`: which comparisons are planned, the Bonferroni count given the comparison log (read
  and appended by its caller, :mod:`evalset.comparing.setlog`: statistics touch no file).
- :mod:`evalset.stats.strata`: means per stratum and across strata, and the bootstrap interval of that mean; the
  t interval of column means.
- :mod:`evalset.stats.proportions`: the Wilson interval of a share.
- :mod:`evalset.stats.power`: power, queries needed and the smallest detectable difference (formula and
  simulation).

The submodules are imported where they are used (scipy and statsmodels are slow to import).
"""
