"""One vectorised engine that computes every measure of :mod:`evalset.metrics.measures` for all queries at once.

The run is ordered once (:func:`~evalset.metrics.ranking.order_run`), joined to the qrels by a sorted-key
search, and every measure is a weighted sum per query (``np.bincount``) over flat numpy arrays: there is no
Python loop over queries or documents.

Condensed scoring (``contract.unjudged == "condensed"``). The entries without a judgment are masked out
after the join and before positions are counted, so that every measure sees the condensed ranking; the
default convention pays nothing for it.

Ties. Each row belongs to a tie group: itself under a deterministic tie rule, or all the query's documents
with the same score under ``ties="expected"``. Each measure is written as a per-position expectation over the
orders of the group, which for a group of one is the plain value. For a group of n documents starting at
rank s+1 with r relevant ones, c relevant and c' judged non-relevant documents ranked above the group, and
a position s+u in it:

* P(relevant at s+u) = r/n; expected gain = mean gain of the group (this gives scikit-learn's tie-averaged
  DCG, and P, recall and judged likewise);
* AP term: (r/n) (c + 1 + (r-1)(u-1)/(n-1)) / (s+u), since the other r-1 relevant documents fall above a
  given position hypergeometrically;
* P(first relevant document at s+u) = C(n-u, r-1) / C(n, r) when c = 0 (RR sums it over 1/(s+u), success@k
  over the top k);
* bpref: the judged non-relevant documents of the group above a relevant one are uniform on {0..m}.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from evalset.contract import EvaluationContract, reads_ranks
from evalset.errors import InputError
from evalset.io.frames import qrels_frame, run_frame
from evalset.metrics.decomposition import gain as grade_gain
from evalset.metrics.measures import Measure, parse_measure
from evalset.metrics.prepared import MeasureInput, PreparedQrels, Rows, prepare_qrels
from evalset.metrics.ranking import OrderedRun, order_run, position_in_group
from evalset.params import POSITIVE_INT, check
from evalset.speed.keys import join, join_keys
from evalset.speed.strings import take_rows

_NOT_IN_QRELS = np.iinfo(np.int64).min


def _group_sum(values: np.ndarray, starts: np.ndarray, group: np.ndarray) -> np.ndarray:
    return np.add.reduceat(values, starts)[group] if len(values) else values


def match_qrels(ordered: OrderedRun, prepared: PreparedQrels) -> tuple[np.ndarray, np.ndarray]:
    """Each ordered entry's qrels line (an index into ``prepared``'s rows, or -1), by an exact key join, and the
    entries that repeat an earlier entry of the same query (found by the same sort)."""
    qrels_query = ordered.query_ids.get_indexer(prepared.query_ids)[prepared.query_code]
    in_run = np.flatnonzero(qrels_query >= 0)  # qrels of the queries the run has
    doc_key, qrels_key = join_keys(ordered.doc_id, ordered.doc_key, lambda: ordered.row,
                                   take_rows(prepared.doc_id, in_run))
    match, repeated = join(ordered.query_code, doc_key, qrels_query[in_run], qrels_key)
    found = match >= 0
    match[found] = in_run[match[found]]
    return match, repeated


def _selected_rows(query_code: np.ndarray, score: np.ndarray | None, judged: np.ndarray):
    """The entries that can contribute to a measure: those in a tie group that holds a judged document (no
    other entry counts for anything; the counts above a group and the positions do not change). A group is an
    entry alone, or, with ``score`` given (expected ties), the query's entries with one score. Returns the
    entries, their group sizes, and where a group starts."""
    if score is None or len(query_code) == 0:
        selected = np.flatnonzero(judged)
        return selected, np.ones(len(selected)), np.ones(len(selected), dtype=bool)
    boundary = np.r_[True, (query_code[1:] != query_code[:-1]) | (score[1:] != score[:-1])]
    group_starts = np.flatnonzero(boundary)
    group = np.cumsum(boundary) - 1
    selected = np.flatnonzero(np.maximum.reduceat(judged, group_starts)[group])
    size = np.diff(np.r_[group_starts, len(query_code)])[group[selected]].astype(np.float64)
    return selected, size, boundary[selected]


def _rows(run: pd.DataFrame, prepared: PreparedQrels, pooled: bool = False,
          max_retrieved: int | None = None) -> tuple[Rows, dict[str, int]]:
    """The rows that can contribute, with their statistics and the call's notes; ``pooled``: count
    :attr:`Rows.pooled_above` too (a measure of :attr:`MeasureKind.pooled` asks); under trec_eval 9 the scores
    are compared in single precision (:func:`~evalset.metrics.ranking.order_run`); ``max_retrieved``: each
    ranking ends there (its first documents, a repeated one once)."""
    contract = prepared.contract
    ordered = order_run(run, contract.ties, dedupe=False, single_precision=contract.trec_eval_version == 9)
    match, repeated = match_qrels(ordered, prepared)
    query_code = ordered.query_code
    expected = contract.ties == "expected"
    score = ordered.score if expected else None
    if repeated.any():  # a document repeated in a ranking counts once, at its first position
        kept = ~repeated
        query_code, match = query_code[kept], match[kept]
        score = score[kept] if expected else None
    beyond = 0
    if max_retrieved is not None:
        within = position_in_group(query_code) < max_retrieved
        beyond = int(np.sum(~within))
        query_code, match = query_code[within], match[within]
        score = score[within] if expected else None
    matched = np.flatnonzero(match >= 0)
    judged = np.zeros(len(query_code), dtype=bool)
    judged[matched[prepared.grade[match[matched]] >= 0]] = True
    to_judged = prepared.query_ids.get_indexer(ordered.query_ids)
    rows_per_query = np.bincount(query_code, minlength=len(ordered.query_ids))
    condensed = {}
    if contract.unjudged == "condensed":  # the unjudged entries leave before positions are counted: ranks close up
        condensed["unjudged_removed"] = int(np.sum(~judged & (to_judged[query_code] >= 0)))
        query_code, match = query_code[judged], match[judged]
        score = score[judged] if expected else None
        judged = np.ones(len(query_code), dtype=bool)
    selected, size, boundary = _selected_rows(query_code, score, judged)
    retrieved = np.zeros(len(prepared.query_ids))
    in_judged = to_judged >= 0
    retrieved[to_judged[in_judged]] = np.bincount(query_code, minlength=len(ordered.query_ids))[in_judged]

    query = to_judged[query_code[selected]]
    in_qrels = query >= 0  # the rows of queries without judgments count for nothing
    selected, query, size, boundary = selected[in_qrels], query[in_qrels], size[in_qrels], boundary[in_qrels]
    starts = np.flatnonzero(np.r_[True, query_code[1:] != query_code[:-1]]) if len(query_code) else selected
    query_start = np.zeros(len(ordered.query_ids), dtype=np.int64)
    query_start[query_code[starts]] = starts
    position = selected - query_start[query_code[selected]]
    grade = np.where(match[selected] >= 0, prepared.grade[match[selected]], _NOT_IN_QRELS)
    pooled_above = None
    if pooled:
        negative = np.zeros(len(query_code))
        found = match >= 0
        negative[found] = prepared.grade[match[found]] < 0
        before = np.r_[0.0, np.cumsum(negative)]
        pooled_above = before[selected] - before[query_start[query_code[selected]]]
    queries_in_run = np.zeros(len(prepared.query_ids), dtype=bool)
    queries_in_run[to_judged[to_judged >= 0]] = True

    relevant = (grade >= contract.rel_level).astype(np.float64)
    judged = (grade >= 0).astype(np.float64)
    judged_nonrelevant = judged - relevant
    gain = np.where(grade > 0, grade_gain(grade, contract.gain), 0.0)

    group_starts = np.flatnonzero(boundary)
    group = np.cumsum(boundary) - 1
    group_relevant = _group_sum(relevant, group_starts, group)
    u = position - position[group_starts][group] + 1  # 1-based place inside the tie group

    new_query = np.r_[True, query[1:] != query[:-1]] if len(query) else np.zeros(0, bool)
    query_starts = np.flatnonzero(new_query)
    query_of_row = np.cumsum(new_query) - 1

    def before_group(values: np.ndarray) -> np.ndarray:
        exclusive = np.r_[0.0, np.cumsum(values)]
        return (exclusive[group_starts][group] - exclusive[query_starts][query_of_row]) if len(values) else values

    relevant_above = before_group(relevant)
    nonrelevant_above = before_group(judged_nonrelevant)

    others = np.divide((group_relevant - 1) * (u - 1), size - 1, out=np.zeros_like(size), where=size > 1)
    ap_term = (group_relevant / size) * (relevant_above + 1 + others) / (position + 1)

    first_relevant = np.zeros(len(query))
    candidate = (relevant_above == 0) & (group_relevant > 0)
    single = candidate & (size == 1)
    first_relevant[single] = 1.0
    tied = candidate & (size > 1) & (size - u >= group_relevant - 1)
    if tied.any():
        n, r, k = size[tied], group_relevant[tied], u[tied]
        first_relevant[tied] = np.exp(_log_choose(n - k, r - 1) - _log_choose(n, r))

    total_relevant = prepared.num_relevant[query]
    total_nonrelevant = prepared.num_judged_nonrelevant[query]
    cap = np.minimum(total_nonrelevant, total_relevant)
    m = _group_sum(judged_nonrelevant, group_starts, group)
    t = np.clip(total_relevant - nonrelevant_above, 0, m + 1)
    expected_above = (t * nonrelevant_above + t * (t - 1) / 2 + (m + 1 - t) * total_relevant) / (m + 1)
    per_relevant = 1.0 - np.divide(expected_above, cap, out=np.zeros_like(cap), where=cap > 0)
    bpref_term = np.where(u == 1, group_relevant * per_relevant, 0.0)

    stats = {
        "duplicates_removed": int(repeated.sum()),
        "unjudged_queries": int(np.sum(to_judged < 0)),
        "unjudged_query_rows": int(rows_per_query[to_judged < 0].sum()),
        **({"beyond_max_retrieved": beyond} if max_retrieved is not None else {}),
        **condensed,
    }
    rows = Rows(
        query=query,
        position=position,
        expected_relevant=group_relevant / size,
        expected_gain=_group_sum(gain, group_starts, group) / size,
        expected_judged=_group_sum(judged, group_starts, group) / size,
        ap_term=ap_term,
        first_relevant=first_relevant,
        bpref_term=bpref_term,
        queries_in_run=queries_in_run,
        retrieved=retrieved,
        pooled_above=pooled_above,
    )
    return rows, stats


def _log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln  # only tied groups need it; scipy is slow to import

    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _measure_values(measure: Measure, rows: Rows, prepared: PreparedQrels) -> np.ndarray:
    kind = measure.kind
    with np.errstate(divide="ignore", invalid="ignore"):
        values = kind.compute(MeasureInput(measure, rows, prepared))
    if kind.defined_without_relevant:
        return values
    return np.where(prepared.num_relevant > 0, values, np.nan)


def evaluate(
    run: pd.DataFrame,
    qrels: pd.DataFrame | PreparedQrels,
    measures: Iterable[Measure | str],
    contract: EvaluationContract | None = None,
    max_retrieved: int | None = None,
) -> pd.DataFrame:
    """Score one run per query.

    Parameters
    ----------
    run
        ``query_id, doc_id, score[, rank]`` (from :func:`evalset.io.trec.read_run` or
        :func:`evalset.io.runframe.run_from_frame`).
    qrels
        ``query_id, doc_id, grade`` or a :class:`PreparedQrels` (its contract is then used).
    measures
        :class:`Measure` objects or their spellings (``"ndcg@10"``).
    contract
        The conventions (default :class:`EvaluationContract`), among them ``trec_eval_version``, whose rules the
        measures defined by trec_eval's procedure and the tie rule ``trec`` follow
        (:mod:`evalset.metrics.trec_procedures`, :func:`~evalset.metrics.ranking.order_run`); ignored when
        ``qrels`` is prepared.
    max_retrieved
        Score each ranking's first ``max_retrieved`` documents only (trec_eval's ``-M``; a repeated document
        counted once, before the cut); the documents left out are counted in ``attrs["beyond_max_retrieved"]``.
        Not under ``ties=expected``, where the cut could split a tie group.

    Returns
    -------
    DataFrame indexed by ``query_id`` (the judged queries, in byte order; without the judged queries
    absent from the run when ``contract.missing == "skip"``), one float column per measure named by
    ``str(measure)``. NaN marks an undefined value (kept only when ``contract.undefined == "skip"``).
    ``frame.attrs`` counts what was left out: ``unjudged_queries`` (in the run, not in the qrels; ignored),
    ``unjudged_query_rows``, ``missing_queries`` (judged, absent from the run) and ``duplicates_removed``;
    with ``contract.unjudged == "condensed"`` also ``unjudged_removed`` (the entries of judged queries taken
    out of the ranking). Under condensed scoring ``judged@k`` is measured on the ranking as given. A measure with
    its own parameters (``p(rel=2)@10``) is computed under the contract they change
    (:meth:`evalset.metrics.measures.Measure.contract`); the notes and the queries kept are the contract's.
    """
    prepared = qrels if isinstance(qrels, PreparedQrels) else prepare_qrels(qrels_frame(qrels), contract)
    contract = prepared.contract
    run = run_frame(run, rank=reads_ranks(contract.ties))  # ir_measures' and pytrec_eval's shapes: evalset.io.frames
    measures = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    if max_retrieved is not None:
        max_retrieved = check("max_retrieved", max_retrieved, POSITIVE_INT)
        if contract.ties == "expected":
            raise InputError("max_retrieved cuts each ranking at a place, which can split a group of tied documents: "
                             "use it with ties trec, run or docid, not expected")
    under = {m: m.contract(contract) for m in measures}  # a measure's own parameters override the contract
    pooled = {under[m] for m in measures if m.kind.pooled}
    rows_under = {c: _rows(run, prepared.under(c), c in pooled, max_retrieved) for c in dict.fromkeys(under.values())}
    if contract not in rows_under:  # the notes are the call's: from rows that condense as the contract does
        same = [found for c, found in rows_under.items() if c.unjudged == contract.unjudged]
        rows_under[contract] = same[0] if same else _rows(run, prepared, max_retrieved=max_retrieved)
    rows, stats = rows_under[contract]
    table = pd.DataFrame(
        {str(m): _measure_values(m, rows_under[under[m]][0], prepared.under(under[m])) for m in measures},
        index=pd.Index(prepared.query_ids, name="query_id"),
    )
    if contract.undefined == "zero":
        table = table.fillna(0.0)
    stats["missing_queries"] = int(np.sum(~rows.queries_in_run))
    if contract.missing == "skip":
        table = table[rows.queries_in_run]
    table.attrs.update(stats)
    return table


def summarize(per_query: pd.DataFrame) -> pd.DataFrame:
    """Mean over defined queries, with the count of defined and undefined queries, per measure column.

    A measure with no defined query has mean NaN.
    """
    defined = per_query.notna().sum()
    return pd.DataFrame({
        "mean": per_query.mean(skipna=True),
        "defined": defined.astype(int),
        "undefined": (len(per_query) - defined).astype(int),
    })
