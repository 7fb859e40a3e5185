"""Fixtures of the judge's tests: a real pool of DL19 pairs with passage texts, and the shipped guideline."""

import pytest

from evalset.io.guideline import read_guideline
from evalset.io.poolfiles import read_tasks
from evalset.pooling import PoolSpec, build_from_spec, write_pool
from tests.conftest import REPO

GUIDELINE = REPO / "guidelines" / "relevance-v2.md"


@pytest.fixture(scope="session")
def pool_dir(shared_data, tmp_path_factory):
    """A real pool: the top 5 of three DL19 runs over all 43 queries, with passage texts."""
    runs = shared_data / "dl19" / "runs" / "official_top100"
    spec = PoolSpec(runs=tuple(str(runs / f"{name}.run.gz") for name in ("bm25base_p", "p_bert", "runid3")),
                    depth=5, corpus=str(shared_data / "dl19" / "passages.jsonl.gz"),
                    queries=str(shared_data / "dl19" / "topics.tsv"), seed=0)  # the order the tests were written on
    folder = tmp_path_factory.mktemp("pool")
    write_pool(build_from_spec(spec), folder)
    return folder


@pytest.fixture(scope="session")
def tasks(pool_dir):
    return read_tasks(pool_dir / "tasks.jsonl").to_dict("records")


@pytest.fixture(scope="module")
def guideline():
    return read_guideline(GUIDELINE)
