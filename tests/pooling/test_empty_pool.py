"""A pool with nothing in it is refused with its cause, never written as 0 pairs (issue 15, item 10); one with
nothing left to judge says so and exits 0 (issue 74, item 11)."""

import pytest

from evalset.errors import InputError
from evalset.pooling import PoolSpec, build_from_spec, write_pool

RUN = "".join(f"q{q} Q0 d{q}{rank} {rank} {10 - rank} bm25\n" for q in (1, 2) for rank in (1, 2, 3))


@pytest.fixture
def run(tmp_path):
    path = tmp_path / "bm25.run"
    path.write_text(RUN)
    return str(path)


def test_an_empty_queries_file_is_refused(tmp_path, run):
    queries = tmp_path / "queries.tsv"
    queries.write_text("\n")
    with pytest.raises(InputError, match="no query in the file") as caught:
        build_from_spec(PoolSpec(runs=(run,), depth=2, queries=str(queries)))
    assert caught.value.path == str(queries)


def test_a_pool_whose_every_pair_is_judged_says_nothing_is_left_and_writes_nothing(tmp_path, run):
    """Judge-the-holes with no hole left is a success (issue 74, item 11), but no pool of 0 pairs is written."""
    judged = tmp_path / "judged.qrels"
    judged.write_text("".join(f"q{q} 0 d{q}{rank} 1\n" for q in (1, 2) for rank in (1, 2)))
    build = build_from_spec(PoolSpec(runs=(run,), depth=2, exclude_judged=str(judged)))
    assert build.nothing_left
    assert build.to_text() == (f"nothing left to judge: all 4 pairs of the top-k union (depth 2, 1 run) are already "
                               f"judged in {judged}; no pool written")
    assert write_pool(build, tmp_path / "pool") == [] and not (tmp_path / "pool").exists()


def test_runs_with_no_document_in_their_top_k_are_refused(tmp_path):
    empty = tmp_path / "empty.run"
    empty.write_text("")
    with pytest.raises(InputError):
        build_from_spec(PoolSpec(runs=(str(empty),), depth=2))


def test_a_pool_with_pairs_left_is_built(tmp_path, run):
    judged = tmp_path / "judged.qrels"
    judged.write_text("q1 0 d11 1\n")
    assert len(build_from_spec(PoolSpec(runs=(run,), depth=2, exclude_judged=str(judged))).pool.pairs) == 3
