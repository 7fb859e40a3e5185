"""Readers and writers for TREC runs and qrels: values, formats, and errors that name the file and line."""

import gzip
import re

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.runframe import run_from_frame
from evalset.io.trec import expand_run_paths, read_qrels, read_run, run_name, write_qrels, write_run


def write(path, text, compress=False):
    if compress:
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return path


def test_reads_a_dl19_run_with_its_types(shared_data):
    run = read_run(shared_data / "dl19" / "runs" / "official_full" / "bm25base_p.run.gz")
    assert len(run) == 43000 and run["query_id"].nunique() == 43
    assert list(run.columns) == ["query_id", "doc_id", "rank", "score"]
    assert run.iloc[0].to_dict() == {"query_id": "19335", "doc_id": "8412684", "rank": 1, "score": 10.6067}


def test_runs_with_runs_of_spaces_and_trailing_text_read_like_trec_eval(shared_data):
    # results.trunc has "\t  2.138276\t" fields and text after the tag, which trec_eval ignores
    run = read_run(shared_data / "trec_eval" / "results.trunc")
    assert len(run) == 584
    assert run.iloc[0][["query_id", "doc_id", "rank", "score"]].tolist() == ["301", "FBIS3-27619", 99, 2.138276]


@pytest.mark.parametrize("compress", [False, True])
def test_space_tab_and_gzip_runs_agree(tmp_path, compress):
    spaced = write(tmp_path / ("a.run.gz" if compress else "a.run"), "1 Q0 d1 1 2.5 t\n\n1 Q0 d2 2 1.5 t\n",
                   compress)
    tabbed = write(tmp_path / "b.run", "1\tQ0\td1\t1\t2.5\tt\n1\tQ0\td2\t2\t1.5\tt\n")
    pd.testing.assert_frame_equal(read_run(spaced), read_run(tabbed))


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1.5\n", 2, "expected 6 whitespace-separated fields"),
        ("1 Q0 d1 1 2.5 t\n\n1 Q0 d2 2 high t\n", 3, "score must be a finite number, found 'high'"),
        ("1 Q0 d1 1 nan t\n", 1, "score must be a finite number"),
        ("1 Q0 d1 first 2.5 t\n", 1, "rank must be an integer"),
    ],
)
def test_a_malformed_run_line_is_refused_with_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path / "bad.run", text)
    with pytest.raises(InputError, match=message) as error:
        read_run(path)
    assert error.value.line == line and str(error.value).startswith(f"{path}:{line}: ")


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_run(tmp_path / "absent.run")


def test_qrels_keep_negative_grades_and_collapse_exact_repeats(tmp_path):
    path = write(tmp_path / "q.txt", "1 0 a 2\n1 0 b -1\n1 0 a 2\n2 0 a 0\n")
    qrels = read_qrels(path)
    assert qrels.to_dict("list") == {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "grade": [2, -1, 0]}
    assert qrels.attrs["collapsed_duplicates"] == 1


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("1 0 a 1\n1 0 b 1.5\n", 2, "grade must be an integer, found '1.5'"),
        ("1 0 a 1\n1 0 b\n", 2, "expected 4 whitespace-separated fields"),
        ("1 0 a 1\n1 0 b 0\n1 0 a 2\n", 3, r"two different grades \(line 1: grade 1, line 3: grade 2\)"),
    ],
)
def test_bad_qrels_are_refused_with_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path / "q.txt", text)
    with pytest.raises(InputError, match=message) as error:
        read_qrels(path)
    assert error.value.line == line


@pytest.mark.parametrize("compress", [False, True])
def test_a_line_longer_than_a_parse_block_is_read(tmp_path, compress):
    # the parse goes 1 MiB at a time (trec.PARSE_BLOCK_BYTES); a line of 3 MiB (three blocks) is read in larger ones
    text = f"q1 0 {'d' * (3 << 20)} 1\nq1 0 d2 0\n"
    run_text = f"q1 Q0 {'d' * (3 << 20)} 1 2.5 t\nq1 Q0 d2 2 1.5 t\n"
    qrels, run = tmp_path / ("qrels.txt" + ".gz" * compress), tmp_path / ("run.txt" + ".gz" * compress)
    for path, body in ((qrels, text), (run, run_text)):
        path.write_bytes(gzip.compress(body.encode()) if compress else body.encode())
    assert read_qrels(qrels)["doc_id"].str.len().tolist() == [3 << 20, 2]
    assert read_run(run)["doc_id"].str.len().tolist() == [3 << 20, 2]


def test_round_trip_and_atomic_write(tmp_path):
    run = run_from_frame(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [0.1 + 0.2, 0.25]}))
    write_run(run, tmp_path / "r.run.gz", tag="mine")
    again = read_run(tmp_path / "r.run.gz")
    assert again["score"].tolist() == [0.1 + 0.2, 0.25]  # full precision survives
    qrels = read_qrels(write(tmp_path / "q.txt", "2 0 b 1\n1 0 a 3\n"))
    write_qrels(qrels, tmp_path / "out" / "q.txt")
    assert (tmp_path / "out" / "q.txt").read_text() == "1 0 a 3\n2 0 b 1\n"
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["q.txt"]  # no temporary file left


def test_run_names_drop_the_usual_extensions():
    assert run_name("runs/ICT-BERT2.run.gz") == "ICT-BERT2"
    assert run_name("BM25.dl19.top100.run.gz") == "BM25.dl19.top100"
    assert run_name("mine.txt") == "mine"


