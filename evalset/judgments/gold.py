"""Gold tasks: known-answer pairs mixed blind among a pool's tasks, and found again among the answers a pull reads.

Label Studio's ground-truth tasks are an Enterprise feature; this module gives the free server the same check:
what a gold task is, how a push mixes gold in, and how a pull tells gold answers apart. Scoring the annotators on
those answers is :mod:`evalset.quality.gold`'s (a pull is handed it as a :class:`GoldCheck`).

Conventions
-----------
- **Gold** is a file of adjudicated grades, TREC qrels or a labels table (told apart as everywhere, by
  :func:`evalset.io.annotations.is_labels_table`): one grade per pair. A negative qrels grade (pooled, not
  judged) is not gold and is left out (counted); the same pair with two different grades is refused (gold must be
  adjudicated); a grade off the guideline's scale is refused with its file and line.
- **Rate** ``r`` in (0, 0.5] is the share of gold tasks among all the tasks a push puts in the project:
  ``gold tasks / (pool tasks + gold-only tasks)``. A gold pair that is also a pool pair is one task, judged
  once: its answers go to the labels table *and* count as gold checks, so it counts towards the rate. Gold-only
  tasks are added until the rate is reached: the smallest ``n`` with ``(gold in pool + n) / (pool + n) >= r``.
  Annotators take tasks in the project's order, so each annotator's stream holds gold at the rate ``r`` in
  expectation (exactly ``r`` when every annotator judges every task, ``--overlap`` = the number of annotators).
- **Choice** (seeded, numpy ``default_rng(seed)``): the gold pairs not in ``pool.tsv``, sorted by ``pair_id``,
  in a seeded random order, those of a query that is in the pool first (they hide among that query's tasks),
  then the others. The choice depends only on the pool's pairs, the gold pairs, the rate and the seed, so a
  second push with the same inputs chooses the same pairs and adds nothing.
- **Blind**: a gold task carries exactly what a pool task carries (``pair_id``, ``query``, ``text``; its
  ``pair_id`` is the same hash of query and document ids as a pool pair's), never its grade, and nothing in the
  task marks it. The pool's order keeps a query's pairs together (TREC assessors judge a topic at a time), so a
  gold pair of a pool query goes to a seeded random place inside that query's run of tasks; gold pairs of other
  queries form their own runs, shuffled, placed at seeded random places between the pool's runs.
- **Where pull finds the gold**: nowhere hidden. ``evalset pull --gold GOLD`` reads the same file again: a
  task whose ``pair_id`` is a gold pair's is a gold check; a gold pair not in ``pool.tsv`` is gold-only and its
  answers are kept out of the labels table (counted). Nothing about gold is stored in Label Studio.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.io.annotations import grade_line
from evalset.io.corpus import read_corpus
from evalset.io.guideline import Guideline
from evalset.io.poolfiles import read_pairs_and_tasks, read_pool_manifest
from evalset.io.queries import read_queries
from evalset.judgments.reading import read_judgments
from evalset.judgments.spec import GOLD_PUSH_RULES
from evalset.params import validate_params
from evalset.pooling.pool import pair_ids
from evalset.seeds import generator

GOLD_COLUMNS = ("pair_id", "query_id", "doc_id", "grade")
TASK_COLUMNS = ("pair_id", "query_id", "query", "text")


# ---------------------------------------------------------------------------------------------- the gold file
GOLD_RATE_EXCESS = 1.5
"""A push warns when its share of gold tasks is above this many times the rate asked (the pool's own gold)."""


def read_gold(path: str | os.PathLike, guideline: Guideline) -> pd.DataFrame:
    """The adjudicated grades of a qrels file or labels table: :data:`GOLD_COLUMNS`, one row per pair.

    Refused with the file and line: a grade off the guideline's scale; a pair given two different grades. Exact
    repeats are collapsed; negative qrels grades (not judged) are left out; ``attrs`` count both
    (``repeats``, ``unjudged``). A file with no judgment is refused (:func:`evalset.judgments.read_judgments`).
    """
    path = os.fspath(path)
    judgments = read_judgments([(path, "human")])
    unjudged = int((~judgments["judged"]).sum())
    judged = judgments[judgments["judged"]].reset_index(drop=True)
    off = ~judged["grade"].isin(guideline.grades)
    if off.any():
        row = judged[off].iloc[0]
        raise InputError(f"gold grade {row['grade']} of query {row['query_id']} document {row['doc_id']} is not on "
                         f"the scale of {guideline.path} ({', '.join(map(str, guideline.grades))})", path,
                         grade_line(path, row["query_id"], row["doc_id"], int(row["grade"])))
    distinct = judged.drop_duplicates(["query_id", "doc_id", "grade"])
    conflicting = distinct[distinct.duplicated(["query_id", "doc_id"], keep=False)]
    if len(conflicting):
        query_id, doc_id = conflicting.iloc[0][["query_id", "doc_id"]]
        grades = conflicting[(conflicting["query_id"] == query_id) & (conflicting["doc_id"] == doc_id)]["grade"]
        pairs = conflicting.drop_duplicates(["query_id", "doc_id"]).shape[0]
        raise InputError(f"gold must be adjudicated (one grade per pair): query {query_id} document {doc_id} has "
                         f"grades {', '.join(map(str, grades))}" + (f"; {pairs - 1} more such pairs" if pairs > 1
                                                                    else ""),
                         path, grade_line(path, query_id, doc_id, int(grades.iloc[-1])))
    gold = distinct[["query_id", "doc_id", "grade"]].reset_index(drop=True)
    gold.insert(0, "pair_id", pair_ids(gold["query_id"], gold["doc_id"]))
    gold.attrs.update(path=path, repeats=len(judged) - len(distinct), unjudged=unjudged)
    return gold


# ------------------------------------------------------------------------------------------- push: the plan
@dataclass(frozen=True)
class GoldPlan:
    """The tasks a push with gold puts in the project, in order, and how the gold was mixed in.

    ``tasks`` holds :data:`TASK_COLUMNS` (``query_id`` is for the mixing only: Label Studio gets ``pair_id``,
    ``query`` and ``text``); ``gold_pairs`` is every gold pair id among the tasks.
    """

    tasks: pd.DataFrame
    gold_pairs: frozenset[str]
    pool_tasks: int
    gold_in_pool: int
    gold_added: int
    gold_available: int
    rate: float
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """The counts of the plan (its tasks are Label Studio's)."""
        return {"tasks": len(self.tasks), "gold_pairs": len(self.gold_pairs), "pool_tasks": self.pool_tasks,
                "gold_in_pool": self.gold_in_pool, "gold_added": self.gold_added,
                "gold_available": self.gold_available, "rate": self.rate, "seed": self.seed}

    def to_text(self) -> str:
        """The line ``evalset push --gold`` prints after its counts."""
        gold = self.gold_in_pool + self.gold_added
        share = gold / len(self.tasks)
        line = (f"gold: {gold} gold task(s) of {len(self.tasks)} ({share:.1%}; rate asked "
                f"{self.rate:g}, seed {self.seed}): {self.gold_in_pool} pool pair(s) with a gold grade, "
                f"{self.gold_added} gold-only pair(s) of {self.gold_available} available, mixed in blind")
        if share > GOLD_RATE_EXCESS * self.rate:
            line += (f"\nwarning: {share:.1%} of the tasks are gold, against a rate of {self.rate:g} asked: the gold "
                     f"file grades {self.gold_in_pool} of the pool's {self.pool_tasks} pairs, which count as gold "
                     "(a gold file of pairs outside the pool, or fewer of the pool's, keeps the rate)")
        return line


def gold_only_count(pool_tasks: int, gold_in_pool: int, rate: float) -> int:
    """The smallest ``n >= 0`` with ``(gold_in_pool + n) / (pool_tasks + n) >= rate``."""
    needed = (rate * pool_tasks - gold_in_pool) / (1.0 - rate)
    return max(0, math.ceil(needed - 1e-9))


def choose_gold_only(candidates: pd.DataFrame, pool_queries: set[str], count: int,
                     rng: np.random.Generator) -> pd.DataFrame:
    """``count`` of ``candidates`` (``pair_id, query_id, ...``): seeded, pool queries first (module docstring)."""
    ordered = candidates.sort_values("pair_id", kind="stable").reset_index(drop=True)
    ordered = ordered.iloc[rng.permutation(len(ordered))]
    in_pool = ordered["query_id"].isin(pool_queries).to_numpy()
    return pd.concat([ordered[in_pool], ordered[~in_pool]]).head(count).reset_index(drop=True)


def mix_blind(pool_tasks: pd.DataFrame, gold_tasks: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Pool tasks (in judging order) and gold tasks in one seeded blind order (see the module docstring)."""
    block = (pool_tasks["query_id"] != pool_tasks["query_id"].shift()).cumsum().to_numpy() - 1
    within = pool_tasks.groupby(block).cumcount().to_numpy()
    keys = [np.column_stack([block, within]).astype(np.float64)]
    first_block = dict(zip(pool_tasks["query_id"][::-1], block[::-1], strict=True))  # each query's first run
    sizes = np.bincount(block) if len(block) else np.zeros(0, dtype=np.int64)
    gold = gold_tasks.sort_values("pair_id", kind="stable").reset_index(drop=True)
    home = gold["query_id"].map(first_block)
    inside = home.notna().to_numpy()
    if inside.any():
        where = home[inside].to_numpy(dtype=np.int64)
        keys.append(np.column_stack([where, rng.uniform(-0.5, sizes[where] - 0.5)]))
    outside = gold[~inside]
    if len(outside):
        queries = sorted(outside["query_id"].unique())
        place = dict(zip(queries, rng.uniform(-0.5, max(len(sizes), 1) - 0.5, size=len(queries)), strict=True))
        keys.append(np.column_stack([outside["query_id"].map(place).to_numpy(dtype=np.float64),
                                     rng.permutation(len(outside)).astype(np.float64)]))
    tasks = pd.concat([pool_tasks, gold[inside], outside], ignore_index=True)[list(TASK_COLUMNS)]
    key = np.concatenate(keys) if keys else np.zeros((0, 2))
    return tasks.iloc[np.lexsort((key[:, 1], key[:, 0]))].reset_index(drop=True)


@validate_params(GOLD_PUSH_RULES)
def plan_gold(pool_tasks: pd.DataFrame, pool_pair_ids: set[str], gold_tasks: pd.DataFrame, rate: float,
              seed: int) -> GoldPlan:
    """Choose the gold-only tasks and mix them into the pool's tasks (pure; see the module docstring).

    ``pool_tasks``: the pool's tasks in judging order (:data:`TASK_COLUMNS`); ``pool_pair_ids``: every pair of
    ``pool.tsv`` (with or without a task); ``gold_tasks``: the gold pairs with their texts (:data:`TASK_COLUMNS`).
    Too few gold pairs outside the pool for the rate is an :class:`InputError`.
    """
    in_pool = pool_tasks["pair_id"].isin(set(gold_tasks["pair_id"]))
    candidates = gold_tasks[~gold_tasks["pair_id"].isin(pool_pair_ids)]
    count = gold_only_count(len(pool_tasks), int(in_pool.sum()), rate)
    if count > len(candidates):
        raise InputError(f"a gold rate of {rate:g} needs {count} gold pair(s) outside the pool, the gold file has "
                         f"{len(candidates)}: lower --gold-rate or give more gold")
    rng = generator(seed)
    chosen = choose_gold_only(candidates, set(pool_tasks["query_id"]), count, rng)
    tasks = mix_blind(pool_tasks[list(TASK_COLUMNS)].reset_index(drop=True), chosen, rng)
    gold_pairs = frozenset(pool_tasks.loc[in_pool, "pair_id"]) | frozenset(chosen["pair_id"])
    return GoldPlan(tasks=tasks, gold_pairs=gold_pairs, pool_tasks=len(pool_tasks), gold_in_pool=int(in_pool.sum()),
                    gold_added=len(chosen), gold_available=len(candidates), rate=rate, seed=seed)


def _recorded_input(pool_dir: Path, key: str) -> str | None:
    """The path of the pool's input ``key`` (``corpus``, ``queries``) its manifest records, or None."""
    try:
        return read_pool_manifest(pool_dir, missing_ok=True)["inputs"][key]["path"]
    except (KeyError, TypeError):
        return None


def gold_task_texts(gold: pd.DataFrame, pool_tasks: pd.DataFrame, corpus: str | None, queries: str | None
                    ) -> pd.DataFrame:
    """Every gold pair as a task (:data:`TASK_COLUMNS`): the pool's task when it has one, else the texts from
    ``corpus`` and ``queries``. A gold pair with no text is refused, naming its line in the gold file."""
    path = gold.attrs.get("path")
    known = pool_tasks[pool_tasks["pair_id"].isin(set(gold["pair_id"]))]
    rest = gold[~gold["pair_id"].isin(set(known["pair_id"]))]
    if rest.empty:
        return known[list(TASK_COLUMNS)].reset_index(drop=True)
    if not corpus or not queries:
        raise InputError(f"{len(rest)} gold pair(s) are not among the pool's tasks: give --corpus and --queries for "
                         "their texts (the pool's pool.json records none)")
    texts = read_corpus(corpus, doc_ids=rest["doc_id"].unique()).drop_duplicates("doc_id").set_index("doc_id")
    query_text = read_queries(queries).drop_duplicates("query_id").set_index("query_id")["query"]
    found = rest.assign(query=query_text.reindex(rest["query_id"]).to_numpy(),
                        text=texts["text"].reindex(rest["doc_id"]).to_numpy())
    missing = found["query"].isna() | found["text"].isna()
    if missing.any():
        row = found[missing].iloc[0]
        where = f"query {row['query_id']} is not in {queries}" if pd.isna(row["query"]) else \
            f"document {row['doc_id']} is not in {corpus}"
        raise InputError(f"{int(missing.sum())} gold pair(s) have no text ({where}); every gold pair must be "
                         "shown like any other task", path,
                         grade_line(path, row["query_id"], row["doc_id"], int(row["grade"])) if path else None)
    return pd.concat([known[list(TASK_COLUMNS)], found[list(TASK_COLUMNS)]], ignore_index=True)


@validate_params(GOLD_PUSH_RULES)
def prepare_gold_push(pool_dir: str | os.PathLike, gold_path: str | os.PathLike, guideline: Guideline,
                      rate: float, seed: int = DEFAULT_SEED, corpus: str | None = None,
                      queries: str | None = None) -> GoldPlan:
    """Read and check everything a push with gold needs, before any connection, and plan the tasks.

    ``rate`` and ``seed`` are checked first (:data:`evalset.contract.GOLD_PUSH_RULES`: a rate in (0, 0.5]).
    ``corpus`` and ``queries`` default to the ones the pool was built from (recorded in ``pool.json``).
    ``plan.tasks.attrs["without_text"]`` counts the pairs of ``pool.tsv`` without a task.
    """
    folder = Path(pool_dir)
    pairs, tasks = read_pairs_and_tasks(folder)
    gold = read_gold(gold_path, guideline)
    gold_tasks = gold_task_texts(gold, tasks, corpus or _recorded_input(folder, "corpus"),
                                 queries or _recorded_input(folder, "queries"))
    plan = plan_gold(tasks, set(pairs["pair_id"]), gold_tasks, rate, seed)
    plan.tasks.attrs["without_text"] = len(pairs) - len(tasks)
    return plan


# ------------------------------------------------------------------------------------------- pull: the answers
def gold_pairs_frame(gold: pd.DataFrame, pool_pairs: pd.DataFrame) -> pd.DataFrame:
    """The gold pairs not in ``pool.tsv`` (``pair_id, query_id, doc_id``): what pull must also map."""
    return gold.loc[~gold["pair_id"].isin(set(pool_pairs["pair_id"])), ["pair_id", "query_id", "doc_id"]]


def split_gold(labels: pd.DataFrame, pool_pairs: pd.DataFrame, gold: pd.DataFrame
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(labels of pool pairs, gold answers)``: the answers on gold pairs (pool or gold-only) with their
    ``gold`` grade; a gold-only pair's answers are only in the second."""
    key = ["query_id", "doc_id"]
    in_pool = labels.merge(pool_pairs[key].drop_duplicates(), on=key, how="left", indicator=True)["_merge"]
    answers = labels.merge(gold[[*key, "grade"]].rename(columns={"grade": "gold"}), on=key, how="inner")
    return labels[(in_pool == "both").to_numpy()].reset_index(drop=True), answers.reset_index(drop=True)


class GoldScores(Protocol):
    """The annotators scored against gold, as a pull prints and writes them
    (:class:`evalset.quality.gold.GoldReport` is one)."""

    def to_text(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...

    def write(self, path: str | os.PathLike) -> str: ...


@dataclass(frozen=True)
class GoldCheck:
    """What a pull checks the annotators against: the gold pairs (:func:`read_gold`) and how the answers on them
    are scored, ``score(answers, scale, gold_only_answers)`` (answers ``annotator, grade, gold``; the guideline's
    grades; the answers on gold-only tasks), which :func:`evalset.quality.gold.gold_check` makes under a policy."""

    gold: pd.DataFrame
    score: Callable[[pd.DataFrame, list[int], int], GoldScores]
