"""`evalset compare --why`: each query's change classified, counted on TREC DL 2019 (bm25base_p vs bm25tuned_p),
checked by hand on three queries and against a plain-Python classification of every query."""

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.comparing import compare_runs, query_movements
from evalset.contract import EvaluationContract
from evalset.evaluation import Evaluation
from evalset.io.trec import qrels_from_frame, run_from_frame


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def plain_top(path: Path, k: int = 10) -> dict[str, list[str]]:
    """trec_eval's order: score descending, then doc id descending."""
    run: dict[str, dict[str, float]] = {}
    with gzip.open(path, "rt") as handle:
        for line in handle:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return {q: [d for d, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)[:k]]
            for q, docs in run.items()}


@pytest.fixture(scope="module")
def movement(shared_data):
    root = shared_data / "dl19"
    runs = [root / "runs" / "official_top100" / f"{name}.run.gz" for name in ("bm25base_p", "bm25tuned_p")]
    result = invoke("compare", "--qrels", root / "qrels.txt", *runs, "--why", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)[0]["movement"]
    text = invoke("compare", "--qrels", root / "qrels.txt", *runs, "--why")
    return document, {row["query_id"]: row for row in document["per_query"]}, text.output, root, runs


def test_three_queries_checked_by_hand(movement):
    _, rows, _, _, _ = movement
    # 1037798: the only relevant passage of both top 10 (3641634, grade 3) is first in bm25base_p and second in
    # bm25tuned_p (a grade-0 passage moved above it): demoted, nothing else; nDCG@10 falls.
    assert {k: rows["1037798"][k] for k in ("lost", "rescued", "promoted", "demoted", "unjudged_entered")} == {
        "lost": 0, "rescued": 0, "promoted": 0, "demoted": 1, "unjudged_entered": 0}
    assert rows["1037798"]["changed"] and rows["1037798"]["difference"] < 0
    # 87452: the first four are the same; the grade-0 passage 1749882 moves up from 7 to 5, pushing 5296736,
    # 7965004, 6018163 and 7843984 down a place or two (demoted 4); 186931 (grade 1), absent from the baseline's
    # top 10, enters at 7 (rescued 1); what falls out (8819113) is grade 0, so nothing relevant is lost.
    assert {k: rows["87452"][k] for k in ("lost", "rescued", "promoted", "demoted", "unjudged_entered")} == {
        "lost": 0, "rescued": 1, "promoted": 0, "demoted": 4, "unjudged_entered": 0}
    assert rows["87452"]["difference"] == pytest.approx(0.0113, abs=5e-5)
    # 183378: the two grade-3 passages at 4 and 5 swap (one promoted, one demoted), and the grade-3 passage at 10
    # (4803850) is replaced by another grade-3 passage (7449744): lost 1, rescued 1. Gains at each rank are the
    # same, so nDCG@10 does not change: movements that cancelled, not "no change".
    assert {k: rows["183378"][k] for k in ("lost", "rescued", "promoted", "demoted", "unjudged_entered")} == {
        "lost": 1, "rescued": 1, "promoted": 1, "demoted": 1, "unjudged_entered": 0}
    assert not rows["183378"]["changed"]


def test_counts_per_class_and_the_cancelled_queries(movement):
    document, _, text, _, _ = movement
    counts = {name: entry["queries"] for name, entry in document["classes"].items()}
    assert counts == {"lost": 24, "rescued": 20, "promoted": 29, "demoted": 32, "unjudged_entered": 0,
                      "tie_artefact": 0, "other": 0}
    assert (document["changed"], document["unchanged"], document["undefined"]) == (38, 5, 0)
    assert [row["query_id"] for row in document["cancelled"]] == ["1124210", "131843", "183378"]
    assert "  relevant lost from the top 10           24 queries (30 documents)" in text
    assert "  movements that cancelled (value unchanged, relevant documents moved): 3 queries" in text
    assert "      183378: lost 1, rescued 1, promoted 1, demoted 1" in text


def test_every_query_agrees_with_a_plain_python_classification(movement):
    _, rows, _, root, runs = movement
    grades = {}
    for line in (root / "qrels.txt").read_text().splitlines():
        qid, _, doc, grade = line.split()
        grades[(qid, doc)] = int(grade)
    base, tuned = plain_top(runs[0]), plain_top(runs[1])
    for q, row in rows.items():
        b, c = base.get(q, []), tuned.get(q, [])
        rel_b = {d for d in b if grades.get((q, d), 0) > 0}
        rel_c = {d for d in c if grades.get((q, d), 0) > 0}
        expected = {"lost": len(rel_b - rel_c), "rescued": len(rel_c - rel_b),
                    "promoted": sum(c.index(d) < b.index(d) for d in rel_b & rel_c),
                    "demoted": sum(c.index(d) > b.index(d) for d in rel_b & rel_c),
                    "unjudged_entered": sum((q, d) not in grades for d in set(c) - set(b))}
        assert {k: row[k] for k in expected} == expected, q


def tiny(rows):
    return run_from_frame(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]))


def test_a_change_that_comes_from_breaking_ties_is_a_tie_artefact():
    # q1: `a` is the one relevant document. Both runs tie it with another document at score 1. trec's rule
    # (doc id descending) puts `b` before `a` in the baseline and `a` before `0` in the candidate: nDCG 0.63 vs 1.
    # Over every order of the tied pair (ties=expected) both are (1 + 0.63) / 2: the change is the tie rule's.
    qrels = qrels_from_frame(pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "grade": [1, 0]}))
    runs = {"base": tiny([("q1", "a", 1.0), ("q1", "b", 1.0)]), "cand": tiny([("q1", "a", 1.0), ("q1", "0", 1.0)])}
    compared = compare_runs(Evaluation.on_qrels(qrels), runs, "ndcg@10", permutations=9)
    row = query_movements(compared.per_query, runs, compared.results[0]).per_query.iloc[0]
    assert row["difference"] == pytest.approx(1 - 1 / 1.5849625, abs=1e-6)
    assert (row["tie_artefact"], row["promoted"], row["unjudged_entered"], row["other"]) == (1, 1, 1, 0)
    same = compare_runs(Evaluation.on_qrels(qrels, EvaluationContract(ties="expected")), runs, "ndcg@10",
                        permutations=9)
    movements = query_movements(same.per_query, runs, same.results[0])
    assert not movements.ties_assessed and movements.counts()["tie_artefact"] == 0


def test_the_default_output_is_unchanged_without_the_flags(movement):
    _, _, text, root, runs = movement
    plain = invoke("compare", "--qrels", root / "qrels.txt", *runs)
    assert plain.exit_code == 0
    assert text.startswith(plain.output.rstrip("\n") + "\n\nwhy queries moved: bm25tuned_p vs bm25base_p on ndcg@10")
    document = json.loads(invoke("compare", "--qrels", root / "qrels.txt", *runs, "--format", "json").stdout)[0]
    assert "movement" not in document and "holes" not in document
