"""Benchmark records: what every ``scripts/bench_*.py`` writes with ``--json PATH``, and what
``scripts/benchmarks.py`` reads from ``docs/benchmarks/*.json`` to write ``docs/benchmarks.md``.

A record is one run of one bench, a JSON object with exactly these keys::

    {"bench": "bench_pool",              # the script's name (no .py)
     "case": null,                       # what of the script was measured, when it measures several things or a
                                         # size other than its default ("main", "many --runs 4"); the current
                                         # figures are the latest record of each (bench, case)
     "date": "2026-12-04",               # UTC; SOURCE_DATE_EPOCH sets it (and the time) for reproducible runs
     "time": "14:27",                    # UTC, HH:MM, or null
     "machine": {"cores": 2, "ram_gib": 23.4, "python": "3.11.7", "platform": "Linux-..."},  # any may be null
     "command": ["scripts/bench_pool.py", "--json", "..."],  # the argv as run, or null
     "load": "0.19-0.78",                # the 1-minute load average over the run (lowest-highest), or null
     "commit": "9ac0321",                # the checkout's HEAD at the run (its working tree may differ), or null
     "note": null,                       # free text: what the figures alone do not say, or null
     "figures": [{"what": "evalset pool wall time", "value": 15.4, "unit": "s",
                  "anchor": "DuckDB distinct count", "ratio": 6.5}, ...]}

A figure's ``ratio`` is its value divided by its anchor's value of the same quantity in the same run (1.98: 1.98x the
anchor's time; 0.18: 1/5.5 of it, 5.5x faster); ``anchor`` names what it is measured against (a tool or a baseline,
run by the same script in the same run) and is null when there is none, and then so is ``ratio``. A figure compared
with several anchors is one figure per anchor. ``value`` is null only in records converted from prose that stated a
ratio without its values, and ``figures`` is empty only beside a note (prose that kept no single run's figures).
Values are kept to 4 significant digits; the units are :data:`UNITS`.

The script adds ``--json PATH`` with :func:`add_option`, makes a :class:`Recorder` with :func:`recorder` right after
parsing (its case from :func:`case` and :func:`changed`), names its inputs (:meth:`Recorder.inputs`: the record may
not overwrite one), adds its figures and writes (:meth:`Recorder.write`: a temporary file in the target's folder,
then renamed over it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KEYS = ("bench", "case", "date", "time", "machine", "command", "load", "commit", "note", "figures")
MACHINE_KEYS = ("cores", "ram_gib", "python", "platform")
FIGURE_KEYS = ("what", "value", "unit", "anchor", "ratio")
UNITS = ("s", "ms", "MiB", "GiB", "MB", "GB", "x", "req/s")
DIGITS = 4


class RecordError(ValueError):
    """A record that is not one: its message is one line naming the file and the fault."""


def started() -> datetime.datetime:
    """The run's date and time in UTC: ``SOURCE_DATE_EPOCH`` when set (reproducible records), else now."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        if not epoch.isdigit():
            sys.exit(f"SOURCE_DATE_EPOCH={epoch!r}: not a number of seconds since 1970-01-01 UTC")
        return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
    return datetime.datetime.now(datetime.UTC)


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


STARTED = started()  # the scripts import this module first thing: the record's date is the run's start
LOADS = [load for load in (load_average(),) if load is not None]


def machine() -> dict:
    """This machine: cores, RAM in GiB, Python's version and the platform."""
    try:
        ram = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        ram = None
    return {"cores": os.cpu_count(), "ram_gib": ram, "python": platform.python_version(),
            "platform": platform.platform()}


def commit() -> str | None:
    """The checkout's HEAD (short), or None outside a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def command(argv: list[str] | None = None) -> list[str]:
    """The argv as run, the script's path relative to the repository when it is in it."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve()
    if script.is_relative_to(REPO):
        argv[0] = script.relative_to(REPO).as_posix()
    return argv


def significant(value: float | int | None) -> float | int | None:
    """``value`` to :data:`DIGITS` significant digits (integers as they are)."""
    if value is None or isinstance(value, int):
        return value
    value = float(value)
    return float(f"{value:.{DIGITS}g}") if math.isfinite(value) else value


def add_option(parser: argparse.ArgumentParser) -> None:
    """``--json PATH``: also write the figures as one record (the same option in every bench)."""
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="also write the figures as a JSON record to PATH (scripts/benchlib.py describes it; "
                             "docs/benchmarks/ keeps them); written whole or not at all, never over an input")


WALL_CPU_PEAK = {"seconds": ("wall time", "s"), "cpu": ("CPU time", "s"), "peak_mib": ("peak memory", "MiB")}
"""The quantities a whole-process timing gives (``seconds``, ``cpu``, ``peak_mib``), for :meth:`Recorder.compare`."""


