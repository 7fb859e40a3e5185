"""A repeatable ``NAME=VALUE`` option for the fields of a settings class, each value by the field's declared rule
(:mod:`evalset.cli.ruled`): one option for settings a command rarely needs (``-c/--contract``), read from their owner,
never restated."""

from __future__ import annotations

import click

from evalset.cli.ruled import RuleChoice, RuleType, library_default
from evalset.params import Choice


class SettingType(click.ParamType):
    """``NAME=VALUE`` for one of ``names``, fields of the settings class ``owner``: the value converted and checked
    by the field's declared rule (as :func:`ruled` builds it), in the library's words, naming the setting."""

    name = "NAME=VALUE"

    def __init__(self, owner, names: tuple[str, ...]):
        self.owner, self.names = owner, names

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        key, equals, text = value.partition("=")
        key = key.strip().replace("-", "_")
        if not equals or key not in self.names:
            self.fail(f"expected NAME=VALUE, NAME one of {', '.join(self.names)}; got {value!r}", param, ctx)
        rule = self.owner.RULES[key]
        converter = RuleChoice(rule) if isinstance(rule, Choice) else RuleType(rule)
        try:
            return key, converter.convert(text.strip(), param, ctx)
        except click.BadParameter as exc:
            self.fail(f"{key}: {exc.message}", param, ctx)


def settings_option(owner, meanings: dict[str, str], *decls: str, help: str, default_note: str = "",
                    defaults: dict[str, str] | None = None):
    """A repeatable ``NAME=VALUE`` option for the fields of the settings class ``owner`` that ``meanings`` names
    (each by its declared rule, :class:`SettingType`), given to the command as a dict of the settings given; a
    setting given twice is refused. The help is ``help``, then each setting's values, its library default (with
    ``default_note``, such as "or the set's"; ``defaults``: a command's own, as text) and its meaning."""
    def collect(ctx: click.Context, param: click.Parameter, values: tuple[tuple[str, object], ...]) -> dict:
        given: dict = {}
        for key, value in values:
            if key in given:
                raise click.BadParameter(f"{key} given twice ({given[key]}, {value})", ctx=ctx, param=param)
            given[key] = value
        return given

    def shown(name: str) -> str:
        rule = owner.RULES[name]
        values = "|".join(map(str, rule.values)) if isinstance(rule, Choice) else "N"
        default = (defaults or {}).get(name, f"{library_default(owner, name)}{default_note}")
        return f"{name}={values} [{default}]: {meanings[name]}"

    return click.option(*decls, multiple=True, type=SettingType(owner, tuple(meanings)), callback=collect,
                        help=f"{help} (repeatable). " + "; ".join(map(shown, meanings)) + ".")
