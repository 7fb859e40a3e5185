"""NIST's trec_eval 10.0, built from ../shared/tools/trec_eval-10.0 (never edited: copied and built in a temporary
folder), and a line-by-line comparison of its output with ``evalset score --format trec_eval``.

A configuration is trec_eval's flags; evalset is given the same conventions as options: ``-q`` is
``--per-query``, ``-lN`` ``-c rel_level=N``, trec_eval's ``-c`` ``-c missing=zero`` (without it ``-c
missing=skip``), ``-MN`` ``--max-retrieved N``, ``-J`` ``-c unjudged=condensed``; always ``-c undefined=zero``
(trec_eval has no undefined value) and ``-m all_trec``. :func:`departure` names a differing line that is one of
trec_eval 10.0's own behaviours (../shared/tools/README.md) or a departure of evalset's table (docs/coming-from.md).
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner

from evalset.cli import main

SOURCE = Path(__file__).resolve().parents[2].parent / "shared" / "tools" / "trec_eval-10.0"


def build(folder: Path) -> Path | str:
    """trec_eval built in ``folder``; a reason (str) where it cannot be (no source, no compiler or make)."""
    if not (SOURCE / "Makefile").is_file():
        return f"no trec_eval source at {SOURCE}"
    missing = [tool for tool in ("cc", "make") if shutil.which(tool) is None]
    if missing:
        return f"no {' or '.join(missing)} to build trec_eval"
    copy = folder / "trec_eval-10.0"
    copy.mkdir()
    for source in SOURCE.iterdir():  # file by file: shared/ may be read-only, the copy must not be
        if source.is_file():
            (copy / source.name).write_bytes(source.read_bytes())
    done = subprocess.run(["make", "-s", "trec_eval"], cwd=copy, capture_output=True, text=True)
    if done.returncode != 0:
        return f"trec_eval did not build: {done.stderr.strip()[:300]}"
    return copy / "trec_eval"


def trec_eval_lines(binary: Path, qrels: Path, run: Path, flags: Sequence[str]) -> list[str]:
    done = subprocess.run([str(binary), "-q", "-m", "all_trec", *flags, str(qrels), str(run)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise AssertionError(f"trec_eval {' '.join(flags)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout.splitlines()


def evalset_arguments(flags: Sequence[str]) -> list[str]:
    """evalset's options for trec_eval's ``flags`` (module docstring)."""
    arguments = ["--per-query", "--format", "trec_eval", "-m", "all_trec", "-c", "undefined=zero",
                 "-c", "missing=zero" if "-c" in flags else "missing=skip"]
    for flag in flags:
        if flag.startswith("-l"):
            arguments += ["-c", f"rel_level={flag[2:]}"]
        elif flag.startswith("-M"):
            arguments += ["--max-retrieved", flag[2:]]
        elif flag == "-J":
            arguments += ["-c", "unjudged=condensed"]
        elif flag != "-c":
            raise ValueError(f"no evalset option for trec_eval's {flag}")
    return arguments


def evalset_lines(qrels: Path, runs: Sequence[Path], flags: Sequence[str]) -> list[str]:
    result = CliRunner().invoke(main, ["score", "--qrels", str(qrels), *map(str, runs), *evalset_arguments(flags)])
    if result.exit_code != 0:
        raise AssertionError(f"evalset score failed ({result.exit_code}): {result.output[-2000:]}")
    return result.stdout.splitlines()


@dataclass
class Comparison:
    """Lines compared (per query and ``all``), lines equal, and the differing ones as (run, trec_eval's, evalset's);
    a line only one side prints is compared against nothing. ``order``: the runs whose common lines come in
    another order."""

    compared: Counter = field(default_factory=Counter)
    equal: Counter = field(default_factory=Counter)
    differing: list[tuple[str, str, str]] = field(default_factory=list)
    order: list[str] = field(default_factory=list)

    def add(self, run: str, theirs: list[str], ours: list[str]) -> None:
        keyed_theirs, keyed_ours = _keyed(theirs), _keyed(ours)
        for key in dict.fromkeys([*keyed_theirs, *keyed_ours]):
            their, our = keyed_theirs.get(key, ""), keyed_ours.get(key, "")
            kind = "all" if key[1] == "all" else "per query"
            self.compared[kind] += 1
            if their == our:
                self.equal[kind] += 1
            else:
                self.differing.append((run, their, our))
        common = [key for key in keyed_theirs if key in keyed_ours]
        if common != [key for key in keyed_ours if key in keyed_theirs]:
            self.order.append(run)

    def summary(self) -> str:
        parts = [f"{kind}: {self.equal[kind]:,} of {self.compared[kind]:,} lines equal" for kind in ("per query",
                                                                                                   "all")]
        return "; ".join(parts)


def departure(their: str, our: str, theirs: list[str], qrels: Path, flags: Sequence[str]) -> str | None:
    """The known behaviour a differing line shows (a key of :data:`DEPARTURES`), or None; ``theirs``: all of
    trec_eval's lines of the run."""
    name, query, value = (their or our).split("\t")
    name = name.strip()
    if their and our and name == "num_rel" and query == "all" and "-c" in flags:
        grades = [line.split() for line in qrels.read_text().splitlines()]
        if int(value) == sum(int(fields[3]) > 0 for fields in grades if len(fields) == 4 and fields[0][0] != "#"):
            return "num_rel all under -c"
    nothing_left = query == "all" or f"num_ret               \t{query}\t0" in theirs
    if "-J" in flags and our and their.endswith("\t  -nan") and name.startswith(("iprec", "11pt")) and nothing_left:
        return "-nan where -J leaves nothing"
    return None


DEPARTURES = {
    "num_rel all under -c": "trec_eval 10.0's summary num_rel under -c counts every grade above 0, ignoring -l",
    "-nan where -J leaves nothing": "under -J a query whose condensed ranking is empty: trec_eval 10.0 prints -nan "
                                    "(0/0) for iprec_at_recall and 11pt_avg and their means, evalset 0",
}
"""The differing lines a comparison accepts, each shown on its own in tests/compat/test_trec_eval_departures.py."""


def _keyed(lines: list[str]) -> dict[tuple[str, str], str]:
    keyed = {}
    for line in lines:
        name, query, _ = line.split("\t")
        keyed[(name.strip(), query)] = line
    return keyed


def run_blocks(lines: list[str]) -> list[list[str]]:
    """evalset's output cut into its runs' blocks: each ends with its ``all`` lines."""
    blocks: list[list[str]] = [[]]
    for line in lines:
        if blocks[-1] and "\tall\t" in blocks[-1][-1] and "\tall\t" not in line:
            blocks.append([])
        blocks[-1].append(line)
    return blocks


def compare(binary: Path, qrels: Path, runs: Sequence[Path], flags: Sequence[str]) -> Comparison:
    """trec_eval's and evalset's lines for every run under ``flags``."""
    blocks = run_blocks(evalset_lines(qrels, runs, flags))
    if len(blocks) != len(runs):
        raise AssertionError(f"evalset printed {len(blocks)} blocks for {len(runs)} runs")
    comparison = Comparison()
    for run, ours in zip(runs, blocks, strict=True):
        comparison.add(run.name, trec_eval_lines(binary, qrels, run, flags), ours)
    return comparison
