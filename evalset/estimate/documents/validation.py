"""Does the document design hold on the user's own data? With human grades for every pooled pair, draw many
document samples at a budget, estimate from each as :mod:`evalset.estimate.documents.estimate` does, and compare with
the truth under the full grades; beside it, the query-slice design (PPI++) at the same human budget.

Conventions
-----------
- The pool is the fully graded pairs (``qrels``). Each pair's prior is :func:`evalset.estimate.documents.sample.
  document_prior` from the runs' ranks within ``prior_depth``; ``pi`` is :func:`~evalset.estimate.documents.sample.
  inclusion_probabilities` at ``budget``; draw ``i`` is :func:`~evalset.estimate.documents.sample.poisson_sample` with
  the ``i``-th seed of ``numpy.random.default_rng(seed).integers(2**32)``, so the same inputs give the same figures.
- The truth of a run is evalset's score of it under the full grades and the contract: its mean over the pool's
  queries of :func:`evalset.evaluation.per_query_values` (the evaluation room, never the design's own code, so that
  a divergence between the two shows as bias); of a paired difference, the difference of the truths (every pair
  of runs).
- Reported per measure and kind (run means; paired differences): the coverage of the truth by the "this set" and
  the "new queries" intervals and their mean widths, averaged over columns and draws; for run means also the
  bias (mean over draws of estimate - truth; the largest |bias| over runs and their mean), the RMSE (mean over
  runs) and Kendall's tau of the ranking of the runs by estimated mean against the truth's (mean over draws;
  ``tau_sd`` its standard deviation over draws, in the table and ``to_dict``, not in ``to_text``). The
  query slice (:func:`evalset.estimate.slicevalidation.simulate_slices`: ``round(budget / (pairs / queries))``
  queries, at least 2, the judges' median grade as its LLM, t intervals) beside: its PPI++ coverage and width, and
  the ratio of the "this set" width to it.
- A budget below the design's minimum (:func:`evalset.estimate.documents.sample.check_sample_size`, in expected pairs)
  is refused. A query a run lacks follows the missing-queries rule (:class:`evalset.estimate.inputs.Missing`, ``chosen``
  and ``sources`` as the estimate's): refused unless chosen; ``zero`` scores it 0, said in a note; ``skip`` is for
  an estimate (a simulation's truths and columns are over every query) and is refused here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_SEED, EvaluationContract
from evalset.errors import InputError
from evalset.estimate.documents.estimate import SMALL_SAMPLE, DocumentPool, mean_intervals, pool_missing, prepare_pool
from evalset.estimate.documents.sample import check_sample_size, document_prior, inclusion_probabilities, poisson_sample
from evalset.estimate.inputs import chosen_conventions, refuse_skip
from evalset.estimate.simulate import KINDS, Drawn, Tally, Validation, simulate, summarize
from evalset.estimate.sources import grades_of
from evalset.evaluation import Evaluation, PerQuery, per_query_values
from evalset.metrics.documents import DocumentTerms, document_terms
from evalset.params import POSITIVE_INT, check
from evalset.render import number, text_table
from evalset.seeds import generator
from evalset.stats.quantiles import around
from evalset.stats.rankings import kendall_tau

MEASURES = ("ndcg@10", "p@10", "ap")
"""The measures of the issue's must-show."""


def pool_prior(pool: DocumentPool, depth: int) -> np.ndarray:
    """The prior of each pooled pair from the runs' ranks within ``depth`` (:func:`document_prior`)."""
    position = pool.ranking((pool.contract.ties, "nonrelevant")).position[:, :, :depth]
    run, _, rank = np.nonzero(position < len(pool.pairs))
    index = position[position < len(pool.pairs)]
    sources = pool.pairs.iloc[index].reset_index(drop=True).assign(system=run, rank=rank + 1)
    return document_prior(pool.pairs, sources, depth)


def _tau(tally: Tally, runs: int) -> tuple[float, float]:
    """Kendall's tau of the runs' ranking by estimate against the truth's: its mean and sd over the draws."""
    taus = [kendall_tau(estimate[:runs], tally.truth[:runs])[0] for estimate in tally.estimate()]
    return float(np.mean(taus)), float(np.std(taus))


