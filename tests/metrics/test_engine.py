"""The engine's refusals: what it cannot score is said, never scored as something else; and how it holds qrels."""

import numpy as np
import pandas as pd
import pytest

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.metrics.ranking import by_query_highest_first


def test_a_grade_whose_exponential_gain_overflows_is_refused_naming_the_pair():
    """Issue 29: a grade of 1,000,000 under gain=exponential leaked numpy's overflow warning and scored 0.0."""
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "grade": [1_000_000, 1]})
    evaluation = Evaluation.on_qrels(qrels, EvaluationContract(gain="exponential"))
    with pytest.raises(InputError, match=r"grade 1000000 \(query 1, document a\) cannot be scored with exponential "
                                         "gain: 2\\^grade - 1 overflows; grades up to 1000 can"):
        _ = evaluation.prepared
    assert Evaluation.on_qrels(qrels).prepared.grade.max() == 1_000_000  # linear gain scores it


@pytest.mark.parametrize("largest", [3, 2**32 - 1, 2**40], ids=["grades", "the largest packed", "past 32 bits"])
def test_ideal_gains_are_each_query_s_grades_highest_first(largest):
    rng = np.random.default_rng(largest % 97)
    query_code = rng.integers(0, 50, 3000).astype(np.int32)
    grade = rng.integers(-1, 4, 3000)
    grade[::300] = largest
    positive = grade > 0
    order = np.lexsort((-grade[positive], query_code[positive]))
    codes, grades = by_query_highest_first(query_code, grade, positive)
    assert codes.dtype == np.int32 and codes.tolist() == query_code[positive][order].tolist()
    assert grades.tolist() == grade[positive][order].tolist()
