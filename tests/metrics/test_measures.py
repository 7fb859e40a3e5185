"""The measure registry: every measure declared once, and everything else (the conventions table, the parser, the
engine's dispatch, ``score --help``, the errors) agreeing with it."""

import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame
from evalset.metrics import MEASURES, Measure, MeasureKind, evaluate, measures, parse_measure
from evalset.metrics.measures import known_measures, register

QRELS = qrels_from_frame(pd.DataFrame({"query_id": ["q1", "q1", "q1", "q2"], "doc_id": ["a", "b", "c", "a"],
                                       "grade": [3, 0, 1, 0]}))
RUN = run_from_frame(pd.DataFrame({"query_id": ["q1"] * 4 + ["q2"], "doc_id": ["a", "z", "c", "b", "a"],
                                   "score": [4, 3, 2, 1, 1]}))


def conventions_table() -> dict[str, tuple[str, str]]:
    """The rows of measures.py's conventions table: first column -> (its name without @k, the undefined column)."""
    lines = measures.__doc__.splitlines()
    border = next(i for i, line in enumerate(lines) if line.startswith("========"))
    last_column = [m.start() for m in re.finditer(r"=+", lines[border])][-1]
    rows = {}
    for line in lines[border + 3:]:
        if line.startswith("========"):
            break
        if line and not line[0].isspace():
            spelled = line.split()[0]
            rows[spelled] = (re.sub(r"@[a-z]+$", "", spelled), line[last_column:].strip())  # @k, @r
    return rows


def test_every_registered_measure_is_a_row_of_the_conventions_table_that_agrees_with_it():
    table = conventions_table()
    assert sorted(name for name, _ in table.values()) == sorted(MEASURES)
    for spelled, (name, undefined) in table.items():
        kind = MEASURES[name]
        assert spelled.endswith("@k") == (kind.cutoff != "none"), name
        assert (undefined == "R = 0") == (not kind.defined_without_relevant), name


def test_every_spelling_of_a_measure_parses_to_it_in_any_case():
    for kind in MEASURES.values():
        for spelling in (kind.name, *kind.aliases):
            if kind.at:  # iprec@0.5: the number is its recall level
                expected = Measure(kind.name, None, ((kind.at, 0.5),))
                assert parse_measure(f"{spelling}@0.5") == parse_measure(f"{spelling.upper()}_0.50") == expected
            elif kind.cutoff == "none":
                assert parse_measure(spelling.upper()) == Measure(kind.name)
            else:
                expected = Measure(kind.name, 10)
                assert parse_measure(f"{spelling}@10") == parse_measure(f"{spelling.upper()}_10") == expected


def test_the_cutoff_rule_is_the_registered_one():
    assert [str(Measure(name, 5)) for name, kind in MEASURES.items() if kind.cutoff != "none"] == [
        "p@5", "recall@5", "rr@5", "ap@5", "ndcg@5", "success@5", "judged@5", "dcg@5", "err@5", "rbp@5",
        "rbp_residual@5", "f@5", "relative_p@5", "unjudged@5"]
    assert [name for name, kind in MEASURES.items() if kind.cutoff == "required"] == ["p", "success", "relative_p",
                                                                                      "unjudged"]
    with pytest.raises(InputError, match="bpref takes no cutoff"):
        Measure("bpref", 10)
    with pytest.raises(InputError, match=r"p needs a cutoff, e.g. p@10"):
        Measure("p")
    assert type(Measure("ndcg", np.int64(10)).cutoff) is int


def test_judged_divides_by_k_and_without_k_by_the_ranking_length():
    """q1 ranks a (graded), z (unjudged), c (graded), b (graded); q2 ranks a (graded); a query absent from the run
    (none here) or an empty ranking scores 0 without k."""
    table = evaluate(RUN, QRELS, ["judged@2", "judged@10", "judged"])
    assert table.to_dict("index") == {"q1": {"judged@2": 1 / 2, "judged@10": 3 / 10, "judged": 3 / 4},
                                      "q2": {"judged@2": 1 / 2, "judged@10": 1 / 10, "judged": 1.0}}
    assert parse_measure("Judged") == Measure("judged")


def test_an_unknown_measure_is_refused_with_every_registered_measure():
    assert known_measures() == ("p@k, recall[@k], rr[@k], ap[@k], ndcg[@k], rprec, bpref, success@k, judged[@k], "
                                "dcg[@k], err[@k], rbp[@k], rbp_residual[@k], num_ret, num_rel, num_rel_ret, f[@k], "
                                "set_p, iprec@recall, 11pt_avg, infap, gm_ap, gm_bpref, rprec_mult@multiple, "
                                "utility, binary_g, graded_g, ndcg_rel, rndcg, relative_p@k, set_relative_p, set_ap, "
                                "num_nonrel_judged_ret, rbp_resid, unjudged@k")
    with pytest.raises(InputError) as raised:
        parse_measure("nonsense@10")
    assert str(raised.value) == (f"unknown measure 'nonsense@10'; known: {known_measures()} (trec_eval's names work "
                                 "too)")


def help_text() -> str:
    """What ``evalset score -m help`` prints: every measure and its meaning, one a line."""
    result = CliRunner().invoke(main, ["score", "-m", "help"])
    assert result.exit_code == 0
    return result.output


def test_score_lists_every_registered_measure_with_its_help_and_help_names_the_default():
    lines = help_text().splitlines()
    assert [" ".join(line.split()) for line in lines[:len(MEASURES)]] == [
        f"{kind.spelling} {kind.help}" for kind in MEASURES.values()]
    assert "ir_measures' names" in lines[-1]
    short = CliRunner().invoke(main, ["score", "--help"], terminal_width=200).output
    assert "Default: ndcg@10, ap, rr, p@10" in " ".join(short.split()) and "(-m help: every measure" in short


@pytest.fixture
def registry():
    """The registry as it was, after the test."""
    saved = dict(MEASURES), dict(measures._SPELLINGS)
    yield
    for live, kept in zip((MEASURES, measures._SPELLINGS), saved, strict=True):
        live.clear()
        live.update(kept)


@pytest.mark.usefixtures("registry")
def test_a_registered_measure_is_parsed_scored_and_listed_with_nothing_else_edited():
    register(MeasureKind("hits", "relevant documents in the top k", cutoff="required", defined_without_relevant=False,
                         aliases=("rel_hits",), compute=lambda x: x.per_query(x.rows.expected_relevant)))
    values = evaluate(RUN, QRELS, ["hits@3", "rel_hits_1"])
    assert list(values.columns) == ["hits@3", "hits@1"]
    assert values.loc["q1"].tolist() == [2.0, 1.0] and values.loc["q2"].isna().all()  # q2: no relevant document
    assert "hits@k" in help_text() and "relevant documents in the top k" in help_text()


@pytest.mark.usefixtures("registry")
def test_a_spelling_another_measure_has_is_refused_and_the_registry_is_unchanged():
    before = dict(MEASURES)
    with pytest.raises(ValueError, match="'map' is taken"):
        register(MeasureKind("mean_ap", "another AP", cutoff="optional", defined_without_relevant=False,
                             aliases=("map",), compute=lambda x: x.per_query(x.rows.ap_term)))
    with pytest.raises(ValueError, match="not a lower-case name"):
        register(MeasureKind("NDCG2", "upper case", cutoff="optional", defined_without_relevant=True,
                             compute=lambda x: x.per_query(x.rows.expected_gain)))
    assert before == MEASURES
