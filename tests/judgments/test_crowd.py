"""crowd-kit's aggregation rules over the long labels table: the grades are crowd-kit's own, run directly on the
same labels (LLMJudge: 33 LLM judges as a crowd), deterministic, ints on the scale."""

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import GLAD, DawidSkene, OneCoinDawidSkene

from evalset.agreement import apply_scale, load_grades
from evalset.errors import InputError
from evalset.judgments import aggregate, crowd_frame

SCALE = [0, 1, 2, 3]


@pytest.fixture(scope="module")
def crowd(shared_data):
    """The 33 judges' grades of the first three queries (sorted ids)."""
    judges = sorted(str(p) for p in (shared_data / "llmjudge" / "llm_submissions").glob("*.txt"))
    grades, _ = apply_scale(load_grades(judges)[0], SCALE, "drop")
    queries = sorted(grades["query_id"].unique())[:3]
    return grades[grades["query_id"].isin(queries)].reset_index(drop=True)


@pytest.fixture(scope="module")
def one_query(crowd):
    """The first query's labels: crowd-kit's GLAD (its scipy M-step) is slow on more."""
    return crowd[crowd["query_id"] == crowd["query_id"].min()].reset_index(drop=True)


@pytest.fixture(scope="module")
def mace_one_query(one_query):
    """Our MACE aggregate of the first query (the numpy port: a fraction of a second)."""
    return aggregate(one_query, "mace")


def reference(labels, model):
    """crowd-kit run directly: a task is 'query doc', a worker an annotator, a label a grade."""
    frame = pd.DataFrame({"task": labels["query_id"] + " " + labels["doc_id"], "worker": labels["annotator"],
                          "label": labels["grade"].astype(int)}).sort_values(["task", "worker"]).reset_index(drop=True)
    predicted = model.fit_predict(frame)
    return {tuple(task.split(" ")): int(grade) for task, grade in predicted.items()}


def ours(labels, rule, result=None):
    result = (result or aggregate(labels, rule)).grades
    assert result["grade"].dtype == np.int64 and set(result["grade"]) <= set(SCALE)
    return {(q, d): g for q, d, g in result.itertuples(index=False)}


@pytest.mark.slow
@pytest.mark.parametrize(("rule", "model"), [
    ("dawid-skene", lambda: DawidSkene(n_iter=100, tol=1e-5)),
    ("one-coin", lambda: OneCoinDawidSkene(n_iter=100, tol=1e-5)),
])  # MACE: tests/judgments/test_mace.py compares its numpy port, which fits it, with crowd-kit's class
def test_each_rule_gives_crowd_kits_own_grades_on_the_same_long_table(crowd, rule, model):
    expected = reference(crowd, model())
    got = ours(crowd, rule)
    assert len(got) == crowd.groupby(["query_id", "doc_id"]).ngroups == len(expected)
    assert got == expected


@pytest.mark.slow
def test_glad_gives_crowd_kits_own_grades(one_query):
    small = one_query[one_query["doc_id"].isin(sorted(one_query["doc_id"].unique())[:15])]  # scipy M-step: slow
    assert len(small) > 450 and ours(small, "glad") == reference(small, GLAD(n_iter=100, tol=1e-5))


@pytest.mark.slow
def test_the_same_labels_in_another_order_give_the_same_grades(crowd, one_query, mace_one_query):
    shuffled = crowd.sample(frac=1.0, random_state=7).reset_index(drop=True)
    pd.testing.assert_frame_equal(aggregate(crowd, "dawid-skene").grades, aggregate(shuffled, "dawid-skene").grades)
    shuffled = one_query.sample(frac=1.0, random_state=7).reset_index(drop=True)
    pd.testing.assert_frame_equal(mace_one_query.grades, aggregate(shuffled, "mace").grades)


@pytest.mark.slow
def test_the_record_names_the_library_its_version_class_parameters_and_iterations(crowd, mace_one_query):
    record = aggregate(crowd, "dawid-skene").record()
    assert record["library"] == "crowd-kit" and record["version"].startswith("1.4.")
    assert record["class"] == "DawidSkene" and record["parameters"] == {"n_iter": 100, "tol": 1e-5}
    assert isinstance(record["iterations"], int) and 1 <= record["iterations"] <= 100
    assert mace_one_query.record()["parameters"]["random_state"] == 20191


@pytest.mark.slow
def test_a_worked_example_three_careful_annotators_outvote_a_constant_one():
    rows = []
    truth = {f"d{i}": i % 4 for i in range(40)}
    for doc, grade in truth.items():
        rows += [("q1", doc, name, "human", grade) for name in ("a", "b", "c")]
        rows.append(("q1", doc, "lazy", "human", 1))
    labels = pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "kind", "grade"])
    for rule in ("dawid-skene", "one-coin", "mace", "glad"):
        assert ours(labels, rule) == {("q1", d): g for d, g in truth.items()}, rule


def test_bad_input_is_an_input_error():
    with pytest.raises(InputError, match="aggregation rule must be one of"):
        aggregate(pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "annotator": ["a"], "grade": [1]}), "wawa")
    twice = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["d", "d"], "annotator": ["a", "a"], "grade": [1, 2]})
    with pytest.raises(InputError, match="more than once"):
        crowd_frame(twice)
    with pytest.raises(InputError, match="no labels"):
        crowd_frame(twice.iloc[:0])


@pytest.mark.parametrize("rule", ["dawid-skene", "one-coin", "mace", "glad"])
def test_labels_a_latent_class_model_cannot_learn_from_are_refused(rule):
    """Issue 29: with two annotators, one constant, every model gave every pair the constant grade."""
    pairs = [(str(q), f"d{d}") for q in range(4) for d in range(13)]
    varied = [(q, d, "careful", "human", (i * 7) % 4) for i, (q, d) in enumerate(pairs)]
    constant = [(q, d, "lazy", "human", 2) for q, d in pairs]
    labels = pd.DataFrame(varied + constant, columns=["query_id", "doc_id", "annotator", "kind", "grade"])
    with pytest.raises(InputError, match=f"--merge {rule} cannot learn from these labels: 2 annotator\\(s\\), 1 of "
                                         "whom gave one grade only \\(lazy\\); a latent-class model needs 3 "
                                         "annotators or more"):
        aggregate(labels, rule)
    third = labels[labels["annotator"] == "lazy"].assign(annotator="second", grade=[(i * 5) % 4 for i in range(52)])
    if rule != "glad":  # crowd-kit's GLAD takes 4 s here; the worked example fits it on four annotators
        assert len(aggregate(pd.concat([labels, third]), rule).grades) == 52
