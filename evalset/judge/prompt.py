"""The judge's prompt: a versioned template file filled with the guideline verbatim, the query and the passage.

A template is plain text in sections headed by a line ``[system]`` or ``[user]`` (one chat message each), with
the placeholders ``{guideline}`` (the guideline's ``body``: the text annotators read, after the front matter),
``{grades}`` (the scale's values, e.g. ``0, 1, 2, 3``), ``{query}`` and ``{document}``. Placeholders are filled in
one pass, so a brace or a placeholder name inside the guideline, the query or the passage is never expanded.

The answer must be the JSON object ``{"grade": n, "reason": "..."}``. Servers that support structured output get
:func:`response_format` (a strict JSON schema with the grade as an enum of the scale); the answer is parsed by
:func:`parse_answer` either way, which never repairs, clips or defaults a grade.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from evalset.errors import InputError
from evalset.io.digests import read_text_and_sha256
from evalset.io.guideline import Guideline

DEFAULT_TEMPLATE = Path(__file__).with_name("prompts") / "relevance-judge-v1.txt"
_PLACEHOLDER = re.compile(r"\{(guideline|grades|query|document)\}")
_SECTION = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


@dataclass(frozen=True)
class PromptTemplate:
    """A template file: its name, sha256 (of the bytes) and chat sections ``(role, text)``."""

    path: str
    name: str
    sha256: str
    sections: tuple[tuple[str, str], ...]

    def messages(self, guideline: Guideline, query: str, document: str) -> list[dict[str, str]]:
        """The chat messages for one pair."""
        values = {"guideline": guideline.body.rstrip("\n"), "grades": ", ".join(map(str, guideline.grades)),
                  "query": query, "document": document}
        return [{"role": role, "content": _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)}
                for role, text in self.sections]


def read_template(path: str | os.PathLike = DEFAULT_TEMPLATE) -> PromptTemplate:
    """Read a prompt template (see the module docstring); refuses one without sections or placeholders."""
    path = os.fspath(path)
    text, sha256 = read_text_and_sha256(path, "prompt template")
    heads = list(_SECTION.finditer(text))
    if not heads or text[:heads[0].start()].strip():
        raise InputError("a prompt template starts with a [system] or [user] line", path, 1)
    sections = []
    for head, following in zip(heads, [*heads[1:], None], strict=True):
        body = text[head.end():following.start() if following else len(text)].strip("\n")
        sections.append((head.group(1), body))
    used = {match.group(1) for _, body in sections for match in _PLACEHOLDER.finditer(body)}
    missing = {"guideline", "query", "document"} - used
    if missing:
        raise InputError(f"the prompt template lacks the placeholder(s) {', '.join(sorted(missing))}", path)
    return PromptTemplate(path=path, name=Path(path).stem, sha256=sha256,
                          sections=tuple(sections))


def response_format(guideline: Guideline) -> dict:
    """Structured output (OpenAI ``json_schema``, strict): ``grade`` an enum of the scale, ``reason`` a string."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "relevance_grade",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"grade": {"type": "integer", "enum": guideline.grades},
                               "reason": {"type": "string"}},
                "required": ["grade", "reason"],
                "additionalProperties": False,
            },
        },
    }


class InvalidAnswer(ValueError):
    """An answer that is not the JSON shape asked for, or whose grade is off the scale."""


def parse_answer(content: str | None, grades: list[int]) -> tuple[int, str]:
    """The ``(grade, reason)`` of an answer, or :class:`InvalidAnswer` saying why not.

    Strict: the whole answer (surrounding whitespace aside) must be one JSON object with an integer ``grade``
    on the scale (``true`` or ``2.0`` are not integers) and a string ``reason``; no other keys.
    """
    if content is None or not content.strip():
        raise InvalidAnswer("empty answer")
    try:
        answer = json.loads(content)
    except json.JSONDecodeError as exc:
        raise InvalidAnswer(f"not JSON: {exc.msg} at character {exc.pos}") from None
    if not isinstance(answer, dict) or set(answer) != {"grade", "reason"}:
        keys = sorted(answer) if isinstance(answer, dict) else type(answer).__name__
        raise InvalidAnswer(f"expected exactly the keys grade and reason, found {keys}")
    grade, reason = answer["grade"], answer["reason"]
    if not isinstance(grade, int) or isinstance(grade, bool):
        raise InvalidAnswer(f"grade {grade!r} is not an integer")
    if grade not in grades:
        raise InvalidAnswer(f"grade {grade} is not on the scale ({', '.join(map(str, grades))})")
    if not isinstance(reason, str):
        raise InvalidAnswer("reason is not a string")
    return grade, reason
