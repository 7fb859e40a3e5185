"""PlanSpec (evalset.planning.spec): each field's declared rule and each rule between fields refuses in one line
naming the option, alike from the spec, from the library call's keywords (make_plan) and from the command (exit 2,
``evalset: error: ...``); every check comes before a file is read (the paths here do not exist)."""

import dataclasses

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.planning import budget, plan
from evalset.planning.spec import PlanSpec

BUDGET = {"depths": (10,), "pool_runs": ("run",)}
"""A budget of runs pooled at depth 10: settings that pass every rule."""


def refused(message, **settings):
    """Both the spec and the library call refuse ``settings`` with exactly ``message``."""
    for build in (PlanSpec, lambda **options: plan.make_plan(None, **options)):
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
    ("depths", (0,), "depths must be a positive integer, got 0"),
    ("prompt_tokens", -1, "prompt_tokens must be a non-negative integer, got -1"),
    ("tokenizer", "words", "tokenizer must be one of auto, tiktoken, chars, got 'words'"),
    ("seconds_per_judgment", 0.0, "seconds_per_judgment must be a number > 0, got 0.0"),
    ("annotators", 0, "annotators must be a positive integer, got 0"),
    ("overlap", 0, "overlap must be a positive integer, got 0"),
    ("price_in", -1.0, "price_in must be a number >= 0, got -1.0"),
    ("output_tokens", -1, "output_tokens must be a non-negative integer, got -1"),
])
def test_each_fields_rule_refuses_in_one_line(name, value, message):
    PlanSpec(**BUDGET)  # the base passes
    refused(message, **{**BUDGET, name: value})


@pytest.mark.parametrize(("option", "message"), [
    (["--delta", "-0.01"], "Invalid value for '--delta': must be a number > 0, got -0.01"),
    (["--power", "1"], "Invalid value for '--power': must be a number in (0, 1), got 1.0"),
    (["--n-queries", "0"], "Invalid value for '--n-queries': must be an integer in [1, 100000000], got 0"),
    (["--sizes", "20,x"], "Invalid value for '--sizes': must be an integer in [1, 100000000], got 'x'"),
    (["--sizes", "20,0"], "Invalid value for '--sizes': must be an integer in [1, 100000000], got 0"),
    (["--resamples", "0"], "Invalid value for '--resamples': must be an integer in [1, 1000000], got 0"),
    (["-k", "0"], "Invalid value for '-k' / '--depth': must be a positive integer, got 0"),
    (["--annotators", "0"], "Invalid value for '--annotators': must be a positive integer, got 0"),
    (["--price-in", "-1"], "Invalid value for '--price-in': must be a number >= 0, got -1.0"),
    (["--tokenizer", "words"], "Invalid value for '--tokenizer': 'words' is not one of 'auto', 'tiktoken', "
                               "'chars'."),
])
def test_the_command_takes_its_options_types_from_the_declared_rules(option, message):
    one_line(invoke("--depth", "10", *option), message)


RULES_BETWEEN = [
    ({"pool_folder": "pool", "depths": (10,)}, ["--pool", "pool", "-k", "10"],
     "give either --pool (a pool folder) or --depth (pool the runs), not both"),
    ({}, [], "nothing to plan: give a pilot (--qrels or --set, and RUNS) or a budget (--depth or --pool)"),
    ({"pool_folder": "pool", "pool_runs": ("run",)}, ["--pool", "pool", "--pool-runs", "."],
     "--pool-runs are pooled at --depth: give --depth K too (a --pool folder is pooled already)"),
    ({**BUDGET, "annotators": 2, "overlap": 3}, ["-k", "10", "--annotators", "2", "--overlap", "3"],
     "--overlap (3 annotators per pair) cannot exceed --annotators (2)"),
    ({**BUDGET, "price_out": 10.0}, ["-k", "10", "--price-out", "10"],
     "--price-out goes with --price-in: the LLM cost is of the input and output tokens"),
]


@pytest.mark.parametrize(("settings", "args", "message"), RULES_BETWEEN, ids=[case[2][:30] for case in RULES_BETWEEN])
def test_each_rule_between_fields_refuses_in_one_line_from_the_spec_the_library_and_the_command(settings, args,
                                                                                                message):
    refused(message, **settings)
    one_line(invoke(*args), message)


def test_the_spec_is_frozen_and_holds_tuples():
    spec = PlanSpec(runs="a.run", comparisons=[["a", "b"]], at=[50], depths=[10, 20], sizes=[20, 40])
    assert (spec.runs, spec.comparisons, spec.at, spec.depths, spec.sizes) == (
        ("a.run",), (("a", "b"),), (50,), (10, 20), (20, 40))
    assert PlanSpec(runs=("a",)).sizes is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.power = 0.9  # type: ignore[misc]


def test_the_settings_are_given_as_a_spec_or_as_keywords_never_both():
    with pytest.raises(TypeError, match="not both"):
        plan.make_plan(None, PlanSpec(**BUDGET), alpha=0.1)
    with pytest.raises(TypeError, match=r"^spec: expected PlanSpec or None, got list"):
        plan.make_plan(None, ["run"], depths=[10])  # the runs were the second argument before the spec


def test_the_lower_plan_functions_declare_their_rules_from_the_spec():
    for function in (plan.plan_power, budget.judging_budget):
        assert function.RULES.items() <= PlanSpec.RULES.items()
    size = budget.PoolSize(10, "runs", 2, pd.Series([3, 5], index=["a", "b"]))
    with pytest.raises(InputError, match=r"^seconds_per_judgment must be a number > 0, got 0$"):
        budget.judging_budget([size], seconds_per_judgment=0)
    with pytest.raises(InputError, match=r"^--overlap \(3 annotators per pair\) cannot exceed --annotators \(2\)$"):
        budget.judging_budget([size], overlap=3, annotators=2)
    differences = pd.DataFrame({"baseline": "a", "candidate": "b", "query_id": ["q1", "q2"], "stratum": "all",
                                "difference": [0.1, 0.2]})
    with pytest.raises(InputError, match=r"^delta must be a number > 0, got -0.1$"):
        plan.plan_power(differences, metric="ndcg@10", delta=-0.1)
