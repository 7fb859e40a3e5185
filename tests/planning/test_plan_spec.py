"""PowerSpec and CostSpec (evalset.planning.spec): each field's declared rule and each rule between fields refuses
in one line naming the option, alike from the spec, from the library call's keywords (make_power_plan,
make_cost_plan) and from the command (exit 2, ``evalset: error: ...``); every check comes before a file is read (the
paths here do not exist)."""

import dataclasses

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.planning import budget, plan
from evalset.planning.spec import CostSpec, PowerSpec

PILOT = {"runs": ("a.run", "b.run")}
"""A pilot's runs: settings that pass every rule of a power plan."""
POOLED = {"runs": ("run",), "depths": (10,)}
"""Runs pooled at depth 10: settings that pass every rule of a cost plan."""


def refused(spec, message, **settings):
    """Both the spec and its library call refuse ``settings`` with exactly ``message``."""
    call = {PowerSpec: lambda **options: plan.make_power_plan(None, **options),
            CostSpec: budget.make_cost_plan}[spec]
    for build in (spec, call):
        with pytest.raises(InputError) as caught:
            build(**settings)
        assert str(caught.value) == message


def invoke(*args):
    return CliRunner().invoke(main, ["plan", *map(str, args)])


def one_line(result, message):
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == f"evalset: error: {message}\n"


@pytest.mark.parametrize(("name", "value", "message"), [
    ("planned", 0, "planned must be a positive integer, got 0"),
    ("delta", -0.01, "delta must be a number > 0, got -0.01"),
    ("delta", 0.0, "delta must be a number > 0, got 0.0"),
    ("power", 1.0, "power must be a number in (0, 1), got 1.0"),
    ("alpha", 0.0, "alpha must be a number in (0, 1), got 0.0"),
    ("at", (50, 1.5), "at must be an integer in [1, 100000000], got 1.5"),
    ("sizes", (20, 0), "sizes must be an integer in [1, 100000000], got 0"),
    ("resamples", 0, "resamples must be an integer in [1, 1000000], got 0"),
    ("permutations", 2_000_000, "permutations must be an integer in [1, 1000000], got 2000000"),
    ("seed", -1, "seed must be a non-negative integer, got -1"),
])
def test_each_power_fields_rule_refuses_in_one_line(name, value, message):
    PowerSpec(**PILOT)  # the base passes
    refused(PowerSpec, message, **{**PILOT, name: value})


@pytest.mark.parametrize(("name", "value", "message"), [
    ("depths", (0,), "depths must be a positive integer, got 0"),
    ("at", (0,), "at must be an integer in [1, 100000000], got 0"),
    ("prompt_tokens", -1, "prompt_tokens must be a non-negative integer, got -1"),
    ("tokenizer", "words", "tokenizer must be one of auto, tiktoken, chars, got 'words'"),
    ("seconds_per_judgment", 0.0, "seconds_per_judgment must be a number > 0, got 0.0"),
    ("annotators", 0, "annotators must be a positive integer, got 0"),
    ("overlap", 0, "overlap must be a positive integer, got 0"),
    ("price_in", -1.0, "price_in must be a number >= 0, got -1.0"),
    ("output_tokens", -1, "output_tokens must be a non-negative integer, got -1"),
])
def test_each_cost_fields_rule_refuses_in_one_line(name, value, message):
    CostSpec(**POOLED)  # the base passes
    refused(CostSpec, message, **{**POOLED, name: value})


@pytest.mark.parametrize(("option", "message"), [
    (["power", "--delta", "-0.01"], "Invalid value for '--delta': must be a number > 0, got -0.01"),
    (["power", "--power", "1"], "Invalid value for '--power': must be a number in (0, 1), got 1.0"),
    (["power", "--n-queries", "0"], "Invalid value for '--n-queries': must be an integer in [1, 100000000], got 0"),
    (["power", "--sizes", "20,x"], "Invalid value for '--sizes': must be an integer in [1, 100000000], got 'x'"),
    (["power", "--sizes", "20,0"], "Invalid value for '--sizes': must be an integer in [1, 100000000], got 0"),
    (["power", "--resamples", "0"], "Invalid value for '--resamples': must be an integer in [1, 1000000], got 0"),
    (["cost", "-k", "0"], "Invalid value for '-k' / '--depth': must be a positive integer, got 0"),
    (["cost", "--n-queries", "0"], "Invalid value for '--n-queries': must be an integer in [1, 100000000], got 0"),
    (["cost", "--annotators", "0"], "Invalid value for '--annotators': must be a positive integer, got 0"),
    (["cost", "--price-in", "-1"], "Invalid value for '--price-in': must be a number >= 0, got -1.0"),
    (["cost", "--tokenizer", "words"], "Invalid value for '--tokenizer': 'words' is not one of 'auto', "
                                       "'tiktoken', 'chars'."),
])
def test_the_commands_take_their_options_types_from_the_declared_rules(option, message):
    one_line(invoke(*option), message)


