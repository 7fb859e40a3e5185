"""A repeatable ``NAME=VALUE`` option for the fields of a settings class, each value by the field's declared rule
(:mod:`evalset.cli.ruled`): one option for settings a command rarely needs (``-c/--contract``, the judge's
``-s/--client``), read from their owner, never restated. Where the owner lives in a module a command may not load
before it runs (openai), its rules mapping is the owner and the defaults are given here
(``tests/cli/test_ruled.py`` holds them to the owner's, as it holds :func:`~evalset.cli.ruled.ruled`'s)."""

from __future__ import annotations

import click

from evalset.cli.ruled import RuleChoice, RuleType, library_default
from evalset.params import Choice, Length


class SettingType(click.ParamType):
    """``NAME=VALUE`` for one of ``names``, fields of a settings class whose declared rules are ``rules``: the value
    converted and checked by the field's rule (as :func:`ruled` builds it), in the library's words, naming it."""

    name = "NAME=VALUE"

    def __init__(self, rules: dict, names: tuple[str, ...], meanings: str = "", bare: str | None = None):
        self.rules, self.names, self.meanings, self.bare = rules, names, meanings, bare

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        if value.strip() == "help" and self.meanings:  # -c help: what each setting means, then stop
            click.echo(self.meanings)
            ctx.exit()
        if self.bare and "=" not in value:  # --merge median: the setting given bare
            value = f"{self.bare}={value}"
        key, equals, text = value.partition("=")
        key = key.strip().replace("-", "_")
        if not equals or key not in self.names:
            self.fail(f"expected NAME=VALUE, NAME one of {', '.join(self.names)}; got {value!r}", param, ctx)
        rule = self.rules[key]
        converter = RuleChoice(rule) if isinstance(rule, Choice) else RuleType(rule)
        try:
            return key, converter.convert(text.strip(), param, ctx)
        except click.BadParameter as exc:
            self.fail(f"{key}: {exc.message}", param, ctx)


class SettingsOption(click.Option):
    """An option built by :func:`settings_option`: it remembers the owner of its rules and the defaults it shows."""

    def __init__(self, *args, rule_owner=None, shown_defaults: dict | None = None, **attrs):
        super().__init__(*args, **attrs)
        self.rule_owner, self.shown_defaults = rule_owner, shown_defaults or {}


def settings_option(owner, meanings: dict[str, str], *decls: str, help: str, default_note: str = "",
                    defaults: dict[str, object] | None = None, bare: str | None = None):
    """A repeatable ``NAME=VALUE`` option for the fields of the settings class ``owner`` (or of the owner of the
    rules mapping ``owner``, with every default in ``defaults``) that ``meanings`` names, each by its declared rule
    (:class:`SettingType`), given to the command as a dict of the settings given; a setting given twice is refused.
    The help is ``help`` (then ``default_note``, such as ", or the set's"), then each setting's values and its default
    (the library's, or a command's own in ``defaults``; ``none``: no value, the library decides); ``-c help`` (the
    option's short name, then ``help``) prints what each means and exits, so that --help fits on a screen. With
    ``bare``, a value without ``NAME=`` is that setting's (``--merge median``)."""
    rules = owner if isinstance(owner, dict) else owner.RULES
    shown_defaults = {name: defaults[name] if defaults and name in defaults else library_default(owner, name)
                      for name in meanings}

    def collect(ctx: click.Context, param: click.Parameter, values: tuple[tuple[str, object], ...]) -> dict:
        given: dict = {}
        for key, value in values:
            if key in given:
                raise click.BadParameter(f"{key} given twice ({given[key]}, {value})", ctx=ctx, param=param)
            given[key] = value
        return given

    def shown(name: str) -> str:
        rule = rules[name]
        values = "|".join(map(str, rule.values)) if isinstance(rule, Choice) else "TEXT" if isinstance(
            rule, Length) else "N"
        default = "none" if shown_defaults[name] is None else shown_defaults[name]
        return f"{name}={values} [{default}]"

    width = max(map(len, meanings))
    listing = "\n".join(f"{name:<{width}}  {meanings[name]}" for name in meanings)
    return click.option(*decls, cls=SettingsOption, rule_owner=owner, shown_defaults=shown_defaults, multiple=True,
                        type=SettingType(rules, tuple(meanings), listing, bare), callback=collect,
                        help=f"{help} (repeatable; [default]{default_note}; {decls[0]} help: what each means): "
                             + ", ".join(map(shown, meanings)) + ".")
