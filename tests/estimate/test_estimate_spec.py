"""The estimate specs (evalset.estimate.spec), one per command: each field's declared rule and each rule between
fields refuses in one line naming the option; a spec holds only its design's settings, its required ones without a
default, so that no mode is chosen by which settings are present and none can be filled wrongly; the commands, one
per verb and design, offer only their design's options and refuse in one line too (exit 2, ``evalset: error:
...``); every check comes before a file is read (the paths here do not exist)."""

import dataclasses
import inspect

import pytest
from click.testing import CliRunner

import evalset.estimate.spec
from evalset.cli import main
from evalset.contract import ContractOptions
from evalset.errors import InputError
from evalset.estimate import (
    EstimateSettings,
    RunDocuments,
    RunHoles,
    RunSet,
    RunSlice,
    ValidateDocuments,
    ValidateHoles,
    ValidateSlice,
    estimate_runs,
    make_estimate,
)
from evalset.estimate.frozen import set_estimate

VALID = {
    RunSlice: {"runs": ("run",), "llm": ("llm.qrels",), "human": ("human.qrels",), "slice_path": "slice.json"},
    RunSet: {"runs": ("run",), "set_path": "set"},
    RunDocuments: {"runs": ("run",), "sample_path": "sample", "human": ("human.qrels",), "llm": ("llm.qrels",)},
    RunHoles: {"runs": ("run",), "set_path": "set", "sample_path": "sample", "human": ("h.qrels",), "no_llm": True},
    ValidateSlice: {"runs": ("run",), "human": ("h.qrels",), "llm": ("l.qrels",), "draws": 5, "slice_size": 3},
    ValidateDocuments: {"runs": ("run",), "human": ("h.qrels",), "llm": ("l.qrels",), "draws": 5, "budget": 10.0},
    ValidateHoles: {"runs": ("run",), "set_path": "set", "groups_path": "groups.tsv", "llm": ("l.qrels",),
                     "draws": 5, "holes_fraction": 0.25},
}
"""Each spec with settings that pass every rule."""
COMMANDS = {RunSlice: "run slice", RunSet: "run set", RunDocuments: "run documents",
            RunHoles: "run holes", ValidateSlice: "validate slice", ValidateDocuments: "validate documents",
            ValidateHoles: "validate holes"}


def refused(kind, message, **settings):
    with pytest.raises(InputError) as caught:
        kind(**{**VALID[kind], **settings})
    assert str(caught.value) == message


def invoke(*args):
    return CliRunner().invoke(main, ["estimate", *map(str, args)])


def one_line(result, message):
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == f"evalset: error: {message}\n"


@pytest.mark.parametrize("kind", VALID, ids=lambda kind: kind.__name__)
def test_each_spec_passes_its_valid_settings_and_names_its_design_and_verb(kind):
    spec = kind(**VALID[kind])
    verb, design = COMMANDS[kind].split()
    assert (spec.verb, spec.design) == ({"run": "estimate"}.get(verb, verb), design)


@pytest.mark.parametrize(("kind", "name", "value", "message"), [
    (RunSet, "split", "train", "split must be one of test, dev, all, got 'train'"),
    (RunSlice, "planned", 0, "planned must be a positive integer, got 0"),
    (RunDocuments, "alpha", 1.5, "alpha must be a number in (0, 1), got 1.5"),
    (RunHoles, "level", 0.0, "level must be a number in (0, 1), got 0.0"),
    (RunSlice, "interval", "z", "interval must be one of t, normal, got 'z'"),
    (ValidateSlice, "draws", 0, "draws must be an integer in [1, 1000000], got 0"),
    (ValidateDocuments, "draws", 1_000_001, "draws must be an integer in [1, 1000000], got 1000001"),
    (ValidateSlice, "slice_size", 0, "slice_size must be a positive integer, got 0"),
    (ValidateHoles, "seed", -1, "seed must be a non-negative integer, got -1"),
    (RunSlice, "conflicting_grades", "last",
     "conflicting_grades must be one of refuse, latest, first, got 'last'"),
    (ValidateDocuments, "budget", 0.0, "budget must be a number > 0, got 0.0"),
    (ValidateHoles, "holes_fraction", 1.5, "holes_fraction must be a number in (0, 1), got 1.5"),
    (ValidateHoles, "depth", 0, "depth must be an integer in [1, 1000000], got 0"),
])
def test_each_fields_rule_refuses_in_one_line(kind, name, value, message):
    refused(kind, message, **{name: value})