RULES_BETWEEN = [
    ({"pool_folder": "pool", "depths": (10,)}, ["--pool", "pool", "-k", "10"],
     "give either --pool (a pool folder) or RUNS with --depth (pool them), not both"),
    ({}, [], "nothing to cost: give a pool folder (--pool) or the runs to pool (RUNS) at --depth K"),
    ({"runs": ("run",)}, ["."], "nothing to cost: give a pool folder (--pool) or the runs to pool (RUNS) at --depth K"),
    ({**POOLED, "annotators": 2, "overlap": 3}, [".", "-k", "10", "--annotators", "2", "--overlap", "3"],
     "--overlap (3 annotators per pair) cannot exceed --annotators (2)"),
    ({**POOLED, "price_out": 10.0}, [".", "-k", "10", "--price-out", "10"],
     "--price-out goes with --price-in: the LLM cost is of the input and output tokens"),
]


@pytest.mark.parametrize(("settings", "args", "message"), RULES_BETWEEN, ids=[case[2][:30] for case in RULES_BETWEEN])
def test_each_rule_between_cost_fields_refuses_in_one_line_from_the_spec_the_library_and_the_command(settings, args,
                                                                                                     message):
    refused(CostSpec, message, **settings)
    one_line(invoke("cost", *args), message)


def test_a_power_plan_without_a_pilots_runs_is_refused():
    refused(PowerSpec, "a power plan is a pilot's: give its runs (RUNS), scored on --qrels or --set")
    result = invoke("power", "--qrels", "q")
    assert result.exit_code == 2 and "Missing argument 'RUNS...'" in result.output


def test_the_specs_are_frozen_and_hold_tuples():
    power = PowerSpec(runs="a.run", comparisons=[["a", "b"]], at=[50], sizes=[20, 40])
    assert (power.runs, power.comparisons, power.at, power.sizes) == (("a.run",), (("a", "b"),), (50,), (20, 40))
    assert PowerSpec(runs=("a",)).sizes is None
    cost = CostSpec(runs="r", depths=[10, 20], at=[100])
    assert (cost.runs, cost.depths, cost.at) == (("r",), (10, 20), (100,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        power.power = 0.9  # type: ignore[misc]


def test_the_settings_are_given_as_a_spec_or_as_keywords_never_both():
    with pytest.raises(TypeError, match="not both"):
        budget.make_cost_plan(CostSpec(**POOLED), annotators=2)
    with pytest.raises(TypeError, match=r"^spec: expected PowerSpec or None, got list"):
        plan.make_power_plan(None, ["run"])


def test_the_lower_plan_functions_declare_their_rules_from_the_specs():
    assert plan.plan_power.RULES.items() <= PowerSpec.RULES.items()
    assert budget.judging_budget.RULES.items() <= CostSpec.RULES.items()
    size = budget.PoolSize(10, "runs", 2, pd.Series([3, 5], index=["a", "b"]))
    with pytest.raises(InputError, match=r"^seconds_per_judgment must be a number > 0, got 0$"):
        budget.judging_budget([size], seconds_per_judgment=0)
    with pytest.raises(InputError, match=r"^--overlap \(3 annotators per pair\) cannot exceed --annotators \(2\)$"):
        budget.judging_budget([size], overlap=3, annotators=2)
    differences = pd.DataFrame({"baseline": "a", "candidate": "b", "query_id": ["q1", "q2"], "stratum": "all",
                                "difference": [0.1, 0.2]})
    with pytest.raises(InputError, match=r"^delta must be a number > 0, got -0.1$"):
        plan.plan_power(differences, metric="ndcg@10", delta=-0.1)
