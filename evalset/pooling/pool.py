"""Judging pools: the union of several systems' top k, blind and in a seeded order, and judge-the-holes.

Conventions
-----------
- A system's top k is taken in the order of :func:`evalset.metrics.ranking.order_run` (as ``top_k`` does)
  under the declared tie rule (default ``trec``), so a pool and a score always see the same ranking. A
  document repeated in a ranking counts once, at its first position.
- Query and document ids are compared in byte (code point) order wherever an order is needed.
- ``pair_id`` is the first 16 hex digits of ``sha256(query_id + "\\t" + doc_id)`` (UTF-8): the same pair
  always gets the same id, whatever the seed, the runs or their order, and the id says nothing of a system or
  a rank.
- ``order`` is the judging order, 1-based: the queries in a seeded random order, and within each query its
  documents in a seeded random order (the pairs of one query stay together, as TREC assessors judge a topic
  at a time). It depends only on the set of pairs and the seed (numpy ``default_rng``).
- ``--budget N`` keeps at most N pairs (after judged pairs are left out): pairs are ranked within their query
  by best rank across systems, then by the number of systems that retrieved them (more first), then by
  ``pair_id``; queries are then filled round-robin: every query's first pair, then every query's second pair,
  and so on, until N pairs are kept. Within a round, queries whose pair has the better best rank (then more
  systems, then the smaller query id) come first, so per-query counts differ by at most one unless a query runs
  out of candidates.
- Per-system statistics describe the full top-k union (before judged pairs or a budget take pairs out):
  ``contributed`` (pairs in its top k), ``unique`` (pairs no other system has in its top k), ``overlap``
  (pairs two systems share), and ``in_pool`` (its pairs in the final pool). ``judged_at_k`` (with judged
  pairs given) is the share of its top k already judged, averaged over the pool's queries (a query it did
  not answer counts 0; the divisor is always its k).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.metrics.ranking import TieRule, position_in_group
from evalset.params import check, validate_params
from evalset.pooling.spec import POOL_SPEC_RULES
from evalset.pooling.topk import TopK, stack_top_k
from evalset.seeds import generator
from evalset.speed.memory import release_unused

PAIR_ID_DIGITS = 16


# ------------------------------------------------------------------------------------------------- pair ids
def pair_id(query_id: str, doc_id: str) -> str:
    """The opaque, stable id of a (query, document) pair: 16 hex digits of sha256 of ``query_id\\tdoc_id``."""
    return hashlib.sha256(f"{query_id}\t{doc_id}".encode()).hexdigest()[:PAIR_ID_DIGITS]


def pair_ids(query_ids: Iterable[str] | pa.Array, doc_ids: Iterable[str] | pa.Array) -> np.ndarray:
    """:func:`pair_id` of each pair, as an object array. Raises ValueError on a (64-bit) collision."""
    return _pair_id_strings(query_ids, doc_ids).to_numpy(zero_copy_only=False)


def _pair_id_strings(query_ids: Iterable[str] | pa.Array, doc_ids: Iterable[str] | pa.Array) -> pa.Array:
    queries, docs = (ids.cast(pa.large_string()) if isinstance(ids, pa.Array)
                     else pa.array(np.asarray(ids, dtype=object).astype(str), pa.large_string())
                     for ids in (query_ids, doc_ids))
    if len(queries) != len(docs):
        raise ValueError(f"{len(queries)} query ids but {len(docs)} document ids")
    keys = pa.table({"key": pc.binary_join_element_wise(queries, docs, pa.scalar("\t", pa.large_string()))})
    with duckdb.connect() as database:  # DuckDB's sha256 of the UTF-8 bytes, hashlib's digest: 2x faster on 2.6M
        database.register("keys", keys)
        ids = database.sql(f"select left(sha256(key), {PAIR_ID_DIGITS}) as id from keys").arrow().read_all()["id"]
    if pc.count_distinct(ids).as_py() != len(ids):
        raise ValueError("two different pairs got the same pair_id (a sha256 prefix collision); please report")
    return ids.combine_chunks()


# ------------------------------------------------------------------------------------------------- the pool
class UnknownQueriesError(InputError):
    """Query ids asked for that no run answers (almost always an id mismatch between files)."""

    def __init__(self, query_ids: list[str]):
        self.query_ids = query_ids
        super().__init__(f"{len(query_ids)} query id(s) to pool are in no run: {', '.join(query_ids[:5])}")

    def in_file(self, queries: pd.DataFrame, path: str | os.PathLike) -> InputError:
        """This error naming the queries file ``path`` and the line of the first unknown id (``queries`` as
        :func:`evalset.io.queries.read_queries` read it, its line numbers in ``attrs``)."""
        line = queries.attrs["line_numbers"][queries["query_id"].tolist().index(self.query_ids[0])]
        return InputError(f"query id {self.query_ids[0]} is in no run ({self})", os.fspath(path), line)


@dataclass(frozen=True)
class Pool:
    """A judging pool and how it was made (see the module docstring for every convention).

    Attributes
    ----------
    pairs : DataFrame
        ``pair_id, query_id, doc_id, order, best_rank, systems``, one row per pair to judge, in judging order.
    sources : DataFrame
        ``query_id, doc_id, system, rank``: which system put each pooled pair in its top k, at which rank
        (never shown to annotators). Sorted by query, document, system. The ids and systems are categoricals (a
        pair repeats once per system that has it: 20M rows of 2.6M pairs hold the ids once).
    systems : DataFrame
        Indexed by system name: ``depth, contributed, unique, in_pool`` and, when judged pairs were given,
        ``judged_at_k``.
    overlap : DataFrame
        System x system: pairs both have in their top k (the diagonal is ``contributed``).
    pairs_per_query : Series
        Pairs in the pool per query id, zeros included, in query id order.
    candidates : int
        Pairs in the top-k union before judged pairs and the budget were taken out.
    judged_excluded, budget_dropped : int
        Pairs left out because already judged, and because of the budget.
    """

    pairs: pd.DataFrame
    sources: pd.DataFrame
    systems: pd.DataFrame
    overlap: pd.DataFrame
    pairs_per_query: pd.Series
    candidates: int
    judged_excluded: int
    budget_dropped: int
    depth: int
    depths: dict[str, int]
    ties: str
    seed: int
    budget: int | None


@validate_params(POOL_SPEC_RULES)
def build_pool(
    runs: Mapping[str, pd.DataFrame] | Iterable[tuple[str, pd.DataFrame]],
    depth: int,
    *,
    depths: Mapping[str, int] | None = None,
    ties: TieRule = "trec",
    query_ids: Iterable[str] | None = None,
    judged: pd.DataFrame | None = None,
    budget: int | None = None,
    seed: int = DEFAULT_SEED,
) -> Pool:
    """Pool the top ``depth`` documents of every run, per query, into blind judging pairs.

    Parameters
    ----------
    runs : mapping or iterable of (name, run)
        Runs as read by :func:`evalset.io.trec.read_run` (or :func:`evalset.io.runframe.run_from_frame`).
    depth : int
        k for every system; ``depths`` overrides it per system name.
    ties : {"trec", "run", "docid", "expected"}
        The tie rule of :mod:`evalset.metrics.ranking` (the same one scoring uses).
    query_ids : iterable of str, optional
        Restrict the pool to these queries. Each must be answered by at least one run (an id no run has
        is almost always an id mismatch, so it is refused with :class:`UnknownQueriesError`).
    judged : DataFrame, optional
        ``query_id, doc_id`` pairs already judged (:func:`evalset.io.annotations.read_judged_pairs`, or qrels, whose
        rows with a negative grade do not count); they are left out (judge-the-holes), and each system's
        judged@k is reported.
    budget : int, optional
        Keep at most this many pairs, by the rule in the module docstring.
    seed : int
        Seed of the judging order.

    The depths, the tie rule, the budget and the seed are checked against
    :data:`evalset.contract.POOL_SPEC_RULES` first.

    Returns
    -------
    Pool
    """
    wanted = None if query_ids is None else list(dict.fromkeys(map(str, query_ids)))
    top = stack_top_k(runs, depth, depths, ties, wanted)
    release_unused()  # what reading the runs left: the pairs' peak does not stack on it
    queries = top.queries.to_numpy(zero_copy_only=False)
    if wanted is not None:
        answered = set(queries)
        missing = [q for q in wanted if q not in answered]
        if missing:
            raise UnknownQueriesError(missing)
    candidates, pair_of_row, by_pair = _candidate_pairs(top)
    is_judged = _judged_mask(candidates["query_id"], candidates["doc_id"], judged)
    kept = candidates[~is_judged]
    kept = apply_budget(kept, budget) if budget is not None else kept
    in_pool = np.zeros(len(candidates), dtype=bool)
    in_pool[kept.index.to_numpy()] = True
    all_depths = {name: int((depths or {}).get(name, depth)) for name in top.systems}
    pool_rows = by_pair[in_pool[pair_of_row[by_pair]]]
    return Pool(
        pairs=_in_judging_order(kept, seed),
        sources=top.to_frame(pool_rows),
        systems=_system_table(top, all_depths, pair_of_row, candidates["systems"].to_numpy(), in_pool,
                              None if judged is None else is_judged, len(queries)),
        overlap=_overlap(top, pair_of_row, len(candidates)),
        pairs_per_query=pd.Series(np.bincount(kept["query_code"].to_numpy(), minlength=len(queries)),
                                  index=pd.Index(queries, name="query_id"), name="pairs"),
        candidates=len(candidates),
        judged_excluded=int(is_judged.sum()),
        budget_dropped=int((~is_judged).sum()) - len(kept),
        depth=int(depth),
        depths={name: k for name, k in all_depths.items() if k != depth},
        ties=ties,
        seed=int(seed),
        budget=budget,
    )


def _candidate_pairs(top: TopK) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The distinct pairs in canonical order (query, then document, byte order), each row's pair, and the rows
    in (pair, system) order: one stable sort of the rows by pair (they are stacked by system)."""
    n_docs = max(len(top.docs), 1)
    key = top.query_code.astype(np.int64) * n_docs + top.doc_code
    rows = np.argsort(key, kind="stable")
    key = key[rows]
    first = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(first)
    keys = key[starts]
    del key
    pair_of_row = np.empty(len(rows), dtype=np.int32 if len(starts) < 2**31 else np.int64)
    pair_of_row[rows] = np.cumsum(first, dtype=pair_of_row.dtype) - 1
    del first
    query_code, doc_code = keys // n_docs, keys % n_docs
    query_id = top.queries.take(pa.array(query_code))
    doc_id = top.docs.take(pa.array(doc_code))
    candidates = pd.DataFrame({
        "pair_id": _pair_id_strings(query_id, doc_id).to_pandas(),  # arrow's strings, as the ids' columns
        "query_id": query_id.to_pandas(),
        "doc_id": doc_id.to_pandas(),
        "query_code": query_code,
        "best_rank": np.minimum.reduceat(top.rank[rows], starts) if len(starts) else np.zeros(0, np.int32),
        "systems": np.diff(np.r_[starts, len(rows)]),
    })
    return candidates, pair_of_row, rows


