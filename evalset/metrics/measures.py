"""The measure registry: each measure declared once, as a registered value object (ir_measures' style).

A :class:`MeasureKind` holds a measure's name, its other spellings, its cutoff rule, whether it is defined
without a relevant document, its help text and its computation (a function of the engine's per-row arrays,
:class:`evalset.metrics.prepared.MeasureInput`); :data:`MEASURES` holds them by name. The engine's dispatch, the
parser, ``evalset score --help`` and the errors that list the known measures all read it: a new measure is one
:func:`register` call, a row of the conventions table below, and a reference test.

A measure is a name, an optional cutoff and its own parameters: ``Measure("ndcg", 10)`` is nDCG@10,
``Measure("p", 10, (("rel", 2),))`` is P(rel=2)@10. :func:`parse_measure` accepts our spelling (``ndcg@10``,
``p@10``, ``recall@100``, ``rr``, ``ap@100``, ``rprec``, ``bpref``, ``success@10``, ``judged@10``, ``iprec@0.5``),
ir_measures' (``nDCG@10``, ``P(rel=2)@10``, ``AP(rel=2)``, ``R@1000``, ``nDCG(dcg='exp-log2')@10``,
``AP(judged_only=True)``, ``Judged@10``, ``IPrec@0.5``, ``infAP``) and trec_eval's (``ndcg_cut_10``, ``P_10``,
``map``, ``recip_rank``, ``Rprec``, ``recall_100``, ``success_10``, ``iprec_at_recall_0.50``, ``11pt_avg``), in any
case. In ``iprec@0.5`` the number after ``@`` is a recall level, the measure's ``recall`` parameter (ir_measures'
``AT_PARAM``), never a cutoff.

Conventions (docs/design.md, "The evaluation contract"), with R the number of judged documents whose grade is
at least the relevance level and ranks counted from 1 after the tie rule:

======================  =====================================================================================  =========
measure                 value for one query                                                                    undefined
======================  =====================================================================================  =========
p@k                     relevant documents in the top k / k (a ranking shorter than k still divides by k)      never
recall@k                relevant documents in the top k / R; without k, over the whole ranking                 R = 0
rr@k                    1 / rank of the first relevant document within the top k, else 0                       R = 0
ap@k                    sum of precision at the rank of each relevant document within the top k / R            R = 0
ndcg@k                  DCG@k / ideal DCG@k; DCG = sum gain(grade) / log2(rank + 1); the ideal ranks every     no gain
                        judged document of the query by grade (never the run's documents only)
rprec                   relevant documents in the top R / R                                                    R = 0
bpref                   1/R sum over retrieved relevant d of 1 - min(n_d, R) / min(N, R), n_d = judged         R = 0
                        non-relevant documents above d, N = judged non-relevant documents (Buckley & Voorhees)
success@k               1 if a relevant document is in the top k, else 0                                       R = 0
judged@k                documents in the top k that have a grade (>= 0) / k; without k, those of the whole     never
                        ranking / its length (0 for an empty one; ir_measures' Judged without a cutoff)
dcg@k                   nDCG's numerator: sum over the top k of gain(grade) / log2(rank + 1), the contract's   never
                        gain (``dcg='exp-log2'``: 2^grade - 1)
err@k                   sum over ranks r <= k of R_r / r prod_{i<r} (1 - R_i), R_i = (2^grade - 1) / 2^g_max,  never
                        g_max = max(4, the query's highest grade): gdeval.pl's fixed 4, raised only for a query
                        graded above it; not computed under ties=expected (not linear in the grades)
rbp@k                   (1 - p) sum over ranks r <= k of p^(r-1) gain_r (p default 0.8); gain = grade / the    never
                        query's highest grade when that is above 1 (trec_eval's rbp), with rel: 1 if relevant
rbp_residual@k          the weight RBP@k leaves unknown: its unjudged places within the depth plus p^depth     never
                        beyond it, = 1 - (1 - p) sum over judged ranks r <= k of p^(r-1); the depth is k, or
                        the ranking's length n when shorter (its empty places are unknown: p^n, as without k)
num_ret                 documents retrieved (a repeated document once; under condensed, the judged ones)       never
num_rel                 R: the query's relevant documents, retrieved or not                                    never
num_rel_ret             relevant documents retrieved (``NumRet(rel=2)`` parses to ``num_rel_ret(rel=2)``)      never
f@k                     F of the set of the top k: (1 + beta) P R / (beta P + R), P over the set's size        R = 0
                        min(k, n) (trec_eval's set_F without k, beta its x; ir_measures' SetF); 0 if no hit
set_p                   relevant documents retrieved / documents retrieved (0 when none is retrieved)          never
iprec@r                 interpolated precision at recall r: the highest precision at or below the rank where   R = 0
                        recall reaches r, r read as a count of relevant documents as trec_eval 9 or 10 does
11pt_avg                the mean of iprec@r at r = 0.0, 0.1, ..., 1.0                                          R = 0
infap                   inferred AP (Yilmaz & Aslam): documents graded < 0 are pooled but unjudged; condensed  R = 0
                        as the others (trec_eval's -J), trec_eval's m_infap.c with its smoothing eps
gm_ap                   AP; its summary over queries is geometric: exp mean log max(v, 0.00001) (gm_map)       R = 0
gm_bpref                bpref; its summary geometric as gm_ap's                                                R = 0
rprec_mult@m            relevant documents in the top c / c, c = (long) (m R + 0.9) (Rprec_mult_0.20)          R = 0
utility                 relevant retrieved - other documents retrieved (trec_eval's 1, -1, 0, 0)               never
binary_g                1/R sum over relevant retrieved d of 1 / log2(2 + not relevant above d) (binG)         R = 0
graded_g                trec_eval's G: gain_i / log2(2 + ideal cost_i - gain so far) summed / total gain       no gain
ndcg_rel                nDCG at the rank of each document of positive gain (at n if not retrieved), averaged   no gain
rndcg                   nDCG averaged at the R levels of the grades and at n past them (Rndcg)                 R = 0
relative_p@k            relevant documents in the top k / min(k, R) (relative_P_k)                             R = 0
set_relative_p          relevant retrieved / min(n, R), 0 when n = 0 (set_relative_P)                          R = 0
set_ap                  relevant retrieved^2 / (n R), 0 when n = 0 (set_map)                                   R = 0
rbp_resid               trec_eval's: p^n + (1 - p) sum over unjudged ranks of p^(r-1), p = 0.9; 0 when none    never
num_nonrel_judged_ret   judged documents retrieved that are not relevant (a count)                             never
unjudged@k              unjudged documents in the top k / k; short rankings' empty places are not unjudged     never
                        (unj_k; not 1 - judged@k there)
======================  =====================================================================================  =========

Gain is the grade (linear) or 2^grade - 1 (exponential); an unjudged document, or one with a negative
grade (pooled but not judged), has gain 0 and is never relevant.

A parameter overrides the evaluation contract for that measure alone and is printed with it (``p(rel=2)@10``); the
parameters and what they override: :mod:`evalset.metrics.parameters`.

A measure may fix a convention for itself (``MeasureKind.contract``): ERR is always on 2^grade - 1, RBP on the
grades (``gain``), whatever the call's. The counts (``num_ret``, ``num_rel``, ``num_rel_ret``) are in [0, inf):
trec_eval prints them as integers and sums them over the queries; evalset's tables show their mean.

trec_eval's procedures (iprec, 11pt_avg, infap) are computed in :mod:`evalset.metrics.trec_procedures`, where
trec_eval 9's and 10's rules for a recall level are stated; :func:`evalset.metrics.evaluate` takes the version.
The rest of trec_eval 10's ``all_trec`` (gm_ap on) is in :mod:`evalset.metrics.trec_measures`, conventions in full.
trec_eval's ``rbp`` is ``rbp(p=0.9)`` (evalset's p is 0.8 when not given), which ``--format trec_eval`` prints.

``missing``, ``undefined`` and ``ties`` are the call's, never a measure's: the queries a mean is over are the
same for every measure of a table.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.metrics import graded, trec_procedures
from evalset.metrics.decomposition import (
    AVERAGE_PRECISION,
    LINEAR_GAIN,
    NORMALISED_GAIN,
    PRECISION,
    Decomposition,
    discount,
)
from evalset.metrics.parameters import BINARY, PARAMS
from evalset.metrics.prepared import MeasureInput
from evalset.params import DEPTH, check

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
        The range of its values: ``[0, 1]``, or ``[0, inf)`` for DCG and the counts (intervals of estimates keep
        inside it: an unbounded measure is not estimated, :func:`measure_bounds`).
    trec_eval
        Its trec_eval names: without a cutoff (``map``), and the stem trec_eval writes before ``_k`` with a cutoff
        (``map_cut`` for ``map_cut_10``); None where trec_eval has no such measure (``rr@k``, ``judged@k``).
        :func:`evalset.metrics.trec_eval_names.trec_eval_name` reads it.
    params
        The parameters it takes (names of :data:`PARAMS`).
    contract
        The conventions it is always computed under, whatever the call's (``(("gain", "exponential"),)`` for ERR).
    count
        Whether it is a count (``num_ret``): trec_eval prints it as an integer, and its sum over the queries.
    at
        The parameter the number after ``@`` sets instead of a cutoff (``recall`` for ``iprec@0.5``); required.
    summary, trec_eval_params
        Its summary over queries, ``mean`` or ``geometric`` (gm_ap); the parameters its trec_eval name needs given.
    decomposition
        How its value for a query decomposes over the query's documents, for the document-sampled design
        (:mod:`evalset.metrics.decomposition`); None where it does not.
    pooled
        Whether it reads :attr:`evalset.metrics.prepared.Rows.pooled_above` (pooled but unjudged documents above a
        row), which the engine counts only for such a measure.
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
    params: tuple[str, ...] = ()
    contract: tuple[tuple[str, Any], ...] = ()
    count: bool = False
    at: str | None = None
    pooled: bool = False
    decomposition: Decomposition | None = None
    summary: Literal["mean", "geometric"] = "mean"
    trec_eval_params: tuple[tuple[str, Any], ...] = ()

    @property
    def spelling(self) -> str:
        """How it is written with its cutoff rule: ``p@k``, ``ndcg[@k]``, ``bpref``, ``iprec@recall``."""
        if self.at:
            return f"{self.name}@{self.at}"
        return {"required": f"{self.name}@k", "optional": f"{self.name}[@k]", "none": self.name}[self.cutoff]


MEASURES: dict[str, MeasureKind] = {}
"""The registry: name -> :class:`MeasureKind`, in the order of the table above."""
_SPELLINGS: dict[str, str] = {}  # every spelling (a name or an alias) -> the name
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


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


def _rprec(x: MeasureInput) -> np.ndarray:
    return x.per_query(x.rows.expected_relevant, x.rows.position < x.relevant[x.rows.query]) / x.relevant


def _judged(x: MeasureInput) -> np.ndarray:
    shown = x.rows.retrieved.astype(float) if x.cutoff is None else x.cutoff  # without k: the whole ranking
    return np.where(shown > 0, x.per_query(x.rows.expected_judged) / np.maximum(shown, 1), 0.0)


def _ndcg(x: MeasureInput) -> np.ndarray:
    ideal = x.prepared.ideal_dcg(x.cutoff)
    return np.where(ideal > 0, x.per_query(x.rows.expected_gain * discount(x.rows.position)) / ideal, np.nan)


register(MeasureKind(
    "p", "precision", cutoff="required", defined_without_relevant=True, aliases=("precision",), trec_eval=(None, "P"),
    params=BINARY, decomposition=PRECISION,
    compute=lambda x: x.per_query(x.rows.expected_relevant) / x.cutoff))
register(MeasureKind(
    "recall", "share of the relevant documents retrieved", cutoff="optional", defined_without_relevant=False,
    aliases=("r", "set_recall", "setr"), trec_eval=("set_recall", "recall"), params=BINARY,
    compute=lambda x: x.per_query(x.rows.expected_relevant) / x.relevant))
register(MeasureKind(
    "rr", "reciprocal rank", cutoff="optional", defined_without_relevant=False, aliases=("mrr", "recip_rank"),
    trec_eval=("recip_rank", None), params=BINARY,
    compute=lambda x: x.per_query(x.rows.first_relevant / (x.rows.position + 1))))
register(MeasureKind(
    "ap", "average precision", cutoff="optional", defined_without_relevant=False, aliases=("map", "map_cut"),
    trec_eval=("map", "map_cut"), params=BINARY, decomposition=AVERAGE_PRECISION,
    compute=lambda x: x.per_query(x.rows.ap_term) / x.relevant))
register(MeasureKind(
    "ndcg", "normalised discounted cumulative gain", cutoff="optional", defined_without_relevant=True,
    aliases=("ndcg_cut",), trec_eval=("ndcg", "ndcg_cut"), params=("dcg", "judged_only"), compute=_ndcg,
    decomposition=NORMALISED_GAIN))
register(MeasureKind(
    "rprec", "R-precision", cutoff="none", defined_without_relevant=False, aliases=("r-prec",),
    trec_eval=("Rprec", None), params=BINARY,
    compute=_rprec))
register(MeasureKind(
    "bpref", "binary preference", cutoff="none", defined_without_relevant=False, trec_eval=("bpref", None),
    params=("rel",),
    compute=lambda x: x.per_query(x.rows.bpref_term) / x.relevant))
register(MeasureKind(
    "success", "1 if a relevant document is in the top k", cutoff="required", defined_without_relevant=False,
    trec_eval=(None, "success"), params=BINARY,
    compute=lambda x: np.minimum(x.per_query(x.rows.first_relevant), 1.0)))
register(MeasureKind(
    "judged", "share of the top k (or of the ranking) that is judged", cutoff="optional", defined_without_relevant=True,
    condensed=False, compute=_judged))
UNBOUNDED = (0.0, float("inf"))
register(MeasureKind(
    "dcg", "discounted cumulative gain", cutoff="optional", defined_without_relevant=True, bounds=UNBOUNDED,
    params=("dcg", "judged_only"), compute=graded.dcg, decomposition=LINEAR_GAIN))
register(MeasureKind(
    "err", "expected reciprocal rank", cutoff="optional", defined_without_relevant=True, params=("judged_only",),
    contract=(("gain", "exponential"),), compute=graded.err))
register(MeasureKind(
    "rbp", "rank-biased precision", cutoff="optional", defined_without_relevant=True, params=("p", "rel"),
    contract=(("gain", "linear"),), compute=graded.rbp, trec_eval=("rbp", None), trec_eval_params=(("p", 0.9),)))
register(MeasureKind(
    "rbp_residual", "the weight RBP leaves unknown", cutoff="optional", defined_without_relevant=True,
    params=("p",), compute=graded.rbp_residual))
register(MeasureKind(
    "num_ret", "documents retrieved", cutoff="none", defined_without_relevant=True, aliases=("numret",),
    bounds=UNBOUNDED, trec_eval=("num_ret", None), count=True, compute=lambda x: x.rows.retrieved.astype(float)))
register(MeasureKind(
    "num_rel", "relevant documents", cutoff="none", defined_without_relevant=True, aliases=("numrel",),
    bounds=UNBOUNDED, trec_eval=("num_rel", None), count=True, params=("rel",), compute=lambda x: x.relevant.copy()))
register(MeasureKind(
    "num_rel_ret", "relevant documents retrieved", cutoff="none", defined_without_relevant=True,
    aliases=("numrelret",), bounds=UNBOUNDED, trec_eval=("num_rel_ret", None), count=True, params=("rel",),
    compute=lambda x: x.per_query(x.rows.expected_relevant)))
register(MeasureKind(
    "f", "F measure of the top k", cutoff="optional", defined_without_relevant=False, aliases=("setf", "set_f"),
    trec_eval=("set_F", None), params=("rel", "beta", "judged_only"), compute=graded.set_f))
register(MeasureKind(
    "set_p", "precision of the whole ranking", cutoff="none", defined_without_relevant=True, aliases=("setp",),
    trec_eval=("set_P", None), params=BINARY, compute=graded.set_p))
GRADED = ("ndcg", "dcg", "err", "rbp")  # measures of gains, where every positive grade adds
_REDIRECTED = {("num_ret", "rel"): "num_rel_ret", ("set_p", "relative"): "set_relative_p"}
"""ir_measures' measures that a parameter makes another: NumRet(rel=2) is the relevant documents retrieved,
SetP(relative=True) trec_eval's set_relative_P (``relative=False`` is SetP itself)."""
register(MeasureKind(
    "iprec", "interpolated precision at a recall level", cutoff="none", defined_without_relevant=False,
    aliases=("iprec_at_recall",), trec_eval=("iprec_at_recall", None), params=("recall", *BINARY), at="recall",
    compute=trec_procedures.iprec))