def changed(args: argparse.Namespace, parser: argparse.ArgumentParser, names: Iterable[str],
            lists: Mapping[str, str] | None = None) -> str:
    """The options among ``names`` whose values are not the parser's defaults, as typed (``--lines 100000``): the
    part of a record's case that says it measured another size than the script's own. A list is typed with its
    items apart (``nargs``), or joined by ``lists[name]`` (``","``), or ``"repeat"``: the option once per item."""
    parts = []
    for name in names:
        value = getattr(args, name)
        if value == parser.get_default(name) or value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        joiner = (lists or {}).get(name, " ")
        if value is True:
            parts.append(flag)
        elif isinstance(value, list | tuple) and joiner == "repeat":
            parts.extend(f"{flag} {item}" for item in value)
        elif isinstance(value, list | tuple):
            parts.append(f"{flag} {joiner.join(map(str, value)) or chr(34) * 2}")
        else:
            parts.append(f"{flag} {value}")
    return " ".join(parts)


def case(*parts: str | None) -> str | None:
    """A record's case from its parts (empty ones left out), or None."""
    return " ".join(part for part in parts if part) or None


class Recorder:
    """The figures of one run of a bench, written as a record to ``path`` (nothing written when it is None)."""

    def __init__(self, bench: str, path: Path | None, case: str | None = None, argv: list[str] | None = None):
        self.bench, self.path, self.case = bench, path, case or None
        self.command = command(argv)
        self.figures: list[dict] = []
        self._inputs: list[Path] = []
        self.note: str | None = None
        if path is not None:
            self._check_target()

    def fail(self, message: str):
        sys.exit(f"{self.bench}: --json {self.path}: {message}")

    def _check_target(self) -> None:
        if self.path.is_dir():
            self.fail("is a folder; give the record's file name (docs/benchmarks/DATE-BENCH.json)")
        if not self.path.parent.is_dir():
            self.fail(f"the folder {self.path.parent} does not exist")

    def inputs(self, *paths: str | os.PathLike) -> None:
        """Name files (or folders) the bench reads: the record refuses to be written over one (checked now, so that
        a long run does not end in the refusal, and again when writing)."""
        for path in paths:
            self._inputs.append(Path(path))
            self._refuse_input(Path(path))

    def _refuse_input(self, source: Path) -> None:
        if self.path is None:
            return
        same = os.path.realpath(self.path) == os.path.realpath(source)
        if not same and self.path.exists() and source.exists():
            same = os.path.samefile(self.path, source)
        if same:
            self.fail(f"is one of the bench's inputs ({source}); write the record elsewhere")

    def sample_load(self) -> None:
        """Note the load average now (the record gives the lowest and highest seen, start and end included)."""
        load = load_average()
        if load is not None:
            LOADS.append(load)

    def add(self, what: str, value: float | int | None, unit: str, anchor: str | None = None,
            ratio: float | None = None) -> None:
        """One figure; ``ratio``: ``value`` over the anchor's value of the same quantity (see the module's doc)."""
        self.figures.append({"what": what, "value": significant(value), "unit": unit,
                             "anchor": anchor if ratio is not None else None, "ratio": significant(ratio)})

    def compare(self, results: Mapping[str, Mapping[str, float]], ours: Iterable[str],
                quantities: Mapping[str, tuple[str, str]], prefix: str = "") -> None:
        """Every tool's ``quantities`` (``key: (label, unit)``) as figures ``PREFIXtool label``; each of ``ours``
        once per other tool (its anchors), with the ratio of the two."""
        ours = [tool for tool in ours if tool in results]
        for tool, found in results.items():
            for key, (label, unit) in quantities.items():
                value = found.get(key)
                if value is None:
                    continue
                anchors = [other for other in results if other not in ours and results[other].get(key)]
                if tool not in ours or not anchors:
                    self.add(f"{prefix}{tool} {label}", value, unit)
                    continue
                for other in anchors:
                    self.add(f"{prefix}{tool} {label}", value, unit, anchor=other,
                             ratio=value / results[other][key])

    def record(self) -> dict:
        moment = STARTED
        self.sample_load()
        low, high = (min(LOADS), max(LOADS)) if LOADS else (None, None)
        load = None if low is None else f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}"
        record = {"bench": self.bench, "case": self.case, "date": moment.strftime("%Y-%m-%d"),
                  "time": moment.strftime("%H:%M"), "machine": machine(), "command": self.command, "load": load,
                  "commit": commit(), "note": self.note, "figures": self.figures}
        return check(record, f"the record of {self.bench}")

    def write(self) -> dict | None:
        """Write the record to ``path``, atomically, and return it; nothing when no ``--json PATH`` was given."""
        if self.path is None:
            return None
        try:
            record = self.record()
        except RecordError as exc:
            self.fail(f"nothing written: {exc}")
        self._check_target()
        for source in self._inputs:
            self._refuse_input(source)
        write(record, self.path)
        print(f"record: {self.path}")
        return record


def recorder(args: argparse.Namespace, bench: str, case: str | None = None) -> Recorder:
    """The recorder of a bench whose parser has :func:`add_option`."""
    return Recorder(bench, args.json, case)


