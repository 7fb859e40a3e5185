"""The run reader's two paths, whole (:func:`evalset.io.trec.read_run`) and streamed in pieces of whole queries
(:func:`evalset.io.runstream.query_blocks`), give the same frame or the same error (file, line, cause) on trec_eval's
fixtures, DL19's runs and a file of hostile lines (issue 53: every command reads runs through one of these two, and
scores must tie where they tie whichever path read them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.runstream import RunNotGrouped, query_blocks
from evalset.io.trec import read_run

GOOD = ["1 Q0 d1 1 2.5 tag", "1 Q0 d2 2 2.5 tag", "1 Q0 d3 3 1e-3 tag", "2 Q0 d1 1 -0.0 tag", "2 Q0 d4 2 7 tag"]


def streamed(path: Path, block_bytes: int) -> pd.DataFrame:
    blocks = [block for _, block in query_blocks(path, block_bytes, rank=True)]
    return pd.concat(blocks, ignore_index=True)


def outcome(read) -> pd.DataFrame | str:
    """The frame read, or the one line of the error (its file, line and cause)."""
    try:
        return read()
    except InputError as exc:
        return str(exc)


def same(path: Path, block_bytes: int) -> pd.DataFrame | str:
    whole = outcome(lambda: read_run(path, rank=True))
    piecewise = outcome(lambda: streamed(path, block_bytes))
    if isinstance(whole, str):
        assert piecewise == whole
    else:
        pd.testing.assert_frame_equal(piecewise.reset_index(drop=True), whole.reset_index(drop=True))
        # a tie is a tie in both: the same doubles, bit for bit
        assert np.array_equal(piecewise["score"].to_numpy().view(np.int64), whole["score"].to_numpy().view(np.int64))
    return whole


@pytest.mark.parametrize("name", ["results.test", "prefs.results.test"])
def test_trec_eval_fixtures_read_the_same_both_ways(shared_data, name):
    whole = same(shared_data / "trec_eval" / name, 4096)
    assert isinstance(whole, pd.DataFrame) and len(whole) > 100


def test_a_fixture_whose_queries_are_not_grouped_is_not_streamed(shared_data):
    with pytest.raises(RunNotGrouped, match="query 301 reappears"):  # the callers then read it whole
        streamed(shared_data / "trec_eval" / "results.trunc", 4096)


def test_dl19_runs_read_the_same_both_ways(shared_data):
    runs = sorted((shared_data / "dl19" / "runs" / "official_top100").iterdir())[:6]
    assert all(isinstance(same(path, 32 << 10), pd.DataFrame) for path in runs)


HOSTILE = {
    "three fields": (["1 Q0 d1"], "expected 6 whitespace-separated fields `qid Q0 docid rank score tag`, found 3: "
                                  "'1 Q0 d1'"),
    "NaN score": (["1 Q0 d1 1 NaN tag"], "score must be a finite number, found 'NaN'"),
    "a score beyond a double": (["1 Q0 d1 1 1e400 tag"], "score must be a finite number, found '1e400'"),
    "spaces and tabs mixed": (["1\tQ0 d9\t1 0.5   tag"], None),
    "a 4 MiB line": ([f"1 Q0 d9 1 0.5 {'x' * (4 << 20)}"], None),
}


@pytest.mark.parametrize("block_bytes", [64, 1 << 20])
@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_line_reads_or_fails_the_same_both_ways(tmp_path, case, block_bytes):
    lines, cause = HOSTILE[case]
    path = tmp_path / "hostile.run"
    path.write_text("\n".join([*GOOD[:2], *lines, *GOOD[2:]]) + "\n")
    result = same(path, block_bytes)
    if cause:
        assert result == f"{path}:3: {cause}"  # the file, the line, the cause
    else:
        assert isinstance(result, pd.DataFrame) and len(result) == len(GOOD) + 1


@pytest.mark.parametrize("block_bytes", [64, 1 << 20])
def test_windows_line_ends_and_bytes_that_are_not_utf8_read_or_fail_the_same_both_ways(tmp_path, block_bytes):
    crlf = tmp_path / "crlf.run"
    crlf.write_bytes(("\r\n".join(GOOD) + "\r\n").encode())
    assert len(same(crlf, block_bytes)) == len(GOOD)
    latin = tmp_path / "latin1.run"
    latin.write_bytes(("\n".join(GOOD) + "\n").encode() + "2 Q0 d\xe9 3 0.1 tag\n".encode("latin-1"))
    error = same(latin, block_bytes)
    assert isinstance(error, str) and "UTF-8" in error, error
