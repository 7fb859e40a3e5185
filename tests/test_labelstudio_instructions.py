"""The guideline's Markdown as the HTML of a Label Studio project's instructions (evalset.labelstudio.instructions):
only tags and classes Label Studio's sanitiser keeps, everything escaped, every word of the guideline kept."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from evalset.io.guideline import read_guideline
from evalset.labelstudio import instructions_html
from evalset.labelstudio.instructions import BLOCK_CLASSES, INSTRUCTION_TAGS, inline_html, markdown_html

GUIDELINES = sorted((Path(__file__).resolve().parents[1] / "guidelines").glob("*.md"))
VOID = {"br", "hr"}


class _Tree(HTMLParser):
    """Tags met (with their attributes), text met, and whether every element was closed in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.stack, self.misnested = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.misnested.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _tree(markup: str) -> _Tree:
    tree = _Tree()
    tree.feed(markup)
    tree.close()
    return tree


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text)


def test_there_is_a_shipped_guideline():
    assert [path.name for path in GUIDELINES] == ["relevance-v1.md", "relevance-v2.md"]


@pytest.mark.parametrize("path", GUIDELINES, ids=lambda path: path.name)
def test_a_shipped_guideline_becomes_well_formed_html_of_the_kept_tags_with_every_word(path):
    guideline = read_guideline(path)
    markup = instructions_html(guideline)
    tree = _tree(markup)
    assert tree.misnested == [] and tree.stack == []
    assert {tag for tag, _ in tree.tags} <= INSTRUCTION_TAGS
    for tag, attrs in tree.tags:  # a class on blocks, nothing else: the sanitiser drops style
        assert attrs == ((("class", BLOCK_CLASSES[tag]),) if tag in BLOCK_CLASSES else ()), (tag, attrs)
    text = "".join(tree.text)
    assert _words(text) == _words(guideline.body)
    assert "**" not in text and "`" not in text and not re.search(r"(?m)^#", text)
    body = guideline.body
    counted = {tag: sum(1 for t, _ in tree.tags if t == tag) for tag in ("h1", "h2", "li", "strong", "code")}
    assert counted == {"h1": len(re.findall(r"(?m)^# ", body)), "h2": len(re.findall(r"(?m)^## ", body)),
                       "li": len(re.findall(r"(?m)^- ", body)), "strong": body.count("**") // 2,
                       "code": body.count("`") // 2}
    assert "<li class=\"mb-1\"><strong>3 Perfectly relevant</strong>: the passage is dedicated" in markup
    assert "<code>&lt;script&gt;</code>" in markup and "<script>" not in markup


def test_markup_in_the_text_is_shown_as_characters():
    markup = markdown_html('# Title <img src=x onerror="alert(1)">\n\nA & B <script>alert(1)</script> "q"\n')
    assert markup == ('<h1 class="mt-base mb-tight">Title &lt;img src=x onerror="alert(1)"&gt;</h1>\n'
                      '<p class="mb-tight">A &amp; B &lt;script&gt;alert(1)&lt;/script&gt; "q"</p>\n')


@pytest.mark.parametrize(("text", "html"), [
    ("**bold** and *em* and _em_", "<strong>bold</strong> and <em>em</em> and <em>em</em>"),
    ("`**not bold**` then **bold**", "<code>**not bold**</code> then <strong>bold</strong>"),
    ("3 * 4 * 5 and snake_case_name", "3 * 4 * 5 and snake_case_name"),
    ('*"a quote ... spanning"*', '<em>"a quote ... spanning"</em>'),
    ("``a `tick` inside``", "<code>a `tick` inside</code>"),
    ("an unclosed **star and `tick", "an unclosed **star and `tick"),
])
def test_inline_markdown(text, html):
    assert inline_html(text) == html


def test_blocks_lists_quotes_rules_and_fenced_code():
    markdown = ("Para one\nwrapped line.\n- item one\n  continued\n- item two\n\n1. first\n2. second\n\n"
                "> quoted\n> more\n\n---\n\n```\ncode <b> line\n  indented\n```\n## Heading ##\n")
    assert markdown_html(markdown).splitlines() == [
        '<p class="mb-tight">Para one wrapped line.</p>',
        '<ul class="list-disc pl-base mb-tight"><li class="mb-1">item one continued</li>'
        '<li class="mb-1">item two</li></ul>',
        '<ol class="list-decimal pl-base mb-tight"><li class="mb-1">first</li><li class="mb-1">second</li></ol>',
        '<blockquote class="pl-base mb-tight">quoted more</blockquote>',
        '<hr class="mb-tight">',
        '<p class="mb-tight"><code>code &lt;b&gt; line</code><br><code>  indented</code></p>',
        '<h2 class="mt-base mb-tight">Heading</h2>',
    ]
