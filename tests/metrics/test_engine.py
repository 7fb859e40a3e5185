"""The engine's refusals: what it cannot score is said, never scored as something else."""

import pandas as pd
import pytest

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.evaluation import Evaluation


def test_a_grade_whose_exponential_gain_overflows_is_refused_naming_the_pair():
    """Issue 29: a grade of 1,000,000 under gain=exponential leaked numpy's overflow warning and scored 0.0."""
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "grade": [1_000_000, 1]})
    evaluation = Evaluation.on_qrels(qrels, EvaluationContract(gain="exponential"))
    with pytest.raises(InputError, match=r"grade 1000000 \(query 1, document a\) cannot be scored with exponential "
                                         "gain: 2\\^grade - 1 overflows; grades up to 1000 can"):
        _ = evaluation.prepared
    assert Evaluation.on_qrels(qrels).prepared.grade.max() == 1_000_000  # linear gain scores it
