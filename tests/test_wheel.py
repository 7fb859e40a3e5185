"""The wheel works without the checkout (issue 54): built by ``python -m build``, installed into a fresh virtual
environment, and run from a folder outside the repository with nothing of the checkout on Python's path. The wheel is
built from the source distribution, itself built from a copy of the repository's files, so that both carry every
file and nothing else.

The fresh environment takes evalset from the wheel alone (``pip install --no-deps``); its dependencies are the test
environment's, reached through a path entry (a ``.pth`` line), which holds no evalset (the checkout's editable install
is a ``.pth`` file that Python reads only in a site directory, not on a path entry). So the wheel's own content is
what runs: its modules, its entry point and every file the package reads at run time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import evalset
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate, prepare_qrels
from tests.conftest import REPO
from tests.support.openai_server import Behaviour, JudgeServer

pytestmark = pytest.mark.slow

DL19 = REPO / "data" / "dl19"
RUNS = [DL19 / "runs" / "ICT-BERT2.run.gz", DL19 / "runs" / "ICT-CKNRM_B.run.gz"]


@dataclass(frozen=True)
class Installed:
    wheel: Path
    environment: Path
    folder: Path  # a folder outside the checkout, where the commands run

    def run(self, *args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        clean = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
        return subprocess.run([str(self.environment / "bin" / "evalset"), *map(str, args)], cwd=self.folder,
                              capture_output=True, text=True, env=clean | (env or {}), timeout=300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    # from a copy of the repository's files (tracked or new, not ignored): nothing an earlier build or the editable
    # install left in the checkout (build/, evalset.egg-info/SOURCES.txt) can slip into the wheel
    source = root / "source"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(root / "dist"), str(source)], check=True,
                   capture_output=True)
    (wheel,) = (root / "dist").glob("evalset-*.whl")
    environment = root / "fresh"
    venv.create(environment)
    target = Path(subprocess.run([str(environment / "bin" / "python"), "-c",
                                  "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip())
    (target / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(environment / "bin" / "python"), "install", "-q",
                    "--no-deps", "--disable-pip-version-check", str(wheel)], check=True, capture_output=True)
    folder = root / "elsewhere"
    folder.mkdir()
    return Installed(wheel, environment, folder)


def test_the_fresh_environment_runs_the_wheel_and_not_the_checkout(installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    wanted = {str(path.relative_to(REPO)) for path in (REPO / "evalset").rglob("*")
              if path.is_file() and "__pycache__" not in path.parts}
    assert wanted - names == set()  # every module and every data file
    python = str(installed.environment / "bin" / "python")
    where = subprocess.run([python, "-c", "import evalset; print(evalset.__file__)"], cwd=installed.folder,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(installed.environment) and not Path(where).is_relative_to(REPO)
    version = installed.run("--version")
    assert version.returncode == 0 and version.stdout == f"evalset, version {evalset.__version__}\n"


def test_score_and_compare_from_the_wheel_print_what_the_library_computes(installed):
    scored = installed.run("score", "--qrels", DL19 / "nist.qrels", RUNS[0], "-m", "ndcg@10", "--format", "json")
    assert scored.returncode == 0, scored.stderr
    mean = json.loads(scored.stdout)["runs"]["ICT-BERT2"]["ndcg@10"]["mean"]
    expected = evaluate(read_run(RUNS[0]), prepare_qrels(read_qrels(DL19 / "nist.qrels")), ["ndcg@10"])["ndcg@10"]
    assert mean == pytest.approx(expected.mean(), abs=1e-12) and round(mean, 4) == 0.665
    compared = installed.run("compare", "--qrels", DL19 / "nist.qrels", *RUNS, "-m", "ndcg@10")
    assert compared.returncode == 0, compared.stderr
    assert "ICT-CKNRM_B" in compared.stdout and "ndcg@10" in compared.stdout


def test_pool_from_a_spec_and_the_judge_with_its_packaged_prompt_and_guideline_run_from_the_wheel(installed):
    pool = installed.folder / "pool"
    pooled = installed.run("pool", "--spec", REPO / "pools" / "dl19-demo.toml", "--budget", "12", "-o", pool)
    assert pooled.returncode == 0, pooled.stderr
    assert len((pool / "pool.tsv").read_text().splitlines()) == 1 + 12
    labels = installed.folder / "llm-labels.tsv"
    with JudgeServer(Behaviour()) as server:
        judged = installed.run("judge", pool, "--guideline", "relevance-v2", "--model", "judge-test", "-o", labels,
                               "--base-url", server.base_url, "--no-progress", env={"OPENAI_API_KEY": "sk-test"})
        assert judged.returncode == 0, judged.stderr
        prompts = [record.prompt for record in server.chat_records()]
    assert len(prompts) == 12 and len(labels.read_text().splitlines()) == 1 + 12
    # the packaged template, read at run time: its opening sentence begins every prompt; the shipped guideline, given
    # by its name, is in every prompt
    assert all(prompt.startswith("You are a relevance assessor for a search evaluation set.") for prompt in prompts)
    guideline = (REPO / "guidelines" / "relevance-v2.md").read_text().split("+++")[2].strip()
    assert all(guideline[:400] in prompt for prompt in prompts)
