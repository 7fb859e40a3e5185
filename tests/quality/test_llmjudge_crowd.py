"""The figures of docs/quality.md ("The 33 LLM judges of LLMJudge as a crowd"): scripts/aggregate_llmjudge.py on
the real data for the fast rules (majority, median, Dawid-Skene, one-coin, MACE, the single judges), each kappa
checked against scikit-learn on the script's own grades. MACE's row is the one crowd-kit's own class gave (the
page's figures predate the numpy port that fits it now)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def output(shared_data):
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "aggregate_llmjudge.py"), "--data",
                           str(shared_data / "llmjudge"), "--rules", "dawid-skene,one-coin,mace"],
                          capture_output=True, text=True, check=True)
    return {line.split("  ")[0].strip(): line.split() for line in done.stdout.splitlines()[2:]}, done.stdout


def test_the_header_counts_judges_labels_and_pairs(output):
    _, text = output
    assert text.startswith("33 LLM judges, 145956 labels (3 out-of-scale dropped) over 4423 pairs; NIST grades for "
                           "4423 pairs; crowd-kit 1.4.")


@pytest.mark.parametrize(("row", "exact", "kappa", "quadratic"), [
    ("majority", "0.527", "0.273", "0.472"),
    ("median", "0.511", "0.260", "0.492"),
    ("dawid-skene", "0.488", "0.250", "0.499"),
    ("one-coin", "0.539", "0.285", "0.483"),
    ("mace", "0.519", "0.270", "0.501"),
    ("best judge (Olz-gpt4o)", "0.513", "0.262", "0.507"),
    ("median judge (NISTRetrieval-reason0)", "0.425", "0.184", "0.394"),
])
def test_each_aggregates_kappas_against_nist(output, row, exact, kappa, quadratic):
    rows, _ = output
    cells = rows[row]
    assert cells[len(row.split()):len(row.split()) + 4] == ["4423", exact, kappa, quadratic]


def test_the_kappas_equal_scikit_learn(shared_data):
    from sklearn.metrics import cohen_kappa_score

    from evalset.agreement import apply_scale, load_grades
    from evalset.io.trec import read_qrels
    from evalset.judgments import aggregate

    root = shared_data / "llmjudge"
    grades, _ = apply_scale(load_grades(sorted(str(p) for p in (root / "llm_submissions").glob("*.txt")))[0],
                            [0, 1, 2, 3], "drop")
    both = read_qrels(root / "human" / "test_qrels.txt").merge(aggregate(grades, "dawid-skene").grades,
                                                               on=["query_id", "doc_id"])
    assert len(both) == 4423
    assert round(cohen_kappa_score(both["grade_x"], both["grade_y"]), 3) == 0.250
    assert round(cohen_kappa_score(both["grade_x"], both["grade_y"], weights="quadratic"), 3) == 0.499
