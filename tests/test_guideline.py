"""The guideline file: its scale is machine-readable and validates grades; bad files are refused."""

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.guideline import SHIPPED, guideline_file, read_guideline, shipped_guidelines

GUIDELINE = Path(__file__).resolve().parents[1] / "guidelines" / "relevance-v2.md"


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


VERSION_1 = GUIDELINE.parent / "relevance-v1.md"
SPECS = sorted((GUIDELINE.parents[1] / "pools").glob("*.toml"))
HARD_CASES = ("ambiguous", "outdated", "duplicates", "poor text", "wrong language", "spam", "broken page",
              "may be wrong", "several parts")


def _guideline(tmp_path, body: str) -> Path:
    path = tmp_path / "g.md"
    path.write_text("+++\nversion = 1\n[scale.0]\nname = 'no'\n[scale.1]\nname = 'yes'\n+++\n" + body)
    return path


def test_worked_examples_are_read_by_the_convention_with_their_ids_grades_and_lines(tmp_path):
    path = _guideline(tmp_path, (
        "# G\n\n- 1: a bullet outside the examples is not one\n\n## Worked examples\n\nSome prose.\n\n"
        '**Query 42, "cats" (ambiguous)**\n\n'
        '- 1: *"Cats purr."* (d7). On topic.\n'
        '- 0 (spam): *"cat cat cat"* (d8) and *"dogs bark"*\n  (d9): neither.\n'
        '- a note that is no example\n\n'
        '**Query "invented query"**\n\n- 1: *"an invented passage"* Why.\n\n## After\n\n- 1: *"x"* (d1)\n'))
    examples = read_guideline(path).examples
    assert [(e.grade, e.query_id, e.query, e.doc_id, e.passage, e.line) for e in examples] == [
        (1, "42", "cats", "d7", "Cats purr.", 18),
        (0, "42", "cats", "d8", "cat cat cat", 19),
        (0, "42", "cats", "d9", "dogs bark", 19),
        (1, None, "invented query", None, "an invented passage", 25)]
    assert [e.pair for e in examples] == [("42", "d7"), ("42", "d8"), ("42", "d9"), None]
    assert read_guideline(path).examples_among([("42", "d9"), ("42", "d1"), ("7", "d7")]) == [examples[2]]


@pytest.mark.parametrize(("body", "line", "message"), [
    ('## Worked examples\n\n**Query 42 "no comma"**\n', 10, "query line is neither"),
    ('## Worked examples\n\n- 1: *"a passage"* (d1)\n', 10, "before any \\*\\*Query"),
])
def test_a_malformed_query_line_or_an_example_before_any_query_is_refused_with_its_line(tmp_path, body, line,
                                                                                       message):
    with pytest.raises(InputError, match=message) as refused:
        read_guideline(_guideline(tmp_path, body))
    assert refused.value.line == line


def _pool(spec_or_topics: Path, folder: Path, shared_data: Path | None = None) -> set[tuple[str, str]]:
    from click.testing import CliRunner

    from evalset.cli import main
    from evalset.io.poolfiles import read_pool_pairs

    if shared_data is None:
        args = ["pool", "--spec", spec_or_topics, "-o", folder]
    else:
        args = ["pool", shared_data / "dl19" / "runs" / "official_top100", "--depth", 10, "--queries",
                spec_or_topics, "--corpus", shared_data / "dl19" / "passages.jsonl.gz", "-o", folder]
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    pairs = read_pool_pairs(folder / "pool.tsv")
    return set(zip(pairs["query_id"], pairs["doc_id"], strict=True))


@pytest.mark.slow
def test_version_1_gave_nist_grades_of_4_pairs_of_a_3_query_pool_and_14_of_the_demo_pool(shared_data, tmp_path):
    three = tmp_path / "topics-3.tsv"
    three.write_text("\n".join((shared_data / "dl19" / "topics.tsv").read_text().splitlines()[:3]) + "\n")
    version_1 = read_guideline(VERSION_1)
    assert len(version_1.examples) == 23 and all(e.pair for e in version_1.examples)
    assert len(version_1.examples_among(_pool(three, tmp_path / "three", shared_data))) == 4
    demo = GUIDELINE.parents[1] / "pools" / "dl19-demo.toml"
    assert len(version_1.examples_among(_pool(demo, tmp_path / "demo"))) == 14


def _plain(text: str) -> str:
    return " ".join(text.lower().replace("\u2019", "'").split())


