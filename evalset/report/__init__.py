"""``evalset report``: a self-contained HTML report of a frozen set and the runs scored on it.

- :mod:`evalset.report.spec`: what a report is asked (:class:`ReportSpec`), its rules declared once.
- :mod:`evalset.report.page`: what the page shows (:func:`collect`, into :class:`ReportData` of
  :mod:`evalset.report.data`) and the page (:func:`render_html`; its shared HTML pieces in
  :mod:`evalset.report.markup`).
- :mod:`evalset.report.output`: the command's inputs read and the page written (:func:`write_report`).
- :mod:`evalset.report.summary`: the page's first section, the answers (the planned verdicts, the best runs, what
  they rest on), read from the results the rest of the page renders.
- :mod:`evalset.report.plots`, :mod:`evalset.report.agreement`, :mod:`evalset.report.many`,
  :mod:`evalset.report.estimates`, :mod:`evalset.report.probes`: the page's sections;
  :mod:`evalset.report.legibility`: the figures' legibility, measured.
"""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.report.agreement": ("AgreementMatrix", "agreement_matrix"),
    "evalset.report.output": ("ReportFile", "write_report"),
    "evalset.report.data": ("PlannedComparison", "ReportData"),
    "evalset.report.page": ("build_report", "collect", "render_html"),
    "evalset.report.spec": ("ReportSpec",),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
