"""Groups of runs (a participant, a team, a kind of system): a TSV with a header, one run a line.

Conventions
-----------
- The file has a header; the run's column is ``run`` and the group's ``group`` unless named otherwise, so that
  a metadata table such as TREC's ``run_metadata.tsv`` is read as it is (``runid``, ``participant``). Other
  columns are ignored.
- A run named twice is refused (with both lines), even with the same group; an empty run or group is refused;
  a file with no run is refused.
- Read without naming the columns (:func:`read_run_groups`), the file's columns are ``run`` and ``group``, else
  ``runid`` and ``participant`` (TREC's ``run_metadata.tsv``), else a file of two columns is the run, then its
  group; any other header is refused. The Series' ``attrs["source"]`` is the file, for the refusals of its users.
"""

from __future__ import annotations

import os

import pandas as pd

from evalset.errors import InputError
from evalset.io.files import read_tsv_with_header, refuse_blank, refuse_repeats


def read_groups(path: str | os.PathLike, run_column: str = "run", group_column: str = "group") -> pd.Series:
    """The group of each run, as a Series ``run -> group`` (strings, in file order), named ``group``."""
    path = os.fspath(path)
    if run_column == group_column:
        raise InputError(f"the run and the group are read from one column ({run_column!r}): name two columns", path)
    rows, line_numbers, header = read_tsv_with_header(path, [run_column, group_column])
    frame = pd.DataFrame(rows, columns=header, dtype=str)
    if frame.empty:
        raise InputError(f"no runs: the group file has a header ({', '.join(header)}) and no line", path)
    frame = pd.DataFrame({"run": frame[run_column].str.strip(), "group": frame[group_column].str.strip()})
    refuse_blank(frame, ["run", "group"], line_numbers, path)
    refuse_repeats(frame, ["run"], line_numbers, path, "run")
    groups = pd.Series(frame["group"].to_numpy(), index=pd.Index(frame["run"].to_numpy(), name="run"), name="group")
    groups.attrs["source"] = path
    return groups


GROUP_COLUMNS = (("run", "group"), ("runid", "participant"))
"""The columns :func:`read_run_groups` looks for, in order: evalset's names, then TREC's ``run_metadata.tsv``'s."""


def read_run_groups(path: str | os.PathLike) -> pd.Series:
    """The group of each run (:func:`read_groups`), its columns found by their names (module docstring)."""
    path = os.fspath(path)
    header = read_tsv_with_header(path, [])[2]
    named = [pair for pair in GROUP_COLUMNS if set(pair) <= set(header)]
    if named:
        return read_groups(path, *named[0])
    if len(header) == 2:
        return read_groups(path, *header)
    got = ", ".join(header) if any(header) else "no header (an empty file)"
    raise InputError(f"a group file's header names run and group, or runid and participant, or two columns; got "
                     f"{got}", path, 1)