RULES_BETWEEN = [
    (RunSlice, {"pairs": [("a", "a")]}, "comparison a:a compares a run with itself: give two different runs"),
    (ValidateSlice, {"pairs": [("a", "a")]}, "comparison a:a compares a run with itself: give two different runs"),
    (RunDocuments, {"runs": ()}, "give RUN: the run files or folders to estimate"),
    (RunSet, {"other_judge": True}, "--other-judge goes with --llm: LLM labels of another judge than the set's"),
    (RunDocuments, {"no_llm": True}, "give the LLM grades of every pooled pair (--llm), or --no-llm for "
                                         "Horvitz-Thompson's estimator: one of them"),
    (ValidateDocuments, {"llm": ()}, "give the LLM grades of every pooled pair (--llm), or --no-llm for "
                                      "Horvitz-Thompson's estimator: one of them"),
    (RunHoles, {"no_llm": False}, "give the LLM grades of every pair of the set and of the holes (--llm), or "
                                      "--no-llm for Horvitz-Thompson's estimator: one of them"),
    (ValidateHoles, {"no_llm": True}, "give the LLM grades of every pair the set judges (--llm), or --no-llm for "
                                       "Horvitz-Thompson's estimator: one of them"),
    (ValidateHoles, {"holes_precision": 0.01}, "give one of --fraction P (the share of each run's holes a draw "
                                                "takes: 0.25 or 25%) or --precision SE (each run's share sized for "
                                                "it)"),
    (ValidateHoles, {"holes_fraction": None}, "give one of --fraction P (the share of each run's holes a draw takes: "
                                               "0.25 or 25%) or --precision SE (each run's share sized for it)"),
]


@pytest.mark.parametrize(("kind", "settings", "message"), RULES_BETWEEN, ids=lambda value: str(value)[:40])
def test_each_rule_between_fields_refuses_in_one_line(kind, settings, message):
    refused(kind, message, **settings)


def test_no_spec_chooses_a_mode_by_the_settings_present():
    """A spec's rules between fields are choices between two ways to give one thing, or a dependency: none says "give
    no --X" (a setting its design cannot take is not a field of its spec)."""
    assert "give no" not in inspect.getsource(evalset.estimate.spec)
    for kind, settings in VALID.items():
        fields = {field.name for field in dataclasses.fields(kind)}
        others = set().union(*(dataclasses.fields(other) for other in VALID if other is not kind))
        assert {"runs", "metrics", "level", "conflicting_grades", "options"} <= fields
        required = {field.name for field in dataclasses.fields(kind) if field.default is dataclasses.MISSING
                    and field.default_factory is dataclasses.MISSING}
        assert required <= set(settings), kind.__name__
        for name in required:
            with pytest.raises(TypeError, match=f"missing 1 required keyword-only argument: '{name}'"):
                kind(**{key: value for key, value in settings.items() if key != name})
        assert others  # every spec is one of seven