def _judged_mask(query_id: np.ndarray, doc_id: np.ndarray, judged: pd.DataFrame | None) -> np.ndarray:
    if judged is None or len(judged) == 0:
        return np.zeros(len(query_id), dtype=bool)
    missing = [c for c in ("query_id", "doc_id") if c not in judged.columns]
    if missing:
        raise InputError(f"judged pairs are missing column(s) {', '.join(missing)}")
    if "grade" in judged.columns:  # qrels given directly: a negative grade means pooled but not judged
        judged = judged[pd.to_numeric(judged["grade"], errors="coerce").fillna(0) >= 0]
    known = pd.MultiIndex.from_arrays([judged["query_id"].astype(str), judged["doc_id"].astype(str)])
    return pd.MultiIndex.from_arrays([query_id, doc_id]).isin(known)


def apply_budget(pairs: pd.DataFrame, budget: int) -> pd.DataFrame:
    """Keep at most ``budget`` pairs: within each query by best rank, queries filled round-robin.

    ``pairs`` needs ``pair_id, query_code, best_rank, systems`` (``query_code`` in query id order). The rule
    is the module docstring's; the kept rows come back in their original order.
    """
    budget = check("budget", budget, POOL_SPEC_RULES["budget"])
    if len(pairs) <= budget:
        return pairs
    best, voters = pairs["best_rank"].to_numpy(), pairs["systems"].to_numpy()
    query = pairs["query_code"].to_numpy()
    in_query = np.lexsort((pairs["pair_id"].to_numpy().astype(str), -voters, best, query))
    round_of = np.empty(len(pairs), dtype=np.int64)
    round_of[in_query] = position_in_group(query[in_query])
    fill = np.lexsort((query, -voters, best, round_of))
    return pairs.iloc[np.sort(fill[:budget])]


