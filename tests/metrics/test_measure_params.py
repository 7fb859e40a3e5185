"""Measures in ir_measures' syntax with their own parameters (``P(rel=2)@10``, ``AP(judged_only=True)``,
``nDCG(dcg='exp-log2')@10``): each parameter overrides the contract for its measure alone, and the values are
ir_measures' own (its pytrec_eval provider) on every DL19 run."""

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import Measure, evaluate, parse_measure, prepare_qrels, trec_eval_name

ir_measures = pytest.importorskip("ir_measures")

REPO = Path(__file__).resolve().parents[2]
QRELS = "data/dl19/nist.qrels"


@pytest.fixture(scope="module")
def dl19_runs():
    return sorted((REPO / "data" / "dl19" / "runs").glob("*.run.gz"))


@pytest.fixture(scope="module")
def pytrec_eval_provider():
    return ir_measures.providers.registry["pytrec_eval"]


def their_values(provider, measures, qrels_path, run_path) -> dict[tuple[str, str], float]:
    """(query, measure as ir_measures prints it) -> ir_measures' value."""
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    parsed = [ir_measures.parse_measure(m) for m in measures]
    return {(r.query_id, str(r.measure)): r.value for r in provider.iter_calc(parsed, qrels, run)}


@pytest.mark.parametrize(("text", "measure", "printed"), [
    ("nDCG@10", Measure("ndcg", 10), "ndcg@10"),
    ("AP(rel=2)", Measure("ap", None, (("rel", 2),)), "ap(rel=2)"),
    ("P(rel=2)@10", Measure("p", 10, (("rel", 2),)), "p(rel=2)@10"),
    ("R(rel=2)@1000", Measure("recall", 1000, (("rel", 2),)), "recall(rel=2)@1000"),
    ("RR(rel=2)@10", Measure("rr", 10, (("rel", 2),)), "rr(rel=2)@10"),
    ("AP(judged_only=True)", Measure("ap", None, (("judged_only", True),)), "ap(judged_only=True)"),
    ("nDCG(dcg='exp-log2')@10", Measure("ndcg", 10, (("dcg", "exp-log2"),)), "ndcg(dcg='exp-log2')@10"),
    ('nDCG(judged_only=True, dcg="exp-log2")', Measure("ndcg", None, (("dcg", "exp-log2"), ("judged_only", True))),
     "ndcg(dcg='exp-log2', judged_only=True)"),
    ("Judged@10", Measure("judged", 10), "judged@10"),
    ("Rprec", Measure("rprec"), "rprec"),
    ("Bpref(rel=2)", Measure("bpref", None, (("rel", 2),)), "bpref(rel=2)"),
])
def test_ir_measures_spellings_parse_and_print_in_a_form_that_parses_back(text, measure, printed):
    assert parse_measure(text) == measure
    assert str(measure) == printed
    assert parse_measure(printed) == measure


@pytest.mark.parametrize(("text", "message"), [
    ("AP(rel=0)", "ap: rel must be an integer >= 1, got 0"),
    ("AP(rel=True)", "ap: rel must be an integer >= 1, got True"),
    ("AP(gains=1)", "ap has no parameter 'gains': it takes rel, judged_only"),
    ("Judged(rel=2)@10", "judged has no parameter 'rel': it takes none"),
    ("nDCG(dcg='exp')@10", "ndcg: dcg must be one of 'log2', 'exp-log2', got 'exp'"),
    ("AP(2)", "'AP(2)': parameters are written name=value, e.g. P(rel=2)@10"),
    ("AP(rel=__import__('os'))", "parameters are written name=value"),
    ("AP(rel=1, rel=2)", "a parameter is given twice"),
    ("P(rel=2)", "p needs a cutoff, e.g. p@10"),
    ("RBP(p=1.5)", "rbp: p must be a number in (0, 1), got 1.5"),
    ("RBP(p=1)", "rbp: p must be a number in (0, 1), got 1"),
    ("RBP(p='0.8')", "rbp: p must be a number in (0, 1), got '0.8'"),
    ("F@0", "f: the cutoff k must be an integer in [1, 1000000], got 0"),
    ("nDCG@100000000000000000000", "ndcg: the cutoff k must be an integer in [1, 1000000], got 100000000000000000000"),
    ("SetF(beta=0)", "f: beta must be a number > 0, got 0"),
    ("NumRet@10", "num_ret takes no cutoff"),
    ("rbp_residual(rel=2)", "rbp_residual has no parameter 'rel': it takes p"),
    ("ERR(p=0.5)@10", "err has no parameter 'p'"),
    ("IPrec@1.5", "iprec: recall must be a number in [0, 1], got 1.5"),
    ("IPrec", "iprec needs a recall level, e.g. iprec@0.5"),
    ("iprec_at_recall", "iprec needs a recall level, e.g. iprec@0.5"),
    ("IPrec(recall=0.5)@0.5", "recall is given twice"),
    ("iprec@0.5.5", "the recall level must be a number in [0, 1]"),
    ("IPrec(recall=True)", "recall must be a number in [0, 1], got True"),
    ("11pt_avg@10", "11pt_avg takes no cutoff"),
    ("infAP(judged_only=True)", "infap has no parameter 'judged_only': it takes rel"),
])
def test_a_bad_parameter_is_one_line_naming_the_measure_and_what_it_takes(text, message):
    with pytest.raises(InputError, match=None) as raised:
        parse_measure(text)
    assert message in str(raised.value)


