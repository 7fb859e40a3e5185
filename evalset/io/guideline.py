"""The labeling guideline: one Markdown file that is the single source for annotators, the annotation
interface, the LLM judge's prompt and grade validation.

A guideline starts with a TOML front-matter block between ``+++`` lines that holds the machine-readable
scale; the rest is the text annotators read, used verbatim::

    +++
    name = "relevance"
    version = 1
    [scale.0]
    name = "Irrelevant"
    definition = "The passage has nothing to do with the query."
    [scale.1]
    ...
    +++
    # Relevance guideline ...
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evalset.errors import InputError
from evalset.io.digests import read_text_and_sha256


@dataclass(frozen=True)
class Grade:
    """One point of the scale."""

    value: int
    name: str
    definition: str


@dataclass(frozen=True)
class Guideline:
    """A parsed guideline. ``text`` is the whole file, ``body`` the part after the front matter."""

    path: str
    name: str
    version: int
    scale: tuple[Grade, ...]
    text: str
    body: str
    sha256: str

    @property
    def grades(self) -> list[int]:
        """The grade values, ascending."""
        return [grade.value for grade in self.scale]

    def check_grades(self, grades, source: str = "<labels>") -> None:
        """Refuse any grade that is not an integer on the scale (never clipped), naming its row (1-based)."""
        given = pd.Series(grades).reset_index(drop=True)
        values = pd.to_numeric(given, errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isin(values, self.grades))
        if bad.size:
            row = int(bad[0])
            raise InputError(f"grade {given.tolist()[row]!r} is not on the scale of {self.path} "
                             f"({', '.join(map(str, self.grades))})", source, row + 1)


def read_guideline(path: str | os.PathLike) -> Guideline:
    """Read and validate a guideline file (see the module docstring for the format)."""
    path = os.fspath(path)
    text, sha256 = read_text_and_sha256(path, "guideline")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "+++":
        raise InputError("a guideline starts with a TOML front-matter block between '+++' lines", path, 1)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    except StopIteration:
        raise InputError("the front-matter block is not closed by a '+++' line", path) from None
    try:
        meta = tomllib.loads("".join(lines[1:end]))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"front matter is not valid TOML: {exc}", path) from exc
    scale_table = meta.get("scale")
    if not isinstance(scale_table, dict) or len(scale_table) < 2:
        raise InputError("the front matter needs a [scale] with at least two grades", path)
    scale = []
    for key, entry in scale_table.items():
        if not key.lstrip("-").isdigit() or not isinstance(entry, dict) or not entry.get("name"):
            raise InputError(f"scale entry {key!r} needs an integer key and a name", path)
        scale.append(Grade(int(key), str(entry["name"]), str(entry.get("definition", "")).strip()))
    scale.sort(key=lambda grade: grade.value)
    if not isinstance(meta.get("version"), int):
        raise InputError("the front matter needs an integer version", path)
    return Guideline(
        path=path,
        name=str(meta.get("name", Path(path).stem)),
        version=meta["version"],
        scale=tuple(scale),
        text=text,
        body="".join(lines[end + 1:]).lstrip("\n"),
        sha256=sha256,
    )
