"""Planning a set from a pilot: how many queries a comparison needs, and the smallest difference N queries detect.

Conventions
-----------
- A comparison's per-query differences are candidate minus baseline on the headline metric, over the queries
  where both are defined (queries undefined for either are counted and left out, as :func:`compare_paired` does).
  ``sd`` is their standard deviation with ddof 1.
- The threshold is Bonferroni's ``alpha / planned`` (planned = the number of planned comparisons).
- The formula is the paired t-test: a one-sample t-test on the differences, two-sided, solved by statsmodels'
  ``TTestPower`` for effect size ``delta / sd``. ``queries_needed`` is the smallest whole number of queries
  (at least 2) whose power reaches the target; ``detectable_difference`` is ``sd x`` the solved effect size.
- ``delta`` is the smallest difference worth finding; when none is given it is the pilot's observed mean
  difference (its absolute value).
- The simulation resamples the pilot's queries with replacement (bootstrap) at each size N, after shifting the
  differences so that their mean is ``delta`` (with the sign of the observed mean; their spread and shape are
  the pilot's), and counts how often the paired permutation test (two-sided, random sign flips, the p-value of
  :func:`evalset.compare.permutation_p_value`) gives p below the threshold. For speed it uses 999 sign flips
  (``compare`` uses 9,999), and the resamples of one batch of ``SIGN_BATCH`` share their sign flips (each
  resample's test is still a valid permutation test; the batches draw fresh flips). Its standard error is the
  binomial one, ``sqrt(p (1 - p) / resamples)``. Every draw comes from ``numpy.random.default_rng([seed, N])``,
  so the power at N does not depend on which other sizes are simulated.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.power import TTestPower

from evalset.compare import DEFAULT_SEED
from evalset.io.files import atomic_path

DEFAULT_POWER = 0.8
SIMULATION_PERMUTATIONS = 999
SIMULATION_RESAMPLES = 500
SIGN_BATCH = 25
ALL_QUERIES = "all"

_SOLVER = TTestPower()


# ------------------------------------------------------------------------------------------------ the pilot
def pilot_differences(tables: Mapping[str, pd.DataFrame], metric: str, comparisons: Sequence[tuple[str, str]],
                      queries: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-query differences (candidate minus baseline) of each comparison on one metric.

    ``tables`` are :func:`evalset.metrics.evaluate_runs` results (per-query frames indexed by query id);
    ``queries`` (optional, with ``query_id, stratum``) gives each query its stratum, else every query is in
    stratum ``all``. Returns ``baseline, candidate, query_id, stratum, difference`` with NaN where either run
    is undefined on the query.
    """
    parts = []
    for baseline, candidate in comparisons:
        for name in (baseline, candidate):
            if name not in tables:
                raise ValueError(f"comparison {baseline}:{candidate} names run {name!r}, which was not given "
                                 f"(runs: {', '.join(sorted(tables))})")
        base, cand = tables[baseline][metric], tables[candidate][metric]
        if set(base.index) != set(cand.index):
            raise ValueError(f"{baseline} and {candidate} are scored on different queries")
        difference = (cand.reindex(base.index) - base).rename("difference")
        parts.append(difference.rename_axis("query_id").reset_index().assign(baseline=baseline, candidate=candidate))
    frame = pd.concat(parts, ignore_index=True)
    if queries is not None and "stratum" in queries:
        strata = queries.drop_duplicates("query_id").set_index("query_id")["stratum"].astype(str)
        frame["stratum"] = frame["query_id"].map(strata).fillna(ALL_QUERIES)
    else:
        frame["stratum"] = ALL_QUERIES
    return frame[["baseline", "candidate", "query_id", "stratum", "difference"]]


