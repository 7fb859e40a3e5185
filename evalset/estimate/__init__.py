"""``evalset estimate``: trustworthy means and paired differences from LLM grades on every query plus human grades
on a random slice (prediction-powered inference, PPI++ through ppi_py).

- :mod:`~evalset.estimate.modes`: the estimate from the command's inputs (a set, a slice, or a validation);
- :mod:`~evalset.estimate.slicing`: draw the human slice from a pool, write its pool folder and record (the record
  is read and written by :mod:`evalset.io.slicerecord`);
- :mod:`~evalset.estimate.inputs`: the grades, checked against the slice, and the per-query values;
- :mod:`~evalset.estimate.figures`: the estimates (human-only, PPI++, LLM-only), paired differences, strata;
- :mod:`~evalset.estimate.simulate`: coverage of the intervals over many slices, on fully graded data;
- :mod:`~evalset.estimate.documents.modes`: the document-sampled design (``design="documents"``) from the command's
  inputs: a sample record's estimate with the comparisons' verdicts, or its validation on fully graded data.
"""

from evalset.estimate.figures import Estimate, estimate_runs
from evalset.estimate.inputs import Grades, check_coverage, grades_of, read_grades
from evalset.estimate.modes import make_estimate
from evalset.estimate.simulate import Simulation, simulate
from evalset.estimate.slicing import SliceSelection, select_from_pool, select_slice, select_slice_pool, write_slice_pool

__all__ = ["Estimate", "Grades", "Simulation", "SliceSelection", "check_coverage", "estimate_runs", "grades_of",
           "make_estimate", "read_grades", "select_from_pool", "select_slice", "select_slice_pool", "simulate",
           "write_slice_pool"]
