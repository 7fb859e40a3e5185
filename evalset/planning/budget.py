"""The judging budget of a set: pairs to judge at a pool depth, annotator hours, and the cost of an LLM judge.

Conventions
-----------
- Pairs at depth k are the distinct (query, document) pairs in the top k of the systems pooled, taken as
  :mod:`evalset.pooling` takes them (same ranking and tie rule), so at the same depth and runs they equal the
  pool that ``evalset pool`` writes; a pool folder's ``pool.json`` gives them directly.
- Pairs for N queries: the pool's own query count gives its exact pair count; any other N gives the expected
  count, N x the mean pairs per query of the pool.
- Judgments = pairs x overlap (annotators who judge each pair). Annotator hours = judgments x seconds per
  judgment / 3600, in all; each annotator's share is that divided by the annotators.
- LLM cost = (tokens in x price in + tokens out x price out) / 1e6, prices in money per million tokens. Tokens in
  of a task = the fixed prompt tokens (instructions, guideline) + the tokens of ``query + "\\n" + text``; tokens
  out = a fixed count per task (the answer). Tokens come from tiktoken's ``o200k_base`` encoding when tiktoken
  is installed and its encoding loads, else they are estimated as ``ceil(characters / 4)`` (the tokenizer used
  is reported). Pairs without a text are costed at the mean of the pairs with one (their number is reported).
- Printed: ``n/a`` in a token or cost column means "not costed" (no price or no text given for that pool), not an
  undefined number.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import TOKENIZERS
from evalset.errors import InputError
from evalset.io.corpus import read_corpus
from evalset.io.poolfiles import MANIFEST_FILE, PAIRS_FILE, TASKS_FILE, read_pool_manifest, read_pool_pairs, read_tasks
from evalset.io.queries import read_queries
from evalset.io.trec import read_runs
from evalset.params import check, rules_of, settings_of, validate_params
from evalset.planning.spec import CostSpec, check_overlap
from evalset.pooling import stack_top_k
from evalset.pooling.pool import UnknownQueriesError
from evalset.render import records, text_table

CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class PoolSize:
    """Pairs to judge at one depth, per query, and (when texts were given) the mean LLM input tokens per task."""

    depth: int
    source: str
    systems: int
    pairs_per_query: pd.Series
    tokens_per_task: float | None = None
    tasks_with_text: int | None = None
    tokenizer: str | None = None

    @property
    def queries(self) -> int:
        return len(self.pairs_per_query)

    @property
    def pairs(self) -> int:
        return int(self.pairs_per_query.sum())


def pool_pairs_from_runs(runs: Mapping[str, pd.DataFrame], depths: Sequence[int], *, ties: str = "trec",
                         query_ids: Iterable[str] | None = None) -> dict[int, pd.DataFrame]:
    """The distinct pairs ``query_id, doc_id`` in the union of the runs' top k, for each depth k."""
    if not depths:
        raise InputError("no pool depth given")
    wanted = None if query_ids is None else list(dict.fromkeys(map(str, query_ids)))
    top = stack_top_k(runs, max(depths), ties=ties, query_ids=wanted)
    answered = set(top.queries.to_pylist())
    unanswered = [q for q in wanted or [] if q not in answered]
    if unanswered:  # as `evalset pool` does: an id no run has is almost always an id mismatch
        raise UnknownQueriesError(unanswered)
    pairs = {}
    for depth in depths:
        keep = top.rank <= depth
        keys = np.unique(top.query_code[keep].astype(np.int64) * max(len(top.docs), 1) + top.doc_code[keep])
        query_code, doc_code = keys // max(len(top.docs), 1), keys % max(len(top.docs), 1)
        pairs[depth] = pd.DataFrame({"query_id": top.queries.to_numpy(zero_copy_only=False)[query_code],
                                     "doc_id": top.docs.to_numpy(zero_copy_only=False)[doc_code]})
        pairs[depth].attrs["systems"] = len(top.systems)
        pairs[depth].attrs["queries"] = top.queries.to_numpy(zero_copy_only=False)
    return pairs


