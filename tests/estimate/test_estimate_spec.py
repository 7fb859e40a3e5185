"""EstimateSpec (evalset.estimate.spec): each field's declared rule and each rule between fields refuses in one line
naming the option, alike from the spec and from the library call's keywords (make_estimate); the commands, one per
verb and design, offer only their design's options, so that the rules a command line can still break are few, and
refuse in one line too (exit 2, ``evalset: error: ...``); every check comes before a file is read (the paths here
do not exist)."""

import dataclasses

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.contract import ContractOptions
from evalset.errors import InputError
from evalset.estimate import EstimateSpec, estimate_runs, make_estimate
from evalset.estimate.frozen import set_estimate

SLICE = {"runs": ("run",), "llm": ("llm.qrels",), "human": ("human.qrels",), "slice_path": "slice.json"}
"""An estimate from a slice: settings that pass every rule."""
SAMPLE = {"runs": ("run",), "design": "documents", "sample_path": "sample", "human": ("human.qrels",),
          "llm": ("llm.qrels",)}
"""The document design's estimate from a sample record."""


def refused(message, **settings):
    """Both the spec and the library call refuse ``settings`` with exactly ``message``."""
    for build in (EstimateSpec, make_estimate):
        with pytest.raises(InputError) as caught:
            build(**settings)
        assert str(caught.value) == message


def invoke(*args):
    return CliRunner().invoke(main, ["estimate", *map(str, args)])


def one_line(result, message):
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == f"evalset: error: {message}\n"


@pytest.mark.parametrize(("name", "value", "message"), [
    ("design", "slice", "design must be one of queries, documents, got 'slice'"),
    ("split", "train", "split must be one of test, dev, all, got 'train'"),
    ("planned", 0, "planned must be a positive integer, got 0"),
    ("alpha", 1.5, "alpha must be a number in (0, 1), got 1.5"),
    ("level", 0.0, "level must be a number in (0, 1), got 0.0"),
    ("interval", "z", "interval must be one of t, normal, got 'z'"),
    ("draws", 0, "draws must be an integer in [1, 1000000], got 0"),
    ("draws", 1_000_001, "draws must be an integer in [1, 1000000], got 1000001"),
    ("slice_size", 0, "slice_size must be a positive integer, got 0"),
    ("seed", -1, "seed must be a non-negative integer, got -1"),
    ("conflicting_grades", "last", "conflicting_grades must be one of refuse, latest, first, got 'last'"),
    ("budget", 0.0, "budget must be a number > 0, got 0.0"),
])
def test_each_fields_rule_refuses_in_one_line(name, value, message):
    EstimateSpec(**SLICE)  # the base passes
    refused(message, **SLICE, **{name: value})


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


RULES_BETWEEN = [
    ({**SLICE, "pairs": [("a", "a")]}, "comparison a:a compares a run with itself: give two different runs"),
    ({**SLICE, "override_contract": True},
     "--override-contract goes with --set: it allows contract options that contradict the set's contract"),
    ({**SLICE, "other_judge": True},
     "--other-judge goes with --set and --llm: LLM labels of another judge than the set's"),
    ({"runs": ("run",), "set_path": "set", "ensemble": True},
     "--ensemble calibrates the LLM files' judges on the human slice: give it with --llm, --human and --slice or "
     "--simulate (the document design calibrates its judges itself)"),
    ({**SLICE, "budget": 100.0}, "--sample, --no-llm and --budget go with the document design (--design documents)"),
    ({**SLICE, "runs": ()}, "give --runs and one of: --set; --llm, --human and --slice (an estimate); --llm, --human "
                            "and --simulate R --size N (a validation)"),
    ({**SLICE, "set_path": "set"}, "give --runs and one of: --set; --llm, --human and --slice (an estimate); --llm, "
                                   "--human and --simulate R --size N (a validation)"),
    ({**SLICE, "human": ()}, "give --runs and one of: --set; --llm, --human and --slice (an estimate); --llm, "
                             "--human and --simulate R --size N (a validation)"),
    ({"runs": ("run",), "set_path": "set", "human": ("human.qrels",)},
     "with --set, its labels are the grades: give no --human (--llm: another judge's)"),
    ({**SLICE, "slice_path": None, "draws": 10},
     "--simulate needs --size: the human-graded queries of each simulated slice"),
    ({**SLICE, "slice_size": 5}, "--size is the size of the slices --simulate draws: give --simulate R too"),
    ({**SAMPLE, "runs": ()}, "give --runs: the run files or folders to estimate"),
    ({**SAMPLE, "interval": "normal"},
     "the document design's intervals are its own (\"this set\" and \"new queries\"): give no --interval"),
    ({"runs": ("run",), "design": "documents", "set_path": "set", "budget": 100.0},
     "a set frozen with a document sample holds its record and its grades: give the set alone (no --simulate, "
     "--budget, --slice, --size, --llm, --human or --no-llm), or with --sample, a sample of its holes, and "
     "their grades"),
    ({"runs": ("run",), "design": "documents", "set_path": "set", "sample_path": "sample", "budget": 100.0},
     "--set with --sample estimates from a sample of the set's holes: give no --simulate, --budget, --slice or "
     "--size"),
    ({"runs": ("run",), "design": "documents", "set_path": "set", "sample_path": "sample", "llm": ("llm",)},
     "the document design needs the human grades (--human): of the sampled pairs, or of every pair with "
     "--simulate"),
    ({**SAMPLE, "slice_path": "slice.json"},
     "the document design reads a sample record (--sample), not a slice: give no --slice or --size"),
    ({**SAMPLE, "draws": 10, "budget": 100.0},
     "give the document design one of: --sample (an estimate); --simulate R and --budget B (a validation)"),
    ({**SAMPLE, "budget": 100.0}, "--budget goes with --simulate (the sample record holds its own budget)"),
    ({**SAMPLE, "sample_path": None, "draws": 10},
     "--simulate needs --budget B with the document design: the human judgments expected per simulated sample"),
    ({**SAMPLE, "human": ()}, "the document design needs the human grades (--human): of the sampled pairs, or of "
                              "every pair with --simulate"),
    ({**SAMPLE, "no_llm": True}, "give the LLM grades of every pooled pair (--llm), or --no-llm for "
                                 "Horvitz-Thompson's estimator: one of them"),
    ({**SAMPLE, "llm": ()}, "give the LLM grades of every pooled pair (--llm), or --no-llm for Horvitz-Thompson's "
                            "estimator: one of them"),
]


