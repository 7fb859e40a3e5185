"""A guideline's worked examples against the pool they would be read beside: an example that grades a pair of the
pool hands its grade to whoever reads the guideline while grading that pair (an annotator in the instructions, the
LLM judge in its prompt), and inflates their agreement with the reference on it."""

from __future__ import annotations

import os
from collections.abc import Iterable

from evalset.errors import InputError
from evalset.io.guideline import Guideline
from evalset.pooling.pool import pair_ids
from evalset.render import counted


def refuse_worked_examples(guideline: Guideline, graded: Iterable[str], pool_dir: str | os.PathLike,
                           doing: str = "being pushed",
                           reader: str = "annotators would read its grade in the instructions") -> None:
    """Refuse to grade the pairs ``graded`` (``pair_id`` values of the pool ``pool_dir``, gold included) when a
    worked example of the guideline grades one of them. Names the first such example (its line, query and document
    ids), how many more, the pool, and who would read the answer; the pairs are compared by ``pair_id``."""
    examples = {example.pair: example for example in reversed(guideline.examples) if example.pair is not None}
    if not examples:
        return
    keys = list(examples)
    ids = pair_ids([query for query, _ in keys], [doc for _, doc in keys])
    wanted = set(graded)
    shown = sorted((examples[key] for key, pair_id in zip(keys, ids, strict=True) if pair_id in wanted),
                   key=lambda example: example.line)
    if shown:
        first, more = shown[0], len(shown) - 1
        raise InputError(f"the worked example of query {first.query_id}, document {first.doc_id} (grade "
                         f"{first.grade}) is a pair of the pool {os.fspath(pool_dir)} {doing}"
                         + (f", and {counted(more, 'other example')} too" if more else "")
                         + f": {reader}; use a guideline whose examples are outside the pool", guideline.path,
                         first.line)