def _columns(tally: Tally, figures: pd.DataFrame, runs: int, measure: str, labels: Sequence[str]) -> pd.DataFrame:
    """Each column's figures (:attr:`~evalset.estimate.simulate.Validation.columns`): the harness's, the mean "this
    set" standard error and its ratio to the estimate's spread over the draws, the share of draws whose "this set"
    interval excluded 0, and its least width; ``figures``: the tally's."""
    low, high = tally.ends("set")
    kinds = ["means"] * runs + ["differences"] * (len(figures) - runs)
    named = pd.DataFrame({"measure": measure, "kind": kinds, "name": list(labels)})
    return named.join(figures.drop(columns="name")).assign(
        se_set_mean=tally.extra("se_set").mean(axis=0), se_ratio=tally.se_ratio("se_set"),
        excludes_zero=((low > 0) | (high < 0)).mean(axis=0), least_width=(high - low).min(axis=0))


def simulate_documents(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, llm: pd.DataFrame | None, *,
                       budget: float, draws: int = 200, measures: Sequence[str] = MEASURES,
                       contract: EvaluationContract | None = None, level: float = 0.95, seed: int = DEFAULT_SEED,
                       prior_depth: int = 10, compare_slices: bool = True,
                       progress: Callable[[Iterable], Iterable] = iter, chosen: Collection[str] | None = None,
                       sources: Mapping[str, object] | None = None) -> Validation:
    """Coverage, widths, bias, RMSE and tau of the document design over ``draws`` samples at ``budget`` on fully
    graded ``qrels``, the query slice beside (module docstring); ``llm=None``: Horvitz-Thompson's estimator."""
    chosen = chosen_conventions(contract, chosen)
    contract = contract or EvaluationContract()
    check("the number of simulated samples", draws, POSITIVE_INT)
    parsed = [document_terms(m, contract) for m in measures]
    pairs = qrels[["query_id", "doc_id"]].astype(str).reset_index(drop=True)
    if (qrels["grade"] < 0).any():
        raise InputError("the simulation needs a grade for every pooled pair; the qrels hold unjudged (negative) ones")
    pool = prepare_pool(pairs, llm, runs, contract)
    check_sample_size(budget, len(pool.query_ids), "give a larger --budget (the simulated samples draw it in "
                      "expectation)", noun="pairs expected")
    missing = refuse_skip(pool_missing(pool, runs, contract, chosen, sources))
    pi = inclusion_probabilities(pool_prior(pool, prior_depth), budget)
    grade = qrels["grade"].to_numpy(dtype=np.int64)
    scale = np.union1d(grade, [0] if pool.llm is None else np.union1d(pool.llm.ravel(), [0]))
    names = pool.names
    index = list(itertools.combinations(range(len(names)), 2))
    scored = per_query_values(Evaluation.on_qrels(qrels[["query_id", "doc_id", "grade"]], contract),
                              {name: runs[name] for name in names}, [str(m) for m in parsed])
    truths = {str(m): _truth(scored, str(m), names, pool.query_ids, index) for m in parsed}

    def simulate_one(draw_seed: int) -> dict[str, Drawn]:
        sampled = poisson_sample(pi, int(draw_seed))
        sample = pool.sample(pi, sampled, np.where(sampled, grade, 0), scale)
        drawn = {}
        for measure in parsed:
            values, z, answered = pool.estimate(measure, sample)
            got = mean_intervals(values, z, sample.variance_factor, pi, level, index, answered, sample.query,
                                 pool.floor(measure, sample), pool.rules)
            drawn[str(measure)] = (got["estimate"], {"set": around(got["estimate"], got["se_set"], got["z"]),
                                                     "new": around(got["estimate"], got["se_new"], got["t"])},
                                   {"se_set": got["se_set"], "size": int(sampled.sum())})
        return drawn

    tallies = simulate(simulate_one, generator(seed).integers(2 ** 32, size=draws), truths, progress)
    figures = {measure: tally.figures() for measure, tally in tallies.items()}
    queries = len(pool.query_ids)
    slice_size = max(2, round(budget / (len(pairs) / queries)))
    rows = []
    for measure in parsed:
        slices = _slices(runs, qrels, llm, measure, slice_size, draws, contract, seed, level) if compare_slices \
            else {}
        tau, tau_sd = _tau(tallies[str(measure)], len(names))
        widths = figures[str(measure)]["width_set"]
        for kind, width in (("means", widths[:len(names)].mean()), ("differences", widths[len(names):].mean())):
            ppi = slices.get(kind, {"coverage": np.nan, "width": np.nan})
            rows.append({"measure": str(measure), "kind": kind, "slice_coverage": ppi["coverage"],
                         "slice_width": ppi["width"], "width_ratio": float(width) / ppi["width"],
                         "tau": tau if kind == "means" else np.nan, "tau_sd": tau_sd if kind == "means" else np.nan})
    labels = names + [f"{names[c]} - {names[b]}" for b, c in index]
    columns = pd.concat([_columns(tallies[str(m)], figures[str(m)], len(names), str(m), labels) for m in parsed],
                        ignore_index=True)
    caveats = missing.notes()
    if budget / queries < SMALL_SAMPLE:
        caveats.append(f"warning: {budget / queries:.1f} expected sampled pairs per query (under {SMALL_SAMPLE:g}): "
                       "the \"this set\" variance is unreliable at this size; rely on \"new queries\"")
    settings = {"budget": float(budget), "draws": draws, "seed": seed, "level": level, "pairs": len(pairs),
                "queries": queries, "runs": len(names), "differences": len(index), "slice_size": slice_size,
                "measures": [str(m) for m in parsed], "judges": list(pool.judges),
                "estimator": "Horvitz-Thompson, no LLM" if llm is None else
                f"calibrated LLM: {', '.join(pool.judges)}", "prior_depth": prior_depth,
                "mean_sample": float(tallies[str(parsed[0])].extra("size").mean()), "contract": contract.to_dict(),
                "applied": {str(m): m.contract.to_dict() for m in parsed}}
    beside = pd.DataFrame(rows)
    table = summarize(columns, {"set": '"this set"', "new": '"new queries"'})
    return Validation("documents", _heading(settings), table, columns, beside, _said(beside, slice_size), settings,
                      caveats)


