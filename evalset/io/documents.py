"""Files that hold one document: a JSON object a command wrote (an agreement report, a probe's report), a TOML
specification (a pool's), and a small tab-separated table read whole (the annotators file). Each reader refuses,
in one line naming the file, a file that is missing, unreadable, not UTF-8 or not of its kind; what the document
must hold is checked by its reader's caller."""

from __future__ import annotations

import csv
import io
import json
import os
import tomllib
from typing import Any

from evalset.errors import InputError


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value in the file ``path``."""
    return _read(path, json.loads, json.JSONDecodeError, "JSON")


def read_toml(path: str | os.PathLike) -> dict[str, Any]:
    """The TOML table in the file ``path``."""
    return _read(path, tomllib.loads, tomllib.TOMLDecodeError, "TOML")


def read_tsv_rows(path: str | os.PathLike) -> list[list[str]]:
    """The rows of a tab-separated file (standard double quotes), each a list of its fields."""
    return _read(path, lambda text: list(csv.reader(io.StringIO(text, newline=""), delimiter="\t")), csv.Error, "TSV")


def _read(path: str | os.PathLike, parse, refused: type[Exception], kind: str):
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return parse(handle.read())
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except refused as exc:
        raise InputError(f"not valid {kind}: {exc}", path) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path) from None
