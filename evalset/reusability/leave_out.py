"""Leave one run (or group) out of the pool, rescore it, and say how fair the set is to the next system.

Conventions
-----------
- A run's score is the mean of the metric as ``evalset score`` prints it (:meth:`evalset.evaluation.PerQuery.mean`:
  over the defined queries; on a set weighted by traffic, the traffic-weighted mean), with the full qrels and
  with its owner's reduced qrels (:mod:`evalset.pooling.contributions`).
- ``drop`` = full - reduced; ``relative_drop`` = drop / full (undefined when full is 0).
- ``rank_full`` is the run's rank among all runs by their full scores (1 is best; equal scores share the better
  rank). ``rank_reduced`` is its rank when it (with the other runs of its group) is scored on the reduced qrels
  and every other run keeps its full score: the place a new system like it would get.
- Kendall's tau (scipy, tau-b) and tau_AP (:mod:`evalset.stats.rankings`, the full ranking as reference) are
  between the ranking by full scores and the ranking where every run is scored on its own owner's reduced qrels.
- ``judged_reduced`` is judged@depth under the reduced qrels: the share of the run's top ``depth`` that keeps a
  judgment.
- The verdict, for a new system of each kind: the rankings *hold* when tau >= :data:`TAU_HOLDS` and the largest
  relative change (a drop, or a rise: under ``unjudged = condensed`` a reduced score can rise) <= :data:`DROP_HOLDS`;
  *with care* when tau >= :data:`TAU_CARE` and the largest relative change <= :data:`DROP_CARE`; else the set is
  *biased* for such a system. A rise is never read as "holds": at best "with care".
- A judged query absent from a run is refused (:func:`evalset.evaluation.missing_queries`: the run, its file, the
  count) unless the contract's ``missing`` was chosen (``-c missing=zero``: it scores 0 in both scores;
  ``-c missing=skip``: it is left out of the run's means); a note then says how many.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalset.contract import REUSABILITY_RULES
from evalset.errors import InputError
from evalset.evaluation import Evaluation, missing_notes, missing_queries, per_query_values
from evalset.evaluation.values import Runs
from evalset.io.trec import expand_run_paths, read_run
from evalset.params import validate_params
from evalset.pooling.contributions import (
    PoolOfRuns,
    contribution_counts,
    pool_of_runs,
    reduced_qrels,
    unique_contributions,
)
from evalset.render import json_safe, number, text_table
from evalset.speed.parallel import parallel_map
from evalset.stats.rankings import kendall_tau, system_ranks, tau_ap

TAU_HOLDS, DROP_HOLDS = 0.9, 0.05
TAU_CARE, DROP_CARE = 0.8, 0.10
"""Verdict thresholds: Kendall's tau (0.9: Voorhees' "equivalent rankings") and the largest relative drop."""

KINDS = {"run": ("a new run like these", "loses", "gains"),
         "group": ("a new group's runs (a new team) like these", "lose", "gain")}


@dataclass(frozen=True)
class LeaveOut:
    """Leave-one-out of one kind (``run`` or ``group``): one row per run, one per owner, and the summary."""

    kind: str
    rows: pd.DataFrame  # owner, run, full, reduced, drop, relative_drop, rank_full, rank_reduced, judged_full,
    #                     judged_reduced
    owners: pd.DataFrame  # owner, runs, unique, unique_judged, unique_relevant, removed
    kendall_tau: float
    tau_ap: float
    level: str
    verdict: str

    @property
    def largest(self) -> pd.Series:
        """The row of the largest drop (the first by official rank on equal drops)."""
        return self.rows.loc[self.rows["drop"].idxmax()]

    @property
    def largest_rise(self) -> pd.Series | None:
        """The row of the largest rise (a reduced score above the full one: condensed lists), or None."""
        lowest = self.rows.loc[self.rows["drop"].idxmin()]
        return lowest if lowest["drop"] < 0 else None

    @property
    def mean_drop(self) -> float:
        return float(self.rows["drop"].mean())

    @property
    def rank_changes(self) -> pd.DataFrame:
        """The rows whose rank changes when they are left out."""
        return self.rows[self.rows["rank_full"] != self.rows["rank_reduced"]]


@dataclass(frozen=True)
class Reusability:
    """The analysis: the metric, the pool, leave-one-run-out, and leave-one-group-out when groups were given."""

    metric: str
    depth: int
    queries: int
    judgments: int
    source: str | None
    runs: LeaveOut
    groups: LeaveOut | None = None
    notes: list[str] = field(default_factory=list)

    def to_text(self) -> str:
        """The text ``evalset reusability`` prints: each kind's table, summary and verdict."""
        return _text(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset reusability --format json``."""
        return _document(self)


def _ranks(scores: pd.Series) -> pd.Series:
    return pd.Series(system_ranks(scores.to_numpy()), scores.index)


def verdict(kind: str, metric: str, largest: float, largest_relative: float, mean: float,
            tau: float) -> tuple[str, str]:
    """The level (``holds``, ``care``, ``biased``: the worse of the ranking's and the drop's) and the one-line
    verdict for a new system of ``kind``."""
    def level_of(holds: bool, care: bool) -> int:
        return 0 if holds else 1 if care else 2

    by_tau = level_of(tau >= TAU_HOLDS, tau >= TAU_CARE)
    by_drop = level_of(largest_relative <= DROP_HOLDS, largest_relative <= DROP_CARE)
    level = ("holds", "care", "biased")[max(by_tau, by_drop)]
    rankings = ("rankings hold", "rankings mostly hold", "rankings move")[by_tau]
    advice = {"holds": "the set is reusable for it",
              "care": "reusable with care: read a new system's judged@k, and judge its holes when it is low",
              "biased": "its score can be biased low: judge a new system's holes before trusting its score"}[level]
    relative = "undef" if math.isnan(largest_relative) else f"{largest_relative:.1%}"
    who, loses, gains = KINDS[kind]
    moved = f"{loses} at most {number(largest)}" if largest >= 0 else f"{gains} up to {number(-largest)}"
    if largest < 0 and level == "holds":
        level = "care"
    if largest < 0 and level == "biased":
        advice = "its score can be biased, here upwards: judge a new system's holes before trusting its score"
    elif largest < 0:
        advice += " (a score that rises without the run's own judgments is no fairer than one that drops)"
    return level, (f"{who} {moved} {metric} ({relative}; mean {number(mean)}); "
                   f"{rankings} (tau {number(tau, 3)}): {advice}")


def leave_out(kind: str, evaluation: Evaluation, runs: Mapping[str, pd.DataFrame], pool: PoolOfRuns,
              owner_of: Mapping[str, str], full: pd.DataFrame, metric: str) -> LeaveOut:
    """Leave each owner (``owner_of``: run -> owner) out of ``pool`` in turn and rescore its runs.

    ``full`` holds every run's ``full`` and ``judged_full`` scores (indexed by run)."""
    judged = f"judged@{pool.depth}"
    owners = list(dict.fromkeys(owner_of[name] for name in runs))
    unique = unique_contributions(pool.top, owner_of)
    reduced = reduced_qrels(evaluation.qrels, unique, owners)
    counts = contribution_counts(evaluation.qrels, unique, owners, evaluation.contract.rel_level)
    rows = []

    def rescore(owner: str):  # one owner's runs on its reduced qrels; the owners side by side on both cores
        members = {name: run for name, run in runs.items() if owner_of[name] == owner}
        return members, per_query_values(evaluation.with_qrels(reduced[owner]), members, [metric, judged])

    for owner, (members, scores) in zip(owners, parallel_map(rescore, owners), strict=True):
        for name in members:
            rows.append({"owner": owner, "run": name, "reduced": scores.mean(name, metric),
                         "judged_reduced": scores.mean(name, judged)})
    table = pd.DataFrame(rows).set_index("run").join(full)
    table["drop"] = table["full"] - table["reduced"]
    table["relative_drop"] = (table["drop"] / table["full"]).where(table["full"] != 0)
    table["rank_full"] = _ranks(table["full"])
    table["rank_reduced"] = 0
    for owner in owners:
        members = table["owner"] == owner
        table.loc[members, "rank_reduced"] = _ranks(table["full"].where(~members, table["reduced"]))[members]
    table = table.reset_index().sort_values(["rank_full", "run"], kind="stable").reset_index(drop=True)
    table = table[["owner", "run", "full", "reduced", "drop", "relative_drop", "rank_full", "rank_reduced",
                   "judged_full", "judged_reduced"]]
    owner_table = counts.assign(
        runs=[int((table["owner"] == owner).sum()) for owner in counts.index],
        removed=[len(evaluation.qrels) - len(reduced[owner]) for owner in counts.index],
    ).rename_axis("owner").reset_index()[["owner", "runs", "unique", "unique_judged", "unique_relevant", "removed"]]
    tau = kendall_tau(table["full"].to_numpy(), table["reduced"].to_numpy())[0]
    ap = float(tau_ap(table["full"].to_numpy(), table["reduced"].to_numpy(), list(table["run"])))
    largest = table.loc[table["drop"].abs().idxmax()]  # a rise (condensed lists) moves a score as much as a drop
    level, text = verdict(kind, metric, float(largest["drop"]), float(table["relative_drop"].abs().max()),
                          float(table["drop"].mean()), tau)
    return LeaveOut(kind, table, owner_table, tau, ap, level, text)


def groups_of_runs(groups: pd.Series, runs: list[str], source: str = "the group file") -> dict[str, str]:
    """Run -> group for ``runs``, from ``groups`` (:func:`evalset.io.groups.read_groups`): a group file that names
    a run not given, or leaves a run without a group, is refused; so are groups that put every run in one group."""
    unknown = [name for name in groups.index if name not in runs]
    if unknown:
        more = ", ..." if len(unknown) > 10 else ""
        raise InputError(f"group file names unknown runs {', '.join(unknown[:10])}{more}"
                         f" ({len(unknown)} not among the {len(runs)} runs given; the runs given are the pool)",
                         source)
    without = [name for name in runs if name not in groups.index]
    if without:
        raise InputError(f"{len(without)} run(s) given have no group in the group file: "
                         f"{', '.join(without[:10])}{', ...' if len(without) > 10 else ''}", source)
    owner_of = {name: str(groups[name]) for name in runs}
    if len(set(owner_of.values())) < 2:
        raise InputError(f"every run is in one group ({next(iter(owner_of.values()))!r}): leaving it out would "
                         "remove every pooled judgment", source)
    return owner_of


@validate_params(REUSABILITY_RULES)
def analyse_reusability(evaluation: Evaluation, runs: Runs, depth: int, metric: str | None = None,
                        groups: pd.Series | None = None, groups_source: str = "the group file") -> Reusability:
    """Leave-one-run-out (and leave-one-group-out with ``groups``) on the depth-``depth`` pool of ``runs`` (name ->
    frame or file, or files and folders of runs: a file is named when its run is refused).

    ``metric`` defaults to the set's headline (ndcg@10 on qrels). The runs given are the pool (see
    :mod:`evalset.pooling.contributions` for the checks); a run lacking judged queries is refused unless the
    contract's ``missing`` was chosen (module docstring). ``depth`` is checked first
    (:data:`evalset.contract.REUSABILITY_RULES`)."""
    metric = metric or evaluation.headline
    given = runs if isinstance(runs, Mapping) else expand_run_paths(runs)
    runs = {name: read_run(run) if isinstance(run, str | os.PathLike) else run for name, run in given.items()}
    names = list(runs)
    owner_of = groups_of_runs(groups, names, groups_source) if groups is not None else None
    scores = per_query_values(evaluation, runs, [metric, f"judged@{depth}"])  # first: it refuses a run sharing no query
    lacking = missing_queries(scores, given)
    pool = pool_of_runs(runs, evaluation.qrels, depth, evaluation.contract.ties)
    full = pd.DataFrame({"full": [scores.mean(name, metric) for name in names],
                         "judged_full": [scores.mean(name, f"judged@{depth}") for name in names]},
                        index=pd.Index(names, name="run"))
    by_run = leave_out("run", evaluation, runs, pool, {name: name for name in names}, full, metric)
    by_group = leave_out("group", evaluation, runs, pool, owner_of, full, metric) if owner_of else None
    judgments = int((evaluation.grades >= 0).sum())
    return Reusability(metric, depth, len(pool.query_ids), judgments, evaluation.source, by_run, by_group,
                       [*missing_notes(scores, lacking, "left out of its means"), *pool.notes])


# ------------------------------------------------------------------------------------------------ printed
TITLES = {"run": "Leave one run out", "group": "Leave one group out"}


def _percent(value: float) -> str:
    return number(value * 100, 1) + "%" if value == value else number(value)


def _table(result: Reusability, part: LeaveOut) -> list[str]:
    judged = f"judged@{result.depth}'"
    counts = part.owners.set_index("owner")
    header = ["run", "full", "reduced", "drop", "drop%", "rank", "rank'", judged, "unique", "judged", "relevant"]
    if part.kind == "group":
        header.insert(0, "group")
    rows = [header]
    for row in part.rows.itertuples():
        owner = counts.loc[row.owner]
        cells = [row.run, number(row.full), number(row.reduced), number(row.drop), _percent(row.relative_drop),
                 row.rank_full, row.rank_reduced, number(row.judged_reduced, 3), owner["unique"],
                 owner["unique_judged"], owner["unique_relevant"]]
        rows.append([row.owner, *cells] if part.kind == "group" else cells)
    first = 2 if part.kind == "group" else 1
    return text_table(rows, right=set(range(first, len(header))))


def _summary(result: Reusability, part: LeaveOut) -> list[str]:
    largest, rise = part.largest, part.largest_rise
    changes = part.rank_changes
    moved = ", ".join(f"{r.run} {r.rank_full}->{r.rank_reduced}" for r in changes.itertuples()) or "none"
    return [
        f"largest drop {number(largest['drop'])} ({largest['run']}), mean drop {number(part.mean_drop)} over "
        f"{len(part.rows)} runs" + (f"; largest rise {number(-rise['drop'])} ({rise['run']})" if rise is not None
                                    else ""),
        f"Kendall's tau {number(part.kendall_tau, 3)}, tau_AP {number(part.tau_ap, 3)} (official ranking vs each "
        f"run scored on its {part.kind}'s reduced qrels)",
        f"rank changes ({len(changes)}): {moved}",
        f"verdict: {part.verdict}",
    ]


def _text(result: Reusability) -> str:
    """The text output: the pool, then per kind a table (one row per run, by official rank) and its summary."""
    groups = f", {len(result.groups.owners)} groups" if result.groups is not None else ""
    lines = [f"{result.metric}, pool depth {result.depth}: {len(result.runs.rows)} runs{groups}, {result.queries} "
             f"judged queries, {result.judgments} judgments ({result.source})",
             "unique/judged/relevant: the pairs of the depth-k pool only this run (group) contributed, and their "
             "judgments; reduced: scored without them; rank': its rank then, the other runs keeping their scores"]
    for part in (result.runs, result.groups):
        if part is None:
            continue
        lines += ["", f"{TITLES[part.kind]}:", *_table(result, part), *_summary(result, part)]
    return "\n".join(lines)


def _part_document(part: LeaveOut) -> dict[str, Any]:
    largest, rise = part.largest, part.largest_rise
    changes = part.rank_changes
    return {
        "rows": part.rows.to_dict(orient="records"),
        part.kind + "s": part.owners.to_dict(orient="records"),
        "summary": {"largest_drop": {"run": largest["run"], "drop": largest["drop"]}, "mean_drop": part.mean_drop,
                    "largest_rise": None if rise is None else {"run": rise["run"], "rise": -rise["drop"]},
                    "kendall_tau": part.kendall_tau, "tau_ap": part.tau_ap,
                    "rank_changes": changes[["run", "rank_full", "rank_reduced"]].to_dict(orient="records"),
                    "level": part.level, "verdict": part.verdict},
    }


def _document(result: Reusability) -> dict[str, Any]:
    """The JSON layout: the pool's figures, ``runs`` and ``groups`` (null without a group file), each with its
    rows, its owners' contributions and its summary; and the notes."""
    return json_safe({
        "metric": result.metric, "depth": result.depth, "queries": result.queries, "judgments": result.judgments,
        "source": result.source, "leave_one_run_out": _part_document(result.runs),
        "leave_one_group_out": _part_document(result.groups) if result.groups is not None else None,
        "notes": result.notes,
    })
