"""Options built from the library's declared rules (:mod:`evalset.params`): a command never checks a value by
hand; its option's type is the rule the library function or settings class declares, so both refuse the same values
in the same words, and the help states the rule."""

from __future__ import annotations

import dataclasses
import inspect

import click

from evalset.params import Choice, Interval


class RuleType(click.ParamType):
    """A click type built from a declared rule (:mod:`evalset.params`): the option refuses, in the library's words
    and naming the option, what the library would refuse (``Invalid value for '--seed': must be a non-negative
    integer, got -1``)."""

    def __init__(self, rule: Interval, separator: str | None = None):
        self.rule, self.separator = rule, separator
        self.name = "integer" if rule.kind is int else "number"

    def convert(self, value, param, ctx):
        if self.separator is not None and isinstance(value, str):  # a list in one value: 20,50,100
            return tuple(self.convert_one(item, param, ctx) for item in value.split(self.separator))
        return self.convert_one(value, param, ctx)

    def convert_one(self, value, param, ctx):
        if isinstance(value, str):
            try:
                value = int(value.strip()) if self.rule.kind is int else float(value)
            except ValueError:
                self.fail(f"must be {self.rule}, got {value!r}", param, ctx)
        if value not in self.rule:
            self.fail(f"must be {self.rule}, got {value}", param, ctx)
        return self.rule.kind(value)


def ruled(owner, name: str, *decls: str, separator: str | None = None, **attrs):
    """``click.option(*decls)`` for the parameter ``name`` of ``owner`` (a function declared with
    :func:`evalset.params.validate_params`, or a settings class with ``RULES``): its type is the declared rule, its
    help ends with the rule, and its default is the library's unless given here. With ``separator`` a number rule's
    option takes a list in one value (``--sizes 20,50,100``: a tuple, each value by the rule)."""
    rule = owner.RULES[name]
    if isinstance(rule, Choice):
        attrs["type"] = click.Choice([str(value) for value in rule.values])
    else:
        attrs["type"] = RuleType(rule, separator)
        text, bracket, default = attrs.get("help", "").partition(" [default")
        each = "each " if separator is not None else ""
        attrs["help"] = f"{text.rstrip().removesuffix('.')}: {each}{rule}{bracket}{default}"
        if not bracket:
            attrs["help"] += "."
    if "default" not in attrs and not attrs.get("multiple") and not attrs.get("is_flag"):
        attrs["default"] = _library_default(owner, name)
        attrs.setdefault("show_default", attrs["default"] is not None)
    return click.option(*decls, **attrs)


def _library_default(owner, name: str):
    if dataclasses.is_dataclass(owner):
        field = {field.name: field for field in dataclasses.fields(owner)}[name]
        return None if field.default is dataclasses.MISSING else field.default
    default = inspect.signature(owner).parameters[name].default
    return None if default is inspect.Parameter.empty else default
