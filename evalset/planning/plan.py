"""Planning a set: how many queries a comparison needs, the smallest difference N queries detect, what judging
them costs; from a pilot (runs scored on qrels or on a frozen set) and a pool.

Conventions
-----------
- A comparison's per-query differences are candidate minus baseline on the metric (default: the headline), over
  the queries where both are defined (queries undefined for either are counted and left out, as
  :func:`evalset.stats.paired.compare_paired` does). ``sd`` is their standard deviation with ddof 1.
- A judged query absent from a run is refused (:func:`evalset.evaluation.missing_queries`: the run, its file, the
  count) unless the contract's ``missing`` was chosen (``-c missing=zero``: it scores 0; ``-c missing=skip``: it is
  left out of that run's comparisons); a note then says how many.
- The comparisons: those given, else the set's planned ones, else the first run against each other run.
- The threshold is Bonferroni's ``alpha / planned``, the planned count of the comparison family
  (:class:`evalset.stats.family.ComparisonFamily`: ``--planned``, else the set's planned comparisons, else the
  comparisons planned here). A plan looks ahead: the comparisons already in the set's log do not count.
- ``delta`` is the smallest difference worth finding; when none is given it is the pilot's observed mean
  difference (its absolute value).
- The formula and the simulation are :mod:`evalset.stats.power`'s. What judging a number of queries costs is
  another job (``evalset plan cost``, :mod:`evalset.planning.budget`): the plan prints the command that costs the
  queries each comparison needs.
- Printed: an undefined number is ``undef``; an infinite number of queries needed (a zero delta) is ``never``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from evalset.comparing.setlog import set_family
from evalset.contract import DEFAULT_POWER, DEFAULT_SEED, SIMULATION_PERMUTATIONS, SIMULATION_RESAMPLES
from evalset.errors import InputError
from evalset.evaluation import Evaluation, missing_notes, missing_queries, per_query_values
from evalset.io.files import atomic_path
from evalset.io.trec import expand_run_paths
from evalset.params import rules_of, settings_of, validate_params
from evalset.planning.spec import PowerSpec
from evalset.render import UNDEFINED, number, records, text_table
from evalset.stats.power import (
    MAX_SIMULATED,
    SIGN_BATCH,
    SimulatedPower,
    detectable_difference,
    power_at,
    queries_needed,
    simulated_power,
)

ALL_QUERIES = "all"


# ------------------------------------------------------------------------------------------------ the pilot
def pilot_differences(tables: Mapping[str, pd.DataFrame], metric: str, comparisons: Sequence[tuple[str, str]],
                      queries: pd.DataFrame | None = None, *, skipped: bool = False) -> pd.DataFrame:
    """Per-query differences (candidate minus baseline) of each comparison on one metric.

    ``tables`` are per-query frames indexed by query id, with a column ``metric`` (:mod:`evalset.evaluation`);
    ``queries`` (optional, with ``query_id, stratum``) gives each query its stratum, else every query is in
    stratum ``all``. Returns ``baseline, candidate, query_id, stratum, difference`` with NaN where either run
    is undefined on the query. Both runs of a comparison are scored on the same queries, unless ``skipped``
    (``-c missing=skip`` left out the queries a run lacks): then it is on the queries both were scored on.
    """
    parts = []
    for baseline, candidate in comparisons:
        for name in (baseline, candidate):
            if name not in tables:
                raise InputError(f"comparison {baseline}:{candidate} names run {name!r}, which was not given "
                                 f"(runs: {', '.join(sorted(tables))})")
        base, cand = tables[baseline][metric], tables[candidate][metric]
        if skipped:
            base, cand = base[base.index.isin(cand.index)], cand[cand.index.isin(base.index)]
        if set(base.index) != set(cand.index):
            raise InputError(f"{baseline} and {candidate} are scored on different queries")
        difference = (cand.reindex(base.index) - base).rename("difference")
        parts.append(difference.rename_axis("query_id").reset_index().assign(baseline=baseline, candidate=candidate))
    frame = pd.concat(parts, ignore_index=True)
    if queries is not None and "stratum" in queries:
        strata = queries.drop_duplicates("query_id").set_index("query_id")["stratum"].astype(str)
        frame["stratum"] = frame["query_id"].map(strata).fillna(ALL_QUERIES)
    else:
        frame["stratum"] = ALL_QUERIES
    return frame[["baseline", "candidate", "query_id", "stratum", "difference"]]



@dataclass(frozen=True)
class PowerPlan:
    """What :func:`plan_power` finds.

    ``rows``: one row per comparison and stratum (``all`` is every query): ``baseline, candidate, stratum, n,
    undefined, mean_difference, sd, delta, delta_source, effect_size, queries_needed, queries_needed_solved,
    power_at_n, simulated_power_at_n, simulated_power_at_needed`` (with ``_se`` columns), and
    ``detectable_at_<N>`` for every size asked. ``curve``: ``baseline, candidate, n, formula, simulated,
    simulated_se`` over every query of each comparison.
    """

    rows: pd.DataFrame
    curve: pd.DataFrame
    metric: str
    alpha: float
    planned: int
    threshold: float
    power: float
    at: list[int]
    resamples: int
    permutations: int
    seed: int
    notes: list[str] = field(default_factory=list)  # what the pilot's values left out or scored 0 (missing queries)

    def plot(self, path: str) -> str:
        """Draw the power curves as a PNG at ``path`` (:func:`plot_power`); returns the path."""
        plot_power(self, path)
        return path

    def to_text(self) -> str:
        """The power plan as ``evalset plan`` prints it."""
        return "\n".join(_power_lines(self))

    def to_dict(self) -> dict:
        """The power plan as a JSON-ready dict."""
        return _power_document(self)


@validate_params(rules_of(PowerSpec, "delta", "power", "alpha", "planned", "at", "sizes", "resamples", "permutations",
                          "seed"))
def plan_power(differences: pd.DataFrame, *, metric: str, delta: float | None = None, power: float = DEFAULT_POWER,
               alpha: float = 0.05, planned: int | None = None, at: Sequence[int] = (),
               sizes: Sequence[int] | None = None, resamples: int = SIMULATION_RESAMPLES,
               permutations: int = SIMULATION_PERMUTATIONS, seed: int = DEFAULT_SEED,
               progress=None) -> PowerPlan:
    """Queries needed, power and smallest detectable difference for each comparison in ``differences``.

    ``differences`` is :func:`pilot_differences`' frame. ``planned`` defaults to the number of comparisons.
    ``at`` lists sizes for the reverse question (the pilot's size is always included). ``sizes`` is the grid of
    the power curve (default: a geometric grid up to twice the queries needed, with the pilot's size and the
    queries needed). ``progress`` is an optional callable wrapping an iterable (e.g. ``tqdm``).
    """
    comparisons = list(dict.fromkeys(zip(differences["baseline"], differences["candidate"], strict=True)))
    planned = planned or len(comparisons)
    threshold = alpha / planned
    cells = []
    for (baseline, candidate), group in differences.groupby(["baseline", "candidate"], sort=False):
        strata = sorted(group["stratum"].unique())
        cells.append((baseline, candidate, ALL_QUERIES, group))
        if len(strata) > 1:
            cells += [(baseline, candidate, s, group[group["stratum"] == s]) for s in strata]
    pilot_sizes = sorted({int(c[3]["difference"].notna().sum()) for c in cells if c[2] == ALL_QUERIES})
    at = sorted({*map(int, at), *pilot_sizes})
    rows, curves, jobs = [], [], []
    for baseline, candidate, stratum, group in cells:
        values = group["difference"].dropna().to_numpy(dtype=np.float64)
        row = {"baseline": baseline, "candidate": candidate, "stratum": stratum,
               "undefined": int(group["difference"].isna().sum()), **_formula_row(values, delta, power, threshold, at)}
        rows.append(row)
        for key, size in (("at_n", row["n"]), ("at_needed", row["queries_needed"])):
            if isinstance(size, int) and 2 <= size <= MAX_SIMULATED:
                jobs.append((row, key, values, row["delta"], size))
        if stratum == ALL_QUERIES:
            grid = sorted(set(sizes)) if sizes else default_sizes(len(values), row["queries_needed"])
            for n in grid:
                curves.append({"baseline": baseline, "candidate": candidate, "n": n,
                               "formula": power_at(row["sd"], row["delta"], n, threshold)})
                jobs.append((curves[-1], "curve", values, row["delta"], n))
    done: dict[tuple[int, float, int], SimulatedPower] = {}  # the same draws give the same answer: reuse it
    for target, key, values, target_delta, size in progress(jobs) if progress else jobs:
        known = (id(values), target_delta, size)
        if known not in done:
            done[known] = simulated_power(values, target_delta, size, threshold, resamples=resamples,
                                          permutations=permutations, seed=seed)
        simulated = done[known]
        prefix = "simulated" if key == "curve" else f"simulated_power_{key}"
        target[prefix], target[f"{prefix}_se"] = simulated.power, simulated.se
    return PowerPlan(pd.DataFrame(rows), pd.DataFrame(curves), metric, alpha, planned, threshold, power, at,
                     resamples, permutations, seed)


MIN_PILOT_QUERIES = 10
"""A pilot with fewer queries (defined for both runs) gets a warning: its sd says little about the next set."""


def _refuse_degenerate_pilot(values: np.ndarray, baseline: str, candidate: str) -> None:
    """Refuse a comparison the pilot cannot plan from: fewer than 2 queries, or the same difference on every
    query (identical runs): its sd is 0, and any plan drawn from it ("needed 2") is meaningless."""
    if len(values) < 2:
        raise InputError(f"{candidate} vs {baseline}: {len(values)} query with a defined difference in the pilot; "
                         "a plan needs at least 2 (and a useful one many more)")
    if np.all(values == values[0]):
        same = "the runs score the same on every query (are they one run?)" if values[0] == 0 else \
            f"the difference is {values[0]:+.4f} on every query"
        raise InputError(f"{candidate} vs {baseline}: {same}; with no spread in the differences the pilot cannot "
                         "say how many queries a comparison needs")


def small_pilot_notes(plan: PowerPlan) -> list[str]:
    """A warning for every comparison whose pilot has fewer than :data:`MIN_PILOT_QUERIES` queries."""
    rows = plan.rows[(plan.rows["stratum"] == ALL_QUERIES) & (plan.rows["n"] < MIN_PILOT_QUERIES)]
    return [f"WARNING: {row.candidate} vs {row.baseline}: the pilot has only {row.n} queries; the sd of the "
            f"differences from so few is unreliable, and so is every number below (a pilot of at least "
            f"{MIN_PILOT_QUERIES} queries is needed for a usable plan)" for row in rows.itertuples()]


def _formula_row(values: np.ndarray, delta: float | None, power: float, threshold: float, at: list[int]) -> dict:
    n = len(values)
    mean = float(values.mean()) if n else math.nan
    sd = float(values.std(ddof=1)) if n > 1 else math.nan
    chosen = abs(mean) if delta is None else float(delta)
    whole, solved = queries_needed(sd, chosen, power, threshold) if n > 1 else (math.nan, math.nan)
    return {
        "n": n, "mean_difference": mean, "sd": sd, "delta": chosen,
        "delta_source": "observed" if delta is None else "given",
        "effect_size": chosen / sd if sd else math.nan,
        "queries_needed": whole, "queries_needed_solved": solved,
        "power_at_n": power_at(sd, chosen, n, threshold),
        "simulated_power_at_n": math.nan, "simulated_power_at_n_se": math.nan,
        "simulated_power_at_needed": math.nan, "simulated_power_at_needed_se": math.nan,
        **{f"detectable_at_{size}": detectable_difference(sd, size, power, threshold) for size in at},
    }


def default_sizes(pilot: int, needed: float, points: int = 8) -> list[int]:
    """The power curve's grid: geometric from 10 (or the pilot's size, if smaller) to twice the queries needed
    (at least twice the pilot's size), with the pilot's size and the queries needed, at most ``MAX_SIMULATED``."""
    top = max(2 * pilot, 2 * needed if math.isfinite(needed) else 0, 20)
    top = min(top, MAX_SIMULATED)
    low = max(2, min(10, pilot))
    grid = {round(float(v)) for v in np.geomspace(low, top, points)}
    grid |= {pilot} | ({int(needed)} if math.isfinite(needed) and needed <= MAX_SIMULATED else set())
    return sorted(v for v in grid if v >= 2)


# ------------------------------------------------------------------------------------------------ the plan
def pilot_plan(evaluation: Evaluation, runs: Mapping[str, pd.DataFrame | str | os.PathLike],
               comparisons: Sequence[tuple[str, str]] = (), metric: str | None = None, *, planned: int | None = None,
               **settings: Any) -> PowerPlan:
    """The power plan of ``runs`` (name -> frame or file, named when it lacks judged queries) scored by
    ``evaluation`` (see the module docstring for the comparisons, the planned count and missing queries);
    ``settings`` are :func:`plan_power`'s."""
    metric = metric or evaluation.headline
    values = per_query_values(evaluation, runs, [metric])
    lacking = missing_queries(values, runs)
    tables = {name: values.analysed(name, metric).to_frame(metric) for name in values.runs}  # gm_ap: logs
    names = list(tables)
    chosen = list(dict.fromkeys(comparisons)) or (evaluation.frozen.planned if evaluation.frozen else []) or \
        [(names[0], name) for name in names[1:]]
    if not chosen:
        raise InputError("nothing to compare: give two or more runs, or --compare BASELINE:CANDIDATE")
    left = []  # the set's planned comparisons whose runs were not given: the plan is of the others, and says so
    if not comparisons and evaluation.frozen is not None and evaluation.frozen.planned:
        given = [pair for pair in chosen if set(pair) <= set(names)]
        left = [f"note: the set's planned comparison {b}:{c} is not in this plan: run "
                f"{', '.join(name for name in (b, c) if name not in names)} not given" for b, c in chosen
                if (b, c) not in given]
        if not given:
            raise InputError(f"none of the set's planned comparisons ({', '.join(f'{b}:{c}' for b, c in chosen)}) "
                             f"has both its runs among those given ({', '.join(names)}): give them, or --compare "
                             "BASELINE:CANDIDATE")
        chosen = given
    family = set_family(len(chosen), planned=planned, frozen=evaluation.frozen, split=evaluation.split)
    differences = pilot_differences(tables, metric, chosen, evaluation.queries,
                                    skipped=evaluation.contract.missing == "skip")
    for (baseline, candidate), group in differences.groupby(["baseline", "candidate"], sort=False):
        _refuse_degenerate_pilot(group["difference"].dropna().to_numpy(dtype=np.float64), baseline, candidate)
    geometric = [f"note: {metric} is a geometric mean: its differences (and --delta) are log ratios, as compare "
                 "tests it"] * (values.measures[metric].kind.summary == "geometric")
    return replace(plan_power(differences, metric=metric, planned=family.planned_count, **settings),
                   notes=missing_notes(values, lacking, "left out of its comparisons") + geometric + left)


def make_power_plan(evaluation: Evaluation, spec: PowerSpec | None = None, *, progress: Callable | None = None,
                    **options: Any) -> PowerPlan:
    """``evalset plan power``: the power plan of the pilot's runs (``spec.runs``, files or folders) scored by
    ``evaluation``, its notes (missing queries, a small pilot). The settings are ``spec``, or the
    :class:`~evalset.planning.spec.PowerSpec` of keyword ``options`` (``runs=``, ``delta=``, ...), which refuses
    settings no plan can have; ``progress`` wraps the simulated sizes (e.g. ``tqdm``)."""
    spec = settings_of(PowerSpec, spec, options)
    result = pilot_plan(evaluation, expand_run_paths(spec.runs), spec.comparisons, spec.metric, planned=spec.planned,
                        delta=spec.delta, power=spec.power, alpha=spec.alpha, at=spec.at, sizes=spec.sizes,
                        resamples=spec.resamples, permutations=spec.permutations, seed=spec.seed, progress=progress)
    return replace(result, notes=[*result.notes, *small_pilot_notes(result)])


# ------------------------------------------------------------------------------------------------ the plot
def plot_power(plan: PowerPlan, path: str) -> None:
    """Power against the number of queries, formula and simulation, one panel per comparison, as PNG."""
    from evalset.render import quiet_matplotlib

    quiet_matplotlib()
    import matplotlib.pyplot as plt

    comparisons = list(dict.fromkeys(zip(plan.curve["baseline"], plan.curve["candidate"], strict=True)))
    figure, axes = plt.subplots(1, max(1, len(comparisons)), figsize=(6 * max(1, len(comparisons)), 4.2),
                                squeeze=False)
    for axis, (baseline, candidate) in zip(axes[0], comparisons, strict=False):
        curve = plan.curve[(plan.curve["baseline"] == baseline) & (plan.curve["candidate"] == candidate)]
        row = plan.rows[(plan.rows["baseline"] == baseline) & (plan.rows["candidate"] == candidate)
                        & (plan.rows["stratum"] == ALL_QUERIES)].iloc[0]
        dense = np.unique(np.geomspace(2, curve["n"].max(), 200).round().astype(int))
        axis.plot(dense, [power_at(row["sd"], row["delta"], n, plan.threshold) for n in dense],
                  label="paired t-test (formula)")
        strata = plan.rows[(plan.rows["baseline"] == baseline) & (plan.rows["candidate"] == candidate)
                           & (plan.rows["stratum"] != ALL_QUERIES)]
        for stratum in strata.itertuples():
            axis.plot(dense, [power_at(stratum.sd, stratum.delta, n, plan.threshold) for n in dense], linewidth=1,
                      linestyle="-.", label=f"stratum {stratum.stratum} alone (formula, pilot {stratum.n})")
        axis.errorbar(curve["n"], curve["simulated"], yerr=2 * curve["simulated_se"], fmt="o", capsize=3,
                      label=f"bootstrap + permutation test ({plan.resamples} resamples, ±2 SE)")
        axis.axhline(plan.power, color="grey", linestyle=":", linewidth=1)
        axis.axvline(row["n"], color="grey", linestyle="--", linewidth=1, label=f"pilot: {row['n']} queries")
        if math.isfinite(row["queries_needed"]):
            axis.axvline(row["queries_needed"], color="tab:red", linestyle="--", linewidth=1,
                         label=f"needed: {row['queries_needed']} queries")
        axis.set_xscale("log")
        axis.set_ylim(0, 1.02)
        axis.set_xlabel("number of queries")
        axis.set_ylabel(f"power (alpha {plan.threshold:.3g})")
        axis.set_title(f"{candidate} vs {baseline}: {plan.metric}, delta {row['delta']:.4f}, sd {row['sd']:.4f}",
                       fontsize=10)
        axis.legend(fontsize=8, loc="upper left")
        axis.grid(alpha=0.3)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=110, format="png")
    plt.close(figure)




