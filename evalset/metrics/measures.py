"""The measure registry: each measure declared once, as a registered value object (ir_measures' style).

A :class:`MeasureKind` holds a measure's name, its other spellings, its cutoff rule, whether it is defined
without a relevant document, its help text and its computation (a function of the engine's per-row arrays,
:class:`evalset.metrics.engine.MeasureInput`); :data:`MEASURES` holds them by name. The engine's dispatch, the
parser, ``evalset score --help`` and the errors that list the known measures all read it: a new measure is one
:func:`register` call, a row of the conventions table below, and a reference test.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from evalset.errors import InputError
from evalset.params import POSITIVE_INT, check

if TYPE_CHECKING:
    from evalset.metrics.engine import MeasureInput

CutoffRule = Literal["required", "none", "optional"]


@dataclass(frozen=True)
class MeasureKind:
    """One registered measure.

    name
        Our spelling (``ndcg``), the one ``str(Measure)`` prints.
    help
        What it measures, in a few words.
    aliases
        Its other spellings, ours and trec_eval's (``ndcg_cut``, ``map``), in lower case: parsing ignores case.
    cutoff
        ``required`` (``p@k``), ``none`` (``bpref``) or ``optional`` (``ndcg`` and ``ndcg@k``).
    defined_without_relevant
        Whether it has a value for a query with no relevant document (R = 0); when not, the engine makes that
        value NaN. A computation marks its other undefined values NaN itself (nDCG: no gain).
    compute
        The value of every judged query (an array in ``PreparedQrels.query_ids`` order) from the engine's
        per-row arrays; it may read the measure's cutoff (and a later parameter) from its input.
    condensed
        Whether it is measured on the condensed ranking under ``unjudged="condensed"`` (``judged@k`` is not: it
        is measured on the ranking as the run gave it).
    bounds
        The range of its values, ``[0, 1]`` for every measure here (intervals of estimates keep inside it).
    trec_eval
        Its trec_eval names: without a cutoff (``map``), and the stem trec_eval writes before ``_k`` with a cutoff
        (``map_cut`` for ``map_cut_10``); None where trec_eval has no such measure (``rr@k``, ``judged@k``).
        :func:`trec_eval_name` reads it.
    """

    name: str
    help: str
    cutoff: CutoffRule
    defined_without_relevant: bool
    compute: Callable[[MeasureInput], np.ndarray]
    aliases: tuple[str, ...] = ()
    condensed: bool = True
    bounds: tuple[float, float] = (0.0, 1.0)
    trec_eval: tuple[str | None, str | None] = (None, None)

    @property
    def spelling(self) -> str:
        """How it is written with its cutoff rule: ``p@k``, ``ndcg[@k]``, ``bpref``."""
        return {"required": f"{self.name}@k", "optional": f"{self.name}[@k]", "none": self.name}[self.cutoff]


MEASURES: dict[str, MeasureKind] = {}
"""The registry: name -> :class:`MeasureKind`, in the order of the table above."""
_SPELLINGS: dict[str, str] = {}  # every spelling (a name or an alias) -> the name
_NAME = re.compile(r"[a-z_-]+")


def register(kind: MeasureKind) -> MeasureKind:
    """Add ``kind`` to :data:`MEASURES`; a name or alias that is already a spelling is refused."""
    for spelling in (kind.name, *kind.aliases):
        if spelling in _SPELLINGS or not _NAME.fullmatch(spelling):
            raise ValueError(f"{kind.name}: {spelling!r} is taken or not a lower-case name")
    MEASURES[kind.name] = kind
    _SPELLINGS.update(dict.fromkeys((kind.name, *kind.aliases), kind.name))
    return kind


def known_measures() -> str:
    """The registered measures as written: ``p@k, recall[@k], ..., judged@k`` (for help texts and errors)."""
    return ", ".join(kind.spelling for kind in MEASURES.values())


def discount(position: np.ndarray) -> np.ndarray:
    """DCG's discount of a 0-based position: 1 / log2(rank + 1)."""
    return 1.0 / np.log2(position + 2.0)


def _rprec(x: MeasureInput) -> np.ndarray:
    return x.per_query(x.rows.expected_relevant, x.rows.position < x.relevant[x.rows.query]) / x.relevant


def _ndcg(x: MeasureInput) -> np.ndarray:
    ideal = x.prepared.ideal_dcg(x.cutoff)
    return np.where(ideal > 0, x.per_query(x.rows.expected_gain * discount(x.rows.position)) / ideal, np.nan)


