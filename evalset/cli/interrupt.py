"""Ctrl-C (SIGINT) for a command's process: a ``KeyboardInterrupt``, as Python's own handler raises it, except
during an import, where it is held until the import is done (checked again every :data:`RETRY_SECONDS`).

Why: a command imports most of the library after it starts (``evalset --help`` stays fast), and CPython (3.11)
raises the interrupt at whatever bytecode is running. Measured on ``evalset sample`` of a 10M-line log
interrupted 0.40-0.85 s after it started, during its imports (2026-12-03):

- raised in importlib's code between a lock's acquire and the ``try`` that releases it, it leaves the import lock
  held, and the next import made on a worker thread (arrow importing pandas) waits forever: 1 hang in 20;
- raised while a compiled extension initialises (DuckDB's nanobind module making its enums), the extension
  treats the error as fatal: ``Critical nanobind error``, SIGABRT.
"""

from __future__ import annotations

import signal
from types import FrameType

RETRY_SECONDS = 0.01
_MACHINERY = "<frozen importlib."


def importing(frame: FrameType | None) -> bool:
    """Whether ``frame`` or a frame that called it runs importlib's own code: a module is being imported."""
    while frame is not None:
        if frame.f_code.co_filename.startswith(_MACHINERY):
            return True
        frame = frame.f_back
    return False


def on_sigint(signum: int, frame: FrameType | None) -> None:
    """Raise ``KeyboardInterrupt``, or, during an import, look again in :data:`RETRY_SECONDS` (a SIGALRM)."""
    if importing(frame) and hasattr(signal, "setitimer"):  # (no timer signals on Windows: raised at once)
        signal.signal(signal.SIGALRM, on_sigint)
        signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)
        return
    raise KeyboardInterrupt


def install() -> None:
    """:func:`on_sigint` as the SIGINT handler, unless SIGINT is ignored (a job started in the background) or
    someone set their own handler."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_sigint)
