"""Scoring run files: a big run streamed in blocks of whole queries, in bounded memory, and many runs at once.

Conventions
-----------
- A block holds whole queries (:func:`evalset.io.runstream.query_blocks`), and a query's values depend only on its
  own rows and judgments, so a block is scored against the qrels of its queries alone
  (:func:`restrict_qrels`): the per-query values, and the notes (repeated documents, unjudged queries and rows,
  missing queries), are exactly :func:`evalset.metrics.engine.evaluate`'s on the whole run. Memory holds the
  prepared qrels, one block and the per-query values, never the whole run.
- A run whose lines are not grouped by query (a query id that reappears after another) is read whole and scored
  by :func:`~evalset.metrics.engine.evaluate`: never wrongly, only without the memory bound (sort such a file by
  query id, ``sort -s -k1,1``, to stream it).
- When a file is streamed: see :func:`evalset.io.runstream.streams` (big files); ``stream=True`` or ``False``
  forces it either way.
- Many runs are scored side by side on a thread per core (numpy and arrow release the GIL), against qrels
  prepared once; the results are those of scoring them one after the other.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from evalset.contract import EvaluationContract, reads_ranks
from evalset.io import runstream
from evalset.io.frames import qrels_frame
from evalset.io.trec import read_run
from evalset.metrics.engine import evaluate
from evalset.metrics.measures import Measure, parse_measure
from evalset.metrics.prepared import PreparedQrels, prepare_qrels
from evalset.speed.memory import release_unused
from evalset.speed.parallel import parallel_map
from evalset.speed.strings import take_rows

QueryRows = tuple[np.ndarray | None, np.ndarray, np.ndarray]


def restrict_qrels(prepared: PreparedQrels, queries: np.ndarray, by_query: QueryRows | None = None) -> PreparedQrels:
    """``prepared`` restricted to some of its queries (``queries``: ascending indices into ``query_ids``), each
    query's judgments in their order: every value of those queries is the same as against all of ``prepared``.
    ``by_query``: :func:`query_rows` of ``prepared`` (computed when not given)."""
    order, query_start, query_stop = by_query or query_rows(prepared)
    first, stop = query_start[queries], query_stop[queries]
    rows = _ranges(first, stop) if order is None else order[_ranges(first, stop)]
    new_code = np.repeat(np.arange(len(queries)), stop - first)
    ideal_start = np.searchsorted(prepared.ideal_query_code, queries, side="left")
    ideal_stop = np.searchsorted(prepared.ideal_query_code, queries, side="right")
    ideal = _ranges(ideal_start, ideal_stop)
    return PreparedQrels(
        query_ids=prepared.query_ids[queries],
        query_code=new_code,
        doc_id=take_rows(prepared.doc_id, rows),
        grade=prepared.grade[rows],
        num_relevant=prepared.num_relevant[queries],
        num_judged_nonrelevant=prepared.num_judged_nonrelevant[queries],
        ideal_query_code=np.repeat(np.arange(len(queries)), ideal_stop - ideal_start),
        ideal_gain=prepared.ideal_gain[ideal],
        ideal_position=prepared.ideal_position[ideal],
        contract=replace(prepared.contract, missing="zero", undefined="skip"),  # every query, NaN kept
    )


def query_rows(prepared: PreparedQrels) -> QueryRows:
    """Where each query's qrels rows are, for :func:`restrict_qrels`: the rows ordered by query (stably), and where
    each query's rows start and stop in that order. When each query's rows are together already (as in qrels
    files), the order is None (the rows as they are) and nothing of the size of the qrels is made."""
    code, count = prepared.query_code, len(prepared.query_ids)
    change = np.flatnonzero(code[1:] != code[:-1]) + 1
    if len(code) and len(change) == count - 1:  # each query's rows together
        runs = np.r_[0, change]
        start, stop = np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64)
        start[code[runs]], stop[code[runs]] = runs, np.r_[change, len(code)]
        return None, start, stop
    del change
    order = np.argsort(code, kind="stable")
    bounds = np.searchsorted(code[order], np.arange(count + 1))
    return order.astype(np.int32) if len(order) < 2**31 else order, bounds[:-1], bounds[1:]


def _ranges(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(start[i], stop[i])``."""
    length = stop - start
    total = int(length.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(start - np.r_[0, np.cumsum(length)[:-1]], length)
    return np.arange(total) + offsets


_EMPTY_RUN = pd.DataFrame({"query_id": pd.Series([], dtype=object), "doc_id": pd.Series([], dtype=object),
                           "rank": np.zeros(0, np.int64), "score": np.zeros(0, np.float64)})


def evaluate_blocks(blocks: Iterable[tuple[Sequence[str], pd.DataFrame]], prepared: PreparedQrels,
                    measures: Iterable[Measure | str], max_retrieved: int | None = None) -> pd.DataFrame:
    """:func:`~evalset.metrics.engine.evaluate` of a run given as blocks of whole queries (no query in two blocks),
    each with its distinct query ids (as :func:`evalset.io.runstream.query_blocks` gives them): the same table and
    ``attrs``."""
    measures = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    columns = [str(m) for m in measures]
    values = np.full((len(prepared.query_ids), len(measures)), np.nan)
    in_run = np.zeros(len(prepared.query_ids), dtype=bool)
    counts: dict[str, int] = {}
    by_query = query_rows(prepared)
    release_unused()  # what reading and preparing the qrels left: the blocks' peaks do not stack on it

    def score(run: pd.DataFrame, queries: np.ndarray) -> None:
        table = evaluate(run, restrict_qrels(prepared, queries, by_query), measures, max_retrieved=max_retrieved)
        values[queries] = table[columns].to_numpy()
        for key, count in table.attrs.items():
            counts[key] = counts.get(key, 0) + count

    for query_ids, block in blocks:
        found = prepared.query_ids.get_indexer(query_ids)
        queries = np.sort(found[found >= 0])
        in_run[queries] = True
        score(block, queries)
        del block  # (the memory it frees is the next block's: handing it back to the system would only cost faults)
    counts.pop("missing_queries", None)
    score(_EMPTY_RUN, np.flatnonzero(~in_run))  # the judged queries absent from the run (and every key of attrs)
    counts["missing_queries"] = int(np.sum(~in_run))
    table = pd.DataFrame(dict(zip(columns, values.T, strict=True)), index=pd.Index(prepared.query_ids, name="query_id"))
    contract = prepared.contract
    if contract.undefined == "zero":
        table = table.fillna(0.0)
    if contract.missing == "skip":
        table = table[in_run]
    table.attrs.update(counts)
    return table


def evaluate_file(path: str | os.PathLike, prepared: PreparedQrels, measures: Iterable[Measure | str], *,
                  stream: bool | None = None, block_bytes: int | None = None,
                  max_retrieved: int | None = None) -> pd.DataFrame:
    """:func:`~evalset.metrics.engine.evaluate` of a run file: streamed when big (or ``stream``), else read whole;
    the same values either way (see the module's conventions). ``block_bytes``: the text read at a time when
    streaming (default :data:`evalset.io.runstream.STREAM_BLOCK_BYTES`); ``max_retrieved``: evaluate's."""
    measures = list(measures)
    rank = reads_ranks(prepared.contract.ties)
    if stream if stream is not None else runstream.streams(path):
        try:
            blocks = runstream.query_blocks(path, block_bytes or runstream.STREAM_BLOCK_BYTES, rank=rank)
            return evaluate_blocks(blocks, prepared, measures, max_retrieved)
        except runstream.RunNotGrouped:
            pass  # not grouped by query: read whole
    return evaluate(read_run(path, rank=rank), prepared, measures, max_retrieved=max_retrieved)


def evaluate_run_files(paths: Mapping[str, str | os.PathLike], qrels: pd.DataFrame | PreparedQrels,
                       measures: Iterable[Measure | str], contract: EvaluationContract | None = None, *,
                       stream: bool | None = None, block_bytes: int | None = None,
                       max_retrieved: int | None = None) -> dict[str, pd.DataFrame]:
    """:func:`evaluate_file` for several named run files against the same qrels (prepared once), side by side on
    a thread per core; the tables in the order given."""
    prepared = qrels if isinstance(qrels, PreparedQrels) else prepare_qrels(qrels, contract)
    measures = list(measures)
    tables = parallel_map(lambda path: evaluate_file(path, prepared, measures, stream=stream, block_bytes=block_bytes,
                                                     max_retrieved=max_retrieved), list(paths.values()))
    return dict(zip(paths, tables, strict=True))


def evaluate_runs(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame | PreparedQrels,
    measures: Iterable[Measure | str],
    contract: EvaluationContract | None = None,
    max_retrieved: int | None = None,
) -> dict[str, pd.DataFrame]:
    """:func:`~evalset.metrics.engine.evaluate` for several named runs against the same qrels (indexed once), side
    by side on a thread per core (numpy and arrow release the GIL); the tables in the order given, the same as one
    after the other."""
    prepared = qrels if isinstance(qrels, PreparedQrels) else prepare_qrels(qrels_frame(qrels), contract)
    measures = list(measures)
    tables = parallel_map(lambda run: evaluate(run, prepared, measures, max_retrieved=max_retrieved),
                          list(runs.values()))
    return dict(zip(runs, tables, strict=True))