def _truth(scored: PerQuery, measure: str, names: list[str], query_ids: Sequence[str],
           index: Sequence[tuple[int, int]]) -> np.ndarray:
    """The runs' means of ``measure`` over the pool's queries under the full grades, then each pair's difference
    (candidate minus baseline), from the evaluation room (evalset's score under the contract), never from the
    design's own code: a divergence between the two shows as bias."""
    table = pd.DataFrame({name: scored.column(name, measure) for name in names}).reindex(pd.Index(query_ids))
    means = table.mean(axis=0).to_numpy(dtype=np.float64)  # undefined (NaN) queries left out, as a score does
    return np.r_[means, [means[c] - means[b] for b, c in index]]


def _slices(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, llm: pd.DataFrame | None,
            measure: DocumentTerms, slice_size: int, draws: int, contract: EvaluationContract, seed: int,
            level: float) -> dict[str, dict[str, float]]:
    """The query slice's PPI++ coverage and width per kind at the same budget (its LLM: the judges' median grade)."""
    from evalset.estimate.slicevalidation import simulate_slices

    if llm is None:
        return {}
    human = grades_of(qrels.assign(annotator="human")[["query_id", "doc_id", "annotator", "grade"]])
    judged = grades_of(llm.rename(columns={"judge": "annotator"})[["query_id", "doc_id", "annotator", "grade"]])
    result = simulate_slices(runs, human, judged, slice_size=slice_size, draws=draws, metrics=[str(measure)],
                             contract=contract, level=level, seed=seed)
    ppi = result.table[result.table["interval"] == "PPI++ (t)"]
    return {row.kind: {"coverage": row.coverage, "width": row.width} for row in ppi.itertuples()}


def _heading(s: dict[str, Any]) -> tuple[str, ...]:
    return (f"{s['draws']} document samples of {s['budget']:g} expected of {s['pairs']} pairs ({s['queries']} "
            f"queries, {s['runs']} runs, seed {s['seed']}; {s['estimator']}), level {s['level']:.4g}; truth: the "
            "scores under the full grades",)


def _said(beside: pd.DataFrame, slice_size: int) -> tuple[str, ...]:
    header = ["measure", "kind", "slice coverage", "slice width", '"this set" width / slice', "tau"]
    rows = [[row.measure, KINDS[row.kind], number(row.slice_coverage, 3), number(row.slice_width, 4),
             number(row.width_ratio, 3), number(row.tau, 3)] for row in beside.itertuples()]
    return (f"beside: the query slice of {slice_size} queries (PPI++) at the same human budget; Kendall's tau of the "
            "runs' ranking", *text_table([header, *rows]))
