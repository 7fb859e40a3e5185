"""String columns as arrow arrays: taking rows from a column of many chunks."""

import numpy as np
import pyarrow as pa
import pytest

from evalset.speed.strings import take_rows


@pytest.fixture(scope="module")
def column():
    rng = np.random.default_rng(4)
    return pa.chunked_array([pa.array([f"d{i}-{j}" for j in rng.integers(0, 10**6, size)], pa.large_string())
                             for i, size in enumerate([5, 0, 300, 1, 1000, 42])])


@pytest.mark.parametrize("rows", ["ascending", "any order", "repeats", "one chunk", "none"])
def test_take_rows_gives_arrow_s_take(column, rows):
    rng = np.random.default_rng(len(rows))
    picked = {"ascending": np.sort(rng.choice(len(column), 500, replace=False)),
              "any order": rng.choice(len(column), 500, replace=False),
              "repeats": rng.integers(0, len(column), 900),
              "one chunk": np.arange(310, 320)[::-1],
              "none": np.zeros(0, dtype=np.int64)}[rows]
    taken = take_rows(column, picked)
    assert taken.type == column.type
    assert taken.to_pylist() == column.take(pa.array(picked, pa.int64())).to_pylist()
    assert len(taken) == len(picked)