register(MeasureKind(
    "11pt_avg", "interpolated precision averaged over 11 recall levels", cutoff="none",
    defined_without_relevant=False, trec_eval=("11pt_avg", None), params=BINARY,
    compute=trec_procedures.eleven_point_average))
register(MeasureKind(
    "infap", "inferred AP (qrels grade < 0: pooled, unjudged)", cutoff="none", defined_without_relevant=False,
    trec_eval=("infAP", None), params=("rel",), pooled=True, compute=trec_procedures.infap))


@dataclass(frozen=True, order=True)
class Measure:
    """A measure: ``name`` (one of :data:`MEASURES`), an optional positive ``cutoff`` and its own ``params``
    (``(name, value)`` pairs of :data:`PARAMS` its kind takes, kept sorted by name)."""

    name: str
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.name not in MEASURES:
            raise InputError(f"unknown measure {self.name!r}; known: {known_measures()}")
        rule = self.kind.cutoff
        if self.cutoff is not None:
            object.__setattr__(self, "cutoff", check(f"{self.name}: the cutoff k", self.cutoff, DEPTH))
            if rule == "none":
                raise InputError(f"{self.name} takes no cutoff")
        elif rule == "required":
            raise InputError(f"{self.name} needs a cutoff, e.g. {self.name}@10")
        object.__setattr__(self, "params", tuple(sorted(_checked(self.name, dict(self.params)).items())))
        if self.kind.at and self.param(self.kind.at) is None:
            raise InputError(f"{self.name} needs a {self.kind.at} level, e.g. {self.name}@0.5")

    @property
    def kind(self) -> MeasureKind:
        """Its registered :class:`MeasureKind`."""
        return MEASURES[self.name]

    def param(self, name: str, default: Any = None) -> Any:
        """The value of its parameter ``name``, or ``default`` when not given."""
        return dict(self.params).get(name, default)

    def contract(self, contract: EvaluationContract) -> EvaluationContract:
        """The contract this measure is computed under: ``contract`` with the conventions its parameters override
        (module docstring), and the ranking as the run gave it for a measure that is never condensed."""
        changes = dict(self.kind.contract)
        for name, value in self.params:
            if PARAMS[name].contract is not None:
                convention, to_convention = PARAMS[name].contract
                changes[convention] = to_convention(value)
        if not self.kind.condensed:
            changes["unjudged"] = "nonrelevant"
        return replace(contract, **changes) if changes else contract

    def lowest_adding_grade(self, contract: EvaluationContract) -> int:
        """The lowest grade by which a document adds to this measure: 1 for a measure of gains (nDCG, DCG, ERR, RBP
        without ``rel``), else its relevance level under ``contract``."""
        graded = self.name in GRADED and not (self.name == "rbp" and self.param("rel"))
        return 1 if graded else self.contract(contract).rel_level

    def __str__(self) -> str:
        at = self.kind.at
        shown = [(k, v) for k, v in self.params if k != at]
        params = f"({', '.join(f'{k}={v!r}' for k, v in shown)})" if shown else ""
        after = self.param(at) if at else self.cutoff
        return self.name + params + (f"@{after}" if after is not None else "")


