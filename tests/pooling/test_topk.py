"""A big run file is pooled from its top k alone: read in blocks of whole queries, each block's top k kept (issue 53).

The pools built that way equal, frame for frame, the pools built from the runs read whole, on DL19's 37 official
runs under every tie rule; a run whose queries are not grouped is read whole.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalset.io import runstream
from evalset.io.trec import expand_run_paths, read_run, write_run
from evalset.pooling import build_pool, read_top_k


@pytest.fixture
def streamed(monkeypatch):
    """Every run file streamed, in blocks of 32 KiB (a DL19 run in about 7)."""
    monkeypatch.setattr(runstream, "STREAM_ABOVE_BYTES", 0)
    monkeypatch.setattr(runstream, "STREAM_ABOVE_COMPRESSED_BYTES", 0)
    monkeypatch.setattr(runstream, "STREAM_BLOCK_BYTES", 32 << 10)


@pytest.fixture(scope="module")
def run_files(shared_data: Path) -> dict[str, Path]:
    return expand_run_paths([shared_data / "dl19" / "runs" / "official_top100"])


@pytest.fixture(scope="module")
def whole_runs(run_files) -> dict[str, pd.DataFrame]:
    return {name: read_run(path) for name, path in run_files.items()}


@pytest.mark.parametrize("ties", ["trec", *(pytest.param(rule, marks=pytest.mark.slow)
                                            for rule in ("docid", "run", "expected"))])
def test_a_pool_of_streamed_top_k_equals_the_pool_of_whole_runs(run_files, whole_runs, streamed, ties):
    whole = build_pool(whole_runs, 10, ties=ties, seed=3)
    top = build_pool({name: read_top_k(path, 10, ties) for name, path in run_files.items()}, 10, ties=ties, seed=3)
    assert len(top.pairs) == 2_495 if ties == "trec" else 2_400 < len(top.pairs) < 2_600
    for field in ("pairs", "sources", "systems", "overlap"):
        pd.testing.assert_frame_equal(getattr(top, field), getattr(whole, field))
    pd.testing.assert_series_equal(top.pairs_per_query, whole.pairs_per_query)


def test_a_streamed_run_keeps_at_most_k_rows_a_query(run_files, streamed):
    path = next(iter(run_files.values()))
    top, whole = read_top_k(path, 10), read_run(path)
    assert top.groupby("query_id").size().max() == 10
    assert len(top) == 10 * whole["query_id"].nunique() < len(whole)


def test_a_run_whose_queries_are_not_grouped_is_read_whole(tmp_path, streamed):
    run = pd.DataFrame({"query_id": ["1", "2", "1"], "doc_id": ["a", "b", "c"], "rank": [1, 1, 2],
                        "score": [3.0, 2.0, 1.0]})
    path = tmp_path / "ungrouped.run"
    write_run(run, path)
    pd.testing.assert_frame_equal(read_top_k(path, 1), read_run(path, rank=False))
