"""The two errors a user can do something about; anything else is a bug.

- :class:`InputError`: bad input (a file, an option, a value). It names the file and line when there is one.
- :class:`ServiceError`: a service the command depends on failed: Label Studio, an LLM endpoint, a disk that
  refuses a write. It names the service (or the path) and what to do.

The contract: every validation in the library raises one of the two, never a bare ``ValueError`` or ``OSError``
that a caller would have to guess about. The CLI prints either as one line on stderr
(``evalset: error: MESSAGE``) and exits 2; ``evalset --debug ...`` shows their traceback instead. Any other
exception is a bug (in evalset or in a library under it) and keeps its traceback, exit 1. click's own usage
errors (an unknown option, a missing argument) stay as click prints them, exit 2.

:class:`InputError` subclasses ``ValueError`` so that library callers who catch ``ValueError`` around a reader
keep working; the CLI catches :class:`InputError` itself and does not rely on that. :class:`ServiceError` is
not an ``OSError``: a bug that raises ``OSError`` must not pass for a service failure.
"""

from __future__ import annotations

SHOWN_AS: dict[str, str] = {}
"""A temporary copy of an input that can be read only once (stdin, a pipe) -> the name the user gave it
(``<stdin>``, ``/dev/fd/63``): an error names the input, never its copy. Filled by
:func:`evalset.io.files.local_file`."""


QUOTED_CHARACTERS = 200
"""The most of a line or value an error message quotes (a whole line can be megabytes long)."""


def quoted(text: object) -> str:
    """``text`` as an error message quotes it: its repr, cut after :data:`QUOTED_CHARACTERS` characters."""
    shown = repr(text)
    if len(shown) <= QUOTED_CHARACTERS:
        return shown
    return f"{shown[:QUOTED_CHARACTERS]}... ({len(str(text)):,} characters)"


class InputError(ValueError):
    """Bad input, with the file and line it came from when known.

    The CLI prints ``str(error)`` (``PATH:LINE: message``) as one line and exits 2; the library lets it propagate.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        if SHOWN_AS:
            path = SHOWN_AS.get(path, path) if path is not None else None
            for copy, shown in SHOWN_AS.items():
                message = message.replace(copy, shown)
        self.message = message
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class ServiceError(Exception):
    """A service the command depends on failed: Label Studio, an LLM endpoint, a disk that refuses a write.

    The message names the service (or path) and what to do. The CLI prints it as one line and exits 2.
    """
