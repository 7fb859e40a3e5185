"""trec_eval's ways of asking for measures, turned into evalset's spellings: its nicknames (``-m all_trec``,
``-m official``, ``-m set``) and its parameter syntax (``-m P.5,10``, ``-m relative_P.5``,
``-m iprec_at_recall.0.3``).

Conventions (trec_eval 10.0's ``measures.c`` and ``m_*.c``):

- A nickname stands for its measures, each with trec_eval's default parameters (:data:`DEFAULT_PARAMETERS`,
  :data:`IN_TREC_EVALS_CONVENTION`):
  ``all_trec`` for every measure trec_eval computes from a qrels file and a run, ``official`` for the main ones,
  ``set`` for those of the unranked set.
- ``runid`` and ``num_q`` are not measures but lines of trec_eval's output (the run's name, the queries scored):
  :func:`expand_measures` leaves them out and :func:`asked_lines` says which were asked for, by name or by a
  nickname (all three hold both), so that ``--format trec_eval`` prints them where trec_eval would.
- ``NAME.PARAMS``: the name is everything before the first period, the parameters a comma-separated list after it
  (trec_eval's ``-m`` rule); for a family of cutoffs or levels each parameter is one measure (``P.5,10`` is
  ``P_5`` and ``P_10``). A family without such a list, or a parameter evalset does not read, is refused by name.
- A spelling that is neither is left to :func:`evalset.metrics.measures.parse_measure`.
- ``relstring`` (the grades of the top 10 as a string, ``'0000011000'``) is a picture of a ranking, not a measure:
  :func:`expand_measures` leaves it out and :func:`asks_relstring` says whether it was asked for, by name or by a
  nickname (:mod:`evalset.metrics.relstring`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from evalset.errors import InputError
from evalset.metrics.parameters import PARAMS

if TYPE_CHECKING:
    from evalset.metrics.measures import Measure

CUTOFFS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
DEFAULT_PARAMETERS: dict[str, tuple[str, ...]] = {
    "P": CUTOFFS,
    "recall": CUTOFFS,
    "relative_P": CUTOFFS,
    "map_cut": CUTOFFS,
    "ndcg_cut": CUTOFFS,
    "success": ("1", "5", "10"),
    "unj": ("5", "10", "20"),
    "iprec_at_recall": ("0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00"),
    "Rprec_mult": ("0.20", "0.40", "0.60", "0.80", "1.00", "1.20", "1.40", "1.60", "1.80", "2.00"),
}
"""trec_eval's default parameters of each family of measures that takes a list: one measure per value, named
``FAMILY_VALUE`` as trec_eval prints it."""

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"),
}
"""trec_eval 10's nicknames (``measures.c``)."""

NOT_IN_TREC_EVAL_9 = ("unj", "rbp", "rbp_resid")
"""The families trec_eval 10 added to ``all_trec`` (trec_eval 9.0.8, which pytrec_eval builds, has none of them):
under ``trec_eval_version=9`` the nickname leaves them out."""

IN_TREC_EVALS_CONVENTION = {"rbp": "rbp(p=0.9)"}
"""A nickname's measure whose name evalset gives its own convention, spelled in trec_eval's (its rbp's p is 0.9;
evalset's ``rbp`` is 0.8, ir_measures')."""

RELSTRING = "relstring"
"""trec_eval's picture of a ranking, asked for with the measures (module docstring)."""
LINES = ("runid", "num_q")
"""trec_eval's lines that are no measure, in the order it prints them (module docstring)."""
NOT_MEASURES = (RELSTRING, *LINES)

_PARAMETERS = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\.(.+)$")


def expand_measures(texts: Iterable[str], trec_eval_version: int = 10) -> list[str]:
    """``texts`` (``-m`` values) with each trec_eval nickname and ``NAME.PARAMS`` spelled out as measures, in the
    order given, each once (module docstring); a nickname holds what that ``trec_eval_version``'s holds."""
    expanded: list[str] = []
    for text in texts:
        for spelling in _expanded(text.strip(), trec_eval_version):
            if spelling not in expanded:
                expanded.append(spelling)
    return expanded


def asks_relstring(texts: Iterable[str]) -> bool:
    """Whether ``texts`` ask for trec_eval's relstring, by name or by a nickname."""
    return RELSTRING in _asked(texts)


def asked_lines(texts: Iterable[str]) -> tuple[str, ...]:
    """trec_eval's lines that are no measure (:data:`LINES`) that ``texts`` ask for, by name or by a nickname, in
    trec_eval's order."""
    asked = _asked(texts)
    return tuple(line for line in LINES if line in asked)


def _asked(texts: Iterable[str]) -> set[str]:
    return {name for text in texts for name in (text.strip(), *NICKNAMES.get(text.strip(), ()))}


def _expanded(text: str, trec_eval_version: int) -> list[str]:
    if text in NICKNAMES:
        left_out = NOT_MEASURES + (NOT_IN_TREC_EVAL_9 if trec_eval_version == 9 else ())
        return [IN_TREC_EVALS_CONVENTION.get(spelling, spelling) for family in NICKNAMES[text]
                if family not in left_out for spelling in _family(family, DEFAULT_PARAMETERS.get(family))]
    if text in NOT_MEASURES:
        return []
    match = _PARAMETERS.match(text)
    if not match or (match.group(1) not in DEFAULT_PARAMETERS and match.group(1) not in NICKNAMES["all_trec"]):
        return [text]
    family, parameters = match.groups()
    if family not in DEFAULT_PARAMETERS:
        raise InputError(f"{text!r}: evalset reads trec_eval's parameter list for {', '.join(DEFAULT_PARAMETERS)}; "
                         f"give {family}'s parameters as evalset's, e.g. {family}(name=value)")
    values = [value.strip() for value in parameters.split(",")]
    if not all(re.fullmatch(r"\d+(\.\d*)?|\.\d+", value) for value in values):
        raise InputError(f"{text!r}: trec_eval's list for {family} is of numbers, e.g. "
                         f"{family}.{','.join(DEFAULT_PARAMETERS[family][:2])}")
    return _family(family, values)


def _family(family: str, values: Iterable[str] | None) -> list[str]:
    return [family] if values is None else [f"{family}_{value}" for value in values]


def trec_eval_name(measure: Measure) -> str | None:
    """trec_eval's name of ``measure`` (``ndcg_cut_10``, ``P_10``, ``map``, ``set_recall`` for recall without a
    cutoff, ``iprec_at_recall_0.50`` for ``iprec@0.5``: the level ``%3.2f`` as trec_eval prints it), or None where
    trec_eval has no such measure (``rr@10``, ``judged@10``) and for a measure with its own contract parameters
    (``p(rel=2)@10``: trec_eval sets a relevance level for the whole call, never a measure's)."""
    whole, stem = measure.kind.trec_eval
    if any(PARAMS[name].contract is not None for name, _ in measure.params):
        return None
    if any(measure.param(name) != value for name, value in measure.kind.trec_eval_params):
        return None  # rbp is trec_eval's only at trec_eval's p
    if measure.kind.at:
        return f"{whole}_{measure.param(measure.kind.at):3.2f}" if whole else None
    if measure.cutoff is None:
        return whole
    return f"{stem}_{measure.cutoff}" if stem else None
