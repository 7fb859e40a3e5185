"""`evalset reusability` on TREC DL 2019: its outputs, and bad inputs refused in one line with nothing written."""

import json

import pytest
from click.testing import CliRunner

from evalset.cli import main
from tests.support.options import HUGE, not_one_of, refusal


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    return {"qrels": str(root / "qrels.txt"), "runs": str(root / "runs" / "official_top100"),
            "metadata": str(root / "run_metadata.tsv"), "root": root}


def invoke(*args):
    return CliRunner().invoke(main, ["reusability", *map(str, args)])


@pytest.mark.slow
def test_json_and_plot_on_the_37_runs_and_12_participants(dl19, tmp_path):
    plot = tmp_path / "drops.png"
    result = invoke("--qrels", dl19["qrels"], dl19["runs"], "--depth", 10, "--groups", dl19["metadata"],
                    "--run-column", "runid", "--group-column", "participant", "--format", "json", "--plot", plot)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["metric"], document["depth"], document["queries"]) == ("ndcg@10", 10, 43)
    runs, groups = document["leave_one_run_out"], document["leave_one_group_out"]
    assert len(runs["rows"]) == 37 and len(groups["groups"]) == 12
    assert runs["summary"]["largest_drop"]["run"] == "ICT-CKNRM_B50"
    assert round(runs["summary"]["kendall_tau"], 3) == 0.964 and round(groups["summary"]["kendall_tau"], 3) == 0.883
    idst = next(g for g in groups["groups"] if g["owner"] == "IDST")
    assert (idst["runs"], idst["unique_relevant"]) == (5, 31)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "note: 1 of the 37 run(s) have unjudged documents in their top 10" in result.stderr


@pytest.mark.slow
def test_the_table_without_groups(dl19):
    result = invoke("--qrels", dl19["qrels"], dl19["runs"], "-k", 10, "-m", "ap")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ap, pool depth 10: 37 runs, 43 judged queries, 9260 judgments")
    assert "Leave one run out:" in result.stdout and "Leave one group out:" not in result.stdout


@pytest.mark.parametrize("case", ["new run", "unknown runs", "same name", "too deep", "empty groups", "columns"])
def test_bad_inputs_are_one_line_exit_2_and_nothing_written(dl19, tmp_path, case):
    plot = tmp_path / "drops.png"
    tasb = dl19["root"] / "runs" / "rankllm" / "D_BERT_KD_TASB.dl19.top100.run.gz"
    bm25 = dl19["root"] / "runs" / "official_top100" / "bm25base_p.run.gz"
    header_only = tmp_path / "groups.tsv"
    header_only.write_text("run\tgroup\n")
    args, message = {
        "new run": ([dl19["runs"], tasb], "1 run(s) were not among the runs that made the pool at depth 10: "
                                          "D_BERT_KD_TASB.dl19.top100 (9.8% of its top 10 unjudged)"),
        "unknown runs": ([bm25, dl19["runs"] + "/p_bert.run.gz", "--groups", dl19["metadata"], "--run-column",
                          "runid", "--group-column", "participant"], "group file names unknown runs bm25base_ax_p"),
        "same name": ([dl19["runs"], tmp_path / "bm25base_p.run.gz"], "two runs are named 'bm25base_p'"),
        "too deep": ([dl19["runs"], "--depth", 101], "depth 101 is larger than every ranking of 37 run(s)"),
        "empty groups": ([dl19["runs"], "--groups", header_only], "no runs: the group file has a header"),
        "columns": ([dl19["runs"], "--group-column", "participant"], "--run-column and --group-column name the "
                                                                      "columns of --groups"),
    }[case]
    if case == "same name":
        (tmp_path / "bm25base_p.run.gz").write_bytes(bm25.read_bytes())
    depth = [] if "--depth" in args else ["--depth", 10]
    result = invoke("--qrels", dl19["qrels"], *args, *depth, "--plot", plot)
    assert result.exit_code == 2, result.output
    last = result.stderr.strip().splitlines()[-1]  # a usage error is click's: usage, then its one-line error
    assert message in last and (case == "columns" or len(result.stderr.strip().splitlines()) == 1), result.stderr
    assert not plot.exists() and result.stdout == ""


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--depth", 0, "must be an integer in [1, 1000000], got 0"),
    ("--depth", -1, "must be an integer in [1, 1000000], got -1"),
    ("--depth", HUGE, f"must be an integer in [1, 1000000], got {HUGE}"),
    ("--depth", "inf", "must be an integer in [1, 1000000], got 'inf'"),
    ("--format", "tsv", not_one_of("tsv", "table", "json")),
    ("--split", "train", not_one_of("train", "test", "dev", "all")),
])
def test_an_option_off_its_rule_is_refused_naming_it(option, value, said):
    assert refusal(["reusability"], option, value) == said
