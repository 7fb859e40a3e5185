"""The page's HTML pieces shared by its sections (:mod:`evalset.report.page` and the sections of their own:
summary, estimates, many runs, probes): a value escaped for HTML, a table in a box that scrolls sideways.

Conventions: every text that comes from the data (query text, ids, run names, annotator names, numbers) passes
through :func:`escaped` (:func:`html.escape`, quotes too); a table never widens its column (:func:`html_table`'s box
scrolls on a screen narrower than it).
"""

from __future__ import annotations

import html
from typing import Any


def escaped(value: Any) -> str:
    """``value`` as text, escaped for HTML (``&``, ``<``, ``>`` and both quotes)."""
    return html.escape(str(value), quote=True)


def html_table(header: list[str], rows: list[list[Any]], numeric: set[int] = frozenset()) -> str:
    """A table of ``header`` and ``rows`` (every cell escaped; the columns in ``numeric`` right-aligned) in a box
    that scrolls sideways."""
    head = "".join(f"<th>{escaped(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{escaped(c)}</td>' if i in numeric else f"<td>{escaped(c)}</td>"
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows)
    return f'<div class="box"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
