"""``evalset estimate``: trustworthy means and paired differences from LLM grades on every query plus human grades
on a random slice (prediction-powered inference, PPI++ through ppi_py).

- :mod:`~evalset.estimate.slicing`: draw the human slice from a pool, write its pool folder and record;
- :mod:`~evalset.estimate.inputs`: the grades, checked against the slice, and the per-query values;
- :mod:`~evalset.estimate.figures`: the estimates (human-only, PPI++, LLM-only), paired differences, strata;
- :mod:`~evalset.estimate.simulate`: coverage of the intervals over many slices, on fully graded data.
"""

from evalset.estimate.figures import Estimate, estimate_runs, format_estimate
from evalset.estimate.inputs import Grades, check_coverage, grades_of, read_grades
from evalset.estimate.simulate import Simulation, format_simulation, simulate
from evalset.estimate.slicing import SliceRecord, read_slice, select_from_pool, select_slice, write_slice_pool

__all__ = ["Estimate", "Grades", "Simulation", "SliceRecord", "check_coverage", "estimate_runs", "format_estimate",
           "format_simulation", "grades_of", "read_grades", "read_slice", "select_from_pool", "select_slice",
           "simulate", "write_slice_pool"]
