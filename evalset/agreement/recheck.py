"""Is the new version of an LLM judge better than the old one? Their agreement with the humans, side by side.

Two judge versions (:mod:`evalset.judgments.identity`: the same task, another model, prompt template or guideline)
graded the same calibration pairs, which humans graded too. The change of each figure, new minus old:

=====================  ================================================================================================
convention             rule
=====================  ================================================================================================
the pairs              those with a human grade and a grade of both judges; the others are counted, never used.
                       Several human annotators of a pair give it their median grade, ties settled low (the rule of
                       ``estimate``)
the figures            unweighted and quadratic Cohen's kappa of each judge against the humans (the human grade the
                       reference), as scikit-learn's ``cohen_kappa_score``; with runs, Kendall's tau between the system
                       ranking under the humans' grades and under the judge's, each run's mean over the queries
                       defined under all three grades (the judges' grades on the same pairs as the humans'), under
                       the contract (its ``trec_eval_version`` too); the means are kept (``run_means``)
the interval           paired, over queries: ``resamples`` bootstrap resamples of the queries (with replacement; the
                       draws of :func:`evalset.agreement.kappa.query_draws`, seeded), both judges' figures computed on
                       each resample, the percentile interval of the difference at ``level``; resamples where a figure
                       is undefined are left out and counted
the verdict            on the ``primary`` figure (default the quadratic kappa), decided by
                       :func:`evalset.stats.verdicts.decide` on its interval (threshold ``1 - level``, the resamples
                       that gave a defined figure, the queries): established -> **better** (the interval above 0) or
                       **worse** (below), not established -> **not distinguishable**, and no verdict (too few
                       resamples to place the interval's ends, a zero-width interval, fewer than 2 queries, an
                       undefined interval) -> ``no verdict: the reason``; another figure established on the other
                       side of 0 is said beside the verdict
=====================  ================================================================================================
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalset.agreement.kappa import (
    confusion_matrix,
    disagreement_weights,
    kappa_from_confusion,
    percentile_interval,
    query_draws,
)
from evalset.agreement.systems import per_query_scores
from evalset.contract import (
    DEFAULT_METRIC,
    DEFAULT_SCALE,
    DEFAULT_SEED,
    RECHECK_FIGURES,
    RECHECK_RULES,
    EvaluationContract,
)
from evalset.errors import InputError
from evalset.io.annotations import settle_repeats
from evalset.judgments.identity import JudgeIdentity, named_judges
from evalset.judgments.reading import read_judgments
from evalset.judgments.rules import pair_grades
from evalset.judgments.scale import SCALE_REMEDY, apply_scale
from evalset.metrics import parse_measure
from evalset.params import validate_params
from evalset.render import json_safe, number, text_table
from evalset.stats.rankings import kendall_tau
from evalset.stats.verdicts import ESTABLISHED, NOT_ESTABLISHED, Evidence, Verdict, decide

KAPPAS = {"kappa": "unweighted", "quadratic kappa": "quadratic"}
"""The kappa figures: their name in the report, and their disagreement weights."""
if {*KAPPAS, "tau"} != set(RECHECK_FIGURES):
    raise RuntimeError("evalset.contract.RECHECK_FIGURES must name the kappa figures of KAPPAS and tau")


@dataclass(frozen=True)
class FigureChange:
    """One figure of both judges, and the change new minus old with its paired interval over queries: at ``level``,
    from ``resamples`` resamples of ``queries`` queries (``undefined`` of them left out)."""

    figure: str
    old: float
    new: float
    low: float
    high: float
    undefined: int = 0
    level: float = 0.95
    resamples: int | None = None
    queries: int | None = None

    @property
    def difference(self) -> float:
        return self.new - self.old

    @property
    def decision(self) -> Verdict:
        """The verdict of :func:`evalset.stats.verdicts.decide` on the change and its interval."""
        resamples = None if self.resamples is None else self.resamples - self.undefined
        return decide(Evidence(estimate=self.difference, threshold=1 - self.level, low=self.low, high=self.high,
                               interval="bootstrap interval", resamples=resamples, n=self.queries))

    @property
    def direction(self) -> str:
        """``better``, ``worse``, ``not distinguishable`` or the decision's word (``no verdict``): module docstring."""
        decision = self.decision
        if decision.word == ESTABLISHED:
            return "better" if self.low > 0 else "worse"
        return "not distinguishable" if decision.word == NOT_ESTABLISHED else decision.word


