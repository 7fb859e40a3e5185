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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from evalset.contract import POOL_SPEC_RULES
from evalset.errors import InputError
from evalset.metrics.ranking import TieRule, order_run, position_in_group
from evalset.params import check, validate_params
from evalset.seeds import generator

PAIR_ID_DIGITS = 16


# ------------------------------------------------------------------------------------------------- pair ids
def pair_id(query_id: str, doc_id: str) -> str:
    """The opaque, stable id of a (query, document) pair: 16 hex digits of sha256 of ``query_id\\tdoc_id``."""
    return hashlib.sha256(f"{query_id}\t{doc_id}".encode()).hexdigest()[:PAIR_ID_DIGITS]


def pair_ids(query_ids: Iterable[str] | pa.Array, doc_ids: Iterable[str] | pa.Array) -> np.ndarray:
    """:func:`pair_id` of each pair, as an object array. Raises ValueError on a (64-bit) collision."""
    queries, docs = (ids.cast(pa.large_string()) if isinstance(ids, pa.Array)
                     else pa.array(np.asarray(ids, dtype=object).astype(str), pa.large_string())
                     for ids in (query_ids, doc_ids))
    if len(queries) != len(docs):
        raise ValueError(f"{len(queries)} query ids but {len(docs)} document ids")
    tab = pa.scalar("\t", pa.large_string())
    joined = pc.binary_join_element_wise(queries, docs, tab).cast(pa.large_binary()).to_pylist()
    ids = np.array([hashlib.sha256(key).hexdigest()[:PAIR_ID_DIGITS] for key in joined], dtype=object)
    if len(pd.unique(ids)) != len(ids):
        raise ValueError("two different pairs got the same pair_id (a sha256 prefix collision); please report")
    return ids


# ------------------------------------------------------------------------------------------------- the pool
class UnknownQueriesError(InputError):
    """Query ids asked for that no run answers (almost always an id mismatch between files)."""

    def __init__(self, query_ids: list[str]):
        self.query_ids = query_ids
        super().__init__(f"{len(query_ids)} query id(s) to pool are in no run: {', '.join(query_ids[:5])}")


@dataclass(frozen=True)
class Pool:
    """A judging pool and how it was made (see the module docstring for every convention).

    Attributes
    ----------
    pairs : DataFrame
        ``pair_id, query_id, doc_id, order, best_rank, systems``, one row per pair to judge, in judging order.
    sources : DataFrame
        ``query_id, doc_id, system, rank``: which system put each pooled pair in its top k, at which rank
        (never shown to annotators). Sorted by query, document, system.
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


@dataclass(frozen=True)
class TopK:
    """Every system's top k per query, stacked, as integer codes (what :func:`collect_top_k` returns as a frame).

    ``query_code`` indexes ``queries`` and ``doc_code`` indexes ``docs``, both sorted in byte order, so that
    sorting codes sorts ids; ``system_code`` indexes ``systems`` (sorted names); ``rank`` is 1-based.
    """

    query_code: np.ndarray
    doc_code: np.ndarray
    system_code: np.ndarray
    rank: np.ndarray
    queries: pa.Array
    docs: pa.Array
    systems: list[str]

    def to_frame(self, rows: np.ndarray | None = None) -> pd.DataFrame:
        """``query_id, doc_id, system, rank`` for the given row positions (all rows by default)."""
        rows = np.arange(len(self.rank)) if rows is None else rows
        return pd.DataFrame({
            "query_id": self.queries.take(pa.array(self.query_code[rows])).to_pandas(),
            "doc_id": self.docs.take(pa.array(self.doc_code[rows])).to_pandas(),
            "system": pd.Categorical.from_codes(self.system_code[rows], categories=self.systems),
            "rank": self.rank[rows],
        })


def _strings(index: pd.Index) -> pa.Array:
    return pa.array(index.astype(str), pa.large_string())


def _run_top_k(run: pd.DataFrame, k: int, ties: TieRule, keep: set[str] | None) -> tuple:
    """One run's top k as (query vocabulary, query codes, doc vocabulary, doc codes, ranks), unused ids dropped."""
    ordered = order_run(run, ties)
    rows = ordered.position < k
    if keep is not None:
        rows &= np.isin(ordered.query_code, np.flatnonzero(ordered.query_ids.astype(str).isin(keep)))
    used_queries, query_codes = np.unique(ordered.query_code[rows], return_inverse=True)
    docs = pc.dictionary_encode(ordered.doc_id.take(pa.array(ordered.row[rows])).combine_chunks())
    return (_strings(ordered.query_ids).take(pa.array(used_queries)), query_codes,
            pc.cast(docs.dictionary, pa.large_string()), docs.indices.to_numpy(zero_copy_only=False).astype(np.int64),
            ordered.position[rows] + 1)


