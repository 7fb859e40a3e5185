"""Reading grades: every judgment of labels tables and TREC qrels, read by the file-level parsers of
:mod:`evalset.io.annotations`, with one check of each file and one rule for an annotator's repeated judgments.

=========================  =======================================================================================
convention                 rule
=========================  =======================================================================================
sources                    ``(path, kind)``: a labels table gives each row's annotator and kind; a qrels file is one
                           annotator, named by the file, of ``kind``
a file with no judgment    refused, naming it (and any other such file), with one message: empty, a header alone,
                           only negative qrels grades or, when a kind is asked for, only labels of another kind
a negative qrels grade     pooled, not judged: no judgment; left out once repeats are settled, and counted
labels of another kind     left out when a kind is asked for, and counted (:attr:`Reading.other_kind`)
one annotator's repeats    :func:`~evalset.io.annotations.settle_repeats` under ``--conflicting-grades``: exact
                           repeats collapsed; different grades refused naming both places, unless ``latest`` or
                           ``first`` says which judgment stands
=========================  =======================================================================================
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from evalset.errors import InputError
from evalset.io.annotations import read_annotations, settle_repeats

Sources = Sequence[tuple[str | os.PathLike, str]]


def read_judgments(sources: Sources, kind: str | None = None) -> pd.DataFrame:
    """Every judgment of ``sources`` as read (:data:`~evalset.io.annotations.ANNOTATIONS_COLUMNS`, repeats and
    negative qrels grades kept, in input order); a file that holds no judgment (of ``kind``, when given) is
    refused (module docstring)."""
    judgments = read_annotations(sources)
    held = judgments["judged"] if kind is None else judgments["judged"] & (judgments["kind"] == kind)
    judged_files = set(judgments.loc[held, "file"])
    empty = [os.fspath(path) for path, _ in sources if os.fspath(path) not in judged_files]
    if empty:
        others = f" (so are {', '.join(empty[1:])})" if len(empty) > 1 else ""
        what = f"{kind} judgments" if kind else "judgments"
        raise InputError(f"no {what} in this file{others}: it is empty or a header alone, or holds only negative "
                         "(unjudged) qrels grades" + (" or labels of another kind" if kind else ""), empty[0])
    return judgments


@dataclass(frozen=True)
class Reading:
    """The judgments that stand (one per annotator and pair, of the kind asked for, in input order, without
    negative qrels grades), :func:`~evalset.io.annotations.settle_repeats`'s counts per annotator, and the number
    of labels of another kind left out."""

    judgments: pd.DataFrame
    counts: dict[str, dict[str, int]]
    other_kind: int = 0


def read_grades(sources: Sources, conflicting_grades: str = "refuse", kind: str | None = None) -> Reading:
    """The judgments of ``sources`` (:func:`read_judgments`), of ``kind`` only when given, with one annotator's
    repeats settled by ``conflicting_grades`` (``refuse``, ``latest`` or ``first``)."""
    read = read_judgments(sources, kind)
    wanted = read if kind is None else read[read["kind"] == kind]
    judgments, counts = settle_repeats(wanted, conflicting_grades)
    return Reading(judgments, counts, len(read) - len(wanted))