def test_a_malformed_line_of_megabytes_is_quoted_short(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"q1 0 {'d' * (3 << 20)}\n")
    with pytest.raises(InputError) as refused:
        read_qrels(qrels)
    assert str(refused.value) == (f"{qrels}:1: expected 4 whitespace-separated fields `qid 0 docid grade`, found 3: "
                                  f"'q1 0 {'d' * 194}... (3,145,733 characters)")


def test_name_equals_path_names_any_one_run_unless_it_is_a_file_itself(tmp_path):
    run = tmp_path / "bm25.run"
    run.write_text("q1 Q0 d1 1 2.0 tag\n")
    (tmp_path / "x=y").write_text("q1 Q0 d1 1 2.0 tag\n")
    assert expand_run_paths([f"first={run}", f"second={run}"]) == {"first": str(run), "second": str(run)}
    assert expand_run_paths([str(tmp_path / "x=y")]) == {"x=y": str(tmp_path / "x=y")}  # a file named so
    with pytest.raises(InputError, match=r"NAME=PATH names one run file, and .* is a folder"):
        expand_run_paths([f"all={tmp_path}"])
    with pytest.raises(InputError, match="is no file"):
        expand_run_paths([f"gone={tmp_path / 'gone.run'}"])


@pytest.mark.parametrize(("argument", "name"), [("-", "stdin"), ("mine=-", "mine")])
def test_a_json_run_from_a_pipe_is_named_stdin_or_as_given_never_by_a_piece_of_its_text(tmp_path, argument, name):
    from click.testing import CliRunner

    from evalset.cli import main

    qrels = tmp_path / "q.qrels"
    qrels.write_text("1037798 0 d1 1\n")
    result = CliRunner().invoke(main, ["score", "--qrels", str(qrels), argument, "-m", "p@1"],
                                input='{"1037798": {"d1": 2.0, "d2": 1.0}, "8635981": {"d3": 1.0}}')
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split() == [name, "1.0000"]


# --- the files trec_eval 10 reads (issue 73): white space at either end of a line, a + sign
def test_a_qrels_line_ending_in_a_tab_reads_as_trec_eval_reads_it(tmp_path):
    # a public toolkit's test qrels: `2\t0\tdoc2_9\t0\t`
    path = write(tmp_path / "q.txt", "2\t0\tdoc2_9\t0\t\n2\t0\tdoc2_1\t1\t\n 3 0 d 2 \n")
    assert read_qrels(path).to_dict("list") == {"query_id": ["2", "2", "3"], "doc_id": ["doc2_9", "doc2_1", "d"],
                                                "grade": [0, 1, 2]}


def test_a_run_line_starting_with_a_space_is_not_shifted(tmp_path):
    path = write(tmp_path / "a.run", " 1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1.5 t \t\n")
    assert read_run(path)[["query_id", "doc_id", "rank", "score"]].values.tolist() == [["1", "d1", 1, 2.5],
                                                                                        ["1", "d2", 2, 1.5]]


def test_signed_and_exponent_numbers_read_as_c_reads_them(tmp_path):
    run = read_run(write(tmp_path / "a.run", "1 Q0 d1 +1 +2.5e1 t\n1 Q0 d2 -0 -1.5E-3 t\n"))
    assert run[["rank", "score"]].values.tolist() == [[1, 25.0], [0, -0.0015]]
    assert read_qrels(write(tmp_path / "q.txt", "1 0 d1 +2\n1 0 d2 -1\n"))["grade"].tolist() == [2, -1]


def test_a_non_breaking_space_is_part_of_an_id_as_in_trec_eval(tmp_path):
    # C's isspace is ASCII: trec_eval reads `d\u00a01` as one id; a line-by-line parse (runs of spaces) agrees
    run = read_run(write(tmp_path / "a.run", "1  Q0 d\u00a01 1 2.5 t\n"))
    assert run["doc_id"].tolist() == ["d\u00a01"]


@pytest.mark.parametrize(("text", "message"), [
    ("1 Q0 d1 1 0x1p3 t\n", "score must be a finite number, found '0x1p3'"),
    ("1 Q0 d1 1 inf t\n", "score must be a finite number, found 'inf'"),
    ("1 Q0 d1 1 2.5x t\n", "score must be a finite number, found '2.5x'"),
    ("1 Q0 d1 1 1_0 t\n", "score must be a finite number, found '1_0'"),
])
def test_what_c_reads_and_evalset_refuses_names_the_line(tmp_path, text, message):
    # trec_eval's atof reads a hex float, inf and a number's prefix; evalset refuses them (docs: departures)
    with pytest.raises(InputError, match=message) as error:
        read_run(write(tmp_path / "a.run", "1 Q0 d0 1 3 t\n" + text))
    assert error.value.line == 2


@pytest.mark.parametrize("grade", ["1.0", "++1", "1_0", "two"])
def test_a_grade_that_is_no_integer_is_refused_where_atol_reads_a_prefix(tmp_path, grade):
    with pytest.raises(InputError, match=re.escape(f"grade must be an integer, found {grade!r}")) as error:
        read_qrels(write(tmp_path / "q.txt", f"1 0 a 1\n1 0 b {grade}\n"))
    assert error.value.line == 2
