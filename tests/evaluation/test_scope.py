"""Qrels read from a file are held indexed; the frame built from them when asked is the one read."""

import pandas as pd

from evalset.contract import ContractOptions
from evalset.evaluation import Evaluation
from evalset.io.trec import read_qrels
from evalset.metrics import PreparedQrels, prepare_qrels

NIST = "data/dl19/nist.qrels"


def test_qrels_read_from_a_file_are_held_indexed_and_give_back_the_frame_read():
    evaluation = Evaluation.on_qrels(NIST)
    read = read_qrels(NIST)
    assert isinstance(evaluation.held, PreparedQrels) and len(evaluation.held.grade) == len(read) == 9260
    pd.testing.assert_frame_equal(evaluation.qrels, read)
    assert evaluation.qrels.attrs == read.attrs == evaluation.read_attrs
    assert evaluation.grades.tolist() == read["grade"].tolist()
    evaluation.qrels.loc[0, "grade"] = 99  # the frame is the caller's to change: the indexed grades stay
    assert evaluation.held.grade[0] == read["grade"][0]


def test_a_repeated_line_is_counted_without_building_the_frame(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d1 1\nq1 0 d2 0\n")
    evaluation = Evaluation.on_qrels(qrels)
    assert evaluation.read_attrs["collapsed_duplicates"] == 1 and "qrels" not in evaluation.__dict__


def test_another_contract_indexes_the_same_judgments_under_it():
    evaluation = Evaluation.on_qrels(NIST).with_contract(rel_level=2, gain="linear")
    expected = prepare_qrels(read_qrels(NIST), ContractOptions(rel_level=2, gain="linear").applied_to()[0])
    assert (evaluation.prepared.num_relevant == expected.num_relevant).all()
    assert (evaluation.prepared.ideal_gain == expected.ideal_gain).all()
    assert evaluation.prepared.num_relevant.sum() < Evaluation.on_qrels(NIST).prepared.num_relevant.sum()
