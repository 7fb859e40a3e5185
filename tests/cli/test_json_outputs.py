"""`--format json` on the commands that gained it (issue 75): verify, diff, freeze (set and grow) and pool print
their result as one JSON object through `emit`, the files they wrote in its `written` list (the table format prints
them as `wrote PATH` lines after the result, as before); and the commands still without a result format are the
ones listed here, so that a new command cannot forget it."""

import json

from click.testing import CliRunner

from evalset.cli import main
from evalset.cli.vocabulary import options_of, runnable_commands

WITHOUT_FORMAT: set[str] = set()
"""Commands without ``--format``: none (every command prints its result in table or JSON)."""


def invoke(*args):
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return result


def test_the_commands_without_a_result_format_are_only_these():
    lacking = {path for path, command in runnable_commands(main).items()
               if not any(option.name == "output_format" for option in options_of(command))}
    assert lacking <= WITHOUT_FORMAT, lacking - WITHOUT_FORMAT


def test_freeze_verify_and_diff_print_their_results_as_json(tmp_path):
    frozen = json.loads(invoke("freeze", "data/dl19/nist.qrels", "--queries", "data/dl19/topics.tsv", "--guideline",
                               "relevance-v2", "--name", "dl19", "--sets-dir", tmp_path / "sets", "--format",
                               "json").stdout)
    version = tmp_path / "sets" / "dl19" / "v1"
    assert frozen["path"] == str(version) and frozen["manifest"]["counts"]["judgments"] == 9260
    assert frozen["same_as_parent"] is False
    verified = json.loads(invoke("verify", version, "--format", "json").stdout)
    assert verified == {"path": str(version), "status": "OK", "problems": [], "unverified": None, "copy_of": None,
                        "collections": {}, "upstream": None}
    again = json.loads(invoke("freeze", "data/dl19/nist.qrels", "--queries", "data/dl19/topics.tsv", "--guideline",
                              "relevance-v2", "--name", "dl19", "--sets-dir", tmp_path / "sets", "--format",
                              "json").stdout)
    assert again["same_as_parent"] is True and any("same" in note for note in again["notes"])
    diffed = json.loads(invoke("diff", version, tmp_path / "sets" / "dl19" / "v2", "--runs",
                               "data/dl19/runs/bm25base_p.run.gz", "--format", "json").stdout)
    assert diffed["changes"] == [] and diffed["contract"] == []
    assert [(row["run"], round(row["old"], 4), round(row["new"], 4)) for row in diffed["scores"]] == [
        ("bm25base_p", 0.5058, 0.5058)]


def test_pool_lists_the_files_it_wrote_in_its_json_and_after_its_table(tmp_path):
    document = json.loads(invoke("pool", "data/dl19/runs/bm25base_p.run.gz", "-k", 5, "-o", tmp_path / "pool",
                                 "--format", "json").stdout)
    names = ["pool.tsv", "pool_sources.tsv", "pool.json"]
    assert document["written"] == [str(tmp_path / "pool" / name) for name in names]
    assert document["manifest"]["counts"]["pairs"] == 43 * 5 and document["nothing_left"] is False
    table = invoke("pool", "data/dl19/runs/bm25base_p.run.gz", "-k", 5, "-o", tmp_path / "again").stdout
    assert table.splitlines()[-3:] == [f"wrote {tmp_path / 'again' / name}" for name in names]


def test_sample_prints_its_manifest_as_json_with_the_files_it_wrote(tmp_path):
    document = json.loads(invoke("sample", "data/querylog/excite-small.log", "-l", "header=no", "-l", "query=3",
                                 "--per-stratum", 5, "-o", tmp_path / "queries.tsv", "--format", "json").stdout)
    assert document["stage"] == "sample" and document["submissions"]["read"] == 4501
    assert [stratum["sampled"] for stratum in document["strata"]] == [5, 5, 5]
    assert document["written"] == [str(tmp_path / "queries.tsv"), str(tmp_path / "queries.manifest.json")]
    assert json.loads((tmp_path / "queries.manifest.json").read_text()) == {
        key: value for key, value in document.items() if key != "written"}
