"""Benchmark records (scripts/benchlib.py: what every ``scripts/bench_*.py`` writes with ``--json PATH``) and the page
made of them (scripts/benchmarks.py writes docs/benchmarks.md from docs/benchmarks/*.json): the page in the
repository is what its records give, a record written by the shared helper reaches the current table and the
history, a record is written whole or not at all and never over an input, and a record that is not one stops the
generator with one line naming its file."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPTS = REPO / "scripts"
_spec = importlib.util.spec_from_file_location("benchlib", SCRIPTS / "benchlib.py")
benchlib = sys.modules.setdefault("benchlib", importlib.util.module_from_spec(_spec))
if not hasattr(benchlib, "check"):
    _spec.loader.exec_module(benchlib)
EPOCH = 1764460800 + 13 * 3600 + 58 * 60  # 2025-11-30 13:58 UTC

TINY_BENCH = f"""
import argparse, sys
sys.path.insert(0, {str(SCRIPTS)!r})
import benchlib

parser = argparse.ArgumentParser()
parser.add_argument("input")
parser.add_argument("--size", type=int, default=10)
parser.add_argument("--wall", type=float, default=1.5)
benchlib.add_option(parser)
args = parser.parse_args()
record = benchlib.recorder(args, "bench_tiny", benchlib.case(benchlib.changed(args, parser, ["size"])))
record.inputs(args.input)
print("timing", args.input)  # the bench's work
record.compare({{"evalset": {{"seconds": args.wall, "cpu": 2.5, "peak_mib": 317.2}},
                "pytrec_eval": {{"seconds": 8.25, "cpu": 8.4, "peak_mib": 1801.0}},
                "floor": {{"seconds": 0.75}}}}, ["evalset"], benchlib.WALL_CPU_PEAK, prefix="cli: ")
