"""``evalset estimate``: trustworthy means and paired differences from LLM grades on every query plus human grades
on a random slice (prediction-powered inference, PPI++ through ppi_py).

- :mod:`~evalset.estimate.spec`: what an estimate or a validation is asked, one spec per command (verb and design),
  its rules declared once;
- :mod:`~evalset.estimate.designs`: the three designs (:data:`QUERY_SLICE`, :data:`DOCUMENT_SAMPLE`,
  :data:`HOLE_SAMPLE`), each with ``select``, ``estimate`` and ``validate``, and :func:`make_estimate`, which answers
  a spec by its design;
- :mod:`~evalset.estimate.slicing`: draw the human slice from a pool, write its pool folder and record (the record
  is read and written by :mod:`evalset.io.slicerecord`);
- :mod:`~evalset.estimate.sources`: where grades and runs come from (files; a set's are its own);
- :mod:`~evalset.estimate.inputs`: the grades checked against the slice, and the per-query values;
- :mod:`~evalset.estimate.figures`: the estimates (human-only, PPI++, LLM-only), paired differences, strata;
- :mod:`~evalset.estimate.differences`: where every design's paired differences become evidence for the one decision
  module (the family's kind and threshold, the interval at 1 - threshold);
- :mod:`~evalset.estimate.simulate`: the one simulation of every design's validation: its loop of seeded draws (each
  the design's ``simulate_one``) and its harness (bias, RMSE, coverage and width per column, each with its Monte Carlo
  error);
- :mod:`~evalset.estimate.slicevalidation`: the query slice's validation (random slices on fully graded data);
- :mod:`evalset.estimate.documents`: the document design's room (a sample of every query's pooled pairs; a sample
  of a frozen set's holes, the set's pairs known, is one of them).

The package loads its modules when first used (:mod:`evalset.exports`), so that importing
:mod:`evalset.estimate.spec` does not load the statistics.
"""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.estimate.figures": ("Estimate", "estimate_runs"),
    "evalset.estimate.documents.holes": ("draw_holes", "estimate_holes"),
    "evalset.estimate.documents.holesizing": ("hole_probabilities", "size_holes"),
    "evalset.estimate.documents.holevalidation": ("HoleDesign", "simulate_holes", "sized_by"),
    "evalset.estimate.inputs": ("check_coverage",),
    "evalset.estimate.sources": ("Grades", "grades_of", "read_grades", "read_judges", "read_runs_and_files"),
    "evalset.estimate.designs": ("DESIGNS", "DOCUMENT_SAMPLE", "Design", "DocumentSample", "HOLE_SAMPLE",
                                 "HoleSample", "QUERY_SLICE", "QuerySlice", "make_estimate"),
    "evalset.estimate.slicevalidation": ("simulate_slices",),
    "evalset.estimate.slicing": ("SliceSelection", "select_from_pool", "select_slice", "select_slice_pool",
                                 "write_slice_pool"),
    "evalset.estimate.spec": ("RunDocuments", "ValidateDocuments", "EstimateSettings", "RunHoles",
                              "ValidateHoles", "RunSet", "RunSlice", "ValidateSlice"),
    "evalset.estimate.simulate": ("Tally", "Validation"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
