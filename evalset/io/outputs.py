"""Outputs checked before a command does any work: no output is one of its inputs (writing it would destroy the
input) or another of its outputs, none lies in a frozen set version, an output folder holds no input and no work
in progress (unless replacing it was asked for), and every output can be written; the messages name the option
and the path.

A light module (no pandas), so that a command can check its outputs before it loads the library.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping

from evalset.errors import InputError
from evalset.io.setfiles import MANIFEST_FILE, VERSIONS_FILE

PathsByOption = Mapping[str, str | os.PathLike | Iterable[str | os.PathLike] | None]
"""Option (or argument) -> a path, several paths, or None (not given)."""


FoldersByOption = Mapping[str, tuple[str | os.PathLike | None, Iterable[str]]]
"""Option -> (an output folder or None, the names of the files the command writes in it)."""


def check_outputs(outputs: PathsByOption, inputs: PathsByOption | None = None, *,
                  folders: FoldersByOption | None = None, force: bool = False,
                  adds_to_set: str | os.PathLike | None = None, resumes: bool = False) -> None:
    """Refuse, before any work, outputs that would destroy an input, each other or a frozen set, or that cannot be
    written.

    ``outputs`` and ``inputs`` map the option (or argument) that names them (``-o``, ``--plot``, ``LOGS``) to a
    path, several paths, or None (not given); messages name the option and the path. An output is refused when
    it is an input file (the same file, also through a symbolic or hard link; an output that does not exist yet
    is no input; an input folder stands for the files in it), when two outputs are one file, when it is a
    folder, when it lies in a version of a set (a folder holding a set's ``manifest.json``: frozen, never
    rewritten), or when its folder cannot be made or written (checked by creating and removing a temporary file
    in the nearest existing folder).

    ``folders`` are output folders a command writes whole (built aside and renamed into place, as
    :func:`evalset.io.files.folder_built_aside` does), each with the names of the files written in it. One is
    refused when it is a file, is or lies in a set version, holds an input (or is an input folder), or exists
    and is not empty, unless ``force``; even with ``force``, a folder holding anything but the files the
    command writes is refused (replacing it would delete what the command did not write). Raises
    :class:`~evalset.errors.InputError`.

    An output file that exists is refused unless ``force`` (``--force``), or unless the command ``resumes`` its own
    outputs (a judging job and its journal, a pull, freeze's versions.tsv); ``force`` replaces only a file of a kind
    evalset writes (:data:`WRITTEN_KINDS`, the one its suffix names when it has one: ``.html``, ``.png``, ...), so
    that a qrels file, a run or a document given by mistake is never replaced.

    Every output, file or folder: an empty path, the current folder or one that holds it is refused (replacing it
    would delete the folder the command runs in), and so is one inside an input folder (a runs folder, the pool
    being judged) or inside a set's folder (``sets/NAME/``: its versions, ``versions.tsv`` and
    ``comparisons.jsonl`` are the set's record) but for the set folder a command adds a version to
    (``adds_to_set``, freeze's), outside its versions.
    """
    written = [(option, os.fspath(path)) for option, path in _flatten(outputs, keep_empty=True)]
    given = [(option, path) for option, path in _flatten(inputs or {})]
    read = [(option, os.fspath(path), file) for option, path in given for file in _files_of(os.fspath(path))]
    named_folders = [(option, os.fspath(folder)) for option, (folder, _) in (folders or {}).items()
                     if folder is not None]
    seen: list[tuple[str, str]] = []
    for option, path in written:
        for other_option, other in seen:
            if _same_file(path, other):
                raise InputError(f"{option} {path} and {other_option} {other} are the same file; give each "
                                 "output its own path")
        seen.append((option, path))
        if os.path.exists(path):
            for input_option, input_given, input_path in read:
                if os.path.exists(input_path) and os.path.samefile(path, input_path):
                    if input_given != input_path:
                        shown = f"a file of the input {input_option} {input_given}"
                    elif input_path == path:
                        shown = f"the input {input_option} {input_path}"
                    else:
                        shown = f"the input {input_option} {input_path}, the same file"
                    raise InputError(f"{option} {path} is {shown}: writing it would destroy the input; choose "
                                     "another output path")
    for option, path in [*written, *named_folders]:
        _refuse_where_nothing_may_be_written(option, path, given, adds_to_set)
    for option, path in written:
        if os.path.isfile(path) and not resumes:
            if not force:
                raise InputError(f"{option} {path}: exists; give --force to replace it, or choose a new path")
            _refuse_foreign(option, path)
    probed: dict[str, None] = {}
    for option, path in written:
        _refuse_unwritable(option, path, probed)
    for option, (folder, names) in (folders or {}).items():
        if folder is not None:
            _check_folder(option, os.fspath(folder), set(names), given, force, probed)


WRITTEN_KINDS: dict[str, Callable[[bytes], bool]] = {  # what evalset writes, told by a file's first bytes
    "an HTML page": lambda head: head.lstrip()[:14].lower().startswith((b"<!doctype html", b"<html")),
    "a PNG image": lambda head: head.startswith(b"\x89PNG\r\n\x1a\n"),
    "a JSON document": lambda head: head.lstrip()[:1] in (b"{", b"["),
    "a tab-separated table": lambda head: b"\t" in head.split(b"\n", 1)[0],
    "a comma-separated table": lambda head: b"," in head.split(b"\n", 1)[0],
    "a Parquet file": lambda head: head.startswith(b"PAR1"),
}
SUFFIX_KINDS = {".html": "an HTML page", ".htm": "an HTML page", ".png": "a PNG image", ".json": "a JSON document",
                ".jsonl": "a JSON document", ".tsv": "a tab-separated table", ".csv": "a comma-separated table",
                ".parquet": "a Parquet file"}


def _refuse_foreign(option: str, path: str) -> None:
    """Refuse replacing a file that is not of a kind evalset writes (its suffix's kind, if it names one)."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    if not head.strip():
        return  # nothing to lose
    kind = SUFFIX_KINDS.get(os.path.splitext(path)[1].lower())
    kinds = [kind] if kind else list(WRITTEN_KINDS)
    if not any(WRITTEN_KINDS[name](head) for name in kinds):
        raise InputError(f"{option} {path}: exists and is not {kind or 'a file evalset writes'}; "
                         "--force replaces only what a command wrote: move it away or choose a new path")


def _refuse_where_nothing_may_be_written(option: str, path: str, inputs: list[tuple[str, str | os.PathLike]],
                                         adds_to_set: str | os.PathLike | None) -> None:
    """Refuse an empty path, the current folder or one holding it, a path inside an input folder and a path in a
    set's folder (:func:`check_outputs`)."""
    if not path.strip():
        raise InputError(f"{option}: an empty path names no file (it would be the current folder); give a path")
    real, here = os.path.realpath(path), os.path.realpath(os.getcwd())
    if real == here or here.startswith(real.rstrip(os.sep) + os.sep):
        raise InputError(f"{option} {path}: is the current folder{'' if real == here else ' or holds it'}, where "
                         "the command runs; writing it would replace what is there: choose a new path")
    for input_option, input_path in inputs:
        held = os.path.realpath(input_path)
        if os.path.isdir(held) and real.startswith(held.rstrip(os.sep) + os.sep):
            raise InputError(f"{option} {path}: lies in the input folder {input_option} {os.fspath(input_path)}; "
                             "a command never writes into its inputs: choose an output outside it")
    own = os.path.realpath(adds_to_set) if adds_to_set is not None else None
    folder = os.path.abspath(path)
    while True:  # up from the path: a version lies below its set's folder, so its more precise message comes first
        if _is_set_version(folder):
            raise InputError(f"{option} {path}: {'is' if folder == os.path.abspath(path) else 'lies in'} the "
                             f"frozen set version {folder}, which is never rewritten; choose an output outside it")
        if folder != os.path.abspath(path) and os.path.realpath(folder) != own and _is_set_folder(folder):
            raise InputError(f"{option} {path}: lies in the set folder {folder}, whose versions, versions.tsv and "
                             "comparisons.jsonl are the set's record; choose an output outside it")
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _is_set_folder(folder: str) -> bool:
    """A set's folder (``sets/NAME/``): one holding ``versions.tsv``, or a frozen version whose manifest names the
    folder (a version copied anywhere, ``~/backup-v1``, makes no folder above it a set's)."""
    if os.path.isfile(os.path.join(folder, VERSIONS_FILE)):
        return True
    try:
        return any(entry.is_dir() and _set_version_name(entry.path) == os.path.basename(folder)
                   for entry in os.scandir(folder))
    except OSError:
        return False


def _check_folder(option: str, folder: str, names: set[str], inputs: list[tuple[str, str | os.PathLike]],
                  force: bool, probed: dict[str, None]) -> None:
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise InputError(f"{option} {folder}: exists and is not a folder")
    real = os.path.realpath(folder)
    for input_option, path in inputs:
        held = os.path.realpath(path)
        if held == real or held.startswith(real.rstrip(os.sep) + os.sep):
            what = "is" if held == real else "holds"
            raise InputError(f"{option} {folder} {what} the input {input_option} {os.fspath(path)}: writing the "
                             "folder would destroy the input; choose another output folder")
    entries = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    if entries and not force:
        shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
        raise InputError(f"{option} {folder}: exists and holds {len(entries)} file(s) ({shown}), perhaps work in "
                         "progress; give --force to replace the folder, or choose a new one")
    foreign = [entry for entry in entries if entry not in names or not os.path.isfile(os.path.join(folder, entry))]
    if foreign:
        raise InputError(f"{option} {folder}: holds {foreign[0]}, which this command does not write; --force "
                         "replaces only a folder of its own files: choose a new folder")
    _refuse_unwritable(option, folder, probed, whole_folder=True)


def _is_set_version(folder: str) -> bool:
    return _set_version_name(folder) is not None


def _set_version_name(folder: str) -> str | None:
    """The set name a frozen version's manifest records (None: ``folder`` is no set version)."""
    manifest = os.path.join(folder, MANIFEST_FILE)
    if not os.path.isfile(manifest):
        return None
    try:
        with open(manifest, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None
    if not (isinstance(record, dict) and {"name", "version", "files", "contract"} <= set(record)):
        return None
    return str(record["name"])


def _flatten(paths: PathsByOption, keep_empty: bool = False) -> Iterator[tuple[str, str | os.PathLike]]:
    """(option, path) of every path given; an empty one is kept for an output (refused there), skipped for an
    input (nothing to read)."""
    for option, value in paths.items():
        if value is None:
            continue
        for path in [value] if isinstance(value, str | os.PathLike) else value:
            if path is not None and (keep_empty or os.fspath(path) != ""):
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


def _refuse_unwritable(option: str, path: str, probed: dict[str, None], whole_folder: bool = False) -> None:
    """Refuse an output whose folder cannot be written (for a folder built aside, the folder it is built in)."""
    if os.path.isdir(path) and not whole_folder:
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