def judging_order(query_codes: np.ndarray, seed: int) -> np.ndarray:
    """1-based judging order of pairs given in canonical order (query, then document, byte order).

    Queries get a seeded random order; the pairs of a query stay together, in a seeded random order.
    """
    rng = generator(seed)
    distinct = np.unique(query_codes)
    query_rank = np.empty(distinct.max() + 1 if len(distinct) else 0, dtype=np.int64)
    query_rank[distinct] = rng.permutation(len(distinct))
    within = rng.permutation(len(query_codes))
    order = np.empty(len(query_codes), dtype=np.int64)
    # one key (query's rank, then the draw within; the draws are distinct): the order lexsort gives, twice as fast
    order[np.argsort(query_rank[query_codes] * len(query_codes) + within)] = np.arange(1, len(query_codes) + 1)
    return order


def _in_judging_order(kept: pd.DataFrame, seed: int) -> pd.DataFrame:
    order = judging_order(kept["query_code"].to_numpy(), seed)
    pairs = kept[["pair_id", "query_id", "doc_id"]].assign(
        order=order, best_rank=kept["best_rank"].to_numpy(), systems=kept["systems"].to_numpy())
    in_order = np.empty(len(order), dtype=np.int64)
    in_order[order - 1] = np.arange(len(order))  # the order is a permutation of 1..n: no sort needed
    return pairs.iloc[in_order].reset_index(drop=True)


