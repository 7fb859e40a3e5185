"""The command line's vocabulary (issue 75): one spelling per concept, an old spelling refused in one line naming
the new one, and a surface that only shrinks.

The surface is counted by click's introspection of every runnable command (a group that runs on its own, such as
``estimate``, counts as one): options a user sees in ``--help``, and their distinct long names."""

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.cli.judge_endpoint import CLIENT_SETTINGS
from evalset.cli.options import CONTRACT_OPTIONS
from evalset.cli.vocabulary import RENAMED, RENAMED_IN, SETTINGS_OPTIONS, options_of, runnable_commands
from evalset.contract import EvaluationContract

COMMANDS = runnable_commands(main)
SURFACE = {"plan power": 19, "plan cost": 14, "freeze set": 15, "freeze grow": 4, "judge probe": 19,
           "compare": 20, "explain": 11, "holes": 17, "judge grade": 17, "agreement": 20, "sample": 17,
           "judge recheck": 14, "push": 15, "pull": 13, "reusability": 13, "estimate select slice": 9,
           "estimate select documents": 5, "estimate select holes": 11, "pool": 12,
           "report": 11, "score": 9, "judge ensemble": 6, "verify": 3, "diff": 3, "estimate run slice": 14,
           "estimate run documents": 13, "estimate run holes": 16, "estimate run set": 15,
           "estimate validate slice": 13, "estimate validate documents": 11, "estimate validate holes": 16}
"""Each command's options as of this change (before: 38 plan, now plan power and plan cost; 35 estimate, 32 compare,
30 agreement, ...; estimate's 30 in one command with seven modes, now seven commands by verb and design, none over
16)."""
DISTINCT = 117  # 157 before -c (the contract's settings), -m, --resamples, --level everywhere, -l (sample's log
# layout), agreement's one output folder, --guideline taking a bare scale, --merge and --gold-rule settings (118);
# then compare's --decide (for --test and --interval) and --min-effect (issue 68); estimate by verb and design
# (issue 76): --resamples for --simulate (simulated designs, as plan power's), and no --design


def test_the_surface_only_shrinks():
    counts = {path: len(options_of(command)) for path, command in COMMANDS.items()}
    grown = {path: (count, SURFACE.get(path)) for path, count in counts.items() if count > SURFACE.get(path, 20)}
    assert not grown, f"commands with more options than before (now, then): {grown}"
    names = {max(option.opts, key=len) for command in COMMANDS.values() for option in options_of(command)}
    assert len(names) <= DISTINCT, sorted(names)
    assert set(counts) == set(SURFACE)  # a new command starts at 20 options at most


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_an_old_spelling_is_refused_in_one_line_naming_the_new_one(old):
    new = RENAMED[old]
    option = {"-c": "--contract", "-s": "--client"}.get(new.split()[0], new.split("/")[-1])
    why = SETTINGS_OPTIONS.get(new.split()[0], "one spelling for one concept on every command")
    offered = [path for path, command in COMMANDS.items()
               if any(option in opt.opts for opt in options_of(command))]
    assert offered, option
    for path in offered:
        result = CliRunner().invoke(main, [*path.split(), old, "x"])
        assert result.exit_code == 2, (path, result.output)
        assert result.output.splitlines() == [f"evalset: error: {old} is now {new} ({why})"], path


FOLDED = [("judge recheck", "--scale"), ("judge ensemble", "--scale")] + [
    (path, old) for path in ("sample", "agreement", "freeze set", "pull")
    for old in RENAMED_IN[path.split()[-1]]]


@pytest.mark.parametrize(("path", "old"), FOLDED)
def test_an_option_folded_into_another_of_its_command_is_refused_naming_it(path, old):
    result = CliRunner().invoke(main, [*path.split(), old, "x"])
    assert result.exit_code == 2
    new = RENAMED_IN[path.split()[-1]][old]
    why = SETTINGS_OPTIONS.get(new.split()[0], "one spelling for one concept on every command")
    assert result.output.splitlines() == [f"evalset: error: {old} is now {new} ({why})"]


