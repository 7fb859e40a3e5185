"""queries.tsv (written by `evalset sample`) and TREC topics files: read back unchanged, bad lines named."""

import csv
import re

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.queries import read_queries, read_query_list, write_queries

QUOTED = ['"new york" hotels', "it's 5\" long", '"am radio indoor antenna"', '"brown shower"']


def queries_frame(texts):
    return pd.DataFrame({"query_id": [f"q{i}" for i in range(len(texts))], "query": texts, "stratum": "head",
                         "frequency": 1, "stratum_share": 1.0, "weight": 0.5, "split": "test"})


def test_queries_with_quotes_round_trip_unquoted(tmp_path):
    write_queries(queries_frame(QUOTED), tmp_path / "queries.tsv")
    lines = (tmp_path / "queries.tsv").read_text().splitlines()
    assert [line.split("\t")[1] for line in lines[1:]] == QUOTED  # as docs/sample.md says: never quoted
    assert read_queries(tmp_path / "queries.tsv")["query"].tolist() == QUOTED
    assert read_query_list(tmp_path / "queries.tsv") == QUOTED  # what sample --exclude reads
    with_pandas = pd.read_csv(tmp_path / "queries.tsv", sep="\t", quoting=csv.QUOTE_NONE, dtype=str)
    assert with_pandas["query"].tolist() == QUOTED


def test_an_older_queries_tsv_quoted_by_the_csv_module_still_reads_as_written(tmp_path):
    old = tmp_path / "old.tsv"
    queries_frame(QUOTED).to_csv(old, sep="\t", index=False, lineterminator="\n")  # the writer before 2026-12-06
    assert '"""am radio indoor antenna"""' in old.read_text()
    assert read_queries(old)["query"].tolist() == QUOTED
    assert read_query_list(old) == QUOTED


@pytest.mark.parametrize("text", ["a\tb", "a\nb", '"a ""b"" c"'])
def test_a_query_a_reader_could_not_give_back_is_refused_naming_it(tmp_path, text):
    with pytest.raises(InputError, match=r"query q1: its query .* queries\.tsv writes each field as it is"):
        write_queries(queries_frame(["fine", text]), tmp_path / "queries.tsv")
    assert not (tmp_path / "queries.tsv").exists()


def test_a_topics_file_gives_ids_and_texts_in_file_order():
    topics = read_queries("data/dl19/topics.tsv")
    assert list(topics.columns) == ["query_id", "query"]
    assert len(topics) == 43 and topics["query_id"].is_unique
    assert topics.attrs["line_numbers"][:2] == [1, 2]


@pytest.mark.parametrize(("text", "line", "message"), [
    ("1\tone\n2\ttwo\n1\tagain\n", 3, "query id 1 appears twice (lines 1 and 3)"),
    ("1\tone\n2\t \n", 2, "empty query"),
    ("1\tone\nno tab here\n", 2, "expected `qid<TAB>query`"),
])
def test_bad_topics_are_refused_with_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "topics.tsv"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)) as raised:
        read_queries(path)
    assert (raised.value.path, raised.value.line) == (str(path), line)


@pytest.mark.parametrize("share", ["x", "-0.1", ""])
def test_a_stratum_share_that_is_not_a_number_at_least_0_is_refused_with_its_line(tmp_path, share):
    path = tmp_path / "queries.tsv"
    path.write_text(f"query_id\tquery\tstratum\tstratum_share\nq1\tone\thead\t0.9\nq2\ttwo\ttail\t{share}\n")
    with pytest.raises(InputError, match="query q2: a stratum and a traffic share") as caught:
        read_queries(path)
    assert caught.value.line == 3


@pytest.mark.parametrize("text", ["", "\n\n", "query_id\tquery\n"])
def test_a_queries_file_without_a_query_is_refused(tmp_path, text):
    path = tmp_path / "queries.tsv"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape("no query in the file (expected `qid<TAB>query` lines, a "
                                                   "queries.tsv or JSON Lines)")):
        read_queries(path)
