"""A paired comparison (:class:`evalset.stats.paired.Comparison`) as ``compare`` prints it: the runs' means and
the difference, the tests and the interval, what the verdict rests on, the queries that moved most."""

from __future__ import annotations

from typing import Any

from evalset.render import UNDEFINED, is_undefined, number
from evalset.stats.strata import GEOMETRIC_FLOOR, INTERVAL_METHODS


def _p(value: float) -> str:
    return UNDEFINED if is_undefined(value) else f"{value:.4g}"


def comparison_text(result: Any) -> str:
    """``result`` (a :class:`~evalset.stats.paired.Comparison`) in lines, an undefined number read ``undef``."""
    traffic = result.weighting == "traffic"
    strata = f", traffic-weighted over {len(result.strata)} strata" if traffic else ""
    lines = [
        f"{result.candidate} vs {result.baseline} on {result.metric} ({result.n} queries"
        + (f", {result.undefined} undefined left out" if result.undefined else "") + f", {result.kind}{strata})"]
    if result.missing:
        lines.append(f"  missing queries   {result.missing['text']}")
    if result.judged_at_k:
        judged = result.judged_at_k
        lines.append(f"  judged@{judged['k']:<11}baseline {number(judged['baseline'])}, "
                     f"candidate {number(judged['candidate'])}")
    if result.first_stage:
        stage = result.first_stage
        same = abs(stage["baseline"] - stage["candidate"]) <= 1e-9
        lines.append(f"  {stage['metric'] + ' (all)':<17} baseline {number(stage['baseline'])}, candidate "
                     f"{number(stage['candidate'])}" + (" (the same candidates)" if same else " (other candidates: "
                                                         "the gain mixes what they hold with how they are ranked)"))
    if result.means and not result.geometric_means:
        lines.append(f"  means             baseline {number(result.means['baseline'])} -> candidate "
                     f"{number(result.means['candidate'])}" + (" traffic-weighted" if traffic else ""))
    if result.geometric_means:
        means = result.geometric_means
        lines.append(f"  geometric means   baseline {number(means['baseline'])}, candidate {number(means['candidate'])}"
                     f" (tested on log(max(value, {GEOMETRIC_FLOOR:g})) per query: the differences are log ratios)")
    weighted = " traffic-weighted" if traffic else ""
    lines.append(f"  mean difference   {number(result.mean_difference, sign=True)}{weighted}   "
                 f"median {number(result.median_difference, sign=True)}")
    for index, row in enumerate(result.strata):
        lines.append(f"  {'' if index else 'per stratum':<17} {row['stratum']} (share "
                     f"{row['share']:.3f}, {row['n']} queries) {number(row['mean_difference'], sign=True)}  "
                     f"[{number(row['ci_low'], sign=True)}, {number(row['ci_high'], sign=True)}]")
    if result.strata_disagree:
        lines.append(f"  strata            {result.strata_disagree}")
    if result.other_weighting:
        other = result.other_weighting
        label = "unweighted" if other["weighting"] == "uniform" else "traffic-weighted"
        lines.append(f"  {label:<17} {number(other['mean_difference'], sign=True)}  (p = "
                     f"{_p(other['permutation_p'])}, {INTERVAL_METHODS[result.ci_method]} "
                     f"[{number(other['ci_low'], sign=True)}, {number(other['ci_high'], sign=True)}])")
    within = " within strata" if traffic else ""
    lines += [
        f"  wins/losses/ties  {result.wins}/{result.losses}/{result.ties}",
        f"  permutation p     {_p(result.permutation_p)}  ({result.permutations} sign flips{within}, "
        f"seed {result.seed})",
        f"  paired t          {'stratified ' if traffic else ''}t = {number(result.t)}, p = {_p(result.ttest_p)}",
        f"  {INTERVAL_METHODS[result.ci_method]} {result.ci_level:.1%} CI"
        + " " * max(1, 8 - len(INTERVAL_METHODS[result.ci_method]))
        + f"[{number(result.ci_low, sign=True)}, {number(result.ci_high, sign=True)}]",
        f"  effect size       {number(result.effect_size, 3)} (mean / sd of differences)",
    ]
    if result.hole_bound:
        lines.append(f"  holes             {result.hole_bound['text']}")
    if result.tests_disagree:
        lines.append(f"  tests disagree    {result.tests_disagree}")
    if result.family:
        lines.append(f"  threshold         {result.threshold:.4g} = {result.family}")
    lines.append(f"  verdict           {result.verdict}")
    for label, moved in (("largest gains", result.largest_gains), ("largest losses", result.largest_losses)):
        if moved:
            lines.append(f"  {label:<17} " + ", ".join(_moved(row, result.judged_at_k) for row in moved))
    return "\n".join(lines)


def _moved(row: dict[str, Any], judged_at_k: dict[str, Any] | None) -> str:
    """``130510 (-0.1000)``, with both runs' judged@k of the query where either's top k has holes there
    (``130510 (-0.1000, judged@10 0.90/1.00)``: a move the judgments may not see)."""
    judged = row.get("judged")
    shown = f", judged@{judged_at_k['k']} {judged['baseline']:.2f}/{judged['candidate']:.2f}" if (
        judged and judged_at_k and min(judged.values()) < 1) else ""
    return f"{row['query_id']} ({row['difference']:+.4f}{shown})"
