"""The guideline body as the HTML of a Label Studio project's instructions.

Label Studio keeps the instructions only after ``bleach.clean`` with its own lists of tags and attributes
(``label_studio/constants.py``, ``SAFE_HTML_TAGS`` and ``SAFE_HTML_ATTRIBUTES``): ``style`` is not among the
attributes, so the instructions cannot be styled, and a ``<pre>`` (which does not wrap lines) must not hold
them. :func:`markdown_html` writes the Markdown of a guideline as a small HTML subset made of elements that the
sanitiser keeps and browsers wrap: :data:`INSTRUCTION_TAGS`, with one attribute, ``class`` (kept by the
sanitiser): Label Studio's own CSS resets lists and margins (no bullets, no space between paragraphs), and the
only styling that reaches the page is classes its stylesheet already defines (:data:`BLOCK_CLASSES`, found in
the pages of 1.23.2: ``list-disc``, ``pl-base``, ``mb-tight``...). A Label Studio without them shows the same
text, wrapped, unstyled.

The Markdown read (what evalset's guidelines use; anything else is shown as the text it is):

- ``#`` to ``######`` headings; paragraphs (lines up to a blank line, joined: a line break in the file is a
  space); ``- ``, ``* `` and ``1. `` list items, lines indented under an item continuing it; ``> `` quotes;
  ``---`` rules; fenced code blocks (```` ``` ````), one line of code per line, each wrappable;
- inline: ```code```, ``**strong**``, ``*emphasis*`` and ``_emphasis_``.

Every character of the text is escaped (``&``, ``<``, ``>``): markup written in a guideline is shown as
characters, never run. The output is deterministic, one block per line.
"""

from __future__ import annotations

import html
import re

from evalset.io.guideline import Guideline

#: The tags :func:`markdown_html` writes: a subset of what Label Studio's sanitiser keeps (1.23.2, checked
#: against the real server by tests/test_labelstudio_browser.py), none with attributes.
INSTRUCTION_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "li", "blockquote", "hr", "br",
                              "strong", "em", "code"})
#: The ``class`` of each block tag: Label Studio 1.23.2's Tailwind classes (bullets and numbers, an indent, the
#: space between blocks). Inline tags get none.
BLOCK_CLASSES = {**{f"h{level}": "mt-base mb-tight" for level in range(1, 7)}, "p": "mb-tight",
                 "ul": "list-disc pl-base mb-tight", "ol": "list-decimal pl-base mb-tight", "li": "mb-1",
                 "blockquote": "pl-base mb-tight", "hr": "mb-tight"}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(?P<marker>[-*]|\d+[.)])\s+(?P<text>.*)$")
_RULE = re.compile(r"^(?:-\s*){3,}$|^(?:\*\s*){3,}$")
_FENCE = re.compile(r"^(```|~~~)")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])")


def _open(tag: str) -> str:
    """The start tag of a block, with its class."""
    return f'<{tag} class="{BLOCK_CLASSES[tag]}">'


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def inline_html(text: str) -> str:
    """One block's text with its inline Markdown (code spans, strong, emphasis) as HTML, everything escaped.

    Code spans are taken first: what is inside backticks is shown as written, stars included.
    """
    parts = re.split(r"(`+)(.+?)\1", text)
    out = []
    for index in range(0, len(parts), 3):
        plain = _escape(parts[index])
        plain = _STRONG.sub(r"<strong>\1</strong>", plain)
        plain = _EMPHASIS.sub(lambda m: f"<em>{m.group(1) or m.group(2)}</em>", plain)
        out.append(plain)
        if index + 2 < len(parts):
            out.append(f"<code>{_escape(parts[index + 2].strip())}</code>")
    return "".join(out)


def markdown_html(markdown: str) -> str:
    """The Markdown (see the module docstring for what is read) as HTML of :data:`INSTRUCTION_TAGS` only, block
    tags with their :data:`BLOCK_CLASSES`."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
        elif _FENCE.match(stripped):
            fence, code = stripped[:3], []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                code.append(lines[i])
                i += 1
            i += 1  # the closing fence (or the end of the text)
            blocks.append(_open("p") + "<br>".join(f"<code>{_escape(c)}</code>" for c in code) + "</p>")
        elif (heading := _HEADING.match(stripped)) and not line.startswith(" " * 4):
            level = len(heading[1])
            blocks.append(f"{_open(f'h{level}')}{inline_html(heading[2])}</h{level}>")
            i += 1
        elif _RULE.match(stripped):
            blocks.append(_open("hr"))
            i += 1
        elif _ITEM.match(stripped):
            ordered = stripped[0].isdigit()
            items: list[list[str]] = []
            while i < len(lines) and lines[i].strip():
                item = _ITEM.match(lines[i].strip())
                if item and not lines[i].startswith(" ") and (item["marker"][0].isdigit()) == ordered:
                    items.append([item["text"]])
                elif item and not lines[i].startswith(" "):
                    break  # a list of the other kind starts
                elif items:
                    items[-1].append(lines[i].strip())
                i += 1
            tag = "ol" if ordered else "ul"
            blocks.append(_open(tag) + "".join(f"{_open('li')}{inline_html(' '.join(item))}</li>" for item in items)
                          + f"</{tag}>")
        elif stripped.startswith(">"):
            quoted = []
            while i < len(lines) and lines[i].strip().startswith(">"):
                quoted.append(lines[i].strip()[1:].strip())
                i += 1
            blocks.append(f"{_open('blockquote')}{inline_html(' '.join(quoted))}</blockquote>")
        else:
            paragraph = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                paragraph.append(lines[i].strip())
                i += 1
            blocks.append(f"{_open('p')}{inline_html(' '.join(paragraph))}</p>")
    return "\n".join(blocks) + "\n"


def _starts_block(line: str) -> bool:
    """Whether a line ends the paragraph before it (a heading, an item, a quote, a rule, a fence)."""
    stripped = line.strip()
    return bool(_HEADING.match(stripped) or _ITEM.match(stripped) or _RULE.match(stripped)
                or _FENCE.match(stripped) or stripped.startswith(">"))


def instructions_html(guideline: Guideline) -> str:
    """The project's instructions: the guideline's body as HTML (:func:`markdown_html`)."""
    return markdown_html(guideline.body)