@dataclass(frozen=True)
class Recheck:
    """Two judge versions against the humans (module docstring)."""

    old: JudgeIdentity
    new: JudgeIdentity
    names: tuple[str, str]
    pairs: int
    queries: int
    figures: tuple[FigureChange, ...]
    primary: str
    level: float
    resamples: int
    seed: int
    left_out: dict[str, int] = field(default_factory=dict)
    runs: int = 0
    tau_queries: int = 0
    run_means: dict[str, dict[str, float]] = field(default_factory=dict)  # human, old, new -> run -> its mean

    @property
    def verdict(self) -> str:
        """The verdict line (module docstring)."""
        primary = next(change for change in self.figures if change.figure == self.primary)
        new, old, direction = self.names[1], self.names[0], primary.direction
        shown = f" on {self.primary}: {_signed(primary.difference)} {_bounds(primary)}"
        if direction in ("better", "worse"):
            line = f"the new judge ({new}) is {direction} than the old ({old}){shown}"
        elif direction == "not distinguishable":
            line = f"the new judge ({new}) is not distinguishable from the old ({old}){shown}"
        else:
            line = f"{primary.decision.text}; the new judge ({new}) against the old ({old}){shown}"
        against = [change for change in self.figures if change.figure != self.primary
                   and change.direction in ("better", "worse") and change.direction != direction]
        if against:
            line += "; but " + ", ".join(f"{change.figure} is {change.direction} ({_signed(change.difference)} "
                                         f"{_bounds(change)})" for change in against)
        return line

    def to_text(self) -> str:
        changed = self.old.changes(self.new)
        lines = [f"old judge: {self.names[0]}", f"new judge: {self.names[1]}",
                 "what changed: " + "; ".join(changed),
                 f"calibration pairs: {self.pairs:,} over {self.queries} queries (graded by the humans and both "
                 "judges)"]
        lines += [f"left out: {count:,} pairs {why}" for why, count in self.left_out.items() if count]
        rows = [[change.figure, number(change.old), number(change.new), _signed(change.difference),
                 _bounds(change)] for change in self.figures]
        lines += ["", *text_table([["figure", "old", "new", "new - old", f"{self.level:.0%} interval"], *rows],
                                  right={1, 2, 3})]
        lines.append(f"intervals: paired bootstrap over queries, {self.resamples:,} resamples, seed {self.seed}"
                     + (f"; tau over {self.runs} runs on the {self.tau_queries} queries defined under all three grades"
                        if self.runs else ""))
        undefined = [f"{change.figure}: {change.undefined}" for change in self.figures if change.undefined]
        if undefined:
            lines.append("resamples left out (a figure undefined): " + ", ".join(undefined))
        return "\n".join([*lines, "", "verdict: " + self.verdict])

    def to_dict(self) -> dict[str, Any]:
        return json_safe({
            "old": {"name": self.names[0], **self.old.to_dict()}, "new": {"name": self.names[1], **self.new.to_dict()},
            "changed": self.old.changes(self.new), "pairs": self.pairs, "queries": self.queries,
            "left_out": self.left_out, "runs": self.runs, "tau_queries": self.tau_queries, "run_means": self.run_means,
            "figures": [{"figure": c.figure, "old": c.old, "new": c.new, "difference": c.difference, "low": c.low,
                         "high": c.high, "direction": c.direction, "decision": c.decision.to_dict(),
                         "undefined_resamples": c.undefined}
                        for c in self.figures],
            "primary": self.primary, "verdict": self.verdict, "level": self.level, "resamples": self.resamples,
            "seed": self.seed,
        })


def _signed(value: float) -> str:
    return "undef" if math.isnan(value) else f"{value:+.3f}"


def _bounds(change: FigureChange) -> str:
    return f"[{number(change.low)}, {number(change.high)}]"


def read_recheck_grades(judge_paths: Sequence[str | os.PathLike], human_paths: Sequence[str | os.PathLike],
                        conflicting_grades: str = "refuse") -> pd.DataFrame:
    """The judges' labels (labels tables or qrels, read as LLM) and the humans' (read as human), one judgment per
    annotator and pair, two versions of one annotator renamed apart (:func:`~evalset.judgments.identity.named_judges`).
    """
    if not human_paths:
        raise InputError("recheck needs the humans' grades of the calibration pairs (--human)")
    sources = [*((path, "human") for path in human_paths), *((path, "llm") for path in judge_paths)]
    judgments = read_judgments(sources)
    humans = judgments["file"].isin([os.fspath(path) for path in human_paths])
    if (judgments.loc[humans, "kind"] != "human").any():
        row = judgments[humans & (judgments["kind"] != "human")].iloc[0]
        raise InputError(f"the --human file holds labels of kind {row['kind']!r}: give the judges' labels as LABELS",
                         row["file"])
    settled, _ = settle_repeats(named_judges(judgments), conflicting_grades)
    return settled


