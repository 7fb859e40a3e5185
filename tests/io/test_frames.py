"""Qrels and runs held in Python as ir_measures' and pytrec_eval's users hold them (frames, dicts of dicts,
namedtuples): taken by the engine, Evaluation.on_qrels and per_query_values, scored exactly as the TREC files."""

import ir_measures
import numpy as np
import pandas as pd
import polars
import pytest
from ir_measures import util

from evalset.errors import InputError
from evalset.evaluation import Evaluation, per_query_values
from evalset.io.frames import qrels_frame, run_frame
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate, evaluate_runs

MEASURES = ["ndcg@10", "ap", "rr", "p@10", "bpref"]


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    qrels, run = root / "qrels.txt", root / "runs" / "official_full" / "ICT-BERT2.run.gz"
    shapes = {
        "frame": (pd.DataFrame(ir_measures.read_trec_qrels(str(qrels))),
                  pd.DataFrame(ir_measures.read_trec_run(str(run)))),
        "dict": (util.QrelsConverter(ir_measures.read_trec_qrels(str(qrels))).as_dict_of_dict(),
                 util.RunConverter(ir_measures.read_trec_run(str(run))).as_dict_of_dict()),
        "namedtuples": (list(ir_measures.read_trec_qrels(str(qrels))), list(ir_measures.read_trec_run(str(run)))),
    }
    frames = shapes["frame"]
    result = frames[1].rename(columns={"query_id": "qid", "doc_id": "docno"})  # a PyTerrier result frame
    result = result.assign(docid=np.arange(len(result)), query="the query's text",
                           rank=result.groupby("qid").cumcount())  # PyTerrier's ranks start at 0
    shapes["pyterrier"] = (frames[0].rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"}),
                           result)
    shapes["polars"] = (polars.from_pandas(read_qrels(qrels)), polars.from_pandas(read_run(run)))
    return qrels, run, shapes


@pytest.mark.parametrize("shape", ["frame", "dict", "namedtuples", "pyterrier", "polars"])
def test_ir_measures_inputs_score_exactly_as_the_trec_files(dl19, shape):
    qrels_path, run_path, shapes = dl19
    qrels, run = shapes[shape]
    expected = evaluate(read_run(run_path), read_qrels(qrels_path), MEASURES)
    pd.testing.assert_frame_equal(evaluate(run, qrels, MEASURES), expected, check_exact=True)
    pd.testing.assert_frame_equal(evaluate_runs({"r": run}, qrels, MEASURES)["r"], expected, check_exact=True)
    values = per_query_values(Evaluation.on_qrels(qrels), {"r": run}, MEASURES).tables["r"]
    on_files = per_query_values(Evaluation.on_qrels(qrels_path), {"r": run_path}, MEASURES).tables["r"]
    pd.testing.assert_frame_equal(values, on_files, check_exact=True)


def test_the_iteration_field_is_ignored_and_relevance_is_the_grade(dl19):
    qrels = qrels_frame(dl19[2]["frame"][0])
    pd.testing.assert_frame_equal(qrels, read_qrels(dl19[0]))


def test_numeric_keys_become_string_ids():
    qrels = qrels_frame({19335: {8412: 2, 7: 0}})
    run = run_frame({19335: {7: 1.5, 8412: 0.5}})
    assert qrels.to_dict("list") == {"query_id": ["19335", "19335"], "doc_id": ["8412", "7"], "grade": [2, 0]}
    assert run.to_dict("list") == {"query_id": ["19335", "19335"], "doc_id": ["7", "8412"], "rank": [1, 2],
                                   "score": [1.5, 0.5]}
    assert evaluate(run, qrels, ["rr"])["rr"].to_dict() == {"19335": 0.5}


def test_a_run_as_read_is_passed_on_unchanged(dl19):
    run = read_run(dl19[1])
    assert run_frame(run) is run


@pytest.mark.parametrize(("qrels", "message"), [
    ({"q1": {"d1": 1.5}}, "grade must be an integer, found 1.5"),
    ({"q1": [("d1", 1)]}, "query q1: expected {doc_id: relevance} for each query, found list"),
    ([ir_measures.Qrel("q1", "d1", 1, "0"), ("q1", "d2", 1)], "record 1 has no query_id, doc_id, relevance"),
    ("qrels.txt", "expected a DataFrame, {query_id: {doc_id: relevance}} or records"),
    (pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"]}), "qrels are missing column(s) grade"),
    ({"q1": {"d1": -1}}, "no judgments"),
])
def test_bad_qrels_held_in_python_are_one_error(qrels, message):
    with pytest.raises(InputError) as caught:
        qrels_frame(qrels) if isinstance(qrels, str) else Evaluation.on_qrels(qrels)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("run", "message"), [
    ({"q1": {"d1": np.inf}}, "score must be a finite number, found inf (row 0)"),
    ({"q1": {"d1": "high"}}, "score must be a finite number, found 'high' (row 0)"),
    ([ir_measures.ScoredDoc("q1", "d1", 1.0), object()], "record 1 has no query_id, doc_id, score"),
    (pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"]}), "run is missing column(s) score"),
])
def test_a_bad_run_held_in_python_is_one_error_naming_it(run, message):
    evaluation = Evaluation.on_qrels({"q1": {"d1": 1}})
    with pytest.raises(InputError) as caught:
        per_query_values(evaluation, {"mine": run}, ["ap"])
    assert str(caught.value).startswith("run mine: ") and message in str(caught.value)


def test_a_dict_run_sharing_no_query_is_named_with_its_queries():
    with pytest.raises(InputError, match=r"run mine shares no query with the judgments: its queries \(q9, "):
        per_query_values(Evaluation.on_qrels({"q1": {"d1": 1}}), {"mine": {"q9": {"d1": 1.0}}}, ["ap"])
