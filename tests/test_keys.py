"""Exact integer keys for id strings: order, equality, joins and repeats, including the collision paths."""

import numpy as np
import pytest

from evalset.speed import keys


def random_ids(rng, count, longest):
    alphabet = np.array(list("AZaz09-_./é"))
    return ["".join(rng.choice(alphabet, size=rng.integers(0, longest + 1))) for _ in range(count)]


@pytest.mark.parametrize("longest", [7, 20, 45])  # one word, three words, and the dictionary fallback (> 32 bytes)
def test_keys_order_like_the_byte_order_of_the_ids(longest):
    rng = np.random.default_rng(longest)
    ids = [*random_ids(rng, 3000, longest), "", "a", "a", "b"]
    (packed,) = keys.string_keys(ids)
    order = np.lexsort(packed.T[::-1])
    assert [ids[i].encode() for i in order] == sorted(i.encode() for i in ids)
    rows = {}
    for text, row in zip(ids, map(tuple, packed), strict=True):
        assert rows.setdefault(text, row) == row  # equal ids, equal keys
    assert len(set(rows.values())) == len(rows)  # different ids, different keys


def reference_join(query, ids, table_query, table_ids):
    where = {(q, d): i for i, (q, d) in enumerate(zip(table_query, table_ids, strict=True))}
    return [where.get((q, d), -1) for q, d in zip(query, ids, strict=True)]


@pytest.mark.parametrize("weak_hash", [False, True])
def test_join_matches_a_dictionary_lookup(monkeypatch, weak_hash):
    if weak_hash:  # every row of a query collides: the crowded-block path must still be exact
        monkeypatch.setattr(keys, "row_hash", lambda q, k, out: np.left_shift(q, 40, out=out, casting="unsafe"))
    rng = np.random.default_rng(3)
    ids = list(dict.fromkeys(random_ids(rng, 800, 12)))
    query = rng.integers(0, 5, size=len(ids))
    pairs = sorted(set(zip(query.tolist(), ids, strict=True)))
    query, ids = np.array([p[0] for p in pairs]), [p[1] for p in pairs]
    table = [pairs[i] for i in rng.choice(len(pairs), size=200, replace=False)] + [(1, "only-in-table-0123456789")]
    table_query, table_ids = np.array([t[0] for t in table]), [t[1] for t in table]
    run_keys, table_keys = keys.string_keys(ids, table_ids)
    found, repeated = keys.join(query, run_keys, table_query, table_keys)
    assert not repeated.any()
    assert found.tolist() == reference_join(query.tolist(), ids, table_query.tolist(), table_ids)
    assert (found >= 0).sum() == 200


@pytest.mark.parametrize("weak_hash", [False, True])
def test_repeated_rows_flag_every_repeat_after_the_first(monkeypatch, weak_hash):
    if weak_hash:
        monkeypatch.setattr(keys, "row_hash", lambda q, k, out: np.multiply(q, 0, out=out, casting="unsafe"))
    query = np.array([0, 0, 0, 1, 1, 0])
    (packed,) = keys.string_keys(["a", "b", "a", "a", "c", "a"])
    assert keys.repeated_rows(query, packed).tolist() == [False, False, True, False, False, True]


def test_keys_of_different_widths_join_exactly():
    (run_keys,) = keys.string_keys(["ab"])
    (table_keys,) = keys.string_keys(["abcdefghijklmnopq", "ab"])
    assert run_keys.shape[1] == 1 and table_keys.shape[1] == 3  # zero padding keeps them comparable
    assert keys.join(np.array([0]), run_keys, np.array([0, 0]), table_keys)[0].tolist() == [1]


@pytest.mark.parametrize("grouped", [True, False], ids=["each query's rows together", "queries interleaved"])
def test_repeated_pairs_in_blocks_of_whole_queries_are_repeated_rows(monkeypatch, grouped):
    monkeypatch.setattr(keys, "PAIR_BLOCK_ROWS", 64)  # a few hundred rows: blocks cut at query boundaries
    rng = np.random.default_rng(8)
    query = np.sort(rng.integers(0, 40, 2000)) if grouped else rng.integers(0, 40, 2000)
    query = np.unique(query, return_inverse=True)[1].astype(np.int32)  # codes 0..n-1, as query_codes makes them
    ids = [f"d{i}" for i in rng.integers(0, 60, len(query))]
    (packed,) = keys.string_keys(ids)
    expected = keys.repeated_rows(query, packed)
    assert 100 < expected.sum() < len(query)
    assert keys.repeated_pairs(query, ids).tolist() == expected.tolist()
