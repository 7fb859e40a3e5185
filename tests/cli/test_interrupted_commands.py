"""Ctrl-C (SIGINT) during a long command: one line ``evalset: interrupted`` on stderr and exit 130 (as shells
report an interrupt), never a traceback, never click's "Aborted!" with exit 1 (the status of a bug)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from evalset.cli import interrupt

REPO = Path(__file__).resolve().parents[2]


def big_run(path: Path, queries: list[str], depth: int) -> None:
    """A run of ``depth`` documents for each query (millions of lines: seconds of reading)."""
    ranks = np.tile(np.arange(1, depth + 1), len(queries))
    table = pa.table({"query": np.repeat(np.array(queries), depth), "q0": np.full(len(ranks), "Q0"),
                      "doc": np.char.add("d", ranks.astype(str)), "rank": ranks, "score": -ranks.astype(float),
                      "tag": np.full(len(ranks), "big")})
    with open(path, "wb") as handle:
        pacsv.write_csv(table, handle, pacsv.WriteOptions(include_header=False, delimiter=" ",
                                                          quoting_style="none"))


def reading(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open or mapped (it is reading its input)."""
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    try:  # read through a memory map, whose file descriptor may be closed
        if os.path.realpath(path) in Path(f"/proc/{pid}/maps").read_text():
            return True
    except OSError:
        pass
    for fd in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == os.path.realpath(path):
                return True
        except OSError:  # closed meanwhile
            continue
    return False


@pytest.mark.slow
def test_an_interrupted_command_is_one_line_and_exit_130(tmp_path):
    qrels = REPO / "data" / "dl19" / "nist.qrels"
    queries = sorted({line.split()[0] for line in qrels.read_text().splitlines() if line.strip()})
    run = tmp_path / "big.run"
    big_run(run, queries, 60_000)
    # SIGINT as a terminal delivers it: a runner started in the background (`cmd &`, nohup) ignores SIGINT, and a
    # child inherits an ignored signal (the command would then finish, status 0, as if never interrupted)
    process = subprocess.Popen([sys.executable, "-m", "evalset", "score", "--qrels", str(qrels), str(run)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not (seen := reading(process.pid, run)) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert seen, "the command ended before it could be interrupted"  # (a piece is mapped at a time: seen once)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr == "evalset: interrupted\n"


def _a_frame_inside_an_import():
    """The frame of a finder's ``find_spec``: importlib's code called it."""
    frames = []

    class Finder:
        def find_spec(self, name, path=None, target=None):
            frames.append(sys._getframe())

    sys.meta_path.insert(0, finder := Finder())
    try:
        importlib.util.find_spec("evalset_no_such_module")
    finally:
        sys.meta_path.remove(finder)
    return frames[0]


def test_ctrl_c_in_a_commands_own_code_is_a_keyboard_interrupt():
    assert not interrupt.importing(sys._getframe())
    with pytest.raises(KeyboardInterrupt):
        interrupt.on_sigint(signal.SIGINT, sys._getframe())


def test_ctrl_c_during_an_import_is_held_until_the_import_is_done():
    # raised inside an import, it can leave an import lock held (a worker's next import waits forever) or make a
    # compiled extension's start fail (DuckDB's: SIGABRT)
    frame = _a_frame_inside_an_import()
    assert interrupt.importing(frame)
    previous = signal.getsignal(signal.SIGALRM)
    try:
        try:
            interrupt.on_sigint(signal.SIGINT, frame)
        except KeyboardInterrupt:
            pytest.fail("raised during an import")
        with pytest.raises(KeyboardInterrupt):  # here, outside any import, at the next look
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.001)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _sigint_handler_after_install(start_with) -> str:
    code = "import signal; from evalset.cli import interrupt; interrupt.install(); print(repr(signal.getsignal(2)))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)},
                          preexec_fn=lambda: signal.signal(signal.SIGINT, start_with)).stdout


def test_a_command_process_takes_ctrl_c_with_this_handler_unless_sigint_is_ignored():
    assert _sigint_handler_after_install(signal.SIG_DFL).startswith("<function on_sigint ")
    assert _sigint_handler_after_install(signal.SIG_IGN).strip() == "<Handlers.SIG_IGN: 1>"  # `cmd &`: stays ignored
