"""What the report page shows, computed (:func:`evalset.report.page.collect`) before it is laid out
(:func:`evalset.report.page.render_html`): the data every section reads, in a module of its own so that the
sections (summary, estimates) read it without importing the page that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalset.comparing import ManyComparisons
from evalset.estimate import Estimate
from evalset.estimate.documents.report import DocumentReport
from evalset.io.setfolder import FrozenSet
from evalset.report.agreement import AgreementMatrix
from evalset.stats.paired import Comparison


@dataclass(frozen=True)
class PlannedComparison:
    """One planned comparison: the result and the per-query differences, or why it could not be made."""

    baseline: str
    candidate: str
    result: Comparison | None = None
    differences: pd.Series | None = None
    note: str = ""


@dataclass(frozen=True)
class ReportData:
    """Everything the page shows, computed; :func:`render_html` only lays it out."""

    frozen: FrozenSet
    split: str
    headline: str
    judged_measure: str
    queries: pd.DataFrame
    strata: pd.DataFrame
    grades: pd.DataFrame
    scores: pd.DataFrame
    comparisons: list[PlannedComparison]
    agreement: AgreementMatrix | None
    settings: dict[str, Any] = field(default_factory=dict)
    agreement_note: str = ""
    estimate: Estimate | DocumentReport | None = None  # the estimates of an LLM-graded part or a document sample
    estimate_note: str = ""  # why an LLM-graded part has no estimate
    many: ManyComparisons | None = None  # every pair of the runs at once (evalset.report.many)
    many_note: str = ""
    probes: str = ""  # the HTML of the judge's probe section (evalset.report.probes), checked against the set
    notes: list[str] = field(default_factory=list)  # the queries runs lack, scored 0 or left out (-c missing)
    logged: list[dict[str, Any]] = field(default_factory=list)  # the set's comparison log on the version and split