record.write()
"""


def tiny_bench(folder: Path, *args: str, epoch: int = EPOCH) -> subprocess.CompletedProcess:
    """A bench of a few lines on the shared helper (its figures made up), run as a script is."""
    script = folder / "bench_tiny.py"
    script.write_text(TINY_BENCH)
    (folder / "run.txt").write_text("q1 Q0 d1 1 1.0 tiny\n")
    return subprocess.run([sys.executable, str(script), *args], cwd=folder, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "SOURCE_DATE_EPOCH": str(epoch)})


def generate(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / "benchmarks.py"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def test_the_repositorys_page_is_what_its_records_give():
    done = generate("--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == done.stderr == ""


def test_a_record_written_by_the_helper_reaches_the_current_table_and_the_history(tmp_path):
    records = tmp_path / "docs" / "benchmarks"
    records.mkdir(parents=True)
    done = tiny_bench(tmp_path, "run.txt", "--size", "20", "--json", "docs/benchmarks/2025-11-30-bench_tiny.json")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "timing run.txt\nrecord: docs/benchmarks/2025-11-30-bench_tiny.json\n"
    written = json.loads((records / "2025-11-30-bench_tiny.json").read_text())
    assert list(written) == list(benchlib.KEYS)
    assert {k: written[k] for k in ("bench", "case", "date", "time", "note")} == {
        "bench": "bench_tiny", "case": "--size 20", "date": "2025-11-30", "time": "13:58", "note": None}
    assert written["command"] == [str(tmp_path / "bench_tiny.py"), "run.txt", "--size", "20", "--json",
                                  "docs/benchmarks/2025-11-30-bench_tiny.json"]  # outside the repository: as run
    assert written["machine"]["cores"] == os.cpu_count() and written["machine"]["python"] == sys.version.split()[0]
    assert written["figures"][:3] == [
        {"what": "cli: evalset wall time", "value": 1.5, "unit": "s", "anchor": "pytrec_eval", "ratio": 0.1818},
        {"what": "cli: evalset wall time", "value": 1.5, "unit": "s", "anchor": "floor", "ratio": 2.0},
        {"what": "cli: evalset CPU time", "value": 2.5, "unit": "s", "anchor": "pytrec_eval", "ratio": 0.2976}]
    assert {"what": "cli: floor wall time", "value": 0.75, "unit": "s", "anchor": None, "ratio": None} in \
        written["figures"]
    assert not [p for p in records.iterdir() if p.name.endswith(".tmp")]

    page = tmp_path / "docs" / "benchmarks.md"
    done = generate("--records", str(records), "--output", str(page), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert ("| `bench_tiny` --size 20 | 2025-11-30 13:58 UTC, [record](benchmarks/2025-11-30-bench_tiny.json) | "
            "cli: evalset wall time | 1.5 s | 0.182x pytrec_eval = 1/5.5; 2.0x floor |") in text
    assert "|  |  | cli: evalset peak memory | 317.2 MiB | 0.176x pytrec_eval = 1/5.68 |" in text
    assert "|  |  | cli: pytrec_eval peak memory | 1,801 MiB |  |" in text
    entry = " ".join(text.split("### 2025-11-30\n\n")[1].split())  # the history's entry, its lines joined
    assert entry.startswith(f"- **13:58 UTC**, `bench_tiny` --size 20: `{tmp_path / 'bench_tiny.py'} run.txt --size "
                            f"20`; {os.cpu_count()} cores, ")  # the command as run, without --json
    assert "[record](benchmarks/2025-11-30-bench_tiny.json). Figures: cli: evalset wall time 1.5 s (0.182x " \
           "pytrec_eval = 1/5.5; 2.0x floor); cli: evalset CPU time 2.5 s (0.298x pytrec_eval = 1/3.36);" in entry
    assert generate("--check", "--records", str(records), "--output", str(page), cwd=tmp_path).returncode == 0

    # a later run: the current table takes it, the history keeps both, newest first
    done = tiny_bench(tmp_path, "run.txt", "--size", "20", "--wall", "1.2", "--json",
                      "docs/benchmarks/2025-12-01-bench_tiny.json", epoch=EPOCH + 86400)
    assert done.returncode == 0, done.stderr
    stale = generate("--check", "--records", str(records), "--output", str(page), cwd=tmp_path)
    assert stale.returncode == 1
    assert stale.stderr == ("benchmarks: docs/benchmarks.md is not what the 2 records of docs/benchmarks give; run "
                            "python scripts/benchmarks.py\n")
    assert "+| `bench_tiny` --size 20 | 2025-12-01 13:58 UTC" in stale.stdout  # the diff
    assert generate("--records", str(records), "--output", str(page), cwd=tmp_path).returncode == 0
    text = page.read_text()
    current, history = text.split("## History")
    assert "cli: evalset wall time | 1.2 s |" in current and "1.5 s" not in current
    assert history.index("### 2025-12-01") < history.index("### 2025-11-30")
    assert "cli: evalset wall time 1.2 s (" in history and "cli: evalset wall time 1.5 s (" in history


def test_the_page_is_the_same_whatever_order_the_records_are_read_in(tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    for path in sorted((REPO / "docs" / "benchmarks").glob("*.json"), reverse=True):  # written newest first
        (records / path.name).write_text(path.read_text())
    done = generate("--records", str(records), "--output", str(tmp_path / "benchmarks.md"))
    assert done.returncode == 0, done.stderr
    expected = (REPO / "docs" / "benchmarks.md").read_text().replace("](benchmarks/", "](records/")
    assert (tmp_path / "benchmarks.md").read_text() == expected


def test_the_history_is_newest_first_a_day_without_a_time_last(tmp_path):
    def write(name: str, date: str, time: str | None) -> None:
        record = {"bench": "bench_x", "case": None, "date": date, "time": time,
                  "machine": dict.fromkeys(benchlib.MACHINE_KEYS), "command": None, "load": None, "commit": None,
                  "note": name, "figures": []}
        benchlib.write(record, tmp_path / f"{name}.json")

    write("a", "2026-12-04", "09:00")
    write("b", "2026-12-04", None)
    write("c", "2026-12-04", "14:27")
    write("d", "2026-12-03", "23:59")
    page = page_of(tmp_path)
    history = page.split("## History")[1]
    assert [history.index(f"Note: {name}") for name in "cabd"] == sorted(history.index(f"Note: {n}") for n in "cabd")
    assert "| `bench_x` | 2026-12-04 14:27 UTC, [record](c.json) | (no figures: see its note) | | |" in page


def page_of(folder: Path) -> str:
    done = generate("--records", str(folder), "--output", str(folder / "page.md"))
    assert done.returncode == 0, done.stderr
    return (folder / "page.md").read_text()


def test_a_bench_refuses_to_write_its_record_over_an_input_before_it_runs(tmp_path):
    (tmp_path / "link.txt").symlink_to("run.txt")
    for target in ("run.txt", "link.txt", "./run.txt"):
        done = tiny_bench(tmp_path, "run.txt", "--json", target)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr == (f"bench_tiny: --json {target.removeprefix('./')}: is one of the bench's inputs "
                               f"(run.txt); write the record elsewhere\n")
        assert (tmp_path / "run.txt").read_text() == "q1 Q0 d1 1 1.0 tiny\n"
    done = tiny_bench(tmp_path, "run.txt", "--json", str(tmp_path))
    assert done.returncode == 1 and done.stderr.endswith(": is a folder; give the record's file name "
                                                         "(docs/benchmarks/DATE-BENCH.json)\n")
    done = tiny_bench(tmp_path, "run.txt", "--json", "no/such/folder/r.json")
    assert (done.returncode, done.stderr) == (1, "bench_tiny: --json no/such/folder/r.json: the folder "
                                                 "no/such/folder does not exist\n")


def test_a_record_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("the record before\n")

    def fail(source, destination):
        raise OSError("disk full")

    monkeypatch.setattr(benchlib.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        benchlib.write_text("a new record\n", target)
    assert target.read_text() == "the record before\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left
    monkeypatch.undo()
    benchlib.write_text("a new record\n", target)
    assert target.read_text() == "a new record\n" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


GOOD = {"bench": "bench_pool", "case": None, "date": "2026-12-04", "time": "14:27",
        "machine": {"cores": 2, "ram_gib": 24, "python": None, "platform": None}, "command": ["scripts/bench_pool.py"],
        "load": "0.2-0.8", "commit": None, "note": None,
        "figures": [{"what": "evalset pool wall time", "value": 15.4, "unit": "s", "anchor": "DuckDB", "ratio": 6.5}]}


def changed(**what) -> str:
    record = json.loads(json.dumps(GOOD))
    for key, value in what.items():
        if key.startswith("figure_"):
            record["figures"][0][key.removeprefix("figure_")] = value
        elif value is KeyError:
            del record[key]
        else:
            record[key] = value
    return json.dumps(record)


@pytest.mark.parametrize(("text", "fault"), [
    ('{"bench": "bench_pool",', "not JSON: Expecting property name enclosed in double quotes at line 1 column 24"),
    ("[1, 2]", "not a JSON object but list"),
    (changed(date=KeyError, colour="red"), "missing date; unknown key colour"),
    (changed(date="2026-13-04"), "date: '2026-13-04' is not a day of the calendar"),
    (changed(date="4 Dec 2026"), "date: '4 Dec 2026' is not YYYY-MM-DD"),
    (changed(time="2:27 pm"), "time: '2:27 pm' is neither HH:MM (UTC) nor null"),
    (changed(machine={"cores": 2}), "machine: not an object of cores, ram_gib, python, platform"),
    (changed(command="scripts/bench_pool.py"), "command: neither a list of the arguments as run nor null"),
    (changed(figures=[]), "no figures and no note"),
    (changed(figure_unit="sec"), "figures[0] (evalset pool wall time): unit 'sec' is not one of s, ms, MiB, GiB, MB, "
                                 "GB, x, req/s"),
    (changed(figure_value="15.4"), "figures[0] (evalset pool wall time): value '15.4' is neither a number nor null"),
    (changed(figure_anchor=None), "figures[0] (evalset pool wall time): an anchor needs its ratio and a ratio its "
                                  "anchor"),
    (changed(figure_value=None, figure_ratio=None, figure_anchor=None),
     "figures[0] (evalset pool wall time): neither a value nor a ratio"),
])
def test_a_record_that_is_not_one_stops_the_generator_with_one_line_naming_its_file(tmp_path, text, fault):
    records = tmp_path / "records"
    records.mkdir()
    (records / "2026-12-04-1427-bench_pool.json").write_text(json.dumps(GOOD))
    (records / "2026-12-05-bench_pool.json").write_text(text)
    page = tmp_path / "page.md"
    done = generate("--records", "records", "--output", "page.md", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"benchmarks: records/2026-12-05-bench_pool.json: {fault}\n"
    assert not page.exists()  # nothing written
    assert generate("--check", "--records", "records", "--output", "page.md", cwd=tmp_path).returncode == 2


def test_a_run_that_measured_nothing_writes_no_record_and_says_so(tmp_path):
    empty = benchlib.Recorder("bench_x", tmp_path / "r.json", argv=["scripts/bench_x.py"])
    with pytest.raises(SystemExit) as stopped:
        empty.write()
    assert str(stopped.value) == (f"bench_x: --json {tmp_path / 'r.json'}: nothing written: the record of bench_x: "
                                  f"no figures and no note")
    assert list(tmp_path.iterdir()) == []
    assert benchlib.Recorder("bench_x", None).write() is None  # without --json: nothing to write, no complaint
