"""Scoring a run file streamed in blocks of whole queries gives exactly what scoring it whole gives: the same
per-query values (bit for bit), the same notes, the same errors with file and line; a run not grouped by query is
still scored right; many runs side by side give what one after the other gives."""

import gzip
import shutil

import numpy as np
import pandas as pd
import pytest

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.io import runstream
from evalset.io.runstream import RunNotGrouped, query_blocks
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate, evaluate_file, evaluate_run_files, evaluate_runs, prepare_qrels
from evalset.metrics.streaming import query_rows

MEASURES = ["ndcg@10", "ndcg", "ap", "rr", "p@10", "recall@100", "rprec", "bpref", "success@10", "judged@10",
            "rbp_residual(p=0.9)@100", "num_ret", "f@10", "set_p"]  # (the last: a ranking's length)
TINY = 1 << 17  # 128 KiB blocks of text: a DL19 run streams in dozens of blocks, queries cut at the boundaries


@pytest.fixture(scope="module")
def dl19_files(shared_data):
    root = shared_data / "dl19"
    return root / "qrels.txt", sorted((root / "runs" / "official_full").glob("*.run.gz"))


def same_table(streamed: pd.DataFrame, whole: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(streamed, whole, check_exact=True)
    assert list(streamed.attrs.items()) == list(whole.attrs.items())


@pytest.mark.parametrize("contract", [
    EvaluationContract(),
    EvaluationContract(ties="expected", gain="exponential", rel_level=2),
    EvaluationContract(unjudged="condensed", missing="skip", undefined="zero"),
    EvaluationContract(ties="run"),
], ids=["default", "expected-exponential-rel2", "condensed-skip-zero", "run-ties"])
def test_a_streamed_dl19_run_scores_exactly_as_the_whole_run(dl19_files, contract):
    qrels_path, runs = dl19_files
    prepared = prepare_qrels(read_qrels(qrels_path), contract)
    for run in runs[:2]:
        whole = evaluate(read_run(run), prepared, MEASURES)
        streamed = evaluate_file(run, prepared, MEASURES, stream=True, block_bytes=TINY)
        same_table(streamed, whole)
        assert whole["ndcg@10"].notna().sum() == 43  # the 43 judged DL19 queries, all in these runs


def test_qrels_in_any_order_stream_to_the_same_values(dl19_files):
    """Each query's judgments are found where they are: together (as in the file), or interleaved with others."""
    qrels_path, runs = dl19_files
    qrels = read_qrels(qrels_path)
    grouped = prepare_qrels(qrels)
    shuffled = prepare_qrels(qrels.sample(frac=1.0, random_state=3).reset_index(drop=True))
    assert query_rows(grouped)[0] is None and query_rows(shuffled)[0] is not None
    whole = evaluate(read_run(runs[0]), grouped, MEASURES)
    for prepared in (grouped, shuffled):
        same_table(evaluate_file(runs[0], prepared, MEASURES, stream=True, block_bytes=TINY), whole)


def test_err_and_rbp_of_a_streamed_run_are_exactly_the_whole_run_s(dl19_files):
    """ERR's running product is computed per query, and so are both's highest grades (ERR is refused under
    ties=expected); each fixes its own gain, so the contract's is not theirs."""
    qrels_path, runs = dl19_files
    prepared = prepare_qrels(read_qrels(qrels_path))
    measures = ["err@20", "err", "rbp", "RBP(rel=2)@10"]
    whole = evaluate(read_run(runs[0]), prepared, measures)
    same_table(evaluate_file(runs[0], prepared, measures, stream=True, block_bytes=TINY), whole)


def test_blocks_hold_whole_queries(dl19_files):
    _, runs = dl19_files
    whole = read_run(runs[1])
    blocks = [rows for _, rows in query_blocks(runs[1], TINY)]
    assert len(blocks) > 10
    ids = [set(block["query_id"]) for block in blocks]
    assert sum(len(i) for i in ids) == whole["query_id"].nunique()  # no query in two blocks
    pd.testing.assert_frame_equal(pd.concat(blocks, ignore_index=True), whole)


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


QRELS = ["q1 0 a 2", "q1 0 b 0", "q1 0 c 1", "q2 0 a 1", "q2 0 z 3", "q3 0 x 1", "q4 0 y 0"]
# q1 has a repeated document, q9 is not judged, q3 and q4 are absent (q4 has no relevant document)
RUN = ["q1 Q0 c 1 3.0 t", "q1 Q0 d 2 2.0 t", "q1 Q0 c 3 1.5 t", "q1 Q0 a 4 1.0 t", "q9 Q0 a 1 9.0 t",
       "q9 Q0 b 2 8.0 t", "q2 Q0 z 1 5.0 t", "q2 Q0 a 2 5.0 t", "q2 Q0 b 3 4.0 t"]


def worked_example(tmp_path, lines):
    qrels = read_qrels(write(tmp_path / "qrels.txt", QRELS))
    return prepare_qrels(qrels), write(tmp_path / "run.txt", lines)


def test_notes_and_values_of_a_worked_example_are_the_same_in_blocks_of_one_line(tmp_path):
    prepared, run = worked_example(tmp_path, RUN)
    streamed = evaluate_file(run, prepared, ["ap", "rr", "p@2"], stream=True, block_bytes=16)
    same_table(streamed, evaluate(read_run(run), prepared, ["ap", "rr", "p@2"]))
    # by hand: q1 ranks c(1) d a(2) (the repeated c counts once): AP = (1/1 + 2/3) / 2; q2 ranks z(3), a(1) (tied
    # scores: doc id descending): AP 1; q3 absent: 0; q4 has no relevant document: undefined
    assert streamed["ap"].tolist()[:3] == [(1 + 2 / 3) / 2, 1.0, 0.0] and np.isnan(streamed["ap"].iloc[3])
    assert streamed.attrs == {"duplicates_removed": 1, "unjudged_queries": 1, "unjudged_query_rows": 2,
                              "missing_queries": 2}


def test_a_run_not_grouped_by_query_is_detected_and_scored_right(tmp_path):
    interleaved = RUN[4:6] + RUN[:2] + RUN[6:] + RUN[2:4]  # q1 reappears after q2
    prepared, run = worked_example(tmp_path, interleaved)
    with pytest.raises(RunNotGrouped, match="q1"):
        list(query_blocks(run, 16))
    streamed = evaluate_file(run, prepared, ["ap", "rr", "ndcg@10"], stream=True, block_bytes=16)
    grouped = evaluate_file(write(tmp_path / "grouped.txt", RUN), prepared, ["ap", "rr", "ndcg@10"], stream=True,
                            block_bytes=16)
    same_table(streamed, grouped)  # the same lines in another order: the same values and notes


@pytest.mark.slow
def test_a_malformed_line_in_the_middle_of_a_streamed_run_is_refused_with_its_line(tmp_path):
    prepared, _ = worked_example(tmp_path, RUN)
    lines = [f"q{i // 50} Q0 d{i} {i % 50 + 1} {100 - i % 50}.5 t" for i in range(5000)]
    lines[3210] = "q64 Q0 d3210 11 oops t"
    run = write(tmp_path / "bad.run", lines)
    with pytest.raises(InputError) as streamed:
        evaluate_file(run, prepared, ["ap"], stream=True, block_bytes=1024)
    with pytest.raises(InputError) as whole:
        evaluate_file(run, prepared, ["ap"], stream=False)
    assert (streamed.value.path, streamed.value.line) == (str(run), 3211)
    assert str(streamed.value) == str(whole.value)
    lines[3210] = "q64 Q0 d3210 11"  # too few fields
    with pytest.raises(InputError, match="expected 6 whitespace-separated fields") as short:
        evaluate_file(write(run, lines), prepared, ["ap"], stream=True, block_bytes=1024)
    assert short.value.line == 3211


@pytest.mark.slow
def test_a_truncated_gzip_is_refused_with_the_line_after_the_last_one_read(tmp_path):
    prepared, _ = worked_example(tmp_path, RUN)
    lines = [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1000 - i}.25 t" for i in range(200_000)]
    full = tmp_path / "full.run.gz"
    with gzip.open(full, "wt") as handle:
        handle.write("".join(line + "\n" for line in lines))
    cut = tmp_path / "cut.run.gz"
    data = full.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="ends early") as streamed:
        evaluate_file(cut, prepared, ["ap"], stream=True, block_bytes=1 << 16)
    assert streamed.value.path == str(cut) and 1 < streamed.value.line < len(lines)
    with pytest.raises(InputError):  # read whole: refused too
        evaluate_file(cut, prepared, ["ap"], stream=False)


