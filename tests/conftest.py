import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]

# The property suites' two profiles (scripts/test.sh --quick chooses `quick`; the full suite runs `full`): the same
# examples on every run (derandomized, no example database), so CI is reproducible and a failure replays. A property
# over a whole command (a comparison with its holes' bound: ~0.4 s an example) runs the profile's examples; one over
# a pure function runs CHEAP_FACTOR times as many (docs/compare.md lists the counts).
PROPERTY_EXAMPLES = {"quick": 8, "full": 40}
CHEAP_FACTOR = 25
PROPERTY_PROFILE = os.environ.get("EVALSET_PROPERTY_PROFILE", "full")
for _name, _examples in PROPERTY_EXAMPLES.items():
    settings.register_profile(_name, max_examples=_examples, deadline=None, derandomize=True, database=None,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                     HealthCheck.filter_too_much])
settings.load_profile(PROPERTY_PROFILE)
CHEAP = settings(max_examples=PROPERTY_EXAMPLES[PROPERTY_PROFILE] * CHEAP_FACTOR)
"""The settings of a property over a pure function (``@CHEAP`` above ``@given``)."""
SHARED = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"shared data not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def trec_eval_10(tmp_path_factory) -> Path:
    """NIST's trec_eval 10.0, built once a session from ../shared/tools (skipped with the reason it cannot be)."""
    from tests.support.trec_eval10 import build

    built = build(tmp_path_factory.mktemp("trec_eval"))
    if isinstance(built, str):
        pytest.skip(built)
    return built


# --- a real Label Studio server (tests marked `labelstudio`)
# The server is started once per session with scripts/label-studio.sh. When EVALSET_TEST_LS_DATA_DIR and
# EVALSET_TEST_LS_PORT are set (.ci/run sets them after starting the server itself), that server is used and
# left running for its owner to stop; otherwise the fixture starts one on a free port with a temporary data
# directory and stops it after the session. The first start on a machine installs Label Studio (minutes).
@dataclass
class LabelStudioServer:
    url: str
    api_key: str
    data_dir: str
    port: int

    def start(self) -> None:
        """(Re)start the server with the script; a running server is left as it is."""
        _label_studio_script("start", self.port, self.data_dir)

    def kill(self) -> None:
        """SIGKILL the server process (as a crash would), and wait until the port answers no more."""
        pid = int(Path(self.data_dir, "evalset-server.pid").read_text())
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)

    def env(self) -> dict[str, str]:
        return {"LABEL_STUDIO_URL": self.url, "LABEL_STUDIO_API_KEY": self.api_key}


def _label_studio_script(command: str, port: int, data_dir: str) -> dict[str, str]:
    done = subprocess.run(["bash", str(REPO / "scripts" / "label-studio.sh"), command, "--port", str(port),
                           "--data-dir", data_dir], capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        pytest.fail(f"scripts/label-studio.sh {command} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory) -> Iterator[LabelStudioServer]:
    data_dir = os.environ.get("EVALSET_TEST_LS_DATA_DIR")
    owned = not data_dir
    if owned:
        data_dir = str(tmp_path_factory.mktemp("label-studio"))
        port = _free_port()
    else:
        port = int(os.environ["EVALSET_TEST_LS_PORT"])
    connection = _label_studio_script("start", port, data_dir)
    server = LabelStudioServer(connection["LABEL_STUDIO_URL"], connection["LABEL_STUDIO_API_KEY"], data_dir, port)
    yield server
    if owned:
        subprocess.run(["bash", str(REPO / "scripts" / "label-studio.sh"), "stop", "--data-dir", data_dir],
                       capture_output=True, timeout=120)


@pytest.fixture
def ls_client(label_studio, monkeypatch):
    """A label-studio-sdk client of the test server, connected as evalset connects (from the environment)."""
    from evalset import labelstudio

    for name, value in label_studio.env().items():
        monkeypatch.setenv(name, value)
    return labelstudio.connect()


def grade_annotation(task_id: int, user_id: int, grade: int | None = None, comment: str | None = None,
                     cancelled: bool = False) -> dict:
    """The keyword arguments of ``client.annotations.create`` for an annotator's grade (and comment) of a task."""
    result = []
    if grade is not None:
        result.append({"from_name": "grade", "to_name": "text", "type": "choices", "value": {"choices": [str(grade)]}})
    if comment is not None:
        result.append({"from_name": "comment", "to_name": "text", "type": "textarea", "value": {"text": [comment]}})
    return dict(id=task_id, result=result, completed_by=user_id, was_cancelled=cancelled)


# --- a local Spark (tests marked `spark`)
# One session for the whole test session (local[2], small shuffles, the warehouse under tmp), created through
# evalset's own spark_session so that every `--engine spark` run in the tests uses it. Skipped, saying why,
# where PySpark or Java is missing; CI installs both (scripts/test.sh, .ci/run -> scripts/install-java.sh).
@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    import importlib.util
    import shutil

    if importlib.util.find_spec("pyspark") is None:
        pytest.skip("PySpark is not installed: pip install 'evalset[spark]'")
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        pytest.skip("no Java for Spark (java not on PATH, no JAVA_HOME): bash scripts/install-java.sh")
    from evalset.sampling import spark_session

    session = spark_session("local[2]", {"spark.sql.shuffle.partitions": "2",
                                         "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("spark-warehouse"))})
    yield session
    session.stop()


# --- markers (pyproject.toml): `service` covers the tests marked labelstudio or spark; `slow` is a test over about a
# second. A test over SLOW_SECONDS (setup, call or teardown) marked neither is named at the end of the run.
SLOW_SECONDS = 5.0
_unmarked_slow: list[str] = []


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("labelstudio") or item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.service)


_compatibility: list[str] = []  # what the tests against the field's reference programs measured (record_property)
_fuzzing: list[str] = []  # the cases each command's hostile options ran (tests/cli/test_fuzz_options.py)


def pytest_runtest_logreport(report):
    # with pytest-xdist the workers' user_properties reach the controller's logreport: the lines print there too
    _compatibility.extend(value for name, value in report.user_properties if name == "compatibility")
    _fuzzing.extend(value for name, value in report.user_properties if name == "fuzz")
    if report.duration > SLOW_SECONDS and "slow" not in report.keywords and "service" not in report.keywords:
        _unmarked_slow.append(f"{report.duration:.1f}s {report.when} {report.nodeid}")


def pytest_terminal_summary(terminalreporter):
    if _compatibility:
        terminalreporter.write_sep("=", "against the reference programs (trec_eval 10.0, ir_measures' suite)")
        for line in dict.fromkeys(_compatibility):
            terminalreporter.write_line(line)
    if _fuzzing:
        terminalreporter.write_sep("=", "fuzzing the command line (tests/cli/test_fuzz_options.py)")
        for line in dict.fromkeys(_fuzzing):
            terminalreporter.write_line(line)
    if _unmarked_slow:
        terminalreporter.write_sep("=", f"over {SLOW_SECONDS:g} s without the slow marker (mark them slow)")
        for line in _unmarked_slow:
            terminalreporter.write_line(line)
