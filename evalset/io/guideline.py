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

**Worked examples** (:class:`WorkedExample`, read by :func:`read_guideline` into ``Guideline.examples``) are the
bullets of the section headed ``Worked examples`` (any heading level, up to the next heading of that level or
higher). In it:

- a line ``**Query QID, "query text" ...**`` opens the examples of query QID; ``**Query "query text" ...**``
  (no id) those of an invented query;
- a bullet ``- G: ...`` or ``- G (what it shows): ...``, G a grade of the scale, is an example of the last query
  opened; each passage it quotes as ``*"passage text"*`` is one example, of the document DOCID when the quote is
  followed by ``(DOCID)``, of an invented passage when not::

      **Query 1129237, "hydrogen is a liquid below what temperature"**
      - 3: *"At STP hydrogen is a gas. It cools to a liquid at -423 F ..."* (4254811). Why it is a 3.

A ``**Query`` line of neither form, or an example bullet before any ``**Query`` line, is refused with its line.
An example with both ids grades a real pair: ``evalset push`` refuses to show it to annotators who grade that pair
(:meth:`Guideline.examples_among`).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable
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
class WorkedExample:
    """One passage of a worked example: its grade, the query (its id, None for an invented query), the passage
    quoted, its document id (None for an invented passage), and the file line of its bullet."""

    grade: int
    query: str
    query_id: str | None
    passage: str
    doc_id: str | None
    line: int

    @property
    def pair(self) -> tuple[str, str] | None:
        """``(query_id, doc_id)`` when the example grades a real pair, else None."""
        return (self.query_id, self.doc_id) if self.query_id and self.doc_id else None


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
    examples: tuple[WorkedExample, ...] = ()

    def examples_among(self, pairs: Iterable[tuple[str, str]]) -> list[WorkedExample]:
        """The worked examples that grade one of ``pairs`` (``(query_id, doc_id)``), in the file's order."""
        wanted = set(pairs)
        return [example for example in self.examples if example.pair in wanted]

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


SHIPPED = Path(__file__).resolve().parents[1] / "guidelines"
"""The guidelines shipped with evalset (the repository's ``guidelines/`` is this folder)."""


def shipped_guidelines() -> list[str]:
    """The names of the guidelines shipped with evalset (``relevance-v2``), oldest first."""
    return sorted(path.stem for path in SHIPPED.glob("*.md"))


def guideline_file(value: str | os.PathLike) -> str:
    """A guideline's file: ``value`` when it names a file, else the shipped guideline it names (``relevance-v2``, as
    ``evalset/guidelines/relevance-v2.md``), else ``value`` (its reader then says it is missing)."""
    value = os.fspath(value)
    if os.path.exists(value) or not names_a_guideline(value):
        return value
    shipped = SHIPPED / f"{value.removesuffix('.md')}.md"
    return str(shipped) if shipped.is_file() else value


def names_a_guideline(value: str | os.PathLike) -> bool:
    """Whether ``value`` is a name (``relevance-v2``) rather than a path: it holds no folder separator."""
    value = os.fspath(value)
    return os.sep not in value and "/" not in value


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
    body_start = end + 1
    return Guideline(
        path=path,
        name=str(meta.get("name", Path(path).stem)),
        version=meta["version"],
        scale=tuple(scale),
        text=text,
        body="".join(lines[end + 1:]).lstrip("\n"),
        sha256=sha256,
        examples=worked_examples(lines[body_start:], body_start + 1, {g.value for g in scale}, path),
    )


HEADING = re.compile(r"(#{1,6})\s+(.*)")
QUERY_LINE = re.compile(r'\*\*Query\s+(?:(?P<id>[^\s,"*]+)\s*,\s*)?"(?P<text>[^"]+)"')
EXAMPLE_BULLET = re.compile(r"-\s+(?P<grade>-?\d+)\b(?:\s*\([^)]*\))?\s*:")
QUOTED_PASSAGE = re.compile(r'\*"(?P<quote>.+?)"\*(?:\s*\((?P<doc>[^\s()]+)\))?')


def worked_examples(lines: list[str], first_line: int, grades: set[int], path: str) -> tuple[WorkedExample, ...]:
    """The worked examples of a guideline body's ``lines`` (the body starting at file line ``first_line``), by the
    convention of the module docstring."""
    examples: list[WorkedExample] = []
    level = None
    query: tuple[str, str | None] | None = None
    bullet: tuple[int, int, list[str]] | None = None  # (file line, grade, text lines)

    def close() -> None:
        if bullet is not None and query is not None:
            text = " ".join(part.strip() for part in bullet[2])
            examples.extend(WorkedExample(bullet[1], query[0], query[1], match["quote"], match["doc"], bullet[0])
                            for match in QUOTED_PASSAGE.finditer(text))

    for number, line in enumerate(lines, start=first_line):
        stripped = line.strip()
        heading = HEADING.fullmatch(stripped)
        if heading:
            if level is not None and len(heading[1]) <= level:
                break
            if level is None and heading[2].strip().lower().startswith("worked examples"):
                level = len(heading[1])
            continue
        if level is None:
            continue
        if stripped.startswith("**Query"):
            close()
            bullet = None
            found = QUERY_LINE.match(stripped)
            if found is None:
                raise InputError('a worked example\'s query line is neither **Query QID, "text"** nor '
                                 '**Query "text"** (module evalset.io.guideline)', path, number)
            query = (found["text"], found["id"])
        elif stripped.startswith("- "):
            close()
            bullet = None
            found = EXAMPLE_BULLET.match(stripped)
            if found is None or int(found["grade"]) not in grades:
                continue
            if query is None:
                raise InputError("a worked example comes before any **Query ...** line naming its query", path,
                                 number)
            bullet = (number, int(found["grade"]), [stripped])
        elif bullet is not None and stripped and line[:1].isspace():
            bullet[2].append(stripped)
        else:
            close()
            bullet = None
    close()
    return tuple(examples)
