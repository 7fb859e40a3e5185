"""Several LLM judges as one, calibrated on the humans and cross-fitted by query: a single judge's calibration
equals a direct computation of the shrunk shares; no query's own human grades reach its prediction; the ensemble
is an annotator of `agreement`, a judge of `estimate`, and a labels file of `judge ensemble`."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from evalset.errors import InputError
from evalset.judgments.calibration import JUDGE_PSEUDO_COUNT
from evalset.judgments.ensemble import ensemble_files, ensemble_grades
from evalset.judgments.reading import read_grades
from tests.support.dl19files import NIST, invoke, qrels_grades
from tests.support.options import not_one_of, refusal

JUDGES = ["data/dl19/llm_labels/llama-3-70b.fourprompts.qrels", "data/dl19/llm_labels/flan-t5-large.fourprompts.qrels",
          "data/dl19/llm_labels/llama-3-8b.baseline.qrels"]


def _judgments(paths, kind):
    return read_grades([(path, kind) for path in paths], kind=kind).judgments


def test_one_judge_calibrated_is_the_shrunk_human_shares_of_its_grade_on_the_other_queries():
    human = qrels_grades(NIST).astype(int).rename("human")
    judge = qrels_grades(JUDGES[0]).astype(int).rename("judge")
    table = pd.concat([human, judge], axis=1).reset_index()
    result = ensemble_files(JUDGES[:1], [NIST], [0, 1, 2, 3])
    assert result.name == "calibrated(llama-3-70b.fourprompts)"
    queries = sorted(table["query_id"].unique())
    for query in queries[:5]:
        others = table[table["query_id"] != query]
        overall = np.bincount(others["human"], minlength=4) / len(others)
        mine = table[table["query_id"] == query]
        for grade in sorted(mine["judge"].unique()):
            cell = others[others["judge"] == grade]
            shares = np.bincount(cell["human"], minlength=4) / len(cell)
            p = (len(cell) * shares + JUDGE_PSEUDO_COUNT * overall) / (len(cell) + JUDGE_PSEUDO_COUNT)
            expected = float(p @ np.arange(4))
            docs = mine.loc[mine["judge"] == grade, "doc_id"]
            got = result.grades.set_index(["query_id", "doc_id"]).loc[[(query, d) for d in docs]]
            assert got["expected"].to_numpy() == pytest.approx(expected, abs=1e-12)
            assert set(got["grade"]) == {int(np.floor(expected + 0.5))}


@pytest.mark.slow
def test_a_querys_own_human_grades_never_reach_its_prediction():
    judges = _judgments(JUDGES, "llm")
    human = _judgments([NIST], "human")
    before = ensemble_grades(judges, human, [0, 1, 2, 3]).grades.set_index(["query_id", "doc_id"])
    query = before.index.get_level_values(0)[0]
    flipped = human.assign(grade=np.where(human["query_id"] == query, 3 - human["grade"], human["grade"]))
    after = ensemble_grades(judges, flipped, [0, 1, 2, 3]).grades.set_index(["query_id", "doc_id"])
    own = before.index.get_level_values(0) == query
    assert np.array_equal(before.loc[own, "expected"], after.loc[own, "expected"])
    assert not np.allclose(before.loc[~own, "expected"], after.loc[~own, "expected"])


@pytest.mark.slow
def test_agreement_adds_the_ensemble_as_an_annotator_whose_kappa_is_scikit_learns(tmp_path):
    result = invoke("agreement", NIST, *JUDGES, "--human", "nist", "--ensemble", "--resamples", 0,
                    "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    name = "ensemble(llama-3-70b.fourprompts+flan-t5-large.fourprompts+llama-3-8b.baseline)"
    pair = next(p for p in document["pairs"] if {p["a"], p["b"]} == {"nist", name})
    written = tmp_path / "ensemble.tsv"
    made = invoke("judge", "ensemble", *JUDGES, "--human", NIST, "-o", written)
    assert made.exit_code == 0, made.output
    assert made.output.splitlines()[-1] == f"wrote {written}"
    labels = pd.read_csv(written, sep="\t", dtype={"query_id": str, "doc_id": str})
    assert set(labels["annotator"]) == {name} and set(labels["kind"]) == {"llm"}
    both = labels.merge(qrels_grades(NIST).astype(int).rename("human").reset_index(), on=["query_id", "doc_id"])
    assert len(both) == 9260
    assert pair["kappa_quadratic"] == pytest.approx(cohen_kappa_score(both["human"], both["grade"],
                                                                      weights="quadratic"), abs=1e-12)
    assert pair["kappa_quadratic"] == pytest.approx(0.548, abs=1e-3)


def test_an_ensemble_needs_a_human_grade_of_a_pair_every_judge_graded(tmp_path):
    other = tmp_path / "other.qrels"
    other.write_text("q1 0 d1 1\n")
    with pytest.raises(InputError, match="no pair graded by every judge has a human grade"):
        ensemble_files(JUDGES[:2], [other], [0, 1, 2, 3])
    partial = tmp_path / "partial.qrels"
    partial.write_text("zz 0 d1 1\n")
    with pytest.raises(InputError, match="no pair is graded by every judge"):
        ensemble_files([JUDGES[0], partial], [NIST], [0, 1, 2, 3])
    refused = invoke("judge", "ensemble", JUDGES[0], "--human", NIST, "-o", NIST)
    assert refused.exit_code == 2


@pytest.mark.slow
def test_estimate_with_ensemble_is_the_estimate_with_the_ensemble_calibrated_on_the_slice(tmp_path):
    pool = tmp_path / "pool"
    assert invoke("pool", "--spec", "pools/dl19-demo.toml", "--depth", "3", "-o", pool).exit_code == 0
    chosen = tmp_path / "slice"
    assert invoke("estimate", "select", "slice", pool, "--size", 10, "--seed", 5, "-o", chosen).exit_code == 0
    queries = set(json.loads((chosen / "slice.json").read_text())["slice"])
    human = tmp_path / "human.qrels"
    human.write_text("".join(line for line in Path(NIST).read_text().splitlines(keepends=True)
                             if line.split()[0] in queries))
    runs = ["data/dl19/runs/bm25base_p.run.gz", "data/dl19/runs/idst_bert_p1.run.gz"]
    llm = [arg for path in JUDGES for arg in ("--llm", path)]
    direct = invoke("estimate", "run", "slice", *runs, *llm, "--human", human, "--slice", chosen, "--ensemble",
                    "--format", "json")
    assert direct.exit_code == 0, direct.output
    assert invoke("judge", "ensemble", *JUDGES, "--human", human, "-o", tmp_path / "e.tsv").exit_code == 0
    through_file = invoke("estimate", "run", "slice", *runs, "--llm", tmp_path / "e.tsv", "--human", human,
                          "--slice", chosen,
                          "--format", "json")
    assert json.loads(direct.stdout)["runs"] == json.loads(through_file.stdout)["runs"]
    notes = json.loads(direct.stdout)["notes"]
    assert any(note.startswith("ensemble(") and "pairs of 10 queries" in note for note in notes)
    simulated = invoke("estimate", "validate", "slice", *runs, *llm, "--human", NIST, "--resamples", 2, "--size", 10,
                       "--ensemble",
                       "--format", "json")
    assert simulated.exit_code == 0, simulated.output
    assert json.loads(simulated.stdout)["settings"]["ensemble"] is True
    refused = invoke("estimate", "run", "set", *runs, *llm, "--set", tmp_path, "--ensemble")
    assert refused.exit_code == 2


def test_a_judges_grade_off_the_scale_is_refused_with_its_file_and_line(tmp_path):
    judge = tmp_path / "judge.qrels"
    judge.write_text("q1 0 d1 2\nq1 0 d2 10\n")
    human = tmp_path / "human.qrels"
    human.write_text("q1 0 d1 2\nq1 0 d2 1\n")
    with pytest.raises(InputError, match=r"grade 10 is not on the scale \(0, 1, 2, 3\); give the scale") as refused:
        ensemble_files([judge], [human], [0, 1, 2, 3])
    assert (refused.value.path, refused.value.line) == (str(judge), 2)


@pytest.mark.parametrize("value", ["last", "REFUSE", ""])
def test_an_unknown_rule_for_conflicting_grades_is_refused_naming_the_option(value):
    assert refusal(["judge", "ensemble"], "--conflicting-grades", value) == not_one_of(value, "refuse", "latest",
                                                                                      "first")
    with pytest.raises(InputError) as raised:
        ensemble_files(JUDGES, [NIST], [0, 1, 2, 3], value)
    assert str(raised.value) == f"conflicting_grades must be one of refuse, latest, first, got {value!r}"