@pytest.mark.slow
def test_the_shipped_guideline_shares_no_pair_query_or_passage_with_the_shipped_pools_and_dl19(shared_data,
                                                                                              tmp_path):
    import gzip
    import json

    from evalset.io.trec import read_qrels

    guideline = read_guideline(GUIDELINE)
    examples = guideline.examples
    assert len(examples) >= 15 and {e.grade for e in examples} == {0, 1, 2, 3}
    assert SPECS, "no pool spec in pools/"
    for spec in SPECS:
        assert guideline.examples_among(_pool(spec, tmp_path / spec.stem)) == [], spec
    qrels = read_qrels(shared_data / "dl19" / "qrels.txt")
    judged = set(qrels["query_id"])
    assert not {e.query_id for e in examples} & judged
    assert guideline.examples_among(zip(qrels["query_id"], qrels["doc_id"], strict=True)) == []
    # the texts too: no example quotes a DL19 or LLMJudge query, nor any passage of the DL19 corpus
    queries = {_plain(line.split("\t", 1)[1]) for path in (shared_data / "dl19" / "topics.tsv",
                                                            shared_data / "llmjudge" / "human" / "queries.tsv")
               for line in path.read_text().splitlines() if "\t" in line}
    assert not {_plain(e.query) for e in examples} & queries
    with gzip.open(shared_data / "dl19" / "passages.jsonl.gz", "rt", encoding="utf-8") as handle:
        corpus = [_plain(json.loads(line)["text"]) for line in handle]
    pieces = [piece for e in examples for piece in (_plain(p.strip(" .")) for p in e.passage.split("..."))
              if len(piece) > 20]
    assert not [piece for piece in pieces if any(piece in text for text in corpus)]


def test_the_shipped_guideline_illustrates_every_hard_case_with_a_worked_example():
    guideline = read_guideline(GUIDELINE)
    headings = " ".join(line for line in guideline.body.split("## Worked examples", 1)[1].splitlines()
                        if line.startswith("**Query"))
    assert [case for case in HARD_CASES if case not in headings] == []


def test_a_guideline_that_is_not_utf8_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "g.md"
    path.write_bytes("+++\nversion = 1\n+++\ncaf\u00e9\n".encode("latin-1"))
    with pytest.raises(InputError, match="guideline is not UTF-8 text") as refused:
        read_guideline(path)
    assert str(path) in str(refused.value)


def test_a_shipped_guideline_is_given_by_its_name_and_a_file_of_that_name_wins(tmp_path, monkeypatch):
    assert shipped_guidelines() == ["relevance-v1", "relevance-v2"]
    shipped = guideline_file("relevance-v2")
    assert Path(shipped) == SHIPPED / "relevance-v2.md" and guideline_file("relevance-v2.md") == shipped
    assert Path(shipped).read_bytes() == GUIDELINE.read_bytes()  # the repository's guidelines/ links to it
    monkeypatch.chdir(tmp_path)
    (tmp_path / "relevance-v2").write_text("+++\n")  # a file named like a shipped guideline: the file is meant
    assert guideline_file("relevance-v2") == "relevance-v2"
    assert guideline_file("relevance-v9") == "relevance-v9" and guideline_file("dir/relevance-v1") == "dir/relevance-v1"


def test_a_command_takes_a_shipped_guidelines_name_and_names_a_missing_file(tmp_path):
    labels = tmp_path / "judge.qrels"
    labels.write_text("1 0 d1 2\n1 0 d2 3\n2 0 d1 0\n")
    result = CliRunner().invoke(main, ["judge", "ensemble", str(labels), "--human", str(labels), "--guideline",
                                       "relevance-v2", "-o", str(tmp_path / "out.tsv")])
    assert result.exit_code == 0, result.output  # the option checks that the file exists: the name found it
    missing = CliRunner().invoke(main, ["judge", "ensemble", str(labels), "--human", str(labels), "--guideline",
                                        "relevance-v9", "-o", str(tmp_path / "out.tsv")])
    assert missing.exit_code == 2 and "no guideline shipped with evalset is named 'relevance-v9'" in missing.output
    blank = CliRunner().invoke(main, ["freeze", str(labels), "--queries", str(labels), "--guideline", " ", "--name",
                                      "x", "--sets-dir", str(tmp_path / "sets")])
    assert blank.exit_code == 2  # the blank path's rule holds for the guideline's option too
    assert blank.output == "evalset: error: --guideline: an empty path names no file; give a path\n"
