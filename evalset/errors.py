"""The one error type every reader and stage raises for bad input."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input, with the file and line it came from when known.

    The CLI prints ``str(error)`` as one line and exits non-zero; the library lets it propagate.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
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