@validate_params(RECHECK_RULES)
def recheck(grades: pd.DataFrame, *, scale: Sequence[int] = DEFAULT_SCALE, primary: str = "quadratic kappa",
            runs: Mapping[str, pd.DataFrame] | None = None, measure: str = DEFAULT_METRIC,
            contract: EvaluationContract | None = None, resamples: int = 1000, level: float = 0.95,
            seed: int = DEFAULT_SEED, old: str | None = None) -> Recheck:
    """The change from the old judge to the new (module docstring). ``grades`` hold ``query_id, doc_id, annotator,
    kind, grade, source``: human rows and the labels of exactly two LLM judges, the first to appear the old one
    unless ``old`` names it. ``primary`` is ``kappa``, ``quadratic kappa`` or ``tau`` (with ``runs``). Every
    parameter named in :data:`evalset.contract.RECHECK_RULES` is checked against its rule."""
    if primary == "tau" and not runs:
        raise InputError("the primary figure tau is the system ranking's: give the runs (--runs)")
    names = list(dict.fromkeys(grades.loc[grades["kind"] == "llm", "annotator"]))
    if len(names) != 2:
        found = "; ".join(names) if names else "none"
        raise InputError(f"recheck compares two versions of a judge, and the labels hold {len(names)} ({found}): "
                         "give the labels of both (their source says model, prompt and guideline)")
    if old is not None:
        if old not in names:
            raise InputError(f"--old {old!r} names neither judge ({'; '.join(names)})")
        names = [old, *(name for name in names if name != old)]
    identity = {name: _identity(grades, name) for name in names}
    human = grades[grades["kind"] == "human"]
    if human.empty:
        raise InputError("recheck needs human grades of the calibration pairs")
    merged = pair_grades(human, "median", ties="low").qrels().rename(columns={"grade": "human"})
    table = merged
    for label, name in zip(("old", "new"), names, strict=True):
        judge = grades[grades["annotator"] == name][["query_id", "doc_id", "grade"]].rename(columns={"grade": label})
        table = table.merge(judge, on=["query_id", "doc_id"], how="inner")
    left_out = _left_out(merged, grades, names, table)
    if table.empty:
        raise InputError(f"no pair is graded by the humans and both judges ({names[0]}; {names[1]}): recheck needs "
                         "the same calibration pairs")
    _check_scale(table, scale)
    figures, queries = _kappa_changes(table, scale, resamples, level, seed)
    runs_used, tau_queries, run_means = 0, 0, {}
    if runs:
        change, tau_queries, run_means = _tau_change(table, runs, measure, contract or EvaluationContract(),
                                                     resamples, level, seed)
        figures.append(change)
        runs_used = len(runs)
    primary = figures[-1].figure if primary == "tau" else primary  # the tau's name holds its measure
    return Recheck(identity[names[0]], identity[names[1]], (names[0], names[1]), len(table), queries,
                   tuple(figures), primary, level, resamples, seed, left_out, runs_used, tau_queries, run_means)


def _identity(grades: pd.DataFrame, name: str) -> JudgeIdentity:
    """The judge named ``name``: the annotator as given (before two versions were named apart) and the source."""
    rows = grades[grades["annotator"] == name]
    given = rows["given_annotator"] if "given_annotator" in rows else rows["annotator"]
    return JudgeIdentity(str(given.iloc[0]), str(rows["source"].iloc[0]))


def _left_out(human: pd.DataFrame, grades: pd.DataFrame, names: list[str], used: pd.DataFrame) -> dict[str, int]:
    keys = ["query_id", "doc_id"]
    used_keys = pd.MultiIndex.from_frame(used[keys])
    counts = {"graded by the humans, not by both judges":
              int((~pd.MultiIndex.from_frame(human[keys]).isin(used_keys)).sum())}
    for name in names:
        judged = grades[grades["annotator"] == name]
        counts[f"graded by {name} without a human grade"] = int(
            (~pd.MultiIndex.from_frame(judged[keys]).isin(pd.MultiIndex.from_frame(human[keys]))).sum())
    return counts


def _check_scale(table: pd.DataFrame, scale: Sequence[int]) -> None:
    for column in ("human", "old", "new"):
        off = ~table[column].isin(list(scale))
        if off.any():
            row = table[off].iloc[0]
            raise InputError(f"a grade {row[column]} off the scale {', '.join(map(str, scale))} ({column} grade of "
                             f"query {row['query_id']}, document {row['doc_id']}); {SCALE_REMEDY}")


