"""The report as a file: the command's inputs read (the set, the runs, an agreement file), the page written
atomically, and the line that names it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from evalset.io.documents import read_json
from evalset.io.files import atomic_path
from evalset.io.setfolder import load_set
from evalset.io.trec import expand_run_paths, read_run
from evalset.metrics import parse_measure
from evalset.params import settings_of
from evalset.render import fields_dict
from evalset.report.page import collect, render_html
from evalset.report.probes import probes_section, read_probe
from evalset.report.spec import ReportSpec


@dataclass(frozen=True)
class ReportFile:
    """A report written: its ``path`` and size in ``bytes``, the set (``set_path`` as given), the number of runs
    and the split. ``to_text()`` is the line ``evalset report`` prints."""

    path: str
    bytes: int
    set_path: str
    runs: int
    split: str

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)

    def to_text(self) -> str:
        return (f"wrote {self.path} ({self.bytes / 1e6:.1f} MB): set {self.set_path}, {self.runs} runs, "
                f"split {self.split}")


def write_report(set_path: str | os.PathLike, runs: Sequence[str | os.PathLike], output: str | os.PathLike,
                 spec: ReportSpec | None = None, *, agreement_path: str | os.PathLike | None = None,
                 probes_path: str | os.PathLike | None = None, **options: Any) -> ReportFile:
    """Write the HTML report of the frozen set at ``set_path`` and the ``runs`` (files or folders) to ``output``.

    ``agreement_path`` is the JSON of ``evalset agreement --format json`` (default: the manifest's agreement
    block); ``probes_path`` that of ``evalset judge probe`` (:mod:`evalset.report.probes`: checked against the
    set's LLM labels before anything is computed); the settings are ``spec``, or a
    :class:`~evalset.report.spec.ReportSpec` of ``options`` (split, seed, resamples, permutations, missing, ...).
    """
    spec = settings_of(ReportSpec, spec, options)
    files = expand_run_paths(runs)
    named = {name: read_run(path) for name, path in files.items()}
    agreement = None
    if agreement_path:
        agreement = read_json(agreement_path)
    frozen = load_set(set_path, check_headline=parse_measure)
    probes = probes_section(frozen, read_probe(probes_path), os.fspath(probes_path)) if probes_path else ""
    data = collect(frozen, named, spec, agreement=agreement, files=files)
    page = render_html(replace(data, probes=probes))
    with atomic_path(output) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(page)
    return ReportFile(os.fspath(output), len(page.encode()), os.fspath(set_path), len(named), spec.split)
