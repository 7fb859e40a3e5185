"""`evalset explain`: each query's change classified, counted on TREC DL 2019 (bm25base_p vs bm25tuned_p),
checked by hand on three queries and against a plain-Python classification of every query; the documents that
moved, with their ranks in both runs and their grades, checked against the run files and the qrels (bm25base_p vs
idst_bert_p1); the query texts, --epsilon and --top."""

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
from evalset.io.queries import read_queries
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame
from tests.conftest import REPO

DL19 = REPO / "data" / "dl19"
MOVES = ("lost", "rescued", "promoted", "demoted", "unjudged_entered")


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
    result = invoke("explain", "--qrels", root / "qrels.txt", *runs, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)[0]
    text = invoke("explain", "--qrels", root / "qrels.txt", *runs)
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
    # the cancelled query with its documents: two grade-3 passages swap at 4 and 5, another replaces the one at 10
    cancelled = text[text.index("  movements that cancelled"):].splitlines()
    start = cancelled.index("    183378 (+0.0000, 0.4661 -> 0.4661)")
    assert cancelled[start + 1:start + 5] == ["      lost: doc 4803850 rank 10 -> out (grade 3)",
                                              "      rescued: doc 7449744 out -> 10 (grade 3)",
                                              "      promoted: doc 8794304 rank 5 -> 4 (grade 3)",
                                              "      demoted: doc 8794308 rank 4 -> 5 (grade 3)"]


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


@pytest.mark.slow  # about a second: out of the quick tier (README)
def test_a_change_that_comes_from_breaking_ties_is_a_tie_artefact():
    # q1: `a` is the one relevant document. Both runs tie it with another document at score 1. trec's rule
    # (doc id descending) puts `b` before `a` in the baseline and `a` before `0` in the candidate: nDCG 0.63 vs 1.
    # Over every order of the tied pair (ties=expected) both are (1 + 0.63) / 2: the change is the tie rule's.
    qrels = qrels_from_frame(pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "grade": [1, 0]}))
    runs = {"base": tiny([("q1", "a", 1.0), ("q1", "b", 1.0)]), "cand": tiny([("q1", "a", 1.0), ("q1", "0", 1.0)])}
    compared = compare_runs(Evaluation.on_qrels(qrels), runs, "ndcg@10", permutations=9)
    movements = query_movements(compared.per_query, runs, compared.results[0])
    row = movements.per_query.iloc[0]
    assert row["difference"] == pytest.approx(1 - 1 / 1.5849625, abs=1e-6)
    assert (row["tie_artefact"], row["promoted"], row["unjudged_entered"], row["other"]) == (1, 1, 1, 0)
    # `a` goes from rank 2 (behind `b`) to rank 1; `0`, unjudged, enters at 2 (no grade)
    assert movements.to_dict()["per_query"][0]["documents"] == [
        {"doc_id": "a", "move": "promoted", "rank_baseline": 2, "rank_candidate": 1, "grade": 1},
        {"doc_id": "0", "move": "unjudged_entered", "rank_baseline": None, "rank_candidate": 2, "grade": None}]
    assert movements.to_text().splitlines()[-5:-1] == [
        "    q1 (+0.3691, 0.6309 -> 1.0000)", "      promoted: doc a rank 2 -> 1 (grade 1)",
        "      unjudged entered: doc 0 out -> 2", "      tie artefact: the difference is 0 under ties=expected"]
    same = compare_runs(Evaluation.on_qrels(qrels, EvaluationContract(ties="expected")), runs, "ndcg@10",
                        permutations=9)
    movements = query_movements(same.per_query, runs, same.results[0])
    assert not movements.ties_assessed and movements.counts()["tie_artefact"] == 0


def test_explain_prints_the_movements_alone_and_compare_none(movement):
    _, _, text, root, runs = movement
    assert text.startswith("why queries moved: bm25tuned_p vs bm25base_p on ndcg@10, top 10\n")
    plain = invoke("compare", "--qrels", root / "qrels.txt", *runs)
    assert plain.exit_code == 0 and "why queries moved" not in plain.output
    document = json.loads(invoke("compare", "--qrels", root / "qrels.txt", *runs, "--format", "json").stdout)[0]
    assert "movement" not in document and "holes" not in document