def pool_size_from_runs(pairs: pd.DataFrame, depth: int, *, texts: pd.DataFrame | None = None,
                        prompt_tokens: int = 0, tokenizer: str = "auto") -> PoolSize:
    """A :class:`PoolSize` from :func:`pool_pairs_from_runs`' pairs at one depth; with ``texts``
    (``query_id, doc_id, query, text`` per pair, e.g. from :func:`task_texts`), the mean tokens per task."""
    queries = pairs.attrs.get("queries", pd.unique(pairs["query_id"]))
    per_query = pairs.groupby("query_id").size().reindex(queries, fill_value=0).rename("pairs")
    size = PoolSize(depth, "runs", int(pairs.attrs.get("systems", 0)), per_query)
    if texts is None:
        return size
    tokens, name = count_tokens(texts["query"].astype(str) + "\n" + texts["text"].astype(str), tokenizer)
    return PoolSize(depth, "runs", size.systems, per_query, _mean_tokens(tokens, prompt_tokens), len(texts), name)


def pool_size_from_folder(folder: str | os.PathLike, *, prompt_tokens: int = 0,
                          tokenizer: str = "auto") -> PoolSize:
    """A :class:`PoolSize` from a pool folder: its pairs per query (``pool.tsv``), its depth and systems
    (``pool.json``; a slice's or a sample's folder: its source pool's), and ``tasks.jsonl`` for tokens when
    present."""
    folder = Path(folder)
    manifest = read_pool_manifest(folder)
    pool = manifest if "depth" in manifest else manifest.get("source_pool", {})
    if "depth" not in pool:
        raise InputError("no pool depth: expected the pool.json of `evalset pool`, a slice's or a sample's",
                         str(folder / MANIFEST_FILE))
    pairs = read_pool_pairs(folder / PAIRS_FILE)
    per_query = pairs.groupby("query_id", sort=True).size().astype(np.int64).rename("pairs")
    depth, systems = int(pool["depth"]), len(pool.get("inputs", {}).get("runs", {}))
    if not (folder / TASKS_FILE).exists():
        return PoolSize(depth, str(folder), systems, per_query)
    tasks = read_tasks(folder / TASKS_FILE)
    texts = tasks["query"] + "\n" + tasks["text"]
    tokens, name = count_tokens(texts, tokenizer)
    return PoolSize(depth, str(folder), systems, per_query, _mean_tokens(tokens, prompt_tokens), len(texts), name)


def task_texts(pairs: pd.DataFrame, corpus_path: str | os.PathLike, queries: pd.DataFrame) -> pd.DataFrame:
    """``query_id, doc_id, query, text`` of the pairs whose document is in the corpus (the others left out)."""
    corpus = read_corpus(corpus_path, doc_ids=pairs["doc_id"].unique()).drop_duplicates("doc_id")
    texts = pairs.merge(corpus[["doc_id", "text"]], on="doc_id", how="inner")
    query_text = queries.drop_duplicates("query_id").set_index("query_id")["query"]
    texts["query"] = texts["query_id"].map(query_text).fillna("")
    return texts


def pool_sizes(runs: Mapping[str, pd.DataFrame], depths: Sequence[int], *, pool_folder: str | os.PathLike | None = None,
               queries: pd.DataFrame | None = None, corpus: str | os.PathLike | None = None, prompt_tokens: int = 0,
               tokenizer: str = "auto") -> list[PoolSize]:
    """The pools to cost: a pool folder's, or the ``runs`` pooled at each of ``depths`` (over the ``queries``
    when given, else every query of the runs; with ``corpus`` and the queries' texts, the tokens per task); one or
    the other (:class:`~evalset.planning.spec.CostSpec`)."""
    if pool_folder:
        return [pool_size_from_folder(pool_folder, prompt_tokens=prompt_tokens, tokenizer=tokenizer)]
    if not depths:
        return []
    if corpus and queries is None:
        raise InputError("--corpus needs the query texts too: give --queries")
    pairs = pool_pairs_from_runs(runs, list(depths), query_ids=None if queries is None else queries["query_id"])
    sizes = []
    for depth, frame in pairs.items():
        texts = task_texts(frame, corpus, queries) if corpus else None
        sizes.append(pool_size_from_runs(frame, depth, texts=texts, prompt_tokens=prompt_tokens, tokenizer=tokenizer))
    return sizes


