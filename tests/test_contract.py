"""The defaults table of evalset/contract.py: a library function defaults to the value its command shows."""

import inspect

from click.testing import CliRunner

from evalset.agreement import agreement_report
from evalset.cli import main
from evalset.cli.agreement import agreement_command
from evalset.cli.compare import compare
from evalset.cli.estimate_select import documents_command, holes_command, slice_command
from evalset.cli.estimate_validate import validate_slice
from evalset.cli.freeze import freeze
from evalset.cli.holes import holes
from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED
from evalset.estimate import estimate_runs, select_from_pool, select_slice
from evalset.estimate.slicevalidation import simulate_slices
from evalset.evaluation import Evaluation
from evalset.holes import holes_pool
from evalset.io.setfolder import SetContract
from evalset.stats.paired import compare_paired


def default(function, parameter: str):
    return inspect.signature(function).parameters[parameter].default


def option_default(command, name: str):
    return next(param for param in command.params if param.name == name).default


def test_a_library_function_defaults_to_the_value_its_command_shows():
    pairs = [(select_slice, "seed", slice_command, "seed"), (select_from_pool, "seed", slice_command, "seed"),
             (simulate_slices, "seed", validate_slice, "seed"), (holes_pool, "seed", holes, "seed"),
             (agreement_report, "seed", agreement_command, "seed"),
             (agreement_report, "measure", agreement_command, "measure"),
             (SetContract, "headline", freeze, "headline")]
    for function, parameter, command, option in pairs:
        assert default(function, parameter) == option_default(command, option), (function.__name__, parameter)
    commands = (slice_command, documents_command, holes_command, validate_slice, compare, holes, agreement_command)
    assert {option_default(command, "seed") for command in commands} == {DEFAULT_SEED}


def test_the_slice_is_drawn_with_the_default_seed_of_every_resampling():
    # select_slice and select_from_pool defaulted to seed 0 while `estimate select` drew with 20191 (issue 27)
    assert DEFAULT_SEED == 20191
    queries = [f"q{i}" for i in range(20)]
    drawn = select_slice(queries, size=5)
    assert drawn.seed == DEFAULT_SEED and drawn.slice == select_slice(queries, size=5, seed=DEFAULT_SEED).slice


def test_the_default_metric_is_the_one_every_command_and_function_falls_back_to():
    assert DEFAULT_METRIC == "ndcg@10"
    assert default(estimate_runs, "metrics") == default(simulate_slices, "metrics") == (DEFAULT_METRIC,)
    assert default(compare_paired, "metric") == DEFAULT_METRIC
    assert Evaluation(SetContract().evaluation, None).headline == SetContract().headline == DEFAULT_METRIC
    for command in (["estimate", "run", "slice"], ["estimate", "validate", "slice"], ["compare"], ["plan", "power"],
                    ["reusability"]):
        text = " ".join(CliRunner().invoke(main, [*command, "--help"], terminal_width=200).output.split())
        assert f"[default: {DEFAULT_METRIC}" in text, command
