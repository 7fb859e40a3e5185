"""Measures as small value objects, separate from how they are computed (see :mod:`evalset.metrics.engine`).

A measure is a name and an optional cutoff: ``Measure("ndcg", 10)`` is nDCG@10. :func:`parse_measure`
accepts our spelling (``ndcg@10``, ``p@10``, ``recall@100``, ``rr``, ``ap@100``, ``rprec``, ``bpref``,
``success@10``, ``judged@10``) and trec_eval's (``ndcg_cut_10``, ``P_10``, ``map``, ``recip_rank``,
``Rprec``, ``recall_100``, ``success_10``).

Conventions (DESIGN.md, "The evaluation contract"), with R the number of judged documents whose grade is
at least the relevance level and ranks counted from 1 after the tie rule:

========  =======================================================================================  =========
measure   value for one query                                                                      undefined
========  =======================================================================================  =========
p@k       relevant documents in the top k / k (a ranking shorter than k still divides by k)        never
recall@k  relevant documents in the top k / R; without k, over the whole ranking                   R = 0
rr@k      1 / rank of the first relevant document within the top k, else 0                         R = 0
ap@k      sum of precision at the rank of each relevant document within the top k / R              R = 0
ndcg@k    DCG@k / ideal DCG@k; DCG = sum gain(grade) / log2(rank + 1); the ideal ranks every       no gain
          judged document of the query by grade (never the run's documents only)
rprec     relevant documents in the top R / R                                                      R = 0
bpref     1/R sum over retrieved relevant d of 1 - min(n_d, R) / min(N, R), n_d = judged           R = 0
          non-relevant documents above d, N = judged non-relevant documents (Buckley & Voorhees)
success@k 1 if a relevant document is in the top k, else 0                                         R = 0
judged@k  documents in the top k that have a grade (>= 0) / k                                      never
========  =======================================================================================  =========

Gain is the grade (linear) or 2^grade - 1 (exponential); an unjudged document, or one with a negative
grade (pooled but not judged), has gain 0 and is never relevant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalset.errors import InputError

MEASURES: dict[str, str] = {
    "p": "precision",
    "recall": "recall",
    "rr": "reciprocal rank",
    "ap": "average precision",
    "ndcg": "normalised discounted cumulative gain",
    "rprec": "R-precision",
    "bpref": "binary preference",
    "success": "success",
    "judged": "share of the top k that is judged",
}
NEEDS_CUTOFF = frozenset({"p", "success", "judged"})
NO_CUTOFF = frozenset({"rprec", "bpref"})
ALWAYS_DEFINED = frozenset({"p", "judged"})

_ALIASES = {
    "precision": "p", "p": "p",
    "recall": "recall", "r": "recall",
    "rr": "rr", "mrr": "rr", "recip_rank": "rr",
    "ap": "ap", "map": "ap",
    "ndcg": "ndcg", "ndcg_cut": "ndcg",
    "rprec": "rprec", "r-prec": "rprec",
    "bpref": "bpref",
    "success": "success",
    "judged": "judged",
    "map_cut": "ap",
}


@dataclass(frozen=True, order=True)
class Measure:
    """A measure: ``name`` (one of :data:`MEASURES`) and an optional positive ``cutoff``."""

    name: str
    cutoff: int | None = None

    def __post_init__(self) -> None:
        if self.name not in MEASURES:
            raise InputError(f"unknown measure {self.name!r}; known: {', '.join(MEASURES)}")
        if self.cutoff is not None:
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int) or self.cutoff <= 0:
                raise InputError(f"{self.name}: the cutoff k must be a positive integer, got {self.cutoff!r}")
            if self.name in NO_CUTOFF:
                raise InputError(f"{self.name} takes no cutoff")
        elif self.name in NEEDS_CUTOFF:
            raise InputError(f"{self.name} needs a cutoff, e.g. {self.name}@10")

    @property
    def defined_without_relevant(self) -> bool:
        """Whether the measure has a value for a query with no relevant document."""
        return self.name in ALWAYS_DEFINED

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"


_SPELLING = re.compile(r"^([a-z_-]+?)(?:[@_](-?\d[\d.]*))?$")


def parse_measure(text: str) -> Measure:
    """Parse ``ndcg@10``, ``P_10``, ``map`` and the like into a :class:`Measure` (case-insensitive)."""
    match = _SPELLING.match(text.strip().lower())
    if not match or match.group(1) not in _ALIASES:
        raise InputError(f"unknown measure {text!r}; known: {', '.join(MEASURES)} (e.g. ndcg@10, ap, p@10)")
    name, cutoff = match.groups()
    if cutoff is not None and not re.fullmatch(r"-?\d+", cutoff):
        raise InputError(f"{text!r}: the cutoff k must be a positive integer")
    return Measure(_ALIASES[name], int(cutoff) if cutoff is not None else None)