def _checked(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` of measure ``name``, each checked; one it does not take is refused with those it does."""
    takes = MEASURES[name].params
    for key, value in params.items():
        if key not in takes:
            offered = f"it takes {', '.join(takes)}" if takes else "it takes none"
            raise InputError(f"{name} has no parameter {key!r}: {offered}")
        try:
            params[key] = PARAMS[key].check(value)
        except ValueError as exc:
            raise InputError(f"{name}: {key} must be {exc}, got {value!r}") from None
    return params


_SPELLING = re.compile(r"^([a-z0-9_-]+?)(?:[@_](-?\.?\d[\d.]*))?$")
_WITH_PARAMS = re.compile(r"^([A-Za-z0-9_-]+)\((.*)\)(?:@(-?\.?\d[\d.]*))?$", re.DOTALL)


def measure_bounds(text: str) -> tuple[float, float]:
    """The range of the values of the measure ``text`` names (:func:`parse_measure`), for an interval that keeps
    inside it; a measure without an upper bound (DCG, a count) is refused: such an interval has no range."""
    measure = parse_measure(text)
    if not np.isfinite(measure.kind.bounds[1]):
        raise InputError(f"{measure} has no upper bound (its values are in [0, inf)): estimates are made for "
                         "measures with a bounded range, such as ndcg@10")
    return measure.kind.bounds


def parse_measure(text: str) -> Measure:
    """Parse ``ndcg@10``, ``P_10``, ``map``, ``P(rel=2)@10`` and the like into a :class:`Measure` (names in any
    case; parameters as ir_measures writes them: ``name=value``, the value a Python literal)."""
    text = text.strip()
    with_params = _WITH_PARAMS.match(text)
    spelling, params = text, {}
    if with_params:
        name, arguments, cutoff = with_params.groups()
        spelling, params = name + (f"@{cutoff}" if cutoff is not None else ""), _parse_params(text, arguments)
    match = _SPELLING.match(spelling.lower())
    if not match or match.group(1) not in _SPELLINGS:
        raise InputError(f"unknown measure {text!r}; known: {known_measures()} (trec_eval's names work too)")
    name, cutoff = match.groups()
    at = MEASURES[_SPELLINGS[name]].at
    if at and cutoff is not None:  # iprec@0.5: the number is the measure's recall level
        if at in params:
            raise InputError(f"{text!r}: {at} is given twice")
        try:
            params[at] = float(cutoff)
        except ValueError:
            raise InputError(f"{text!r}: the {at} level must be a number in [0, 1]") from None
        cutoff = None
    if cutoff is not None and not re.fullmatch(r"-?\d+", cutoff):
        raise InputError(f"{text!r}: the cutoff k must be a positive integer")
    name = _SPELLINGS[name]
    if (name, "relative") in _REDIRECTED and "relative" in params:
        relative = params.pop("relative")
        if not isinstance(relative, bool):
            raise InputError(f"{text!r}: relative must be True or False, got {relative!r}")
        name = _REDIRECTED[name, "relative"] if relative else name
    if (name, "rel") in _REDIRECTED and "rel" in params:
        name = _REDIRECTED[name, "rel"]
    return Measure(name, int(cutoff) if cutoff is not None else None, tuple(params.items()))


def _parse_params(text: str, arguments: str) -> dict[str, Any]:
    """``rel=2, judged_only=True`` -> ``{"rel": 2, "judged_only": True}``; anything else is refused."""
    try:
        call = ast.parse(f"f({arguments})", mode="eval").body
        if not isinstance(call, ast.Call) or call.args or any(k.arg is None for k in call.keywords):
            raise ValueError
        params = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
    except (SyntaxError, ValueError):
        raise InputError(f"{text!r}: parameters are written name=value, e.g. P(rel=2)@10") from None
    if len(params) < len(call.keywords):
        raise InputError(f"{text!r}: a parameter is given twice")
    return params