def _kappa_changes(table: pd.DataFrame, scale: Sequence[int], resamples: int, level: float,
                   seed: int) -> tuple[list[FigureChange], int]:
    """Both kappas of both judges, and their paired query-bootstrap differences."""
    queries = sorted(table["query_id"].unique())
    position = {query: index for index, query in enumerate(queries)}
    size = len(scale)
    per_query = {label: np.zeros((len(queries), size, size)) for label in ("old", "new")}
    for query, rows in table.groupby("query_id", sort=False):
        for label in per_query:
            per_query[label][position[query]] = confusion_matrix(rows["human"].to_numpy(), rows[label].to_numpy(),
                                                                 scale)
    draws = query_draws(len(queries), resamples, seed)
    tail = (1 - level) / 2
    changes = []
    for figure, kind in KAPPAS.items():
        weights = disagreement_weights(size, kind)
        point = {label: float(kappa_from_confusion(matrices.sum(axis=0), weights))
                 for label, matrices in per_query.items()}
        resampled = {label: kappa_from_confusion((draws @ matrices.reshape(len(queries), -1)).reshape(-1, size, size),
                                                 weights) for label, matrices in per_query.items()}
        interval = percentile_interval(resampled["new"] - resampled["old"], tail, resamples)
        changes.append(FigureChange(figure, point["old"], point["new"], interval.low, interval.high,
                                    interval.undefined, level, resamples, len(queries)))
    return changes, len(queries)


def _tau_change(table: pd.DataFrame, runs: Mapping[str, pd.DataFrame], measure: str, contract: EvaluationContract,
                resamples: int, level: float, seed: int) -> tuple[FigureChange, int, dict[str, dict[str, float]]]:
    """Kendall's tau of each judge's system ranking with the humans', the paired bootstrap of its change, the queries
    it is over and each run's mean under each grades."""
    if len(runs) < 2:
        raise InputError(f"a system-ranking tau needs 2 or more runs, got {len(runs)}")
    parsed = parse_measure(measure)
    scores = {label: per_query_scores(table[["query_id", "doc_id", label]].rename(columns={label: "grade"}), runs,
                                      parsed, contract) for label in ("human", "old", "new")}
    defined = [set(frame.index[frame.notna().all(axis=1)]) for frame in scores.values()]
    common = sorted(set.intersection(*defined))
    if len(common) < 2:
        raise InputError(f"{len(common)} queries are defined under the humans' and both judges' grades for {measure}: "
                         "a tau over queries needs 2 or more")
    names = list(runs)
    matrices = {label: frame.loc[common, names].to_numpy(dtype=np.float64) for label, frame in scores.items()}
    point = {label: kendall_tau(matrices["human"].mean(axis=0), matrices[label].mean(axis=0))[0]
             for label in ("old", "new")}
    draws = query_draws(len(common), resamples, seed) / len(common)
    means = {label: draws @ matrix for label, matrix in matrices.items()}
    differences = np.array([kendall_tau(means["human"][b], means["new"][b])[0]
                            - kendall_tau(means["human"][b], means["old"][b])[0] for b in range(resamples)])
    interval = percentile_interval(differences, (1 - level) / 2, resamples)
    run_means = {label: dict(zip(names, matrix.mean(axis=0).tolist(), strict=True))
                 for label, matrix in matrices.items()}
    return FigureChange(f"tau ({parsed})", point["old"], point["new"], interval.low, interval.high,
                        interval.undefined, level, resamples, len(common)), len(common), run_means


def recheck_files(judge_paths: Sequence[str | os.PathLike], human_paths: Sequence[str | os.PathLike], *,
                  run_paths: Sequence[str | os.PathLike] = (), conflicting_grades: str = "refuse",
                  **options: Any) -> Recheck:
    """:func:`recheck` of the judges' labels files and the humans' (:func:`read_recheck_grades`), with the runs of
    ``run_paths`` (files or folders) for the system-ranking tau; ``options`` are :func:`recheck`'s."""
    from evalset.io.trec import read_runs

    grades = read_recheck_grades(judge_paths, human_paths, conflicting_grades)
    grades, _ = apply_scale(grades, options.get("scale", DEFAULT_SCALE), remedy=SCALE_REMEDY)  # with file and line
    return recheck(grades, runs=read_runs(run_paths) if run_paths else None, **options)