def _system_table(top: TopK, depths: dict[str, int], pair_of_row: np.ndarray, voters: np.ndarray,
                  in_pool: np.ndarray, is_judged: np.ndarray | None, n_queries: int) -> pd.DataFrame:
    n, codes = len(top.systems), top.system_code
    table = pd.DataFrame({
        "depth": [depths[name] for name in top.systems],
        "contributed": np.bincount(codes, minlength=n),
        "unique": np.bincount(codes[voters[pair_of_row] == 1], minlength=n),
        "in_pool": np.bincount(codes[in_pool[pair_of_row]], minlength=n),
    }, index=pd.Index(top.systems, name="system"))
    if is_judged is not None:
        judged_rows = np.bincount(codes[is_judged[pair_of_row]], minlength=n)
        table["judged_at_k"] = judged_rows / (table["depth"].to_numpy() * max(n_queries, 1))
    return table


OVERLAP_BLOCK_CELLS = 1 << 24
"""Cells of the dense block of pairs x systems :func:`_overlap` counts at a time (64 MiB of float32)."""


def _overlap(top: TopK, pair_of_row: np.ndarray, n_pairs: int) -> pd.DataFrame:
    n = len(top.systems)
    shared = np.zeros((n, n), dtype=np.int64)
    block = max(OVERLAP_BLOCK_CELLS // max(n, 1), 1)
    for start in range(0, n_pairs, block):  # the rows of a block of pairs, as a dense 0/1 matrix
        stop = min(start + block, n_pairs)
        in_block = (pair_of_row >= start) & (pair_of_row < stop)
        member = np.zeros((stop - start, n), dtype=np.float32)
        member[pair_of_row[in_block] - start, top.system_code[in_block]] = 1.0
        shared += np.rint(member.T @ member).astype(np.int64)  # exact: a block's counts are at most 2**24
    return pd.DataFrame(shared, index=pd.Index(top.systems, name="system"), columns=top.systems)


# ------------------------------------------------------------------------------------------- texts, tasks
def attach_texts(pairs: pd.DataFrame, corpus: pd.DataFrame,
                 queries: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Join document texts (and query texts) to pairs, in the pairs' order.

    Returns ``(tasks, missing)``: ``tasks`` has ``pair_id, query_id, doc_id, query, text`` (``query`` only
    with ``queries``; ``title``/``url`` when the corpus has them) for the pairs whose document has a text;
    ``missing`` lists ``pair_id, query_id, doc_id`` of the pairs whose document is not in the corpus. No
    pair is dropped without being in one of the two.
    """
    texts = corpus.drop_duplicates("doc_id").set_index("doc_id")
    has_text = pairs["doc_id"].astype(str).isin(texts.index).to_numpy()
    found = pairs.loc[has_text, ["pair_id", "query_id", "doc_id"]].astype({"query_id": str, "doc_id": str})
    tasks = found.reset_index(drop=True)
    if queries is not None:
        query_text = queries.drop_duplicates("query_id").set_index("query_id")["query"]
        tasks["query"] = query_text.reindex(tasks["query_id"]).to_numpy()
    for column in texts.columns:
        tasks[column] = texts[column].reindex(tasks["doc_id"]).to_numpy()
    missing = pairs.loc[~has_text, ["pair_id", "query_id", "doc_id"]].reset_index(drop=True)
    return tasks, missing
