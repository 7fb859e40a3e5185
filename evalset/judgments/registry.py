"""The registry of merge rules: each rule's name, the grade it gives a pair, what a tie is under it and, for
crowd-kit's models, the class and parameters it is built with, declared once in :data:`RULES`.

Both the rules' computation (:mod:`evalset.judgments.rules`) and crowd-kit's models (:mod:`evalset.judgments.crowd`)
read it. The names of the rules are also :data:`evalset.contract.MERGE_RULES` and its crowd-kit part
:data:`~evalset.contract.AGGREGATION_RULES`, which the command line reads without loading this module; importing
it checks that they name exactly these rules, in this order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalset.contract import AGGREGATION_RULES, DEFAULT_SEED, MERGE_RULES
from evalset.params import check


@dataclass(frozen=True)
class MergeRule:
    """A merge rule: the grade it gives a pair, what a tie is under it (``None``: it never ties) and, for crowd-kit's
    models, the class and the parameters it is built with."""

    name: str
    grade: str
    tie: str | None = None
    crowd_class: str | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)


RULES: dict[str, MergeRule] = {rule.name: rule for rule in (
    MergeRule("median", "the median grade; of an even number of grades, the lower of the two middle ones",
              tie="an even number of grades whose two middle grades differ"),
    MergeRule("majority", "the most frequent grade", tie="two or more grades equally the most frequent"),
    MergeRule("annotator-priority", "the grade of the first annotator in the priority list who graded the pair "
                                    "(then the others in name order)"),
    MergeRule("dawid-skene", "Dawid & Skene (1979): each annotator has a full confusion matrix (the probability of "
                             "each grade given the true one), learned by EM from a majority-vote start",
              crowd_class="DawidSkene", parameters={"n_iter": 100, "tol": 1e-5}),
    MergeRule("one-coin", "one accuracy per annotator, errors spread evenly over the other grades",
              crowd_class="OneCoinDawidSkene", parameters={"n_iter": 100, "tol": 1e-5}),
    MergeRule("mace", "Hovy et al. (2013): each annotator either knows the answer or spams (picks by a habit of "
                      "their own); seeded restarts", crowd_class="MACE",
              parameters={"n_restarts": 10, "n_iter": 50, "method": "vb", "smoothing": 0.1, "default_noise": 0.5,
                          "alpha": 0.5, "beta": 0.5, "random_state": DEFAULT_SEED}),
    MergeRule("glad", "Whitehill et al. (2009): an ability per annotator and a difficulty per pair",
              crowd_class="GLAD", parameters={"n_iter": 100, "tol": 1e-5, "m_step_max_iter": 25, "m_step_tol": 1e-2}),
)}
"""Every merge rule by name (crowd-kit's parameters are its defaults, MACE seeded with the project's seed)."""

if tuple(RULES) != MERGE_RULES or tuple(n for n, r in RULES.items() if r.crowd_class) != AGGREGATION_RULES:
    raise RuntimeError("evalset.contract.MERGE_RULES and AGGREGATION_RULES must name the rules of "
                       "evalset.judgments.registry.RULES, in its order")


def merge_rule(name: str) -> MergeRule:
    """The rule called ``name``, or an :class:`InputError` listing the rules."""
    check("merge rule", name, tuple(RULES))
    return RULES[name]