def _mean_tokens(tokens: np.ndarray, prompt_tokens: int) -> float | None:
    return float(tokens.mean()) + prompt_tokens if len(tokens) else None


@lru_cache(maxsize=1)
def _tiktoken_encoding():
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base")
    except Exception:  # not installed, or its encoding file cannot be fetched (no network)
        return None


def count_tokens(texts: Iterable[str], tokenizer: str = "auto") -> tuple[np.ndarray, str]:
    """Tokens of each text, and the name of the tokenizer used (see the module docstring)."""
    check("tokenizer", tokenizer, TOKENIZERS)
    texts = list(texts)
    encoding = _tiktoken_encoding() if tokenizer != "chars" else None
    if tokenizer == "tiktoken" and encoding is None:
        raise InputError("tiktoken is not installed or its o200k_base encoding cannot be loaded")
    if encoding is not None:
        return np.array([len(encoding.encode(t)) for t in texts], dtype=np.int64), "tiktoken o200k_base"
    counts = np.array([math.ceil(len(t) / CHARS_PER_TOKEN) for t in texts], dtype=np.int64)
    return counts, f"estimated: ceil(characters / {CHARS_PER_TOKEN})"


@validate_params(rules_of(CostSpec, "seconds_per_judgment", "annotators", "overlap", "price_in", "price_out",
                          "output_tokens"))
def judging_budget(sizes: Sequence[PoolSize], query_counts: Iterable[int] = (), *,
                   seconds_per_judgment: float | None = None, annotators: int = 1, overlap: int = 1,
                   price_in: float | None = None, price_out: float | None = None,
                   output_tokens: int = 10) -> pd.DataFrame:
    """One row per pool depth and number of queries: pairs, judgments, annotator hours and LLM cost.

    Columns: ``depth, source, systems, queries, pairs_per_query, pairs, exact`` (True for the pool's own
    queries), and with ``seconds_per_judgment``: ``judgments, annotator_hours, hours_per_annotator``; with
    prices and token counts: ``tokens_in, tokens_out, llm_cost``.
    """
    check_overlap(overlap, annotators)
    rows = []
    for size in sizes:
        mean = size.pairs / size.queries if size.queries else math.nan
        for n in sorted({size.queries, *(int(q) for q in query_counts)}):
            exact = n == size.queries
            pairs = size.pairs if exact else mean * n
            row = {"depth": size.depth, "source": size.source, "systems": size.systems, "queries": n,
                   "pairs_per_query": mean, "pairs": pairs, "exact": exact}
            if seconds_per_judgment is not None:
                judgments = pairs * overlap
                hours = judgments * seconds_per_judgment / 3600
                row |= {"judgments": judgments, "annotator_hours": hours, "hours_per_annotator": hours / annotators}
            if price_in is not None and size.tokens_per_task is not None:
                tokens_in, tokens_out = pairs * size.tokens_per_task, pairs * output_tokens
                row |= {"tokens_in": tokens_in, "tokens_out": tokens_out,
                        "llm_cost": (tokens_in * price_in + tokens_out * (price_out or 0.0)) / 1e6}
            rows.append(row)
    return pd.DataFrame(rows)


