"""Bad input to the readers is refused with the file, the line and the cause (issue 15, items 4, 8 and 12)."""

import gzip

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.annotations import read_labels
from evalset.io.querylog import read_query_log_table
from evalset.io.trec import qrels_from_frame, read_qrels, read_run
from evalset.metrics import evaluate_runs

RUN_LINES = [f"19335 Q0 {doc} {rank} {20 - rank}.5 bm25" for rank, doc in enumerate(range(8412, 8420), 1)]


def write(path, text: str | bytes):
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return str(path)


# ------------------------------------------------------------------------------------- empty judgments (item 4)
def test_a_qrels_file_with_no_line_is_refused_naming_it(tmp_path):
    path = write(tmp_path / "empty.qrels", "")
    with pytest.raises(InputError, match="no judgments: the qrels are empty") as caught:
        read_qrels(path)
    assert caught.value.path == path


def test_qrels_with_only_negative_grades_judge_nothing(tmp_path):
    path = write(tmp_path / "pooled.qrels", "19335 0 8412 -1\n19335 0 8413 -2\n")
    with pytest.raises(InputError, match="all 2 qrels lines have a negative grade"):
        read_qrels(path)
    with pytest.raises(InputError, match="no judgments"):
        qrels_from_frame(pd.DataFrame({"query_id": [], "doc_id": [], "grade": []}))


def test_the_engine_scores_empty_qrels_without_a_numpy_casting_error(tmp_path):
    run = read_run(write(tmp_path / "a.run", "\n".join(RUN_LINES) + "\n"))
    qrels = pd.DataFrame({"query_id": pd.Series([], dtype=str), "doc_id": pd.Series([], dtype=str),
                          "grade": pd.Series([], dtype="int64")})
    table = evaluate_runs({"a": run}, qrels, ["ndcg@10", "ap", "rr", "p@10", "bpref", "judged@10"])["a"]
    assert table.empty and table.attrs["unjudged_queries"] == 1


# ----------------------------------------------------------------------------- shifted run columns (item 8)
@pytest.mark.parametrize("separator", [" ", "\t"])
def test_a_query_id_with_a_space_is_refused_with_its_line(tmp_path, separator):
    lines = [line.replace(" ", separator) for line in RUN_LINES]
    lines[4] = "19 335" + separator + lines[4].split(separator, 1)[1]
    path = write(tmp_path / "shifted.run", "\n".join(lines) + "\n")
    with pytest.raises(InputError, match="fields shifted: the document id is 'Q0'") as caught:
        read_run(path)
    assert (caught.value.path, caught.value.line) == (path, 5)


def test_every_line_shifted_is_refused_too(tmp_path):
    path = write(tmp_path / "shifted.run", "\n".join("19 " + line for line in RUN_LINES) + "\n")
    with pytest.raises(InputError, match="fields shifted") as caught:
        read_run(path)
    assert caught.value.line == 1


def test_a_shifted_line_is_found_when_the_second_field_is_not_q0(tmp_path):
    lines = [line.replace(" Q0 ", " 0 ") for line in RUN_LINES]
    lines[2] = "19 " + lines[2]
    path = write(tmp_path / "shifted.run", "\n".join(lines) + "\n")
    with pytest.raises(InputError, match="the document id is '0'") as caught:
        read_run(path)
    assert caught.value.line == 3


def test_a_run_with_extra_text_after_the_tag_still_reads(tmp_path):
    lines = [*RUN_LINES[:3], RUN_LINES[3] + " a comment", *RUN_LINES[4:]]
    run = read_run(write(tmp_path / "ok.run", "\n".join(lines) + "\n"))
    assert list(run["doc_id"]) == [str(d) for d in range(8412, 8420)]