# ------------------------------------------------------------------------------------------------ output
def _cell(value: float, digits: int = 4) -> str:
    return "never" if value == math.inf else number(value, digits)


def _power_cell(formula: float, simulated: float, se: float) -> str:
    if math.isnan(simulated):
        return f"{_cell(formula, 3)} / {UNDEFINED}"
    return f"{_cell(formula, 3)} / {simulated:.3f} ± {se:.3f}"


def _power_lines(plan: PowerPlan) -> list[str]:
    """The power plan as a printable table: one line per comparison and stratum, then the power curve."""
    delta_note = ("the smallest difference given (--delta)" if (plan.rows["delta_source"] == "given").all()
                  else "each comparison's observed mean difference (give --delta for the smallest difference "
                       "worth shipping)")
    lines = [f"metric {plan.metric}; {plan.planned} planned comparison(s): Bonferroni threshold "
             f"{plan.alpha:g}/{plan.planned} = {plan.threshold:.4g}; target power {plan.power:g}",
             f"delta: {delta_note}", ""]
    header = ["comparison", "stratum", "queries", "mean diff", "sd", "delta", "needed",
              "power at pilot size (t / sim)", "sim. power at needed",
              *[f"detectable at {n}" for n in plan.at]]
    table = [header]
    for row in plan.rows.to_dict("records"):
        needed = row["queries_needed"]
        table.append([
            f"{row['candidate']} vs {row['baseline']}", row["stratum"],
            str(row["n"]) + (f" (+{row['undefined']} undef.)" if row["undefined"] else ""),
            number(row["mean_difference"], sign=True), _cell(row["sd"]), _cell(row["delta"]),
            _cell(needed, 0) if isinstance(needed, float) else str(needed),
            _power_cell(row["power_at_n"], row["simulated_power_at_n"], row["simulated_power_at_n_se"]),
            UNDEFINED if math.isnan(row["simulated_power_at_needed"])
            else f"{row['simulated_power_at_needed']:.3f} ± {row['simulated_power_at_needed_se']:.3f}",
            *[_cell(row[f"detectable_at_{n}"]) for n in plan.at],
        ])
    lines += text_table(table)
    lines += ["", "needed: queries for the paired t-test (statsmodels TTestPower) to reach the target power; "
              "detectable at N: the smallest mean difference N queries detect at that power",
              f"sim.: bootstrap of the pilot's queries shifted to mean delta, {plan.resamples} resamples x "
              f"{plan.permutations} random sign flips (compare uses 9,999), seed {plan.seed}; ± one standard error"]
    if len(plan.curve):
        lines += ["", "power against the number of queries (t-test formula / simulation ± SE):"]
        comparisons = list(dict.fromkeys(zip(plan.curve["baseline"], plan.curve["candidate"], strict=True)))
        curve = [["queries", *[f"{c} vs {b}" for b, c in comparisons]]]
        for n, group in plan.curve.groupby("n", sort=True):
            cells = {(r.baseline, r.candidate): _power_cell(r.formula, r.simulated, r.simulated_se)
                     for r in group.itertuples()}
            curve.append([str(n), *[cells.get(c, "") for c in comparisons]])
        lines += text_table(curve)
    needed = sorted({int(n) for n in plan.rows.loc[plan.rows["stratum"] == ALL_QUERIES, "queries_needed"]
                     if math.isfinite(n)})
    if needed:
        lines += ["", "what judging them costs: evalset plan cost --pool POOL (or RUNS -k K) "
                  + " ".join(f"--n-queries {n}" for n in needed)]
    return lines


def _power_document(plan: PowerPlan) -> dict:
    return {"metric": plan.metric, "alpha": plan.alpha, "planned": plan.planned, "threshold": plan.threshold,
            "power": plan.power, "at": plan.at,
            "simulation": {"resamples": plan.resamples, "permutations": plan.permutations, "seed": plan.seed,
                           "sign_batch": SIGN_BATCH, "method": "bootstrap of the pilot's queries shifted to mean "
                           "delta; two-sided paired permutation test by random sign flips"},
            "comparisons": records(plan.rows), "curve": records(plan.curve), "notes": plan.notes}
