"""The guideline file: its scale is machine-readable and validates grades; bad files are refused."""

import hashlib
from pathlib import Path

import pytest

from evalset.errors import InputError
from evalset.io.guideline import read_guideline

GUIDELINE = Path(__file__).resolve().parents[1] / "guidelines" / "relevance-v1.md"


def test_the_shipped_guideline_has_a_0_to_3_scale_with_names_and_definitions():
    guideline = read_guideline(GUIDELINE)
    assert guideline.grades == [0, 1, 2, 3]
    assert [g.name for g in guideline.scale] == ["Irrelevant", "Related", "Highly relevant", "Perfectly relevant"]
    assert all(g.definition for g in guideline.scale)
    assert guideline.sha256 == hashlib.sha256(GUIDELINE.read_bytes()).hexdigest()
    assert guideline.body.startswith("# Relevance guideline") and "+++" not in guideline.body


def test_grades_off_the_scale_are_refused_not_clipped():
    guideline = read_guideline(GUIDELINE)
    guideline.check_grades([0, 3, 2])
    with pytest.raises(InputError, match=r"grade 5 is not on the scale") as error:
        guideline.check_grades([0, 5], source="labels.tsv")
    assert error.value.line == 2
    with pytest.raises(InputError, match=r"grade 1\.5"):
        guideline.check_grades([1.5])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# no front matter\n", "starts with a TOML front-matter"),
        ("+++\nversion = 1\n", "not closed"),
        ("+++\nversion = 1\n[scale.0]\nname = 'x'\n+++\n", "at least two grades"),
        ("+++\n[scale.0]\nname = 'a'\n[scale.1]\nname = 'b'\n+++\n", "integer version"),
    ],
)
def test_malformed_guidelines_are_refused(tmp_path, text, message):
    path = tmp_path / "g.md"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_guideline(path)


def _worked_examples(body: str) -> list[tuple[str, int, str, str]]:
    """(query id, grade, doc id, quoted text) of every example bullet under '## Worked examples'."""
    import re

    section = body.split("## Worked examples", 1)[1]
    examples, query = [], None
    bullets = re.split(r"\n(?=- |\*\*Query)", section)
    for bullet in bullets:
        text = " ".join(line.strip() for line in bullet.splitlines())
        if heading := re.match(r"\*\*Query (\d+)", text):
            query = heading.group(1)
        elif grade := re.match(r"- (\d)\b[^:]*:", text):
            quotes = re.findall(r'\*"(.+?)"\*', text)
            docs = re.findall(r"\((\d{5,})\)", text)
            examples.extend((query, int(grade.group(1)), doc, quote) for doc, quote in zip(docs, quotes, strict=True))
    return examples


def test_worked_examples_quote_real_dl19_passages_with_nist_grades(shared_data):
    import gzip
    import json

    from evalset.io.trec import read_qrels

    examples = _worked_examples(read_guideline(GUIDELINE).body)
    assert len(examples) >= 20
    assert {grade for _, grade, _, _ in examples} == {0, 1, 2, 3}
    qrels = read_qrels(shared_data / "dl19" / "qrels.txt").set_index(["query_id", "doc_id"])["grade"]
    wanted = {doc for _, _, doc, _ in examples}
    with gzip.open(shared_data / "dl19" / "passages.jsonl.gz", "rt", encoding="utf-8") as handle:
        texts = {r["doc_id"]: r["text"] for r in map(json.loads, handle) if r["doc_id"] in wanted}

    def plain(text):
        return " ".join(text.replace("\u2019", "'").split())

    for query, grade, doc, quote in examples:
        assert qrels[(query, doc)] == grade, (query, doc)
        for piece in quote.split("..."):
            assert plain(piece.strip(" .")) in plain(texts[doc]), (doc, piece)


def test_a_guideline_that_is_not_utf8_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "g.md"
    path.write_bytes("+++\nversion = 1\n+++\ncaf\u00e9\n".encode("latin-1"))
    with pytest.raises(InputError, match="guideline is not UTF-8 text") as refused:
        read_guideline(path)
    assert str(path) in str(refused.value)