@pytest.mark.slow
def test_many_runs_side_by_side_give_what_one_after_the_other_gives(dl19_files):
    qrels_path, runs = dl19_files
    prepared = prepare_qrels(read_qrels(qrels_path), EvaluationContract(ties="expected"))
    runs = runs[:5]
    frames = {run.name: read_run(run) for run in runs}
    one_by_one = {name: evaluate(frame, prepared, MEASURES) for name, frame in frames.items()}
    side_by_side = evaluate_runs(frames, prepared, MEASURES)
    from_files = evaluate_run_files({run.name: run for run in runs}, prepared, MEASURES, stream=True, block_bytes=TINY)
    assert list(side_by_side) == list(from_files) == list(one_by_one)
    for name, table in one_by_one.items():
        same_table(side_by_side[name], table)
        same_table(from_files[name], table)


def test_streaming_is_chosen_by_size(tmp_path, monkeypatch):
    _, run = worked_example(tmp_path, RUN)
    assert not runstream.streams(run)
    monkeypatch.setattr(runstream, "STREAM_ABOVE_BYTES", 10)
    assert runstream.streams(run)
    gz = tmp_path / "run.txt.gz"
    with open(run, "rb") as source, gzip.open(gz, "wb") as target:
        shutil.copyfileobj(source, target)
    monkeypatch.setattr(runstream, "STREAM_ABOVE_COMPRESSED_BYTES", 10**9)
    assert not runstream.streams(gz)


@pytest.mark.parametrize("text", [
    "\ufeff" + "\r\n".join(RUN) + "\r\n",  # a byte order mark and Windows line ends
    "\n".join(line.replace(" ", "\t") for line in RUN) + "\n",  # tabs
    "\n".join(RUN[:3]) + "\n\n  \n" + "\n".join(line.replace(" ", "   ") for line in RUN[3:]),  # blanks, wide gaps
    "\n".join(f"{line} extra words" for line in RUN) + "\n",  # text after the tag (trec_eval ignores it)
], ids=["bom-crlf", "tabs", "blank-lines-and-runs-of-spaces", "extra-fields"])
def test_every_layout_the_whole_file_reader_takes_streams_to_the_same_values(tmp_path, text):
    prepared, run = worked_example(tmp_path, RUN)
    run.write_text(text)
    whole = evaluate_file(run, prepared, ["ap", "ndcg@10", "p@2"], stream=False)
    for block_bytes in (16, 64, 1 << 20):
        same_table(evaluate_file(run, prepared, ["ap", "ndcg@10", "p@2"], stream=True, block_bytes=block_bytes), whole)
    assert whole.attrs["duplicates_removed"] == 1 and whole["ap"].iloc[1] == 1.0
