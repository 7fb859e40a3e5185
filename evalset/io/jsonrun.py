"""Runs as JSON: ``{query_id: {doc_id: score}}``, the shape ranx and pytrec_eval use, told from a TREC run by its
content (:func:`evalset.io.files.content_kind`: the file starts with ``{``).

Conventions
-----------
- Ids are strings as written; a score must be a finite number (a boolean is not one).
- ``rank`` is a document's place within its query as written (1-based). Ranking for evaluation follows the
  contract's tie rule (:func:`evalset.metrics.ranking.order_run`): under the default, trec_eval's, the scores decide
  and the written order does not matter; ``ties=run`` keeps the written order of tied scores.
- A query with no document is no row, as in a TREC run; a file with no document at all is refused.
- Rows come out in file order, like :func:`evalset.io.trec.read_run`'s; the whole file is read (a JSON run is never
  streamed).
"""

from __future__ import annotations

import json
import math
import os

import pandas as pd

from evalset.errors import InputError
from evalset.io.files import open_file


def read_json_run(path: str | os.PathLike) -> pd.DataFrame:
    """The run in the JSON file at ``path`` as ``query_id, doc_id, rank, score`` (module docstring)."""
    path = os.fspath(path)
    try:
        with open_file(path, "rt", encoding="utf-8-sig") as handle:
            document = json.load(handle)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a JSON run: {exc.msg}", path, exc.lineno) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text (save the file as UTF-8)", path) from None
    if not isinstance(document, dict):
        raise InputError(f"a JSON run is an object {{query_id: {{doc_id: score}}}}, found {type(document).__name__}",
                         path)
    query_ids, doc_ids, ranks, scores = [], [], [], []
    for query_id, documents in document.items():
        if not isinstance(documents, dict):
            raise InputError(f"query {query_id}: a JSON run maps each query to {{doc_id: score}}, found "
                             f"{type(documents).__name__}", path)
        for rank, (doc_id, score) in enumerate(documents.items(), 1):
            if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                raise InputError(f"query {query_id}, document {doc_id}: score must be a finite number, found "
                                 f"{score!r}", path)
            query_ids.append(str(query_id))
            doc_ids.append(str(doc_id))
            ranks.append(rank)
            scores.append(float(score))
    if not query_ids:
        raise InputError("no run lines: the JSON run holds no document", path)
    return pd.DataFrame({"query_id": pd.Series(query_ids, dtype="str"), "doc_id": pd.Series(doc_ids, dtype="str"),
                         "rank": pd.Series(ranks, dtype="int64"), "score": pd.Series(scores, dtype="float64")})
