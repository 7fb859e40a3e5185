"""``--guideline``: a guideline file, or the name of one shipped with evalset (``relevance-v2``); one option for
every command that reads a guideline."""

from __future__ import annotations

import click


class GuidelinePath(click.Path):
    """A guideline file, or the name of one shipped with evalset (``relevance-v2``); otherwise click's ``Path``."""

    name = "guideline"

    def convert(self, value, param, ctx):
        import os

        from evalset.io.guideline import guideline_file, names_a_guideline, shipped_guidelines

        path = guideline_file(value)
        if not os.path.exists(path) and (self.exists or names_a_guideline(value)):
            self.fail(f"no such file, and no guideline shipped with evalset is named {value!r} (shipped: "
                      f"{', '.join(shipped_guidelines())})", param, ctx)
        return super().convert(path, param, ctx)


def guideline_option(text: str, dest: str | None = None, required: bool = False, exists: bool = False):
    """``--guideline``: a file, or a shipped guideline's name (:class:`GuidelinePath`); ``text`` is its help."""
    return click.option("--guideline", *([dest] if dest else []), required=required,
                        type=GuidelinePath(exists=exists, dir_okay=False),
                        help=f"{text} A file, or a guideline shipped with evalset by its name: relevance-v2 "
                             "(relevance-v1 is kept for the sets it made).")
