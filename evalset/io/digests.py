"""File digests for manifests: a light module (no pandas), so that hashing can start before the library loads."""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from evalset.errors import InputError


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes (hex), as recorded beside every artefact built from it; a file that cannot be
    read is refused, naming it."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        raise InputError("no such file", os.fspath(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", os.fspath(path)) from None
    return digest.hexdigest()


def read_text_and_sha256(path: str | os.PathLike, what: str) -> tuple[str, str]:
    """A UTF-8 text file (a guideline, a prompt template: ``what``) and the sha256 of its bytes; a file that
    cannot be read or is not UTF-8 is refused, naming it."""
    try:
        raw = Path(path).read_bytes()
        return raw.decode("utf-8"), hashlib.sha256(raw).hexdigest()
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", os.fspath(path)) from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} is not UTF-8 text ({exc.reason} at byte {exc.start})", os.fspath(path)) from None


def describe_file(path: str | os.PathLike) -> dict:
    """``{"path", "bytes", "sha256"}`` of a file, for a manifest."""
    return {"path": os.fspath(path), "bytes": os.path.getsize(path), "sha256": file_sha256(path)}


def describe_files_in_background(paths: Sequence[str | os.PathLike]) -> concurrent.futures.Future:
    """:func:`describe_file` of each path, in a thread of its own (hashlib lets other threads run meanwhile);
    ``.result()`` is the list. A missing file raises there, not here."""
    hashing = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalset-sha256")
    described = hashing.submit(lambda: [describe_file(path) for path in paths])
    hashing.shutdown(wait=False)
    return described