def dumps(record: dict) -> str:
    """A record as its file holds it: keys in :data:`KEYS` order, one figure a line."""
    lines = []
    for key in KEYS:
        if key == "figures":
            continue
        lines.append(f"  {json.dumps(key)}: {json.dumps(record[key], ensure_ascii=False)}")
    figures = ",\n".join(f"    {json.dumps({k: f[k] for k in FIGURE_KEYS}, ensure_ascii=False)}"
                         for f in record["figures"])
    lines.append(f'  "figures": [\n{figures}\n  ]' if figures else '  "figures": []')
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write(record: dict, path: Path) -> None:
    """``record`` to ``path`` whole or not at all (:func:`write_text`)."""
    write_text(dumps(record), path)


def write_text(text: str, path: Path) -> None:
    """``text`` to ``path`` whole or not at all: a temporary file beside it, flushed, then renamed over it (with the
    mode a new file gets)."""
    umask = os.umask(0)
    os.umask(umask)
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(name, 0o666 & ~umask)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


# ------------------------------------------------------------------------------------------------ reading
DATE = re.compile(r"\d{4}-\d\d-\d\d")
TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d")


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _text(value, nullable: bool = True) -> bool:
    return (value is None and nullable) or (isinstance(value, str) and value.strip() != "")


def check(record, source: str) -> dict:
    """``record`` when it is a record (the module's doc), else :class:`RecordError` naming ``source`` and the fault."""

    def fault(message: str) -> RecordError:
        return RecordError(f"{source}: {message}")

    if not isinstance(record, dict):
        raise fault(f"not a JSON object but {type(record).__name__}")
    missing, unknown = [k for k in KEYS if k not in record], sorted(k for k in record if k not in KEYS)
    if missing or unknown:
        raise fault("; ".join(part for part in (missing and f"missing {', '.join(missing)}",
                                                unknown and f"unknown key {', '.join(unknown)}") if part))
    if not _text(record["bench"], nullable=False):
        raise fault(f"bench: {record['bench']!r} is not a name")
    for key in ("case", "load", "commit", "note"):
        if not _text(record[key]):
            raise fault(f"{key}: {record[key]!r} is neither text nor null")
    date = record["date"]
    if not (isinstance(date, str) and DATE.fullmatch(date)):
        raise fault(f"date: {date!r} is not YYYY-MM-DD")
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise fault(f"date: {date!r} is not a day of the calendar") from None
    if record["time"] is not None and not (isinstance(record["time"], str) and TIME.fullmatch(record["time"])):
        raise fault(f"time: {record['time']!r} is neither HH:MM (UTC) nor null")
    box = record["machine"]
    if not isinstance(box, dict) or sorted(box) != sorted(MACHINE_KEYS):
        raise fault(f"machine: not an object of {', '.join(MACHINE_KEYS)}")
    if not (box["cores"] is None or (isinstance(box["cores"], int) and not isinstance(box["cores"], bool)
                                     and box["cores"] > 0)):
        raise fault(f"machine.cores: {box['cores']!r} is neither a count nor null")
    if not (box["ram_gib"] is None or (_number(box["ram_gib"]) and box["ram_gib"] > 0)):
        raise fault(f"machine.ram_gib: {box['ram_gib']!r} is neither a size nor null")
    for key in ("python", "platform"):
        if not _text(box[key]):
            raise fault(f"machine.{key}: {box[key]!r} is neither text nor null")
    argv = record["command"]
    if not (argv is None or (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv))):
        raise fault("command: neither a list of the arguments as run nor null")
    if not isinstance(record["figures"], list):
        raise fault("figures: not a list")
    for i, figure in enumerate(record["figures"]):
        where = f"figures[{i}]"
        if not isinstance(figure, dict) or sorted(figure) != sorted(FIGURE_KEYS):
            raise fault(f"{where}: not an object of {', '.join(FIGURE_KEYS)}")
        if not _text(figure["what"], nullable=False):
            raise fault(f"{where}.what: {figure['what']!r} is not a name")
        where = f"{where} ({figure['what']})"
        if figure["unit"] not in UNITS:
            raise fault(f"{where}: unit {figure['unit']!r} is not one of {', '.join(UNITS)}")
        for key in ("value", "ratio"):
            if figure[key] is not None and not _number(figure[key]):
                raise fault(f"{where}: {key} {figure[key]!r} is neither a number nor null")
        if figure["ratio"] is not None and figure["ratio"] <= 0:
            raise fault(f"{where}: ratio {figure['ratio']!r} is not positive")
        if not _text(figure["anchor"]):
            raise fault(f"{where}: anchor {figure['anchor']!r} is neither a name nor null")
        if (figure["anchor"] is None) != (figure["ratio"] is None):
            raise fault(f"{where}: an anchor needs its ratio and a ratio its anchor")
        if figure["value"] is None and figure["ratio"] is None:
            raise fault(f"{where}: neither a value nor a ratio")
    if not record["figures"] and record["note"] is None:
        raise fault("no figures and no note")
    return record


def read(path: Path) -> dict:
    """The record in ``path``; :class:`RecordError` (one line, naming the file) when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot be read ({exc.__class__.__name__}: {exc})") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return check(record, str(path))


def read_all(folder: Path) -> list[tuple[Path, dict]]:
    """Every record of ``folder`` (``*.json``), in file-name order."""
    return [(path, read(path)) for path in sorted(folder.glob("*.json"))]