# --- the documents that moved, their ranks and grades: bm25base_p vs idst_bert_p1 on NIST's judgments
def nist_grades() -> dict[tuple[str, str], int]:
    grades = {}
    for line in (DL19 / "nist.qrels").read_text().splitlines():
        qid, _, doc, grade = line.split()
        grades[(qid, doc)] = int(grade)
    return grades


@pytest.fixture(scope="module")
def bert():
    runs = [DL19 / "runs" / f"{name}.run.gz" for name in ("bm25base_p", "idst_bert_p1")]
    common = ("explain", "--qrels", DL19 / "nist.qrels", *runs, "--queries", DL19 / "topics.tsv")
    result = invoke(*common, "--format", "json")
    assert result.exit_code == 0, result.output
    text = invoke(*common)
    assert text.exit_code == 0, text.output
    return json.loads(result.stdout)[0], text.output, runs


def test_a_moved_document_has_its_ranks_in_both_runs_and_its_grade(bert):
    document, text, runs = bert
    base, cand = plain_top(runs[0]), plain_top(runs[1])
    grades = nist_grades()
    # 962179: the grade-3 passage 4606387 is 9th in bm25base_p and out of idst_bert_p1's top 10
    assert base["962179"].index("4606387") + 1 == 9 and "4606387" not in cand["962179"]
    assert grades[("962179", "4606387")] == 3
    row = next(row for row in document["per_query"] if row["query_id"] == "962179")
    assert {"doc_id": "4606387", "move": "lost", "rank_baseline": 9, "rank_candidate": None,
            "grade": 3} in row["documents"]
    assert "      lost: doc 4606387 rank 9 -> out (grade 3)" in text
    # 1063750: bm25base_p finds no relevant passage; the BERT run's first is 7952971, grade 2
    assert cand["1063750"][0] == "7952971" and "7952971" not in base["1063750"]
    assert "    1063750 (+0.7477, 0.0000 -> 0.7477): why did the us volunterilay enter ww1" in text
    assert "      rescued: doc 7952971 out -> 1 (grade 2)" in text


def test_every_moved_document_agrees_with_the_run_files_and_the_qrels(bert):
    document, _, runs = bert
    base, cand = plain_top(runs[0]), plain_top(runs[1])
    grades = nist_grades()
    for row in document["per_query"]:
        q = row["query_id"]
        b, c = base.get(q, []), cand.get(q, [])
        expected = []
        for doc in dict.fromkeys(b + c):
            grade = grades.get((q, doc))
            rank_b = b.index(doc) + 1 if doc in b else None
            rank_c = c.index(doc) + 1 if doc in c else None
            if grade is not None and grade > 0:
                move = ("lost" if rank_c is None else "rescued" if rank_b is None
                        else "promoted" if rank_c < rank_b else "demoted" if rank_c > rank_b else None)
            else:
                move = "unjudged_entered" if grade is None and rank_b is None else None
            if move:
                expected.append({"doc_id": doc, "move": move, "rank_baseline": rank_b, "rank_candidate": rank_c,
                                 "grade": grade})
        # listed by class, then by rank (the baseline's, else the candidate's)
        expected.sort(key=lambda d: (MOVES.index(d["move"]), d["rank_baseline"] or d["rank_candidate"]))
        assert row["documents"] == expected, q
    assert sum(len(row["documents"]) for row in document["per_query"]) == 139 + 248 + 53 + 57


def test_the_query_texts_come_from_queries(bert):
    document, text, _ = bert
    topics = read_queries(DL19 / "topics.tsv")
    texts = dict(zip(topics["query_id"], topics["query"], strict=True))
    assert all(row["query"] == texts[row["query_id"]] for row in document["per_query"])
    assert "    1037798 (-0.0886, 0.3057 -> 0.2172): who is robert gray" in text
    runs = [DL19 / "runs" / f"{name}.run.gz" for name in ("bm25base_p", "idst_bert_p1")]
    plain = invoke("explain", "--qrels", DL19 / "nist.qrels", *runs)
    assert "who is robert gray" not in plain.output
    assert "query" not in json.loads(invoke("explain", "--qrels", DL19 / "nist.qrels", *runs, "--format",
                                            "json").stdout)[0]["per_query"][0]