def test_no_command_offers_an_old_spelling_and_every_contract_setting_is_spelt_one_way():
    for path, command in COMMANDS.items():
        spelled = {opt for option in options_of(command) for opt in option.opts}
        assert not spelled & set(RENAMED), path
        for option in options_of(command):
            if option.name in ("contract", "client"):
                assert option.opts == {"contract": ["-c", "--contract"], "client": ["-s", "--client"]}[option.name]
    assert set(CONTRACT_OPTIONS) == set(EvaluationContract.RULES)
    assert {new.split("=")[0].removeprefix("-c ") for new in RENAMED.values() if new.startswith("-c ")} == set(
        CONTRACT_OPTIONS)
    assert {new.split("=")[0].removeprefix("-s ") for new in RENAMED.values() if new.startswith("-s ")} | {
        "seed"} == set(CLIENT_SETTINGS)


def test_the_readmes_changelog_holds_every_renamed_spelling():
    readme = Path(__file__).resolve().parents[2].joinpath("README.md").read_text()
    rows = re.findall(r"^\| `([^`]+)`([^|]*) \| (.+) \|$", readme.split("## Changelog")[1], re.MULTILINE)
    renamed = RENAMED.items() | {(old, new) for names in RENAMED_IN.values() for old, new in names.items()}
    for old, new in renamed:  # a row whose old spelling names it, and whose new one starts as the refusal's
        assert any(old in was.replace("[", " ").replace("]", " ").split() and new.strip("`").split()[0] in now
                   for was, _, now in rows), (old, new)
    commands = {was.split()[0]: now for was, _, now in rows if not was.startswith("-") and was.split()[0] != "estimate"}
    assert [now.split(" POOL")[0] for was, _, now in rows if was.startswith("estimate select")] == [
        f"`estimate select {drawn}" for drawn in ("slice", "documents", "holes")]
    assert commands == {"freeze": "`freeze grow LABELS --sample HOLES`", "plan": "`plan power` and `plan cost`",
                        "compare": "`evalset holes -o DIR`", "sample": "`-l format=tsv\\|csv\\|jsonl\\|parquet` "
                        "(`--format` prints the result: table\\|json)",
                        "agreement": "`agreement -o DIR` (the report in DIR/agreement.json; stdout has it in --format)",
                        "report": "`report SET RUN...` (the runs after the set, as `score` takes them)"}
    assert "| `compare --why [--epsilon E] [--top N]` | `evalset explain` |" in readme


RUNS_AS_ARGUMENTS = {"pool", "score", "compare", "explain", "holes", "reusability", "plan cost", "plan power", "report",
                     *(f"estimate {verb} {design}" for verb in ("run", "validate") for design in ("slice", "documents",
                                                                                                  "holes")),
                     "estimate run set"}
RUNS_AS_OPTION = {"judge recheck", "agreement", "diff", "estimate select holes"}


def test_runs_are_given_one_way_on_each_command_as_the_vocabulary_says():
    table = Path(__file__).resolve().parents[2].joinpath("docs", "vocabulary.md").read_text()
    said = table.split("Runs are given one way on each command")[1].split("No command takes both")[0]
    ways = {}
    for path, command in COMMANDS.items():
        argument = any(isinstance(param, click.Argument) and param.name in ("runs", "candidates")
                       for param in command.params)
        option = any("--runs" in option.opts for option in options_of(command))
        assert not (argument and option), path
        if argument or option:
            ways[path] = "argument" if argument else "option"
            assert f"`{path}`" in said, path
    assert {path for path, way in ways.items() if way == "argument"} == RUNS_AS_ARGUMENTS
    assert {path for path, way in ways.items() if way == "option"} == RUNS_AS_OPTION


