"""Options built from declared rules (evalset.cli.ruled): each rules mapping of evalset.contract is applied by the
library functions and settings classes it names, and every option built from a rule shows its owner's default (or
none: the library, a spec or a set decides)."""


from pathlib import Path

import click
import pytest

from evalset import contract
from evalset.cli import main
from evalset.cli.ruled import RuledOption, library_default, ruled
from evalset.cli.settings_option import SettingsOption
from evalset.params import POSITIVE_INT


def owners() -> dict[str, list]:
    """The library owners that apply each rules mapping of :mod:`evalset.contract`."""
    from evalset.agreement import agreement_report, analyse_agreement
    from evalset.agreement.recheck import recheck
    from evalset.comparing import explain_runs
    from evalset.estimate import select_slice
    from evalset.estimate.documents.holesizing import size_holes
    from evalset.estimate.documents.select import select_documents
    from evalset.evaluation import Evaluation
    from evalset.io.annotations import settle_repeats
    from evalset.io.setfolder import SetContract, select_split
    from evalset.judge.job import judge_pool
    from evalset.judge.probing import probe_pool
    from evalset.labelstudio.blind import push_blind
    from evalset.labelstudio.push import push, push_tasks
    from evalset.pooling import PoolSpec, build_pool
    from evalset.quality import plan_gold, prepare_gold_push
    from evalset.reusability import analyse_reusability
    from evalset.sampling import sample_log
    from evalset.scoring import score_runs
    from evalset.sets import diff_versions, freeze

    return {
        "SPLIT_RULES": [Evaluation.on_set, diff_versions, select_split], "REPEATS_RULES": [settle_repeats],
        "AGREEMENT_REPORT_RULES": [agreement_report, analyse_agreement], "AGREEMENT_RULES": [analyse_agreement],
        "RECHECK_RULES": [recheck], "SAMPLE_RULES": [sample_log],
        "POOL_SPEC_RULES": [PoolSpec, build_pool],
        "PUSH_RULES": [push, push_blind, push_tasks], "GOLD_PUSH_RULES": [prepare_gold_push, plan_gold],
        "PRICE_RULES": [judge_pool, probe_pool], "JUDGE_JOB_RULES": [judge_pool], "PROBE_RULES": [probe_pool],
        "FREEZE_RULES": [freeze],
        "SET_CONTRACT_RULES": [SetContract], "REUSABILITY_RULES": [analyse_reusability],
        "SELECT_RULES": [select_slice], "SCORE_RULES": [score_runs], "DOCUMENT_SAMPLE_RULES": [select_documents],
        "HOLE_SIZING_RULES": [select_documents, size_holes], "EXPLAIN_RULES": [explain_runs],
    }


def ruled_options(kind: type = RuledOption) -> list[tuple[str, click.Option]]:
    """Every option of every command built by :func:`ruled` (``kind``: or by :func:`settings_option`), with the
    command's name."""
    found, context = [], click.Context(main)

    def walk(command: click.Command, name: str) -> None:
        if isinstance(command, click.Group):
            for sub in command.list_commands(context):
                walk(command.get_command(context, sub), f"{name} {sub}".strip())
        found.extend((name, param) for param in command.params if isinstance(param, kind))

    walk(main, "")
    return found


def rules_mappings() -> dict[str, dict]:
    """Every rules mapping a command reads without its owner: :mod:`evalset.contract`'s and each room's spec's."""
    import importlib

    rooms = sorted(path.parent.name for path in Path(contract.__file__).parent.glob("*/spec.py"))
    homes = [contract, *(importlib.import_module(f"evalset.{room}.spec") for room in rooms)]
    return {name: value for home in homes for name, value in vars(home).items()
            if name.endswith("_RULES") and isinstance(value, dict)}


def test_each_rules_mapping_is_applied_by_the_owners_it_names():
    mappings = rules_mappings()
    named = owners()
    assert set(mappings) == set(named)
    for name, applied_by in named.items():
        rules = mappings[name]
        for owner in applied_by:
            assert {key: owner.RULES[key] for key in rules} == rules, (name, owner)


def test_every_ruled_option_shows_its_owners_default_or_none():
    named = {id(rules_mappings()[name]): applied_by for name, applied_by in owners().items()}
    options = ruled_options()
    assert len({command for command, _ in options}) >= 14
    for command, option in options:
        if option.rule_name == "output_format":  # emit's, the command line's own (ruled.format_option)
            continue
        owner = option.rule_owner
        applied_by = named[id(owner)] if isinstance(owner, dict) else [owner]
        defaults = [library_default(candidate, option.rule_name) for candidate in applied_by]
        shown = None if option.required or option.multiple else option.default
        assert shown is None or shown in defaults, (command, option.name, defaults)


def test_a_choice_gives_the_value_as_declared_and_a_mapping_needs_a_default():
    command = main.get_command(click.Context(main), "score")
    contract = next(param for param in command.params if param.name == "contract")
    assert contract.type.convert("trec_eval_version=9", contract, None) == ("trec_eval_version", 9)
    assert contract.callback(None, contract, ()) == {}  # none given: the contract's, or the set's
    with pytest.raises(TypeError, match="give its default"):
        ruled({"depth": POSITIVE_INT}, "depth", "--depth")


def test_every_settings_option_shows_its_owners_defaults_or_none():
    named = {id(rules_mappings()[name]): applied_by for name, applied_by in owners().items()}
    options = ruled_options(SettingsOption)
    assert {option.name for _, option in options} == {"contract", "client", "layout", "merge", "gold_rule"}
    assert {option.name for _, option in options if not isinstance(option.rule_owner, dict)} == {
        "contract", "client", "layout", "merge", "gold_rule"}  # defaults read from the settings class, not restated
    for command, option in options:
        owner = option.rule_owner
        applied_by = named[id(owner)] if isinstance(owner, dict) else [owner]
        for name, shown in option.shown_defaults.items():
            defaults = [library_default(candidate, name) for candidate in applied_by]
            assert shown is None or shown in defaults, (command, name, shown, defaults)
