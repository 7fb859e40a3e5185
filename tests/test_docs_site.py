"""The documentation site: ``mkdocs build --strict`` succeeds (a broken link or anchor, a page left out of the
navigation or a docstring mkdocstrings cannot render fails it), and its API reference documents every public name
of the packages a notebook user calls."""

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

API_PACKAGES = ("metrics", "evaluation", "comparing", "holes", "estimate")


def build(site: Path, config: Path = REPO / "mkdocs.yml") -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about its successor, not a warning of ours
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    done = build(site)
    assert done.returncode == 0, done.stderr
    return site


def documented(site: Path, package: str) -> set[str]:
    """The names the API page of ``evalset.PACKAGE`` has a heading for (mkdocstrings' ids are dotted paths)."""
    html = (site / "api" / package / "index.html").read_text()
    return {anchor.rsplit(".", 1)[-1] for anchor in re.findall(r'id="(evalset\.[\w.]+)"', html)
            if anchor.count(".") == 3 or anchor.startswith(f"evalset.{package}.documents.")}


@pytest.mark.slow  # about 10 s: the whole site
@pytest.mark.parametrize("package", API_PACKAGES)
def test_the_api_reference_documents_every_public_name(site, package):
    public = set(importlib.import_module(f"evalset.{package}").__all__)
    assert public - documented(site, package) == set()


@pytest.mark.slow
def test_every_page_of_docs_is_in_the_site(site):
    pages = {p.relative_to(REPO / "docs").with_suffix("") for p in (REPO / "docs").rglob("*.md")}
    built = {p.parent.relative_to(site) for p in site.rglob("index.html")}
    assert {Path("") if page.name == "index" else page for page in pages} <= built


@pytest.mark.slow
def test_a_broken_link_fails_the_build(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the stage](no-such-page.md) and [a section](#no-such-anchor).\n")
    config = tmp_path / "mkdocs.yml"
    settings = (REPO / "mkdocs.yml").read_text()
    settings = re.sub(r"(?ms)^nav:.*", "", settings).replace("docs_dir: docs", f"docs_dir: {docs}")
    settings = settings.replace('paths: ["."]', f'paths: ["{REPO}"]').replace("scripts/", f"{REPO}/scripts/")
    config.write_text(settings)
    done = build(tmp_path / "site", config)
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr and "no-such-anchor" in done.stderr


def anchors(page: Path) -> set[str]:
    """The anchors GitHub and the site (mkdocs.yml: pymdownx's GitHub slugs) give a page's headings."""
    from pymdownx.slugs import slugify

    slug = slugify(case="lower")
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text())
    return {slug(title.strip(), "-") for title in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def test_the_readmes_links_reach_a_file_and_its_heading():
    """The README is not a page of the site, so the strict build does not check its links: this does."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", (REPO / "README.md").read_text()):
        if "://" in target:
            continue
        path, _, anchor = target.partition("#")
        page = (REPO / path) if path else REPO / "README.md"
        if not page.exists() or (anchor and page.suffix == ".md" and anchor not in anchors(page)):
            broken.append(target)
    assert broken == []
