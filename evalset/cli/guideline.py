"""``--guideline``: a guideline file, or the name of one shipped with evalset (``relevance-v2``); one option for
every command that reads a guideline."""

from __future__ import annotations

import click

from evalset.contract import DEFAULT_SCALE


class GuidelinePath(click.Path):
    """A guideline file, or the name of one shipped with evalset (``relevance-v2``); otherwise click's ``Path``.
    With ``scale``, a bare grade scale too (``0,1,2,3``: integers separated by commas, given as a sorted list)."""

    name = "guideline"

    def __init__(self, *args, scale: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.scale = scale

    def convert(self, value, param, ctx):
        import os

        if self.scale and isinstance(value, str) and "," in value and not os.path.exists(value):
            return self.grades(value, param, ctx)

        from evalset.io.guideline import guideline_file, names_a_guideline, shipped_guidelines

        path = guideline_file(value)
        if not os.path.exists(path) and (self.exists or names_a_guideline(value)):
            self.fail(f"no such file, and no guideline shipped with evalset is named {value!r} (shipped: "
                      f"{', '.join(shipped_guidelines())})", param, ctx)
        return super().convert(path, param, ctx)

    def grades(self, text: str, param, ctx) -> list[int]:
        try:
            grades = sorted({int(part) for part in text.split(",") if part.strip()})
        except ValueError:
            self.fail(f"a scale is integers separated by commas, got {text!r}", param, ctx)
        if len(grades) < 2:
            self.fail("a scale needs at least two grades", param, ctx)
        return grades


def guideline_option(text: str, dest: str | None = None, required: bool = False, exists: bool = False,
                     scale: bool = False):
    """``--guideline``: a file, or a shipped guideline's name (:class:`GuidelinePath`); ``text`` is its help.
    With ``scale``, where only the guideline's scale is read, a bare scale (``0,1,2,3``) too."""
    return click.option("--guideline", *([dest] if dest else []), required=required,
                        type=GuidelinePath(exists=exists, dir_okay=False, scale=scale),
                        help=f"{text} A file, or a guideline shipped with evalset by its name: relevance-v2 "
                             "(relevance-v1 is kept for the sets it made)"
                             + (f", or a bare scale [default: {','.join(map(str, DEFAULT_SCALE))}]." if scale else "."))
