"""trec_eval 10's comment lines (first non-blank character ``#``) in runs and qrels: skipped, counted, the other
lines keeping their numbers in errors; the fast parse, the line-by-line parse and the streamed reader agree."""

import gzip
from pathlib import Path

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.runstream import query_blocks
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate, evaluate_file, prepare_qrels

MEASURES = ["ndcg@10", "ap", "rr", "p@10", "recall@100", "bpref"]


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    return root / "qrels.txt", root / "runs" / "official_top100" / "idst_bert_p1.run.gz"


def with_comments(lines: list[str], at: list[int], target: Path) -> Path:
    """``lines`` with a comment line inserted before each index of ``at`` (and one at the top), gzipped if the
    target's name says so."""
    out = ["# trec_eval 10 comment: run idst_bert_p1"]
    for number, line in enumerate(lines):
        if number in at:
            out.append("  # a comment inside a query's lines (indented), six fields long")
        out.append(line)
    text = "\n".join(out) + "\n"
    if target.name.endswith(".gz"):
        target.write_bytes(gzip.compress(text.encode()))
    else:
        target.write_text(text)
    return target


def test_a_dl19_run_with_comment_lines_scores_exactly_as_the_original(dl19, tmp_path):
    qrels_path, run_path = dl19
    lines = gzip.decompress(run_path.read_bytes()).decode().splitlines()
    assert lines[1000].split()[0] == lines[1001].split()[0]  # a comment in the middle of a query's lines
    prepared = prepare_qrels(read_qrels(qrels_path))
    original = read_run(run_path)
    whole = evaluate(original, prepared, MEASURES)
    assert original.attrs["comment_lines"] == 0
    for name in ("commented.run", "commented.run.gz"):
        commented = with_comments(lines, [1001, 3000], tmp_path / name)
        run = read_run(commented)
        assert run.attrs["comment_lines"] == 3
        pd.testing.assert_frame_equal(run, original, check_exact=True)
        pd.testing.assert_frame_equal(evaluate(run, prepared, MEASURES), whole, check_exact=True)
        if name.endswith(".run"):  # streamed in pieces with and without comments (line by line, fast parse)
            streamed = evaluate_file(commented, prepared, MEASURES, stream=True, block_bytes=1 << 16)
            pd.testing.assert_frame_equal(streamed, whole, check_exact=True)


RUN = ["q1 Q0 d1 1 3.0 t", "q1 Q0 d2 2 2.0 t", "q2 Q0 d1 1 1.5 t"]


@pytest.mark.parametrize("separator", [" ", "\t"])
def test_a_comment_line_with_a_run_lines_width_is_skipped_on_the_fast_parse_too(tmp_path, separator):
    lines = [line.replace(" ", separator) for line in RUN]
    plain = tmp_path / "plain.run"
    plain.write_text("\n".join(lines) + "\n")
    commented = tmp_path / "commented.run"  # the comment has six fields: the one-delimiter parse would take it
    commented.write_text("\n".join(["#c Q0 d9 9 9.0 t".replace(" ", separator), *lines]) + "\n")
    run = read_run(commented)
    pd.testing.assert_frame_equal(run, read_run(plain))
    assert run.attrs["comment_lines"] == 1


def test_a_bad_line_after_comments_is_named_by_its_line_in_the_file(tmp_path):
    path = tmp_path / "bad.run"
    path.write_text("# one\n# two\n" + "\n".join(RUN[:2]) + "\n# three\nq2 Q0 d1 1 x t\n")
    with pytest.raises(InputError, match="score must be a finite number") as whole:
        read_run(path)
    assert whole.value.line == 6
    with pytest.raises(InputError, match="score must be a finite number") as streamed:
        list(query_blocks(path, block_bytes=16))
    assert streamed.value.line == 6


def test_qrels_with_comment_lines_read_as_without_them(shared_data, tmp_path):
    qrels_path = shared_data / "dl19" / "qrels.txt"
    lines = qrels_path.read_text().splitlines()
    commented = tmp_path / "qrels.txt"
    commented.write_text("\n".join(["# NIST qrels, DL19", *lines[:500], "#19335 0 x 3", *lines[500:]]) + "\n")
    qrels = read_qrels(commented)
    pd.testing.assert_frame_equal(qrels, read_qrels(qrels_path), check_exact=True)
    assert qrels.attrs["comment_lines"] == 2 and read_qrels(qrels_path).attrs["comment_lines"] == 0


def test_a_qrels_conflict_after_comments_names_both_lines(tmp_path):
    path = tmp_path / "qrels"
    path.write_text("# a comment\nq1 0 d1 1\n# another\nq1 0 d1 2\n")
    with pytest.raises(InputError, match=r"line 2: grade 1, line 4: grade 2") as caught:
        read_qrels(path)
    assert caught.value.line == 4


def test_a_file_of_comments_only_has_no_run_lines(tmp_path):
    path = tmp_path / "comments.run"
    path.write_text("# nothing\n  # here\n")
    with pytest.raises(InputError, match="no run lines"):
        read_run(path)