def test_a_contract_setting_is_checked_by_the_contracts_own_rule_naming_it():
    def said(*args):
        result = CliRunner().invoke(main, ["score", *args])
        assert result.exit_code == 2
        return result.output.strip()

    prefix = "evalset: error: Invalid value for '-c' / '--contract': "
    assert said("-c", "rel_level=0") == prefix + "rel_level: must be a positive integer, got 0"
    assert said("-c", "ties=random") == prefix + ("ties: 'random' is not one of 'trec', 'run', 'docid', "
                                                  "'expected'.")
    assert said("-c", "tie=run") == prefix + ("expected NAME=VALUE, NAME one of rel_level, gain, ties, missing, "
                                              "undefined, unjudged, trec_eval_version; got 'tie=run'")
    assert said("-c", "ties=run", "-c", "ties=trec") == prefix + "ties given twice (run, trec)"


def test_every_help_fits_on_one_screen():
    """At most 60 lines at 100 columns: what a setting or a measure means is one `-c help` or `-m help` away."""
    runner = CliRunner()
    heights = {path: len(runner.invoke(main, [*path.split(), "--help"], terminal_width=100).output.splitlines())
               for path in ["", *COMMANDS]}
    assert {path: height for path, height in heights.items() if height > 60} == {}


def shown_default(option: click.Option) -> str | None:
    """The default an option shows: its own, or the one its help states (``[default: 20191, or the spec's]``)."""
    if option.default not in (None, (), False) and not isinstance(option.default, type(click.core.UNSET)):
        return str(option.default)
    said = re.search(r"[Dd]efault:? ([^\]();]+)", option.help or "")
    return said.group(1).split(", or ")[0].strip().rstrip(".") if said else None


def test_the_vocabulary_table_holds_every_shared_option_and_its_default():
    table = Path(__file__).resolve().parents[2].joinpath("docs", "vocabulary.md").read_text()
    rows = re.findall(r"^\| (`.+?) \| .+ \| (.+) \|$", table, re.MULTILINE)
    defaults = {max(spelling.split()[0].split("/"), key=len): default for options, default in rows
                for spelling in re.findall(r"`([^`]+)`", options)}
    offered: dict[str, list[tuple[str, click.Option]]] = {}
    for path, command in COMMANDS.items():
        for option in options_of(command):
            offered.setdefault(max(option.opts, key=len), []).append((path, option))
    assert {name for name, where in offered.items() if len(where) >= 3} <= set(defaults)
    checked = 0
    for name, default in defaults.items():
        assert name in offered, name
        literal = re.match(r"`([^`]+)`", default)
        if not literal:  # per command, none, off, the contract's
            continue
        exceptions = dict(re.findall(r"`([a-z ]+)`(?:, `[a-z ]+`)*: `([^`]+)`", default))
        for path, option in offered[name]:
            assert shown_default(option) == exceptions.get(path, literal.group(1)), (name, path, option.help)
            checked += 1
    assert checked >= 40


@pytest.mark.parametrize(("command", "option", "first"), [
    ("score", "-c", "rel_level          binary measures' relevant grade"),
    ("judge grade", "-s", "concurrency  requests in flight"),
    ("sample", "-l", "format            tsv, csv, jsonl or parquet (none: from the file name; .log is TSV)"),
    ("freeze set", "--merge", "rule      median, majority, annotator-priority, or crowd-kit's dawid-skene, one-coin, "
                              "mace, glad (pip install 'evalset[quality]'); ties and large gaps are unresolved "
                              "(--merge dawid-skene: the rule alone)"),
])
def test_a_settings_option_given_help_says_what_each_setting_means_and_runs_nothing(command, option, first):
    result = CliRunner().invoke(main, [*command.split(), option, "help"])
    assert result.exit_code == 0 and result.output.splitlines()[0] == first
    settings = next(opt for opt in options_of(COMMANDS[command]) if option in opt.opts)
    assert len(result.output.splitlines()) == len(settings.type.names)