register(MeasureKind(
    "p", "precision", cutoff="required", defined_without_relevant=True, aliases=("precision",), trec_eval=(None, "P"),
    compute=lambda x: x.per_query(x.rows.expected_relevant) / x.cutoff))
register(MeasureKind(
    "recall", "share of the relevant documents retrieved", cutoff="optional", defined_without_relevant=False,
    aliases=("r",), trec_eval=("set_recall", "recall"),
    compute=lambda x: x.per_query(x.rows.expected_relevant) / x.relevant))
register(MeasureKind(
    "rr", "reciprocal rank", cutoff="optional", defined_without_relevant=False, aliases=("mrr", "recip_rank"),
    trec_eval=("recip_rank", None),
    compute=lambda x: x.per_query(x.rows.first_relevant / (x.rows.position + 1))))
register(MeasureKind(
    "ap", "average precision", cutoff="optional", defined_without_relevant=False, aliases=("map", "map_cut"),
    trec_eval=("map", "map_cut"),
    compute=lambda x: x.per_query(x.rows.ap_term) / x.relevant))
register(MeasureKind(
    "ndcg", "normalised discounted cumulative gain", cutoff="optional", defined_without_relevant=True,
    aliases=("ndcg_cut",), trec_eval=("ndcg", "ndcg_cut"), compute=_ndcg))
register(MeasureKind(
    "rprec", "R-precision", cutoff="none", defined_without_relevant=False, aliases=("r-prec",),
    trec_eval=("Rprec", None),
    compute=_rprec))
register(MeasureKind(
    "bpref", "binary preference", cutoff="none", defined_without_relevant=False, trec_eval=("bpref", None),
    compute=lambda x: x.per_query(x.rows.bpref_term) / x.relevant))
register(MeasureKind(
    "success", "1 if a relevant document is in the top k", cutoff="required", defined_without_relevant=False,
    trec_eval=(None, "success"),
    compute=lambda x: np.minimum(x.per_query(x.rows.first_relevant), 1.0)))
register(MeasureKind(
    "judged", "share of the top k that is judged", cutoff="required", defined_without_relevant=True,
    condensed=False, compute=lambda x: x.per_query(x.rows.expected_judged) / x.cutoff))


@dataclass(frozen=True, order=True)
class Measure:
    """A measure: ``name`` (one of :data:`MEASURES`) and an optional positive ``cutoff``."""

    name: str
    cutoff: int | None = None

    def __post_init__(self) -> None:
        if self.name not in MEASURES:
            raise InputError(f"unknown measure {self.name!r}; known: {known_measures()}")
        rule = self.kind.cutoff
        if self.cutoff is not None:
            object.__setattr__(self, "cutoff", check(f"{self.name}: the cutoff k", self.cutoff, POSITIVE_INT))
            if rule == "none":
                raise InputError(f"{self.name} takes no cutoff")
        elif rule == "required":
            raise InputError(f"{self.name} needs a cutoff, e.g. {self.name}@10")

    @property
    def kind(self) -> MeasureKind:
        """Its registered :class:`MeasureKind`."""
        return MEASURES[self.name]

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"


_SPELLING = re.compile(r"^([a-z_-]+?)(?:[@_](-?\d[\d.]*))?$")


def trec_eval_name(measure: Measure) -> str | None:
    """trec_eval's name of ``measure`` (``ndcg_cut_10``, ``P_10``, ``map``, ``set_recall`` for recall without a
    cutoff), or None where trec_eval has no such measure (``rr@10``, ``judged@10``)."""
    whole, stem = measure.kind.trec_eval
    if measure.cutoff is None:
        return whole
    return f"{stem}_{measure.cutoff}" if stem else None


def measure_bounds(text: str) -> tuple[float, float]:
    """The range of the values of the measure ``text`` names (:func:`parse_measure`)."""
    return parse_measure(text).kind.bounds


def parse_measure(text: str) -> Measure:
    """Parse ``ndcg@10``, ``P_10``, ``map`` and the like into a :class:`Measure` (case-insensitive)."""
    match = _SPELLING.match(text.strip().lower())
    if not match or match.group(1) not in _SPELLINGS:
        raise InputError(f"unknown measure {text!r}; known: {known_measures()} (trec_eval's names work too)")
    name, cutoff = match.groups()
    if cutoff is not None and not re.fullmatch(r"-?\d+", cutoff):
        raise InputError(f"{text!r}: the cutoff k must be a positive integer")
    return Measure(_SPELLINGS[name], int(cutoff) if cutoff is not None else None)
