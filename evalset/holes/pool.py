"""The pool folder that settles comparisons: the holes of every run compared, at the comparisons' depth, to judge;
and the comparisons' holes printed with it.

Conventions
-----------
- Built by :func:`evalset.pooling.build_pool` with the judged pairs excluded (judge-the-holes) and written by
  :func:`evalset.pooling.write_pool`; ``pool.json`` also records the comparisons it settles
  (:class:`evalset.holes.comparison.ComparisonBounds`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.holes.comparison import ComparisonBounds
from evalset.io.corpus import read_corpus
from evalset.io.queries import read_queries
from evalset.metrics.ranking import strict_ties
from evalset.pooling import PoolBuild, PoolSpec, attach_texts, build_pool, pool_manifest
from evalset.render import number, text_table


@dataclass(frozen=True)
class HolesPool:
    """The pool folder of the holes (``build`` is :func:`evalset.pooling.write_pool`'s input), or no pool when
    every document of the top k is judged (``build`` None)."""

    build: PoolBuild | None
    depth: int
    folder: str
    set_path: str | None = None  # the frozen set compared on: a sample of its holes can be judged instead

    @property
    def pairs(self) -> int:
        return 0 if self.build is None else len(self.build.pool.pairs)

    @property
    def queries(self) -> int:
        return 0 if self.build is None else int((self.build.pool.pairs_per_query > 0).sum())

    def to_dict(self) -> dict[str, Any]:
        return {"folder": self.folder, "depth": self.depth, "pairs": self.pairs, "queries": self.queries}


def holes_pool(evaluation: Evaluation, runs: Mapping[str, pd.DataFrame], run_files: Mapping[str, str],
               comparisons: Sequence[ComparisonBounds], folder: str | os.PathLike, *, queries: str | None = None,
               corpus: str | None = None, seed: int = DEFAULT_SEED) -> HolesPool:
    """The pool of the holes of every run compared at the comparisons' depth (writes nothing).

    ``run_files`` maps each run's name to its file (recorded in ``pool.json`` with its sha256). With
    ``queries`` and ``corpus`` (both or neither) the tasks for ``tasks.jsonl`` are attached; a pooled query
    without a text in ``queries`` is refused.
    """
    if (queries is None) != (corpus is None):
        raise InputError("tasks.jsonl needs both the query texts and the document texts: give --queries and "
                         "--corpus together")
    depths = {c.depth for c in comparisons}
    if len(depths) != 1:
        raise InputError(f"the comparisons read different depths ({sorted(depths)}): give one depth")
    depth = depths.pop()
    wanted = set(map(str, evaluation.qrels["query_id"]))
    answered = [q for q in pd.unique(pd.concat([run["query_id"].astype(str) for run in runs.values()]))
                if q in wanted]
    pool = build_pool(runs, depth, ties=strict_ties(evaluation.contract.ties), query_ids=sorted(answered),
                      judged=evaluation.qrels, seed=seed)
    if pool.pairs.empty:
        return HolesPool(None, depth, os.fspath(folder))
    tasks = missing = None
    texts = read_queries(queries) if queries is not None else None
    if texts is not None:
        without = sorted(set(pool.pairs["query_id"]) - set(texts["query_id"].astype(str)))
        if without:
            raise InputError(f"{len(without)} query id(s) with holes have no text here: {', '.join(without[:5])}",
                             queries)
        tasks, missing = attach_texts(pool.pairs, read_corpus(corpus, doc_ids=pool.pairs["doc_id"].unique()), texts)
    spec = PoolSpec(runs=tuple(run_files.values()), depth=depth, ties=pool.ties, seed=seed, queries=queries,
                    exclude_judged=evaluation.qrels_file, corpus=corpus)
    manifest = pool_manifest(pool, spec, run_files, missing)
    manifest["settles"] = [{key: value for key, value in c.to_dict().items() if key != "per_query"}
                           for c in comparisons]
    frozen = os.fspath(evaluation.frozen.path) if evaluation.frozen is not None else None
    return HolesPool(PoolBuild(pool, manifest, tasks, missing), depth, os.fspath(folder), frozen)


# ------------------------------------------------------------------------------------------------ printing
def format_holes(comparisons: Sequence[ComparisonBounds], pool: HolesPool | None = None, shown: int = 10) -> str:
    """Each comparison's holes, range and verdict at both ends, its ``shown`` queries with the most holes, and
    what to judge to settle the comparisons."""
    lines = []
    for c in comparisons:
        table = c.per_query
        with_holes = table[table["holes"] > 0]
        lines += [f"holes of {c.candidate} vs {c.baseline} in the top {c.depth} ({c.metric}; a hole filled relevant "
                  f"gets grade {c.top_grade})",
                  f"  holes             {c.holes} unjudged documents in {len(with_holes)} of {len(table)} queries "
                  f"(baseline's top {c.depth}: {int(table['holes_baseline'].sum())}, "
                  f"candidate's: {int(table['holes_candidate'].sum())})",
                  f"  mean difference   {number(c.mean_difference, sign=True)} as judged; "
                  f"[{number(c.mean_low, sign=True)}, {number(c.mean_high, sign=True)}] over fills of the holes",
                  f"  verdict           as judged: {c.outcome}",
                  f"  at the low end    {c.outcome_low} (p = {c.p_low:.4g})",
                  f"  at the high end   {c.outcome_high} (p = {c.p_high:.4g})",
                  "  could flip        " + ("YES: judge the holes before trusting this verdict" if c.could_flip
                                            else "no: no fill of the holes changes the verdict")]
        if len(with_holes):
            rows = [["query", "holes", "baseline", "candidate", "difference", "low", "high"]]
            rows += [[r.query_id, r.holes, r.holes_baseline, r.holes_candidate, number(r.difference, sign=True),
                      number(r.low, sign=True), number(r.high, sign=True)] for r in with_holes.head(shown).itertuples()]
            lines += ["  " + line for line in text_table(rows, right=(1, 2, 3))]
            if len(with_holes) > shown:
                lines.append(f"  ... {len(with_holes) - shown} more queries with holes (all in --format json)")
        lines.append("")
    if pool is not None:
        these = "this comparison" if len(comparisons) == 1 else f"these {len(comparisons)} comparisons"
        if pool.build is None:
            lines.append(f"no holes: every document in the top {pool.depth} is judged; {these} cannot move, "
                         "no pool written")
        else:
            counted = {query for c in comparisons for query in c.per_query.loc[c.per_query["holes"] > 0, "query_id"]}
            per_query = pool.build.pool.pairs_per_query
            outside = per_query[~per_query.index.astype(str).isin({str(q) for q in counted}) & (per_query > 0)]
            aside = (f", {int(outside.sum())} of them in {len(outside)} quer{'y' if len(outside) == 1 else 'ies'} no "
                     "comparison counts (undefined there: no relevant document), judged all the same"
                     if len(outside) else "")
            lines.append(f"judge these {pool.pairs} documents ({pool.queries} queries) to settle {these}{aside}")
            if pool.set_path is not None:
                lines.append(f"or a sample of them, sized for each run, the runs' full-judgment scores estimated: "
                             f"evalset estimate select holes {pool.folder} --set {pool.set_path} --precision 0.01 "
                             "--runs RUN... --llm LLM -o SAMPLE (docs/reusability.md)")
    return "\n".join(lines).rstrip("\n")