def test_a_tiny_difference_is_no_change_at_a_larger_epsilon(movement):
    document, rows, _, root, runs = movement
    # 168216 changes by +0.0024 (a relevant passage lost, another rescued): a change at the default 1e-9
    assert rows["168216"]["changed"] and abs(rows["168216"]["difference"]) < 0.005
    wider = invoke("explain", "--qrels", root / "qrels.txt", *runs, "--epsilon", "0.005", "--format", "json")
    assert wider.exit_code == 0, wider.output
    movement_005 = json.loads(wider.stdout)[0]
    row = next(row for row in movement_005["per_query"] if row["query_id"] == "168216")
    assert not row["changed"] and movement_005["epsilon"] == 0.005 and document["epsilon"] == 1e-9
    assert movement_005["changed"] == sum(abs(r["difference"]) > 0.005 for r in rows.values())
    assert "168216" in [r["query_id"] for r in movement_005["cancelled"]]  # its documents still moved
    text = invoke("explain", "--qrels", root / "qrels.txt", *runs, "--epsilon", "0.005").output
    assert f"  {movement_005['changed']} of 43 queries changed by more than epsilon 0.005 (" in text
    assert "by more than epsilon" not in invoke("explain", "--qrels", root / "qrels.txt", *runs).output


def test_top_limits_the_text_and_json_keeps_every_query(movement):
    document, rows, _, root, runs = movement
    result = invoke("explain", "--qrels", root / "qrels.txt", *runs, "--top", "3")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    section = lines[lines.index("  the queries that changed, the largest |difference| first:") + 1:
                    lines.index("  movements that cancelled (value unchanged, relevant documents moved): 3 queries")]
    shown = [line.split()[0] for line in section if line.startswith("    ") and not line.startswith("      ")]
    largest = sorted((r for r in rows.values() if r["changed"]), key=lambda r: -abs(r["difference"]))[:3]
    assert shown == [r["query_id"] for r in largest] + ["..."] == ["1103812", "1037798", "19335", "..."]
    assert section[-1] == "    ... 35 more moved queries (all in --format json)"
    limited = invoke("explain", "--qrels", root / "qrels.txt", *runs, "--top", "3", "--format", "json")
    assert json.loads(limited.stdout)[0] == document  # every query, every document
    assert sum(len(row["documents"]) for row in document["per_query"]) == 30 + 24 + 63 + 78 + 20


def test_the_explanation_is_no_comparison_it_tests_nothing_and_logs_nothing(tmp_path):
    runs = [DL19 / "runs" / f"{name}.run.gz" for name in ("bm25base_p", "idst_bert_p1")]
    result = invoke("explain", "--qrels", DL19 / "nist.qrels", *runs, "--queries", DL19 / "topics.tsv", "--top", "1")
    assert result.exit_code == 0, result.output
    assert "    962179 (+0.8643, 0.0663 -> 0.9306): when was the salvation army founded" in result.output
    assert "    ... 42 more moved queries (all in --format json)" in result.output
    assert "verdict" not in result.output and "p =" not in result.output


@pytest.mark.parametrize("extra, new", [
    (("--why",), "`evalset explain` (the same runs and --qrels or --set)"),
    (("--epsilon", "0.01"), "`evalset explain --epsilon`"),
    (("--top", "5"), "`evalset explain --top`"),
])
def test_compares_old_explanation_options_name_the_explain_command(extra, new):
    runs = [DL19 / "runs" / f"{name}.run.gz" for name in ("bm25base_p", "idst_bert_p1")]
    result = invoke("compare", "--qrels", DL19 / "nist.qrels", *runs, *extra)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"evalset: error: {extra[0]} is now {new} (one command, one job)"]


@pytest.mark.parametrize("extra, message", [
    (("--epsilon", "-0.1"), "Invalid value for '--epsilon': must be a number >= 0, got -0.1"),
    (("--top", "-1"), "Invalid value for '--top': must be a non-negative integer, got -1"),
])
def test_a_negative_epsilon_or_top_is_refused_in_one_line(extra, message):
    runs = [DL19 / "runs" / f"{name}.run.gz" for name in ("bm25base_p", "idst_bert_p1")]
    result = invoke("explain", "--qrels", DL19 / "nist.qrels", *runs, *extra)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"evalset: error: {message}"]
