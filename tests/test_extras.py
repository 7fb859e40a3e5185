"""The extras are declared, and told to users, in the spelling every pip matches.

setuptools writes an extra's name into the metadata normalised (PEP 685: lower case, each run of ``-``, ``_``, ``.``
one ``-``), and pip before 23.3 compares the requested name with the metadata's as written. Measured with the pip
that ``python3 -m venv`` installs here (Python 3.11.7: pip 23.2.1; builds use setuptools 84.2.1): with the extra
declared ``ir_measures`` or ``ir-measures``, ``pip install -e '.[ir-measures]'`` installs ir-measures 0.4.3, and
``'.[ir_measures]'`` warns "evalset 0.1.0 does not provide the extra 'ir_measures'" and installs without it; pip
23.3 and 26.3 normalise the request, and take both. So pyproject.toml declares each extra in its normalised name and
every install line (README, docs, evalset's messages) requests that name.
"""

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INSTALL = re.compile(r"pip install[^\n]*?(?:evalset|\.)\[([^\]]+)\]")


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extras() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


def test_every_extra_is_declared_in_its_normalised_name():
    declared = extras()
    assert {"ir-measures", "spark", "test"} <= declared
    assert sorted(name for name in declared if normalised(name) != name) == []


def test_every_install_line_requests_an_extra_as_declared():
    sources = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "evalset").rglob("*.py")),
               *sorted((REPO / "scripts").glob("*.sh"))]
    requested = {}
    for path in sources:
        for found in INSTALL.finditer(path.read_text()):
            for extra in found.group(1).split(","):
                requested.setdefault(extra.strip(), []).append(path.relative_to(REPO).as_posix())
    assert "ir-measures" in requested
    assert {extra: where for extra, where in requested.items() if extra not in extras()} == {}
