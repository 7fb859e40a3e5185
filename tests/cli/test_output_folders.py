"""Output folders (`pool -o`, `holes -o`, `estimate select -o`): refused when they hold an input or lie in a
frozen set version, refused when they hold work in progress unless --force, and never left mixed: built aside and
renamed into place, --force swapping the new folder in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.pooling import PoolSpec, build_from_spec, write_pool

REPO = Path(__file__).resolve().parents[2]
DL19 = REPO / "data" / "dl19"
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
RUNS = [DL19 / "runs" / "ICT-BERT2.run.gz", DL19 / "runs" / "ICT-CKNRM_B.run.gz"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def runs(tmp_path) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    for run in RUNS:
        shutil.copy(run, folder / run.name)
    return folder


@pytest.fixture
def frozen(tmp_path) -> Path:
    result = invoke("freeze", DL19 / "nist.qrels", "--queries", DL19 / "topics.tsv", "--guideline", GUIDELINE,
                    "--name", "dl19", "--sets-dir", tmp_path / "sets")
    assert result.exit_code == 0, result.output
    return tmp_path / "sets" / "dl19" / "v1"


def pool(*args):
    return invoke("pool", *RUNS, "-k", "2", *args)


def test_a_pool_into_its_runs_folder_is_refused_and_the_runs_stay_runs(runs):
    before = snapshot(runs)
    result = invoke("pool", runs, "-k", "2", "-o", runs)
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: -o {runs} is the input RUNS {runs}: writing the folder would destroy "
                             "the input; choose another output folder\n")
    assert snapshot(runs) == before
    assert invoke("score", "--qrels", DL19 / "nist.qrels", runs).exit_code == 0


def test_holes_into_a_runs_folder_or_a_frozen_version_are_refused(runs, frozen):
    before = snapshot(frozen)
    result = invoke("holes", "--set", frozen, *sorted(runs.iterdir()), "-o", runs)
    assert result.exit_code == 2 and result.output.startswith(f"evalset: error: -o {runs} holds the input "), \
        result.output
    result = invoke("holes", "--qrels", DL19 / "nist.qrels", *sorted(runs.iterdir()), "-o", frozen, "--force")
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: -o {frozen}: is the frozen set version {frozen}, which is never "
                             "rewritten; choose an output outside it\n")
    assert snapshot(frozen) == before
    assert invoke("verify", frozen).exit_code == 0


def test_a_slice_into_a_frozen_version_or_inside_one_is_refused(tmp_path, frozen):
    assert pool("-o", tmp_path / "pool").exit_code == 0
    for output in (frozen, frozen / "slice"):
        result = invoke("estimate", "select", "slice", tmp_path / "pool", "--size", "2", "-o", output)
        assert result.exit_code == 2, result.output
        assert f"the frozen set version {frozen}, which is never rewritten" in result.output
    assert not (frozen / "slice").exists() and invoke("verify", frozen).exit_code == 0


def test_an_existing_pool_is_refused_unless_force_and_force_replaces_it_whole(tmp_path):
    folder = tmp_path / "pool"
    assert invoke("pool", *RUNS, "-k", "5", "--queries", DL19 / "topics.tsv", "--corpus",
                  DL19 / "passages.jsonl.gz", "-o", folder).exit_code == 0
    work = snapshot(folder)
    assert "tasks.jsonl" in work
    result = pool("-o", folder)
    assert result.exit_code == 2
    assert result.output.startswith(f"evalset: error: -o {folder}: exists and holds 4 file(s) (pool.json, ")
    assert "give --force to replace the folder" in result.output
    assert snapshot(folder) == work
    result = pool("-o", folder, "--force")
    assert result.exit_code == 0, result.output
    assert sorted(snapshot(folder)) == ["pool.json", "pool.tsv", "pool_sources.tsv"]  # no tasks of the old pool
    assert json.loads((folder / "pool.json").read_text())["depth"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool"]  # no build or old folder left beside it


def test_force_never_replaces_a_folder_of_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    result = pool("-o", tmp_path, "--force")
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: -o {tmp_path}: holds notes.txt, which this command does not write; "
                             "--force replaces only a folder of its own files: choose a new folder\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_an_existing_slice_or_holes_pool_is_refused_unless_force(tmp_path):
    assert pool("-o", tmp_path / "pool").exit_code == 0
    assert invoke("estimate", "select", "slice", tmp_path / "pool", "--size", "3", "-o",
                  tmp_path / "slice").exit_code == 0
    record = (tmp_path / "slice" / "slice.json").read_bytes()
    result = invoke("estimate", "select", "slice", tmp_path / "pool", "--size", "2", "-o", tmp_path / "slice")
    assert result.exit_code == 2 and "give --force to replace the folder" in result.output
    assert (tmp_path / "slice" / "slice.json").read_bytes() == record
    result = invoke("estimate", "select", "slice", tmp_path / "pool", "--size", "2", "-o", tmp_path / "slice",
                    "--force")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "slice" / "slice.json").read_text())["slice"] != json.loads(record)["slice"]
    qrels = DL19 / "nist.qrels"
    result = invoke("holes", "--qrels", qrels, *RUNS, "-o", tmp_path / "pool")
    assert result.exit_code == 2 and f"-o {tmp_path / 'pool'}: exists and holds 3 file(s)" in result.output


def test_an_interrupted_write_leaves_the_old_folder_whole(tmp_path, monkeypatch):
    folder = tmp_path / "pool"
    old = build_from_spec(PoolSpec(runs=tuple(map(str, RUNS)), depth=20))
    write_pool(old, folder)
    before = snapshot(folder)
    new = build_from_spec(PoolSpec(runs=tuple(map(str, RUNS)), depth=10))
    import evalset.io.poolfiles as module

    def interrupted(frame, path):  # Ctrl-C after pool.tsv is written, before pool_sources.tsv
        if path.endswith("pool_sources.tsv"):
            raise KeyboardInterrupt
        return real(frame, path)

    real = module._write_tsv
    monkeypatch.setattr(module, "_write_tsv", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_pool(new, folder, replace=True)
    assert snapshot(folder) == before  # the depth-20 pool, whole: no depth-10 pool.tsv beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool"]
    monkeypatch.setattr(module, "_write_tsv", real)
    write_pool(new, folder, replace=True)
    assert json.loads((folder / "pool.json").read_text())["depth"] == 10
