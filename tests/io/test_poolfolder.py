"""A pool folder read and written in one place (evalset.io.poolfiles): the manifest refused with one line naming
pool.json, the tasks in judging order, the folder written whole with the bytes `evalset pool` writes."""

import json

import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.poolfiles import (
    POOL_FILES,
    read_pairs_and_tasks,
    read_pool_manifest,
    write_pool_folder,
)


def test_a_folder_without_pool_json_is_no_pool_folder(tmp_path):
    with pytest.raises(InputError) as caught:
        read_pool_manifest(tmp_path)
    assert caught.value.path == str(tmp_path / "pool.json")
    assert caught.value.message == "no such file: not a pool folder (evalset pool writes a pool.json in each)"
    assert read_pool_manifest(tmp_path, missing_ok=True) == {}


@pytest.mark.parametrize(("text", "message", "line"), [
    ('{"depth": 10,\n  "seed": }\n', "not valid JSON: Expecting value (column 11)", 2),
    ("", "not valid JSON: Expecting value (column 1)", 1),
    ("[1, 2]\n", "expected a JSON object (the pool's manifest), found [1, 2]", None),
    ('"pool"\n', "expected a JSON object (the pool's manifest), found 'pool'", None),
])
def test_a_manifest_that_is_not_a_json_object_is_refused_naming_the_file(tmp_path, text, message, line):
    (tmp_path / "pool.json").write_text(text)
    for missing_ok in (False, True):  # a broken manifest is refused even where a missing one is allowed
        with pytest.raises(InputError) as caught:
            read_pool_manifest(tmp_path, missing_ok=missing_ok)
        assert (caught.value.message, caught.value.path, caught.value.line) == (message, str(tmp_path / "pool.json"),
                                                                                line)
        assert "\n" not in str(caught.value)


def test_a_manifest_that_is_a_folder_or_not_utf8_is_refused(tmp_path):
    (tmp_path / "pool.json").mkdir()
    with pytest.raises(InputError, match=r"pool\.json: is a folder, not a file$"):
        read_pool_manifest(tmp_path)
    (tmp_path / "pool.json").rmdir()
    (tmp_path / "pool.json").write_bytes(b'{"corpus": "\xff"}')
    with pytest.raises(InputError, match=r"pool\.json: not UTF-8 text"):
        read_pool_manifest(tmp_path)


MANIFEST = {"depth": 10, "inputs": {"corpus": {"path": "caf\u00e9.jsonl"}}, "counts": {"pairs": 3}}
PAIRS = pd.DataFrame({"pair_id": ["p2", "p1", "p3"], "query_id": ["q", "q", "r"], "doc_id": ["b", "a", "c"],
                      "order": [1, 2, 3]})
SOURCES = pd.DataFrame({"query_id": ["q", "q", "r"], "doc_id": ["a", "b", "c"], "system": ["x", "x", "y"],
                        "rank": [1, 2, 1]})
TASKS = pd.DataFrame({"pair_id": ["p1", "p2"], "query_id": ["q", "q"], "doc_id": ["a", "b"], "query": ["Q", "Q"],
                      "text": ["line\u2028separator", "b"]})


def test_the_folder_is_written_with_the_files_and_bytes_of_evalset_pool(tmp_path):
    folder = tmp_path / "pool"
    written = write_pool_folder(folder, MANIFEST, pairs=PAIRS, sources=SOURCES, tasks=TASKS,
                                records={"slice.json": "{}\n"})
    assert written == [str(folder / name) for name in (*POOL_FILES, "slice.json")]
    assert (folder / "pool.json").read_bytes() == (json.dumps(MANIFEST, indent=2, ensure_ascii=False) + "\n").encode()
    assert (folder / "pool.tsv").read_text() == ("pair_id\tquery_id\tdoc_id\torder\n"
                                                 "p2\tq\tb\t1\np1\tq\ta\t2\np3\tr\tc\t3\n")
    assert (folder / "pool_sources.tsv").read_text().splitlines()[0] == "query_id\tdoc_id\tsystem\trank"
    assert (folder / "tasks.jsonl").read_text(encoding="utf-8").split("\n")[0] == json.dumps(
        TASKS.iloc[0].to_dict(), ensure_ascii=False)
    assert read_pool_manifest(folder) == MANIFEST
    pairs, tasks = read_pairs_and_tasks(folder)
    assert tasks["pair_id"].tolist() == ["p2", "p1"] and len(pairs) == 3  # the tasks in judging order


def test_lines_are_kept_as_they_are_and_a_folder_without_tasks_has_no_tasks_file(tmp_path):
    lines = ["pair_id\tquery_id\tdoc_id\torder\n", "p1\tq\ta\t1\n"]
    written = write_pool_folder(tmp_path / "part", {"counts": {}}, pairs=lines, sources=["query_id\tdoc_id\n"])
    assert [p.rsplit("/", 1)[1] for p in written] == ["pool.tsv", "pool_sources.tsv", "pool.json"]
    assert (tmp_path / "part" / "pool.tsv").read_text() == "".join(lines)
    assert sorted(p.name for p in (tmp_path / "part").iterdir()) == ["pool.json", "pool.tsv", "pool_sources.tsv"]


def test_an_existing_folder_is_kept_whole_unless_replaced(tmp_path):
    folder = tmp_path / "pool"
    write_pool_folder(folder, MANIFEST, pairs=PAIRS, sources=SOURCES, tasks=TASKS)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(InputError, match="exists and is not an empty folder"):
        write_pool_folder(folder, {"depth": 1}, pairs=PAIRS, sources=SOURCES)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    write_pool_folder(folder, {"depth": 1}, pairs=PAIRS, sources=SOURCES, replace=True)
    assert sorted(p.name for p in folder.iterdir()) == ["pool.json", "pool.tsv", "pool_sources.tsv"]  # no old tasks
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool"]  # nothing left aside


def test_a_task_outside_pool_tsv_is_refused_naming_tasks_jsonl(tmp_path):
    stray = pd.concat([TASKS, TASKS.iloc[:1].assign(pair_id="p9")], ignore_index=True)
    write_pool_folder(tmp_path / "pool", MANIFEST, pairs=PAIRS, sources=SOURCES, tasks=stray)
    with pytest.raises(InputError) as caught:
        read_pairs_and_tasks(tmp_path / "pool")
    assert (caught.value.message, caught.value.path) == ("pair_id p9 of tasks.jsonl is not in pool.tsv",
                                                         str(tmp_path / "pool" / "tasks.jsonl"))
