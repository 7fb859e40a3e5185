"""Every declared rule is applied (issue 75): each public function declared with ``validate_params`` and each settings
class with ``RULES`` (a spec, ``JudgeSettings``, ``EvaluationContract``...) is found by walking the package, and each
of its ruled parameters is fed bad values generated from its own rule (below or above an interval, the wrong kind, a
name off a choice, a text too short or too long). Each must be refused by :class:`~evalset.errors.InputError` naming
the parameter, before any work: the other parameters take a good value of their rule, or a placeholder the body never
reaches. A rule declared but not applied (a ``__post_init__`` that forgot ``check_fields``, a wrapper that lost its
check) fails here; the self-test removes one rule's check to show it."""

import dataclasses
import importlib
import inspect
import math
import pkgutil

import pytest

import evalset
from evalset.errors import InputError
from evalset.params import Choice, Constraint, Length

PLACEHOLDER = object()  # a required parameter without a rule: the check comes first, the body never reads it


def bad_values(rule: Constraint) -> list[object]:
    """Values ``rule`` refuses, generated from it."""
    if isinstance(rule, Choice):
        return ["no-such-choice", True]
    if isinstance(rule, Length):
        return [*([""] if rule.low > 0 else []), "x" * (rule.high + 1), 3]
    values: list[object] = ["text", True, math.nan if rule.kind is float else 1.5]
    if rule.low is not None:
        values.append(rule.low - 1 if rule.kind is int else rule.low - 1.0)
    if rule.high is not None:
        values.append(rule.high + 1 if rule.kind is int else rule.high + 1.0)
    return values


def good_value(rule: Constraint) -> object:
    """A value ``rule`` accepts."""
    if isinstance(rule, Choice):
        return rule.values[0]
    if isinstance(rule, Length):
        return "x" * max(rule.low, 1)
    low = rule.low if rule.low is not None else 0
    value = rule.kind(low) if rule.kind is int else float(low)
    return value if value in rule else value + (1 if rule.kind is int else 0.5)


def owners() -> tuple[list, list]:
    """The functions declared with ``validate_params`` and the dataclasses with ``RULES``, across the package."""
    functions, classes = {}, {}
    for module in pkgutil.walk_packages(evalset.__path__, "evalset."):
        if module.name.endswith("__main__"):  # runs the command line when imported
            continue
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if name.startswith("_") or getattr(value, "__module__", None) != loaded.__name__:
                continue
            rules = getattr(value, "RULES", None)
            if not isinstance(rules, dict) or not rules:
                continue
            if inspect.isclass(value) and dataclasses.is_dataclass(value):
                classes[f"{loaded.__name__}.{name}"] = value
            elif inspect.isfunction(value):
                functions[f"{loaded.__name__}.{name}"] = value
    return sorted(functions.items()), sorted(classes.items())


FUNCTIONS, CLASSES = owners()


def call_with(target, parameters: dict[str, inspect.Parameter], rules: dict, name: str, value: object):
    """``target`` called with ``value`` for ``name`` and, for the other required parameters, a good value of their
    rule or the placeholder."""
    given = {name: value}
    for other, parameter in parameters.items():
        if other == name or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is inspect.Parameter.empty:
            given[other] = good_value(rules[other]) if other in rules else PLACEHOLDER
    return target(**given)


def refuses(target, parameters, rules, name) -> list[str]:
    """The bad values of ``name``'s rule that ``target`` does not refuse naming it."""
    missed = []
    for value in bad_values(rules[name]):
        try:
            call_with(target, parameters, rules, name, value)
        except InputError as error:
            if not str(error).startswith(f"{name} must be "):
                missed.append(f"{value!r}: {error}")
            continue
        except Exception as error:  # anything but the one-line refusal is a miss
            missed.append(f"{value!r}: {type(error).__name__}: {error}")
            continue
        missed.append(f"{value!r}: accepted")
    return missed


def test_the_walk_finds_the_owners_of_the_rules(record_property):
    parameters = sum(len(f.RULES) for _, f in FUNCTIONS) + sum(len(c.RULES) for _, c in CLASSES)
    assert len(FUNCTIONS) >= 15 and len(CLASSES) >= 8, (FUNCTIONS, CLASSES)
    names = {name.rsplit(".", 1)[1] for name, _ in CLASSES}
    assert {"EvaluationContract", "JudgeSettings", "CompareSpec", "PowerSpec", "CostSpec"} <= names
    record_property("fuzz", f"declared rules: {len(FUNCTIONS)} functions and {len(CLASSES)} settings classes, "
                            f"{parameters} ruled parameters, each fed bad values generated from its rule")


@pytest.mark.parametrize(("qualified", "function"), FUNCTIONS, ids=[name for name, _ in FUNCTIONS])
def test_every_ruled_parameter_of_a_function_refuses_what_its_rule_refuses(qualified, function):
    parameters = dict(inspect.signature(function).parameters)
    missed = {name: refuses(function, parameters, function.RULES, name) for name in function.RULES}
    assert not {name: values for name, values in missed.items() if values}, qualified


@pytest.mark.parametrize(("qualified", "kind"), CLASSES, ids=[name for name, _ in CLASSES])
def test_every_ruled_field_of_a_settings_class_refuses_what_its_rule_refuses(qualified, kind):
    fields = {field.name: inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY,
                                            default=inspect.Parameter.empty
                                            if field.default is dataclasses.MISSING
                                            and field.default_factory is dataclasses.MISSING else None)
              for field in dataclasses.fields(kind) if field.init}
    missed = {name: refuses(kind, fields, kind.RULES, name) for name in kind.RULES if name in fields}
    assert not {name: values for name, values in missed.items() if values}, qualified


def test_a_rule_whose_check_is_removed_is_found(monkeypatch):
    """The self-test: a settings class whose check of one field is skipped fails the walk's test for it."""
    from evalset.contract import EvaluationContract

    rules = {name: rule for name, rule in EvaluationContract.RULES.items() if name != "rel_level"}
    monkeypatch.setattr(EvaluationContract, "__post_init__", lambda self: [
        object.__setattr__(self, name, getattr(self, name)) for name in rules])
    fields = {field.name: inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=None)
              for field in dataclasses.fields(EvaluationContract)}
    assert refuses(EvaluationContract, fields, EvaluationContract.RULES, "rel_level")  # accepted: found
