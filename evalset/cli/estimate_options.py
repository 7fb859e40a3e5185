"""The options of ``evalset estimate run`` and ``evalset estimate validate`` (a design each): those every estimate
shares, and the one library call they all make (:func:`estimated`)."""

from __future__ import annotations

import sys

import click

from evalset.cli.emit import emit
from evalset.cli.options import apply_options, conflicting_grades_option, run_pairs, set_evaluation_options
from evalset.cli.ruled import format_option, ruled
from evalset.contract import DEFAULT_METRIC
from evalset.estimate.spec import Compared, EstimateSettings, RunSet, RunSlice

SEE = "See docs/estimate.md and docs/reusability.md."


def example(command: str) -> str:
    return f"\b\nExample:\n  {command}\n\n{SEE}"


def estimated(kind: type[EstimateSettings], output_format: str, contract, comparisons=None, **fields) -> None:
    """The one library call of every estimate command: its spec (``kind``, of :mod:`evalset.estimate.spec`) of its
    options (``fields``: the spec's own names; ``comparisons`` as ``--compare`` gives them), its estimate (or
    validation, whose draws show progress, counted in the spec's ``unit``), printed."""
    from tqdm import tqdm

    from evalset.estimate import make_estimate

    if comparisons is not None:
        fields["pairs"] = run_pairs(comparisons, "--compare")
    spec = kind(options=contract, **fields)
    emit(make_estimate(spec, progress=lambda draws: tqdm(draws, desc=f"{kind.unit}s", unit=kind.unit, disable=None,
                                                         file=sys.stderr, leave=False)), output_format)


def common(command):
    """What every estimate takes: the runs (positional), the metrics, the contract, repeats' rule, the format."""
    return apply_options(command, [
        click.argument("runs", nargs=-1, required=True, type=click.Path()),
        click.option("-m", "--metric", "metrics", multiple=True,
                     help=f"A metric to estimate; repeatable [default: {DEFAULT_METRIC}, or the set's headline]."),
        ruled(EstimateSettings, "level", "--level", help="Confidence level of the run means."),
        conflicting_grades_option, set_evaluation_options, format_option()])


def compared(command):
    """The paired differences an estimate reports and the family their verdicts are decided in."""
    return apply_options(command, [
        click.option("--compare", "comparisons", multiple=True, metavar="BASELINE:CANDIDATE",
                     help="A paired difference to estimate (run names); repeatable."),
        ruled(Compared, "planned", "--planned", help="Planned comparisons for the Bonferroni threshold "
                                                         "[default: the --compare pairs]."),
        click.option("--exploratory", is_flag=True,
                     help="The comparisons were not planned: reported as leads, never as differences."),
        ruled(Compared, "alpha", "--alpha", help="Family-wise error rate.")])


def grades(human: str | None, llm: str, no_llm: bool = True):
    """--human (``human`` None: the design's human grades are a set's) and --llm, and --no-llm (Horvitz-Thompson's
    estimator) where the design has it."""
    options = [click.option("--llm", "llm", multiple=True, required=not no_llm, type=click.Path(dir_okay=False),
                            help=llm)]
    if human is not None:
        options.insert(0, click.option("--human", "human", multiple=True, required=True,
                                       type=click.Path(dir_okay=False), help=human))
    if no_llm:
        options.append(click.option("--no-llm", is_flag=True, help="Horvitz-Thompson's estimator from the human "
                                                                   "sample alone (no --llm)."))
    return lambda command: apply_options(command, options)


interval_option = ruled(RunSlice, "interval", "--interval",
                        help="t: Student's t quantile on (human queries - 1) df, for small slices; normal: ppi_py's.")
ensemble_option = click.option("--ensemble", is_flag=True, help="Combine the --llm files' judges into one prediction "
                               "calibrated on the human slice (per combination of their grades, cross-fitted by "
                               "query) instead of their median.")
set_option = click.option("--set", "set_path", required=True, type=click.Path(file_okay=False),
                          help="The frozen set (sets/NAME/vN).")
split_option = ruled(RunSet, "split", "--split", help="The set's queries estimated.")
override_option = click.option("--override-contract", is_flag=True,
                               help="Allow contract options that contradict the set's contract (the output says so).")


