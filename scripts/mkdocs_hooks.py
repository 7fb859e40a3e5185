"""MkDocs hooks of the documentation site (mkdocs.yml, ``hooks:``).

The docstrings cite other objects with Sphinx's roles (``:func:`evaluate```, ``:class:`~evalset.metrics.Measure```),
which mkdocstrings renders as the role's name followed by code. The role is dropped, and a path written with ``~``
(Sphinx's "show the last name only") is shown by its last name.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj|const):<code>(~?)([^<]*)</code>")


def shown(match: re.Match) -> str:
    tilde, path = match.groups()
    return f"<code>{path.rsplit('.', 1)[-1] if tilde else path}</code>"


def on_page_content(html: str, **_) -> str:
    return ROLE.sub(shown, html)
