"""A group whose first subcommand is also the group's own: ``evalset judge POOL_DIR`` is ``judge grade POOL_DIR``,
``evalset freeze LABELS`` is ``freeze set LABELS``; the other subcommands are named (``judge probe``, ``freeze
grow``)."""

from __future__ import annotations

import click


class DefaultCommandGroup(click.Group):
    """A group that runs ``default`` (one of its commands) when the first word names none of them."""

    def __init__(self, *args, default: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default, *args]
        return super().parse_args(ctx, args)