# -------------------------------------------------------------------------------------- messages (item 12)
@pytest.mark.parametrize("reader", [read_run, read_qrels])
def test_a_line_that_is_not_utf8_is_named(tmp_path, reader):
    good = RUN_LINES[:3] if reader is read_run else ["19335 0 8412 1", "19335 0 8413 0"]
    bad = b"19335 Q0 d\xff\xfe 9 1.0 bm25" if reader is read_run else b"19335 0 d\xff 1"
    path = write(tmp_path / "latin1.txt", ("\n".join(good) + "\n").encode() + bad + b"\n")
    with pytest.raises(InputError, match="not UTF-8 text") as caught:
        reader(path)
    assert (caught.value.path, caught.value.line) == (path, len(good) + 1)


def test_a_broken_json_lines_log_names_the_line_not_pyarrows_row(tmp_path):
    path = write(tmp_path / "log.jsonl", '{"query": "a"}\n{"query": "b\n{"query": "c"}\n')
    with pytest.raises(InputError, match="not valid JSON") as caught:
        read_query_log_table(path)
    assert caught.value.line == 2


def test_invalid_utf8_in_a_json_lines_log_is_named(tmp_path):
    path = write(tmp_path / "log.jsonl", b'{"query": "a"}\n{"query": "b\xff"}\n')
    with pytest.raises(InputError, match="not UTF-8 text") as caught:
        read_query_log_table(path)
    assert caught.value.line == 2


def test_invalid_utf8_in_a_tsv_log_is_named(tmp_path):
    path = write(tmp_path / "log.tsv", b"query\tcount\nfoo\t3\nb\xffar\t2\n")
    with pytest.raises(InputError, match="not UTF-8 text") as caught:
        read_query_log_table(path)
    assert caught.value.line == 3


@pytest.mark.parametrize(("name", "text"), [("log.tsv", "query\tcount\nfoo\t3\n"), ("log.csv", "query,count\nfoo,3\n"),
                                            ("log.tsv.gz", "query\tcount\nfoo\t3\n")])
def test_a_byte_order_mark_is_not_part_of_the_first_column_name(tmp_path, name, text):
    data = ("\ufeff" + text).encode()
    path = write(tmp_path / name, gzip.compress(data) if name.endswith(".gz") else data)
    from evalset.io.querylog import LogColumns

    table = read_query_log_table(path, LogColumns(count="count"))
    assert table.column("query").to_pylist() == ["foo"] and table.column("count").to_pylist() == [3]


def test_a_labels_table_with_a_byte_order_mark_reads_as_a_labels_table(tmp_path):
    header = "query_id\tdoc_id\tannotator\tkind\tgrade\tsource\tlabeled_at\tcomment"
    path = write(tmp_path / "labels.tsv", "\ufeff" + header + "\n19335\t8412\tann\thuman\t2\tls\t\t\n")
    from evalset.io.annotations import is_labels_table

    assert is_labels_table(path)
    assert read_labels(path)["query_id"].tolist() == ["19335"]


def test_a_topics_file_and_a_query_list_with_a_byte_order_mark_keep_their_first_id(tmp_path):
    from evalset.io.queries import read_queries, read_query_list

    path = write(tmp_path / "topics.tsv", "\ufeff156493\tdo goldfish grow\n1110199\twifi vs bluetooth\n")
    assert read_queries(path)["query_id"].tolist() == ["156493", "1110199"]
    assert read_query_list(path)[0] == "156493\tdo goldfish grow"


@pytest.mark.parametrize("name", ["topics.tsv", "labels.tsv"])
def test_a_text_file_that_is_not_utf8_names_its_line(tmp_path, name):
    from evalset.io.queries import read_queries

    if name == "topics.tsv":
        path, reader = write(tmp_path / name, b"1\tfoo\n2\tb\xe9r\n"), read_queries
    else:
        header = b"query_id\tdoc_id\tannotator\tkind\tgrade\tsource\tlabeled_at\tcomment\n"
        rows = b"1\t2\ta\thuman\t1\ts\t\t\n1\t3\ta\thuman\t1\ts\t\tcaf\xe9\n"
        path, reader = write(tmp_path / name, header + rows), read_labels
    with pytest.raises(InputError, match="not UTF-8 text") as caught:
        reader(path)
    assert caught.value.line == (2 if name == "topics.tsv" else 3)