def _merge_vocabularies(vocabularies: list[pa.Array], local_codes: list[np.ndarray]) -> tuple[np.ndarray, pa.Array]:
    """Codes into one vocabulary sorted in byte order; returns (codes, vocabulary).

    Arrow's hashing and sorting kernels do this in C++: merging millions of document ids in Python would
    dominate the pooling time.
    """
    if not vocabularies:
        return np.zeros(0, dtype=np.int64), pa.array([], pa.large_string())
    encoded = pc.dictionary_encode(pa.concat_arrays(vocabularies))
    order = pc.sort_indices(encoded.dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    code_of_entry = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    offsets = np.cumsum([0, *map(len, vocabularies)])[:-1]
    codes = [code_of_entry[offset + local] for offset, local in zip(offsets, local_codes, strict=True)]
    return np.concatenate(codes), encoded.dictionary.take(pa.array(order))


def stack_top_k(
    runs: Mapping[str, pd.DataFrame] | Iterable[tuple[str, pd.DataFrame]],
    depth: int,
    depths: Mapping[str, int] | None = None,
    ties: TieRule = "trec",
    query_ids: Iterable[str] | None = None,
) -> TopK:
    """Every system's top k per query, in the tie order of :func:`evalset.metrics.ranking.order_run`.

    ``runs`` maps system names to runs (from :func:`evalset.io.trec.read_run`); an iterable of pairs is
    consumed one run at a time, so a generator that reads each file lazily keeps only top-k codes in memory.
    ``depths`` overrides ``depth`` per system. With ``query_ids``, only those queries are kept.
    """
    depth, ties = check("depth", depth, POOL_SPEC_RULES["depth"]), check("ties", ties, POOL_SPEC_RULES["ties"])
    depths = {name: check(f"depth of {name}", k, POOL_SPEC_RULES["depth"]) for name, k in (depths or {}).items()}
    keep = None if query_ids is None else set(map(str, query_ids))
    parts: dict[str, tuple] = {}
    for name, run in runs.items() if isinstance(runs, Mapping) else runs:
        if name in parts:
            raise InputError(f"two runs are named {name!r}")
        parts[name] = _run_top_k(run, depths.get(name, depth), ties, keep) if len(run) else None
    unknown = sorted(set(depths) - set(parts))
    if unknown:
        raise InputError(f"per-system depth for unknown system(s) {', '.join(unknown)}")
    systems = sorted(name for name, part in parts.items() if part is not None)
    stacked = [parts[name] for name in systems]
    query_code, queries = _merge_vocabularies([p[0] for p in stacked], [p[1] for p in stacked])
    doc_code, docs = _merge_vocabularies([p[2] for p in stacked], [p[3] for p in stacked])
    lengths = [len(p[4]) for p in stacked]
    return TopK(
        query_code=query_code,
        doc_code=doc_code,
        system_code=np.repeat(np.arange(len(systems), dtype=np.int16), lengths),
        rank=np.concatenate([p[4] for p in stacked]).astype(np.int32) if stacked else np.zeros(0, np.int32),
        queries=queries,
        docs=docs,
        systems=systems,
    )


def collect_top_k(
    runs: Mapping[str, pd.DataFrame] | Iterable[tuple[str, pd.DataFrame]],
    depth: int,
    depths: Mapping[str, int] | None = None,
    ties: TieRule = "trec",
    query_ids: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Every system's top k per query as one frame ``query_id, doc_id, system, rank`` (see :func:`stack_top_k`)."""
    return stack_top_k(runs, depth, depths, ties, query_ids).to_frame()


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
    seed: int = 0,
) -> Pool:
    """Pool the top ``depth`` documents of every run, per query, into blind judging pairs.

    Parameters
    ----------
    runs : mapping or iterable of (name, run)
        Runs as read by :func:`evalset.io.trec.read_run` (or :func:`evalset.io.trec.run_from_frame`).
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
    queries = top.queries.to_numpy(zero_copy_only=False)
    if wanted is not None:
        answered = set(queries)
        missing = [q for q in wanted if q not in answered]
        if missing:
            raise UnknownQueriesError(missing)
    candidates, pair_of_row = _candidate_pairs(top)
    is_judged = _judged_mask(candidates["query_id"], candidates["doc_id"], judged)
    kept = candidates[~is_judged]
    kept = apply_budget(kept, budget) if budget is not None else kept
    in_pool = np.zeros(len(candidates), dtype=bool)
    in_pool[kept.index.to_numpy()] = True
    all_depths = {name: int((depths or {}).get(name, depth)) for name in top.systems}
    pool_rows = np.flatnonzero(in_pool[pair_of_row])
    pool_rows = pool_rows[np.lexsort((top.system_code[pool_rows], pair_of_row[pool_rows]))]
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


def _candidate_pairs(top: TopK) -> tuple[pd.DataFrame, np.ndarray]:
    """The distinct pairs in canonical order (query, then document, byte order), and each row's pair."""
    n_docs = max(len(top.docs), 1)
    keys, pair_of_row = np.unique(top.query_code * n_docs + top.doc_code, return_inverse=True)
    query_code, doc_code = keys // n_docs, keys % n_docs
    query_id = top.queries.take(pa.array(query_code))
    doc_id = top.docs.take(pa.array(doc_code))
    candidates = pd.DataFrame({
        "pair_id": pair_ids(query_id, doc_id),
        "query_id": query_id.to_pandas(),
        "doc_id": doc_id.to_pandas(),
        "query_code": query_code,
        "best_rank": _group_min(top.rank, pair_of_row, len(keys)),
        "systems": np.bincount(pair_of_row, minlength=len(keys)),
    })
    return candidates, pair_of_row


def _group_min(values: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    out = np.full(groups, np.iinfo(np.int32).max, dtype=np.int32)
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    if len(order):
        out[group[order][starts]] = np.minimum.reduceat(values[order], starts)
    return out


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
    order[np.lexsort((within, query_rank[query_codes]))] = np.arange(1, len(query_codes) + 1)
    return order


def _in_judging_order(kept: pd.DataFrame, seed: int) -> pd.DataFrame:
    pairs = kept[["pair_id", "query_id", "doc_id"]].assign(
        order=judging_order(kept["query_code"].to_numpy(), seed),
        best_rank=kept["best_rank"].to_numpy(),
        systems=kept["systems"].to_numpy(),
    )
    return pairs.sort_values("order").reset_index(drop=True)


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


def _overlap(top: TopK, pair_of_row: np.ndarray, n_pairs: int) -> pd.DataFrame:
    member = sp.csr_matrix((np.ones(len(pair_of_row), dtype=np.int64), (pair_of_row, top.system_code)),
                           shape=(n_pairs, len(top.systems)))
    shared = (member.T @ member).toarray()
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