# ------------------------------------------------------------------------------------------------ the formula
def power_at(sd: float, delta: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired t-test with ``n`` queries to detect a mean difference ``delta``."""
    if n < 2:
        return math.nan
    if sd == 0:
        return 1.0 if delta != 0 else alpha
    return float(_SOLVER.power(effect_size=abs(delta) / sd, nobs=n, alpha=alpha, alternative="two-sided"))


def queries_needed(sd: float, delta: float, power: float = DEFAULT_POWER, alpha: float = 0.05) -> tuple[int, float]:
    """The number of queries for the paired t-test to detect ``delta`` with ``power`` at ``alpha``.

    Returns ``(whole, solved)``: the smallest whole number of queries (at least 2) whose power reaches the
    target, and statsmodels' real-valued solution. A zero ``delta`` (with sd > 0) needs infinitely many.
    """
    _check_probability(power, "power")
    _check_probability(alpha, "alpha")
    if math.isnan(sd) or math.isnan(delta):
        return math.nan, math.nan
    if delta == 0 and sd > 0:
        return math.inf, math.inf
    if sd == 0 or power_at(sd, delta, 2, alpha) >= power:
        return 2, 2.0
    solved = float(_SOLVER.solve_power(effect_size=abs(delta) / sd, nobs=None, alpha=alpha, power=power,
                                       alternative="two-sided"))
    whole = max(2, math.ceil(solved - 1e-9))
    while power_at(sd, delta, whole, alpha) < power:  # guard against the solver's tolerance
        whole += 1
    return whole, solved


def detectable_difference(sd: float, n: int, power: float = DEFAULT_POWER, alpha: float = 0.05) -> float:
    """The smallest mean difference the paired t-test detects with ``n`` queries at ``power`` and ``alpha``."""
    _check_probability(power, "power")
    if n < 2 or math.isnan(sd):
        return math.nan
    if sd == 0:
        return 0.0
    effect = _SOLVER.solve_power(effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided")
    return float(sd * effect)


def _check_probability(value: float, what: str) -> None:
    if not 0 < value < 1:
        raise ValueError(f"{what} must be in (0, 1), got {value}")


# --------------------------------------------------------------------------------------------- the simulation
@dataclass(frozen=True)
class SimulatedPower:
    """Share of bootstrap resamples in which the permutation test found the difference, with its standard error."""

    n: int
    power: float
    se: float
    resamples: int
    permutations: int


def permutation_p_values(samples: np.ndarray, permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Two-sided paired permutation p-values of each row of ``samples`` (rows share one set of sign flips).

    The p-value of each row is that of :func:`evalset.compare.permutation_p_value`: (1 + #{flips with
    |mean| >= |observed mean|}) / (1 + flips). For ``permutations <= 1000`` and one row, the same generator
    state gives the same p-value as that function.
    """
    samples = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    n = samples.shape[1]
    signs = rng.integers(0, 2, size=(permutations, n), dtype=np.int8) * 2 - 1
    observed = np.abs(samples.mean(axis=1))
    tolerance = 1e-12 * np.maximum(1.0, observed)
    means = (signs.astype(np.float64) @ samples.T) / n
    extreme = np.sum(np.abs(means) >= observed - tolerance, axis=0)
    return (extreme + 1) / (permutations + 1)


def simulated_power(differences: np.ndarray, delta: float, n: int, alpha: float, *,
                    resamples: int = SIMULATION_RESAMPLES, permutations: int = SIMULATION_PERMUTATIONS,
                    seed: int = DEFAULT_SEED) -> SimulatedPower:
    """Bootstrap power of the permutation test at ``n`` queries for a true mean difference ``delta``.

    ``differences`` (the pilot's, NaN-free) are shifted to mean ``delta`` (sign of their observed mean) and
    resampled with replacement; see the module docstring.
    """
    differences = np.asarray(differences, dtype=np.float64)
    if len(differences) == 0 or n < 2:
        return SimulatedPower(n, math.nan, math.nan, 0, permutations)
    if resamples < 1 or permutations < 1:
        raise ValueError("resamples and permutations must be positive")
    mean = differences.mean()
    target = math.copysign(abs(delta), mean if mean != 0 else 1.0)
    shifted = differences - mean + target
    rng = np.random.default_rng([seed, n])
    found = 0
    for start in range(0, resamples, SIGN_BATCH):
        size = min(SIGN_BATCH, resamples - start)
        samples = shifted[rng.integers(0, len(shifted), size=(size, n))]
        found += int(np.sum(permutation_p_values(samples, permutations, rng) < alpha))
    power = found / resamples
    return SimulatedPower(n, power, math.sqrt(power * (1 - power) / resamples), resamples, permutations)


# ------------------------------------------------------------------------------------------------ the plan
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


def plan_power(differences: pd.DataFrame, *, metric: str, delta: float | None = None, power: float = DEFAULT_POWER,
               alpha: float = 0.05, planned: int | None = None, at: Iterable[int] = (),
               sizes: Iterable[int] | None = None, resamples: int = SIMULATION_RESAMPLES,
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
    if planned < 1:
        raise ValueError(f"planned must be at least 1, got {planned}")
    if delta is not None and not delta > 0:
        raise ValueError(f"delta must be positive, got {delta}")
    _check_probability(alpha, "alpha")
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


MAX_SIMULATED = 20_000
"""Sizes above this are not simulated (the formula alone is reported): a bootstrap of that size adds little."""


def default_sizes(pilot: int, needed: float, points: int = 8) -> list[int]:
    """The power curve's grid: geometric from 10 (or the pilot's size, if smaller) to twice the queries needed
    (at least twice the pilot's size), with the pilot's size and the queries needed, at most ``MAX_SIMULATED``."""
    top = max(2 * pilot, 2 * needed if math.isfinite(needed) else 0, 20)
    top = min(top, MAX_SIMULATED)
    low = max(2, min(10, pilot))
    grid = {round(float(v)) for v in np.geomspace(low, top, points)}
    grid |= {pilot} | ({int(needed)} if math.isfinite(needed) and needed <= MAX_SIMULATED else set())
    return sorted(v for v in grid if v >= 2)


# ------------------------------------------------------------------------------------------------ the plot
def plot_power(plan: PowerPlan, path: str) -> None:
    """Power against the number of queries, formula and simulation, one panel per comparison, as PNG."""
    import matplotlib

    matplotlib.use("Agg")
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
def _number(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "never"
    return f"{value:.{digits}f}"


def _power_cell(formula: float, simulated: float, se: float) -> str:
    if math.isnan(simulated):
        return f"{_number(formula, 3)} / n/a"
    return f"{_number(formula, 3)} / {simulated:.3f} ± {se:.3f}"


def summary_lines(plan: PowerPlan) -> list[str]:
    """The plan as a printable table: one line per comparison and stratum, then the power curve."""
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
            f"{row['mean_difference']:+.4f}", _number(row["sd"]), _number(row["delta"]),
            "never" if needed == math.inf else _number(needed, 0) if isinstance(needed, float) else str(needed),
            _power_cell(row["power_at_n"], row["simulated_power_at_n"], row["simulated_power_at_n_se"]),
            "n/a" if math.isnan(row["simulated_power_at_needed"])
            else f"{row['simulated_power_at_needed']:.3f} ± {row['simulated_power_at_needed_se']:.3f}",
            *[_number(row[f"detectable_at_{n}"]) for n in plan.at],
        ])
    lines += _aligned(table)
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
        lines += _aligned(curve)
    return lines


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


def _json_ready(value):
    if isinstance(value, float | np.floating):
        return None if not math.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def records(frame: pd.DataFrame) -> list[dict]:
    """A frame as JSON-ready records: NaN and infinity become None, numpy scalars Python ones."""
    return [{k: _json_ready(v) for k, v in row.items()} for row in frame.to_dict("records")]


def plan_to_dict(plan: PowerPlan) -> dict:
    """The plan as a JSON-ready dict."""
    return {"metric": plan.metric, "alpha": plan.alpha, "planned": plan.planned, "threshold": plan.threshold,
            "power": plan.power, "at": plan.at,
            "simulation": {"resamples": plan.resamples, "permutations": plan.permutations, "seed": plan.seed,
                           "sign_batch": SIGN_BATCH, "method": "bootstrap of the pilot's queries shifted to mean "
                           "delta; two-sided paired permutation test by random sign flips"},
            "comparisons": records(plan.rows), "curve": records(plan.curve)}