@pytest.mark.parametrize(("settings", "message"), RULES_BETWEEN, ids=lambda value: str(value)[:40])
def test_each_rule_between_fields_refuses_in_one_line(settings, message):
    refused(message, **settings)


@pytest.mark.parametrize(("line", "message"), [
    (["run", "slice", "a", "--llm", "l", "--human", "h", "--slice", "s", "--compare", "a:a"],
     "comparison a:a compares a run with itself: give two different runs"),
    (["run", "documents", "a", "--sample", "s", "--human", "h"],
     "give the LLM grades of every pooled pair (--llm), or --no-llm for Horvitz-Thompson's estimator: one of them"),
    (["validate", "documents", "a", "--human", "h", "--llm", "l", "--no-llm", "--resamples", "5", "--budget", "10"],
     "give the LLM grades of every pooled pair (--llm), or --no-llm for Horvitz-Thompson's estimator: one of them"),
    (["run", "set", "a", "--set", "s", "--other-judge"],
     "--other-judge goes with --set and --llm: LLM labels of another judge than the set's"),
    (["validate", "holes", "a", "--set", "s", "--groups", "g", "--llm", "l", "--resamples", "5"],
     "--groups needs one of --fraction P (the share of each run's holes a simulated sample draws: 0.25 or 25%) or "
     "--precision SE (each run's share sized for it)"),
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
    spec = EstimateSpec(runs=["a", "b"], llm="llm.qrels", human=["human.qrels"], slice_path="slice.json",
                        pairs=[["a", "b"]], metrics=["ndcg@10"])
    assert (spec.runs, spec.llm, spec.pairs, spec.metrics) == (("a", "b"), ("llm.qrels",), (("a", "b"),),
                                                               ("ndcg@10",))
    assert spec.options == ContractOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.alpha = 0.1  # type: ignore[misc]


def test_the_settings_are_given_as_a_spec_or_as_keywords_never_both():
    with pytest.raises(TypeError, match="not both"):
        make_estimate(EstimateSpec(**SLICE), alpha=0.1)
    with pytest.raises(TypeError, match=r"^spec: expected EstimateSpec or None, got list \(give the settings as "
                                        r"keywords\)$"):
        make_estimate(["run"], llm=["llm.qrels"])  # the runs were the first argument before the spec


def test_the_lower_estimate_functions_declare_their_rules_from_the_spec():
    for function in (estimate_runs, set_estimate):
        assert function.RULES.items() <= EstimateSpec.RULES.items()
    with pytest.raises(InputError, match=r"^interval must be one of t, normal, got 'z'$"):
        estimate_runs({}, None, None, None, interval="z")
    with pytest.raises(InputError, match=r"^split must be one of test, dev, all, got 'train'$"):
        set_estimate(None, {}, split="train")