def test_a_parameter_is_the_contract_for_its_measure_alone(dl19_runs):
    qrels = read_qrels(REPO / QRELS)
    run = read_run(dl19_runs[0])
    together = evaluate(run, qrels, ["p@10", "p(rel=2)@10", "ndcg@10", "ndcg(dcg='exp-log2')@10"])
    at_2 = evaluate(run, qrels, ["p@10"], EvaluationContract(rel_level=2))
    exponential = evaluate(run, qrels, ["ndcg@10"], EvaluationContract(gain="exponential"))
    at_1 = evaluate(run, qrels, ["p@10", "ndcg@10"])
    pd.testing.assert_series_equal(together["p(rel=2)@10"], at_2["p@10"], check_names=False)
    pd.testing.assert_series_equal(together["ndcg(dcg='exp-log2')@10"], exponential["ndcg@10"], check_names=False)
    pd.testing.assert_frame_equal(together[["p@10", "ndcg@10"]], at_1)
    assert (together["p(rel=2)@10"] <= together["p@10"]).all()
    assert (together["p(rel=2)@10"] < together["p@10"]).sum() == 27


def test_a_measure_with_parameters_has_no_trec_eval_name_since_trec_eval_sets_one_level_per_call():
    assert trec_eval_name(parse_measure("P_10")) == "P_10"
    assert trec_eval_name(parse_measure("P(rel=2)@10")) is None


@pytest.mark.slow
def test_score_with_ir_measures_strings_gives_ir_measures_values_for_every_dl19_run(
        dl19_runs, pytrec_eval_provider, monkeypatch):
    """The must-show: ``evalset score --qrels data/dl19/nist.qrels RUNS -m nDCG@10 -m 'AP(rel=2)' -m
    'P(rel=2)@10' -m 'R(rel=2)@1000'`` per query equals ir_measures' pytrec_eval provider on all 37 runs (the
    judged@10 that score places beside nDCG@10: the next test)."""
    monkeypatch.chdir(REPO)
    measures = ["nDCG@10", "AP(rel=2)", "P(rel=2)@10", "R(rel=2)@1000"]
    options = [part for m in measures for part in ("-m", m)]
    result = CliRunner().invoke(main, ["score", "--qrels", QRELS, "data/dl19/runs", *options, "--per-query",
                                       "--format", "tsv"])
    assert result.exit_code == 0, result.output
    ours = pd.read_csv(io.StringIO(result.output), sep="\t", dtype={"query_id": str})
    assert sorted(ours["run"].unique()) == sorted(p.name.removesuffix(".run.gz") for p in dl19_runs)
    assert len(dl19_runs) == 37
    compared = 0
    ours = ours[ours["metric"] != "judged@10"]
    for path in dl19_runs:
        theirs = their_values(pytrec_eval_provider, measures, REPO / QRELS, path)
        mine = ours[ours["run"] == path.name.removesuffix(".run.gz")]
        for row in mine.itertuples():
            assert row.value == pytest.approx(theirs[(row.query_id, row.metric)], abs=1e-12), (path.name, row)
            compared += 1
    assert compared == 37 * 43 * 4


@pytest.mark.slow  # about a second: out of the quick tier (README)
def test_judged_at_k_is_ir_measures_judged_provider_but_over_k_for_a_short_ranking(dl19_runs):
    """ir_measures breaks ties by doc id ascending (evalset's ``docid`` rule) and divides by the ranking's length
    when it is shorter than k; evalset divides by k, as P@k does, so that an empty place shows."""
    prepared = prepare_qrels(read_qrels(REPO / QRELS), EvaluationContract(ties="docid"))
    short = 0
    for path in dl19_runs[::4]:
        theirs = their_values(ir_measures.providers.registry["judged"], ["Judged@10"], REPO / QRELS, path)
        run = read_run(path)
        lengths = run.groupby("query_id").size()
        for query, value in evaluate(run, prepared, ["Judged@10"])["judged@10"].items():
            shown = min(lengths.get(query, 0), 10)
            short += shown < 10
            assert value == pytest.approx(theirs[(query, "Judged@10")] * shown / 10, abs=1e-12), (path.name, query)
    assert short == 2


@pytest.mark.slow
def test_every_parameter_gives_ir_measures_values(dl19_runs, pytrec_eval_provider):
    """rel and judged_only on every measure that takes them, and exp-log2 against pytrec_eval's nDCG with the
    gains 2^g - 1 given (what exp-log2 means), on five DL19 runs."""
    # not RR(rel=2)@10: pytrec_eval has no cutoff for RR, and ir_measures then gives RR@10 RR's values
    measures = ["RR(rel=2)", "Rprec(rel=2)", "Bpref(rel=2)", "Success(rel=2)@10", "AP(rel=2)@100",
                "AP(judged_only=True)", "P(judged_only=True)@10", "nDCG(judged_only=True)@10",
                "P(rel=3, judged_only=True)@20"]
    gains = "nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7})@10"
    prepared = prepare_qrels(read_qrels(REPO / QRELS), EvaluationContract(missing="skip", undefined="zero"))
    for path in dl19_runs[::8]:
        theirs = their_values(pytrec_eval_provider, [*measures, gains], REPO / QRELS, path)
        ours = evaluate(read_run(path), prepared, [*measures, "nDCG(dcg='exp-log2')@10"])
        for text in measures:
            column = ours[str(parse_measure(text))]
            expected = [theirs[(q, str(ir_measures.parse_measure(text)))] for q in column.index]
            np.testing.assert_allclose(column, expected, atol=1e-12, err_msg=f"{path.name} {text}")
        expected = [theirs[(q, str(ir_measures.parse_measure(gains)))] for q in ours.index]
        np.testing.assert_allclose(ours["ndcg(dcg='exp-log2')@10"], expected, atol=1e-12, err_msg=path.name)