def budget_lines(table: pd.DataFrame, sizes: Sequence[PoolSize], *, seconds_per_judgment: float | None = None,
                 annotators: int = 1, overlap: int = 1, price_in: float | None = None,
                 price_out: float | None = None, output_tokens: int = 10) -> list[str]:
    """The budget table as printable lines, with the settings behind it."""
    columns = {"depth": "depth", "queries": "queries", "pairs_per_query": "pairs/query", "pairs": "pairs",
               "judgments": "judgments", "annotator_hours": "annotator hours",
               "hours_per_annotator": "hours each", "tokens_in": "tokens in", "tokens_out": "tokens out",
               "llm_cost": "LLM cost"}
    shown = [c for c in columns if c in table]
    rows = [[columns[c] for c in shown]]
    for row in table.to_dict("records"):
        cells = []
        for column in shown:
            value = row[column]
            if column in ("depth", "queries"):
                cells.append(str(value))
            elif column == "pairs":
                cells.append(f"{value:,.0f}" + ("" if row["exact"] else " (expected)"))
            elif column in ("pairs_per_query", "annotator_hours", "hours_per_annotator"):
                cells.append(f"{value:,.1f}")
            elif column == "llm_cost":
                cells.append("n/a" if value != value else f"{value:,.2f}")
            else:
                cells.append("n/a" if value != value else f"{value:,.0f}")
        rows.append(cells)
    lines = ["judging budget: pairs in the union of the pooled systems' top k"]
    for size in sizes:
        text = (f"  depth {size.depth}: {size.pairs:,} pairs over {size.queries} queries from "
                f"{size.systems} systems ({size.source})")
        if size.tokens_per_task is not None:
            text += (f"; {size.tokens_per_task:,.1f} input tokens per task over {size.tasks_with_text:,} tasks with "
                     f"text ({size.tokenizer})")
        lines.append(text)
    lines += text_table(rows, right=range(len(shown)))
    if seconds_per_judgment is not None:
        lines.append(f"annotators: {seconds_per_judgment:g} s per judgment, {annotators} annotator(s), each pair "
                     f"judged by {overlap}; hours each = annotator hours / annotators")
    if price_in is not None:
        lines.append(f"LLM: {price_in:g} in / {price_out or 0:g} out per million tokens, {output_tokens} output "
                     "tokens per task, one judgment per pair; pairs without text costed at the mean")
    return lines


def pool_size_dict(size: PoolSize) -> dict:
    """A :class:`PoolSize` as a JSON-ready dict (pairs per query included)."""
    return {"depth": size.depth, "source": size.source, "systems": size.systems, "queries": size.queries,
            "pairs": size.pairs, "tokens_per_task": size.tokens_per_task, "tasks_with_text": size.tasks_with_text,
            "tokenizer": size.tokenizer, "pairs_per_query": {str(q): int(n) for q, n in size.pairs_per_query.items()}}


@dataclass(frozen=True)
class CostPlan:
    """What ``evalset plan cost`` finds: the pools' sizes, the judging budget at each number of queries, the cost
    settings behind it, and notes for the user."""

    pools: list[PoolSize]
    budget: pd.DataFrame
    costs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_text(self) -> str:
        """The budget as ``evalset plan cost`` prints it."""
        return "\n".join(budget_lines(self.budget, self.pools, **self.costs))

    def to_dict(self) -> dict:
        """The JSON of ``evalset plan cost --format json``: the settings, the rows and the pools."""
        return {"settings": self.costs, "rows": records(self.budget),
                "pools": [pool_size_dict(size) for size in self.pools]}


def make_cost_plan(spec: CostSpec | None = None, **options: Any) -> CostPlan:
    """``evalset plan cost``: the pairs of a pool folder, or of the runs pooled at each depth, and what judging
    them costs at the pool's queries and every ``at`` number of queries (module docstring). The settings are
    ``spec``, or the :class:`~evalset.planning.spec.CostSpec` of keyword ``options``, which refuses settings no
    plan can have."""
    spec = settings_of(CostSpec, spec, options)
    queries = read_queries(spec.queries_path) if spec.queries_path else None
    try:
        pools = pool_sizes(read_runs(spec.runs) if spec.depths else {}, spec.depths, pool_folder=spec.pool_folder,
                           queries=queries, corpus=spec.corpus, prompt_tokens=spec.prompt_tokens,
                           tokenizer=spec.tokenizer)
    except UnknownQueriesError as exc:
        raise exc.in_file(queries, spec.queries_path) from None
    costs = {"seconds_per_judgment": spec.seconds_per_judgment, "annotators": spec.annotators,
             "overlap": spec.overlap, "price_in": spec.price_in, "price_out": spec.price_out,
             "output_tokens": spec.output_tokens}
    notes = []
    if spec.price_in is not None and all(size.tokens_per_task is None for size in pools):
        notes.append("note: no LLM cost without the tasks' texts: give --corpus and --queries, or a pool folder "
                     "with tasks.jsonl")
    return CostPlan(pools, judging_budget(pools, spec.at, **costs), costs, notes)
