"""Missing queries: the one rule of every analysis (compare, compare --all, estimate, reusability, report, plan).

A judged query absent from a run is no silent zero. Unless the user chose the contract's ``missing`` (``-c
missing=zero``: such a query scores 0, as a system that returned nothing; ``-c missing=skip``: it is left out of that
run's comparisons), :func:`missing_queries` refuses the runs with an :class:`~evalset.errors.InputError` naming the
first run that lacks queries, its file and the count; when chosen, the analysis says how many in its output.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from evalset.errors import InputError
from evalset.evaluation.values import PerQuery

if TYPE_CHECKING:
    from evalset.evaluation.scope import Evaluation


def missing_queries(values: PerQuery, runs: Any) -> dict[str, int]:
    """Run -> judged queries it lacks; refused unless the contract's ``missing`` was chosen (module docstring).

    ``runs`` maps each run name to its file (named in the error) or frame."""
    lacking = {name: int(values.notes(name).get("missing_queries", 0)) for name in values.runs}
    evaluation = values.evaluation
    if any(lacking.values()) and not evaluation.chose("missing"):
        name, count = next((name, count) for name, count in lacking.items() if count)
        judged = judged_count(values, name)
        path = runs[name] if isinstance(runs[name], str | os.PathLike) else None
        raise InputError(f"run {name} lacks {count} of the {judged} judged queries: {_choices(evaluation)}",
                         os.fspath(path) if path is not None else None)
    return lacking


EFFECTS = {"zero": "they score 0, as a system that returned nothing",
           "skip": "they are left out of the comparison"}


def _choices(evaluation: Evaluation) -> str:
    """The choices that would let the runs through: both policies, or on a set that forbids contradicting its
    contract, the set's own and the other one with --override-contract."""
    if evaluation.frozen is None or evaluation.may_override:
        return "give " + " or ".join(f"-c missing={policy} ({effect})" for policy, effect in EFFECTS.items())
    recorded = evaluation.frozen.contract.evaluation.missing
    other = next(policy for policy in EFFECTS if policy != recorded)
    return (f"give -c missing={recorded} (the set's contract: {EFFECTS[recorded]}), or -c missing={other} with "
            f"--override-contract ({EFFECTS[other]}; the output says the contract was overridden)")


def judged_count(values: PerQuery, run: str) -> int:
    """The number of judged queries ``run`` was scored against (those it answered and those it lacks)."""
    table = values.tables[run]
    lacking = int(table.attrs.get("missing_queries", 0))
    return len(table) if values.evaluation.contract.missing == "zero" else len(table) + lacking


def missing_notes(values: PerQuery, lacking: dict[str, int], skipped: str) -> list[str]:
    """What the chosen ``missing`` did, one note per run that lacks judged queries (``lacking`` from
    :func:`missing_queries`): ``note: run R lacks N of the M judged queries: scored 0 (-c missing=zero)``, or under
    ``skip`` what the analysis did with them (``skipped``, e.g. ``left out of its mean``)."""
    zero = values.evaluation.contract.missing == "zero"
    effect = "scored 0 (-c missing=zero)" if zero else f"{skipped} (-c missing=skip)"
    return [f"note: run {name} lacks {count} of the {judged_count(values, name)} judged queries: {effect}"
            for name, count in lacking.items() if count]