def test_a_setting_of_another_design_is_no_field_of_the_spec():
    with pytest.raises(TypeError, match="unexpected keyword argument 'budget'"):
        RunSlice(**VALID[RunSlice], budget=100.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'slice_path'"):
        RunDocuments(**VALID[RunDocuments], slice_path="slice.json")
    with pytest.raises(TypeError, match="unexpected keyword argument 'human'"):
        RunSet(**VALID[RunSet], human=("h.qrels",))


BASES = {"run slice": ["run", "--llm", "llm.qrels", "--human", "human.qrels", "--slice", "slice.json"],
         "validate slice": ["run", "--human", "human.qrels", "--llm", "llm.qrels", "--resamples", "5", "--size", "3"],
         "validate documents": ["run", "--human", "human.qrels", "--llm", "llm.qrels", "--resamples", "5", "--budget",
                                "10"]}
"""Each command's line with settings that pass every rule (the files do not exist: no check reads them)."""


@pytest.mark.parametrize(("command", "option", "message"), [
    ("run slice", ["--alpha", "1"], "Invalid value for '--alpha': must be a number in (0, 1), got 1.0"),
    ("validate slice", ["--resamples", "0"],
     "Invalid value for '--resamples': must be an integer in [1, 1000000], got 0"),
    ("validate slice", ["--size", "x"], "Invalid value for '--size': must be a positive integer, got 'x'"),
    ("validate documents", ["--budget", "-5"], "Invalid value for '--budget': must be a number > 0, got -5.0"),
    ("validate slice", ["--seed", "-1"], "Invalid value for '--seed': must be a non-negative integer, got -1"),
    ("run slice", ["--interval", "z"], "Invalid value for '--interval': 'z' is not one of 't', 'normal'."),
])
def test_the_commands_take_their_options_types_from_the_declared_rules(command, option, message):
    one_line(invoke(*command.split(), *BASES[command], *option), message)


@pytest.mark.parametrize(("line", "message"), [
    (["run", "slice", "a", "--llm", "l", "--human", "h", "--slice", "s", "--compare", "a:a"],
     "comparison a:a compares a run with itself: give two different runs"),
    (["run", "documents", "a", "--sample", "s", "--human", "h"],
     "give the LLM grades of every pooled pair (--llm), or --no-llm for Horvitz-Thompson's estimator: one of them"),
    (["validate", "documents", "a", "--human", "h", "--llm", "l", "--no-llm", "--resamples", "5", "--budget", "10"],
     "give the LLM grades of every pooled pair (--llm), or --no-llm for Horvitz-Thompson's estimator: one of them"),
    (["run", "set", "a", "--set", "s", "--other-judge"],
     "--other-judge goes with --llm: LLM labels of another judge than the set's"),
    (["validate", "holes", "a", "--set", "s", "--groups", "g", "--llm", "l", "--resamples", "5"],
     "give one of --fraction P (the share of each run's holes a draw takes: 0.25 or 25%) or --precision SE (each "
     "run's share sized for it)"),
], ids=lambda value: " ".join(value[:2]) if isinstance(value, list) else None)
def test_the_rules_a_command_line_can_still_break_refuse_in_one_line(line, message):
    one_line(invoke(*line), message)


OWN = {"run slice": {"--slice", "--ensemble", "--interval", "--human", "--llm"},
       "run documents": {"--sample", "--human", "--llm", "--no-llm"},
       "run holes": {"--set", "--sample", "--human", "--llm", "--no-llm", "--split", "--override-contract"},
       "run set": {"--set", "--split", "--llm", "--other-judge", "--interval", "--override-contract"},
       "validate slice": {"--human", "--llm", "--resamples", "--seed", "--size", "--ensemble", "--interval"},
       "validate documents": {"--human", "--llm", "--no-llm", "--resamples", "--seed", "--budget"},
       "validate holes": {"--set", "--groups", "--llm", "--no-llm", "--resamples", "--seed", "--fraction",
                          "--precision", "--depth", "--split", "--override-contract"}}
"""Each command's own options (besides -m, --level, --conflicting-grades, -c, --format and, for the estimates,
--compare, --planned, --exploratory, --alpha; validate slice's --compare picks the pairs validated)."""
SHARED = {"--metric", "--level", "--conflicting-grades", "--contract", "--format"}
COMPARED = {"--compare", "--planned", "--exploratory", "--alpha"}


@pytest.mark.parametrize("command", sorted(OWN))
def test_each_command_offers_its_designs_options_and_no_other(command):
    from evalset.cli.vocabulary import options_of, runnable_commands

    found = {max(option.opts, key=len) for option in options_of(runnable_commands(main)[f"estimate {command}"])}
    shared = SHARED | (COMPARED if command.startswith("run") else {"--compare"} if command == "validate slice" else
                       set())
    assert found == OWN[command] | shared


def test_the_old_command_line_is_refused_naming_the_new_commands():
    result = invoke("--runs", "run", "--llm", "l", "--human", "h", "--slice", "s")
    assert result.exit_code == 2
    assert result.output.startswith("evalset: error: estimate is now commands by verb and design: `evalset estimate "
                                    "run slice|documents|holes|set RUN... ...`")


def test_the_spec_is_frozen_holds_tuples_and_the_default_contract_options():
    spec = RunSlice(runs=["a", "b"], llm="llm.qrels", human=["human.qrels"], slice_path="slice.json",
                         pairs=[["a", "b"]], metrics=["ndcg@10"])
    assert (spec.runs, spec.llm, spec.pairs, spec.metrics) == (("a", "b"), ("llm.qrels",), (("a", "b"),),
                                                               ("ndcg@10",))
    assert spec.options == ContractOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.alpha = 0.1  # type: ignore[misc]


def test_make_estimate_answers_a_spec_and_nothing_else():
    with pytest.raises(TypeError, match=r"^spec: expected one of evalset.estimate.spec's settings \(RunSlice, "
                                        r"...\), got list$"):
        make_estimate(["run"])


def test_the_lower_estimate_functions_declare_their_rules_from_the_settings():
    for function in (estimate_runs, set_estimate):
        assert function.RULES.items() <= EstimateSettings.RULES.items()
    with pytest.raises(InputError, match=r"^interval must be one of t, normal, got 'z'$"):
        estimate_runs({}, None, None, None, interval="z")
    with pytest.raises(InputError, match=r"^split must be one of test, dev, all, got 'train'$"):
        set_estimate(None, {}, split="train")
