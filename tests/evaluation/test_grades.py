"""Unusual grades in the judgments scored are noted, never silently scored (issue 15, item 9)."""

from pathlib import Path

import pandas as pd

from evalset.contract import EvaluationContract
from evalset.evaluation import Evaluation, unusual_grades, unusual_grades_note
from evalset.io.setfolder import FrozenSet


def qrels(*grades):
    return pd.DataFrame({"query_id": "q1", "doc_id": [f"d{i}" for i in range(len(grades))], "grade": list(grades)})


def test_on_qrels_a_grade_above_10_is_unusual_and_a_negative_one_is_not():
    scoring = Evaluation(EvaluationContract(), qrels(0, 3, 10, 11, 999, 999, -1), source="nist.qrels")
    assert unusual_grades(scoring) == ({11: 1, 999: 2}, "grades above 10 are unusual")
    assert unusual_grades_note(scoring) == (
        "note: nist.qrels: 3 judgment(s) with an unusual grade, 11 (1x), 999 (2x) (grades above 10 are unusual): a "
        "gain grows with the grade, so such a grade can dominate nDCG; check the qrels")


def test_on_a_set_a_grade_off_the_manifests_scale_is_unusual():
    frozen = FrozenSet(Path("sets/s/v1"), "s", "v1", qrels(0, 1, 4), pd.DataFrame(), pd.DataFrame(), None,
                       {"scale": {"0": "irrelevant", "1": "related", "2": "relevant", "3": "perfect"}})
    scoring = Evaluation(EvaluationContract(), frozen.qrels, frozen, source="sets/s/v1")
    assert unusual_grades(scoring) == ({4: 1}, "the set's scale is 0, 1, 2, 3")


def test_usual_grades_make_no_note():
    assert unusual_grades_note(Evaluation(EvaluationContract(), qrels(0, 1, 2, 3, -1), source="q")) is None
