"""trec_eval's ways of asking for measures (``-m all_trec``, ``-m P.5,10``) spelled out as evalset's, and its
``-M`` (``max_retrieved``)."""

import pandas as pd
import pytest

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame
from evalset.metrics import evaluate, expand_measures, prepare_qrels
from evalset.metrics.relstring import relstrings
from evalset.metrics.trec_eval_names import asked_lines, asks_relstring


def test_a_parameter_list_is_one_measure_per_value_in_the_order_given_each_once():
    assert expand_measures(["P.5,10", "ndcg@10", "P_10", "iprec_at_recall.0.3"]) == [
        "P_5", "P_10", "ndcg@10", "iprec_at_recall_0.3"]


def test_official_is_trec_evals_list_with_its_default_parameters():
    official = expand_measures(["official"])
    assert official[:8] == ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"]
    assert official[8:19] == [f"iprec_at_recall_{level / 10:.2f}" for level in range(11)]
    assert official[19:] == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]


def test_relstring_is_asked_for_beside_the_measures_never_as_one():
    assert "relstring" not in expand_measures(["all_trec"]) and expand_measures(["relstring", "map"]) == ["map"]
    assert asks_relstring(["all_trec"]) and asks_relstring([" relstring"])
    assert not asks_relstring(["official", "map"])


def test_runid_and_num_q_are_lines_asked_by_name_or_nickname_never_measures():
    assert expand_measures(["num_q", "runid", "map"]) == ["map"]
    assert asked_lines(["map", "P.10"]) == ()
    assert asked_lines(["num_q"]) == ("num_q",) and asked_lines([" num_q", "runid"]) == ("runid", "num_q")
    assert all(asked_lines([nickname]) == ("runid", "num_q") for nickname in ("all_trec", "official", "set"))


def test_trec_eval_9s_all_trec_has_no_unj_rbp_or_rbp_resid():
    ten, nine = expand_measures(["all_trec"]), expand_measures(["all_trec"], trec_eval_version=9)
    assert sorted(set(ten) - set(nine)) == ["rbp(p=0.9)", "rbp_resid", "unj_10", "unj_20", "unj_5"]
    assert set(nine) < set(ten)


def test_set_r_is_recall_without_a_cutoff_as_in_ir_measures():
    qrels = qrels_from_frame(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "grade": [1, 1]}))
    run = run_from_frame(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]}))
    assert evaluate(run, qrels, ["SetR"]).to_dict("list") == evaluate(run, qrels, ["set_recall"]).to_dict("list") == {
        "recall": [0.5]}


@pytest.mark.parametrize(("text", "message"), [
    ("set_F.0.5", "evalset reads trec_eval's parameter list for P, recall"),
    ("P.5,,10", "trec_eval's list for P is of numbers, e.g. P.5,10"),
    ("P.abc", "trec_eval's list for P is of numbers"),
    ("iprec_at_recall.-0.5", "e.g. iprec_at_recall.0.00,0.10"),
])
def test_a_list_evalset_does_not_read_is_refused_by_name(text, message):
    with pytest.raises(InputError, match=message):
        expand_measures([text])


def test_max_retrieved_scores_each_rankings_first_documents_and_counts_the_rest():
    run = run_from_frame(pd.DataFrame({"query_id": ["q"] * 4 + ["r"] * 2, "doc_id": ["a", "b", "a", "c", "x", "y"],
                                       "score": [4.0, 3.0, 2.5, 2.0, 2.0, 1.0]}))
    qrels = qrels_from_frame(pd.DataFrame({"query_id": ["q", "q", "r"], "doc_id": ["c", "a", "y"],
                                           "grade": [1, 1, 1]}))
    # q's ranking is a, b, (a repeated: counted once, before the cut), c; r's is x, y
    table = evaluate(run, qrels, ["num_ret", "num_rel_ret", "p@2"], max_retrieved=2)
    assert table.to_dict("index") == {"q": {"num_ret": 2.0, "num_rel_ret": 1.0, "p@2": 0.5},
                                      "r": {"num_ret": 2.0, "num_rel_ret": 1.0, "p@2": 0.5}}
    assert table.attrs["beyond_max_retrieved"] == 1 and table.attrs["duplicates_removed"] == 1
    assert evaluate(run, qrels, ["num_ret"], max_retrieved=3)["num_ret"].to_dict() == {"q": 3.0, "r": 2.0}


@pytest.mark.parametrize(("value", "contract", "message"), [
    (0, None, "max_retrieved must be"),
    (10, EvaluationContract(ties="expected"), "can split a group of tied documents"),
])
def test_max_retrieved_refuses_what_it_cannot_cut(value, contract, message):
    run = run_from_frame(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]}))
    qrels = qrels_from_frame(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "grade": [1]}))
    with pytest.raises(InputError, match=message):
        evaluate(run, qrels, ["p@1"], contract, max_retrieved=value)


def test_relstring_shows_the_top_10s_grades_unjudged_and_unpooled_documents_and_nothing_for_a_missing_query():
    grades = {"a": 3, "b": 0, "c": -1, "d": 12}
    run = run_from_frame(pd.DataFrame({"query_id": ["q"] * 10, "doc_id": list("abcdxyzaef"),
                                       "score": [10.0 - i for i in range(10)]}))  # a repeated: counted once
    qrels = qrels_from_frame(pd.DataFrame({"query_id": ["q"] * 4 + ["r"], "doc_id": [*grades, "a"],
                                           "grade": [*grades.values(), 1]}))
    prepared = prepare_qrels(qrels, EvaluationContract())
    assert relstrings(run, prepared).to_dict() == {"q": "30.>-----", "r": ""}
    assert relstrings(run, prepared, max_retrieved=3).to_dict() == {"q": "30.", "r": ""}
