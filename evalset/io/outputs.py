"""Outputs checked before a command does any work: no output is one of its inputs (writing it would destroy the
input) or another of its outputs, and every output can be written, the messages naming the option and the path.

A light module (no pandas), so that a command can check its outputs before it loads the library.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping

from evalset.errors import InputError

PathsByOption = Mapping[str, str | os.PathLike | Iterable[str | os.PathLike] | None]
"""Option (or argument) -> a path, several paths, or None (not given)."""


def check_outputs(outputs: PathsByOption, inputs: PathsByOption | None = None) -> None:
    """Refuse, before any work, outputs that would destroy an input or each other, or that cannot be written.

    ``outputs`` and ``inputs`` map the option (or argument) that names them (``-o``, ``--plot``, ``LOGS``) to a
    path, several paths, or None (not given); messages name the option and the path. An output is refused when
    it is an input file (the same file, also through a symbolic or hard link; an output that does not exist yet
    is no input; an input folder stands for the files in it), when two outputs are one file, when it is a
    folder, or when its folder cannot be made or written (checked by creating and removing a temporary file in
    the nearest existing folder). Raises :class:`~evalset.errors.InputError`.
    """
    written = [(option, os.fspath(path)) for option, path in _flatten(outputs)]
    read = [(option, file) for option, path in _flatten(inputs or {}) for file in _files_of(os.fspath(path))]
    seen: list[tuple[str, str]] = []
    for option, path in written:
        for other_option, other in seen:
            if _same_file(path, other):
                raise InputError(f"{option} {path} and {other_option} {other} are the same file; give each "
                                 "output its own path")
        seen.append((option, path))
        if os.path.exists(path):
            for input_option, input_path in read:
                if os.path.exists(input_path) and os.path.samefile(path, input_path):
                    shown = input_path if input_path == path else f"{input_path}, the same file"
                    raise InputError(f"{option} {path} is the input {input_option} {shown}: writing it would "
                                     "destroy the input; choose another output path")
    probed: dict[str, None] = {}
    for option, path in written:
        _refuse_unwritable(option, path, probed)


def _flatten(paths: PathsByOption) -> Iterator[tuple[str, str | os.PathLike]]:
    for option, value in paths.items():
        if value is None:
            continue
        for path in [value] if isinstance(value, str | os.PathLike) else value:
            if path is not None and os.fspath(path) != "":
                yield option, path


def _files_of(path: str) -> list[str]:
    if not os.path.isdir(path):
        return [path]
    try:
        return [entry.path for entry in os.scandir(path) if entry.is_file()]
    except OSError:
        return []


def _same_file(path: str, other: str) -> bool:
    if os.path.exists(path) and os.path.exists(other):
        return os.path.samefile(path, other)
    return os.path.realpath(path) == os.path.realpath(other)


def _refuse_unwritable(option: str, path: str, probed: dict[str, None]) -> None:
    if os.path.isdir(path):
        raise InputError(f"{option} {path}: is a folder, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        raise InputError(f"{option} {path}: cannot write there, {folder} is not a folder")
    if folder in probed:
        return
    try:
        handle, probe = tempfile.mkstemp(prefix=".evalset-probe-", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write in {folder}: {exc.strerror or exc}") from None
    probed[folder] = None
