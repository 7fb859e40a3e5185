"""Options built from the library's declared rules (:mod:`evalset.params`): a command never checks a value by
hand; its option's type is the rule the library function or settings class declares, so both refuse the same values
in the same words, and the help states the rule.

The owner of a rule is a function declared with :func:`evalset.params.validate_params`, a settings class with
``RULES``, or, where that owner lives in a module the command may not load before it runs (pandas, openai), the
rules mapping itself as :mod:`evalset.contract` declares it (its owner applies the same mapping): the option's
default is then given here, and ``tests/cli/test_ruled_options.py`` holds it to the owner's.
"""

from __future__ import annotations

import dataclasses
import inspect

import click

from evalset.contract import OUTPUT_FORMATS
from evalset.params import Choice, Interval, Length


class RuleType(click.ParamType):
    """A click type built from a declared rule (:mod:`evalset.params`): the option refuses, in the library's words
    and naming the option, what the library would refuse (``Invalid value for '--seed': must be a non-negative
    integer, got -1``). With ``percent``, a number may also be given as a percentage (``25%`` is 0.25)."""

    def __init__(self, rule: Interval | Length, separator: str | None = None, percent: bool = False):
        self.rule, self.separator, self.percent = rule, separator, percent
        self.name = "text" if isinstance(rule, Length) else "integer" if rule.kind is int else "number"

    def convert(self, value, param, ctx):
        if self.separator is not None and isinstance(value, str):  # a list in one value: 20,50,100
            return tuple(self.convert_one(item, param, ctx) for item in value.split(self.separator))
        return self.convert_one(value, param, ctx)

    def convert_one(self, value, param, ctx):
        if isinstance(self.rule, Length):
            if value not in self.rule:
                self.fail(f"must be {self.rule}, got {value!r}", param, ctx)
            return value
        given, rule = value, f"{self.rule}{', or a percentage (25%)' if self.percent else ''}"
        if isinstance(value, str):
            try:
                text = value.strip()
                if self.percent and text.endswith("%"):
                    value = float(text[:-1]) / 100
                else:
                    value = int(text) if self.rule.kind is int else float(value)
            except ValueError:
                self.fail(f"must be {rule}, got {given!r}", param, ctx)
        if value not in self.rule:
            percentage = self.percent and isinstance(given, str) and given.strip().endswith("%")
            self.fail(f"must be {rule}, got {given.strip() if percentage else value}", param, ctx)
        return self.rule.kind(value)


class RuleChoice(click.Choice):
    """A declared :class:`~evalset.params.Choice` as click's: the names as typed, the value as declared (``10``,
    not ``"10"``, for trec_eval's versions)."""

    def __init__(self, rule: Choice):
        super().__init__([str(value) for value in rule.values])
        self.declared = {str(value): value for value in rule.values}

    def convert(self, value, param, ctx):
        return self.declared[super().convert(str(value), param, ctx)]


class RuledOption(click.Option):
    """An option built by :func:`ruled`: it remembers the owner of its rule and the parameter's name there."""

    def __init__(self, *args, rule_owner=None, rule_name: str = "", **attrs):
        super().__init__(*args, **attrs)
        self.rule_owner, self.rule_name = rule_owner, rule_name


def ruled(owner, name: str, *decls: str, separator: str | None = None, percent: bool = False, **attrs):
    """``click.option(*decls)`` for the parameter ``name`` of ``owner`` (module docstring): its type is the declared
    rule, its help ends with the rule, and its default is the library's unless given here (a rules mapping has no
    defaults: give ``default``). With ``separator`` a number rule's option takes a list in one value (``--sizes
    20,50,100``: a tuple, each value by the rule); with ``percent`` a fraction's may be a percentage (``25%``)."""
    rules = owner if isinstance(owner, dict) else owner.RULES
    rule = rules[name]
    if isinstance(rule, Choice):
        attrs["type"] = RuleChoice(rule)
    else:
        attrs["type"] = RuleType(rule, separator, percent)
        text, bracket, default = attrs.get("help", "").partition(" [default")
        each = "each " if separator is not None else ""
        shares = ", or a percentage (25%)" if percent else ""
        attrs["help"] = f"{text.rstrip().removesuffix('.')}: {each}{rule}{shares}{bracket}{default}"
        if not bracket:
            attrs["help"] += "."
    if "default" not in attrs and not any(attrs.get(key) for key in ("multiple", "is_flag", "required")):
        if isinstance(owner, dict):
            raise TypeError(f"the option of {name} is built from a rules mapping: give its default")
        attrs["default"] = library_default(owner, name)
    if "default" in attrs:
        attrs.setdefault("show_default", attrs["default"] is not None)
    return click.option(*decls, cls=RuledOption, rule_owner=owner, rule_name=name, **attrs)


def format_option(formats: tuple[str, ...] = OUTPUT_FORMATS, help: str = "Output format."):
    """``--format``: how the command prints its result (:func:`evalset.cli.emit.emit`), one of ``formats``
    (default :data:`evalset.contract.OUTPUT_FORMATS`), the first the default."""
    return ruled({"output_format": Choice(formats)}, "output_format", "--format", "output_format",
                 default=formats[0], help=help)


def library_default(owner, name: str):
    """The default of ``owner``'s parameter or field ``name`` (None: none)."""
    if dataclasses.is_dataclass(owner):
        field = {field.name: field for field in dataclasses.fields(owner)}[name]
        return None if field.default is dataclasses.MISSING else field.default
    default = inspect.signature(owner).parameters[name].default
    return None if default is inspect.Parameter.empty else default
