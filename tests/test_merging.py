"""`evalset freeze --merge dawid-skene|one-coin|mace|glad` and `--merge exclude=NAMES`: crowd-kit's grades in the
qrels, the rule, its parameters and crowd-kit's version in the manifest, excluded labels counted (DL19: the NIST
grades and three LLM judges as one crowd)."""

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from crowdkit.aggregation import DawidSkene

from evalset.cli import main
from evalset.io.trec import read_qrels

REPO = Path(__file__).resolve().parents[1]
DL19 = REPO / "data" / "dl19"
JUDGES = sorted((DL19 / "llm_labels").glob("*.qrels"))


def freeze(tmp_path, *args):
    return CliRunner().invoke(main, [str(a) for a in (
        "freeze", DL19 / "nist.qrels", *[x for j in JUDGES for x in ("--llm", j)], "--queries",
        DL19 / "topics.tsv", "--guideline", REPO / "guidelines" / "relevance-v2.md", "--name", "crowd",
        "--sets-dir", tmp_path, "--merge", "llm=yes", "--merge", "max_gap=3", *args)])


def manifest(tmp_path):
    return json.loads((tmp_path / "crowd" / "v1" / "manifest.json").read_text())


@pytest.mark.slow
def test_dawid_skene_qrels_are_crowd_kits_grades_and_the_manifest_records_the_model(tmp_path):
    result = freeze(tmp_path, "--merge", "dawid-skene")
    assert result.exit_code == 0, result.output
    frames = [read_qrels(DL19 / "nist.qrels").assign(worker="nist")]
    frames += [read_qrels(j).assign(worker=j.stem) for j in JUDGES]
    long = pd.concat(frames)
    long = long[long["grade"] >= 0]
    crowd = pd.DataFrame({"task": long["query_id"] + " " + long["doc_id"], "worker": long["worker"],
                          "label": long["grade"].astype(int)}).sort_values(["task", "worker"])
    expected = DawidSkene(n_iter=100, tol=1e-5).fit_predict(crowd)
    frozen = read_qrels(tmp_path / "crowd" / "v1" / "qrels.txt")
    got = dict(zip(frozen["query_id"] + " " + frozen["doc_id"], frozen["grade"], strict=True))
    assert len(got) == len(expected) == 9260 and got == {k: int(v) for k, v in expected.items()}
    merge = manifest(tmp_path)["merge"]
    assert merge["rule"] == "dawid-skene" and merge["allow_llm"] is True
    assert merge["aggregation"]["library"] == "crowd-kit" and merge["aggregation"]["class"] == "DawidSkene"
    assert merge["aggregation"]["version"].startswith("1.4.")
    assert merge["aggregation"]["parameters"] == {"n_iter": 100, "tol": 1e-5}
    assert "excluded_labels" not in merge


@pytest.mark.slow
def test_an_excluded_annotator_takes_no_part_and_is_counted(tmp_path):
    result = freeze(tmp_path, "--merge", "one-coin", "--merge", "exclude=flan-t5-large.fourprompts")
    assert result.exit_code == 0, result.output
    assert "note: 9260 labels of flan-t5-large.fourprompts kept in labels.tsv but not merged" in result.output
    merge = manifest(tmp_path)["merge"]
    assert merge["excluded_labels"] == {"flan-t5-large.fourprompts": 9260}
    assert merge["aggregation"]["class"] == "OneCoinDawidSkene"
    kept = pd.read_csv(tmp_path / "crowd" / "v1" / "labels.tsv", sep="\t")
    assert kept["annotator"].nunique() == 4 and len(kept) == 4 * 9260


def test_an_unknown_annotator_name_is_an_error_and_nothing_is_frozen(tmp_path):
    result = freeze(tmp_path, "--merge", "mace", "--merge", "exclude=nobody")
    assert result.exit_code == 2
    assert "no annotator named nobody" in result.output and "llama-3-70b.fourprompts" in result.output
    assert not (tmp_path / "crowd" / "v1").exists()


@pytest.mark.slow
def test_the_earlier_rules_add_no_key_to_the_manifest(tmp_path):
    assert freeze(tmp_path, "--merge", "annotator-priority", "--merge", "priority=nist").exit_code == 0
    assert set(manifest(tmp_path)["merge"]) == {
        "rule", "allow_llm", "max_gap", "priority", "pairs", "merged", "unresolved", "adjudicated", "multiply_judged",
        "llm_labels_left_out", "conflicting_grades", "unjudged", "collapsed_duplicates", "conflicting_grades_settled",
        "judged_more_than_once", "repeated_by_one_annotator"}
