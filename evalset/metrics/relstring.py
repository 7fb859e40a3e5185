"""trec_eval's ``relstring``: a picture of each query's ranking, its first documents' grades as a string
(``'0000011000'``), which ``trec_eval -q -m all_trec`` prints per query and never sums. Not a measure (its value is
not a number): the evaluation room computes it beside the measures when it is asked for
(:func:`evalset.evaluation.per_query_values`) and ``--format trec_eval`` prints it.

Conventions (trec_eval 10.0's ``m_relstring.c`` and ``form_res_rels.c``): the ranking is the engine's (the
contract's tie rule, a repeated document once, ``max_retrieved``), condensed under ``unjudged="condensed"``
(trec_eval's ``-J``: only judged documents, ranks closed up); one character a document, the grade's digit (``>``
above 9), ``-`` for a document without a qrels line and ``.`` for one with a negative grade (pooled, not judged);
:data:`RELSTRING_LENGTH` documents (trec_eval's default); a judged query the run lacks has the empty string.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalset.metrics.engine import match_qrels
from evalset.metrics.prepared import PreparedQrels
from evalset.metrics.ranking import order_run, position_in_group, strict_ties

RELSTRING_LENGTH = 10
"""The documents a relstring shows (trec_eval's ``relstring.10``)."""


def relstrings(run: pd.DataFrame, prepared: PreparedQrels, max_retrieved: int | None = None) -> pd.Series:
    """Each judged query's relstring (indexed by the prepared qrels' query ids; module docstring)."""
    ordered = order_run(run, strict_ties(prepared.contract.ties), dedupe=False,
                        single_precision=prepared.contract.trec_eval_version == 9)
    match, repeated = match_qrels(ordered, prepared)
    query_code, match = ordered.query_code[~repeated], match[~repeated]
    if max_retrieved is not None:
        within = position_in_group(query_code) < max_retrieved
        query_code, match = query_code[within], match[within]
    if prepared.contract.unjudged == "condensed":
        judged = match >= 0
        judged[judged] = prepared.grade[match[judged]] >= 0
        query_code, match = query_code[judged], match[judged]
    shown = position_in_group(query_code) < RELSTRING_LENGTH
    query_code, match = query_code[shown], match[shown]
    grade = np.where(match >= 0, prepared.grade[np.maximum(match, 0)], 0)
    characters = np.where(match < 0, "-", np.where(grade < 0, ".", np.where(grade > 9, ">", grade.astype(str))))
    judged = prepared.query_ids.get_indexer(ordered.query_ids)[query_code]
    strings = [""] * len(prepared.query_ids)
    for query, character in zip(judged.tolist(), characters.tolist(), strict=True):
        if query >= 0:
            strings[query] += character
    return pd.Series(strings, index=prepared.query_ids, dtype=object)
