"""evalset as an ir_measures provider (``import evalset.compat.ir_measures``): the same per-query rows as ir_measures'
pytrec_eval provider on every DL19 run for the measures both compute, the measures the CLI takes, the cases of
ir_measures' own tests (the whole suite: test_ir_measures_suite.py), its input shapes and its registry."""

import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.trec import read_run
from evalset.metrics import MEASURES, parse_measure

ir_measures = pytest.importorskip("ir_measures")
compat = importlib.import_module("evalset.compat.ir_measures")
from ir_measures import (  # noqa: E402
    AP,
    ERR,
    RBP,
    RR,
    Bpref,
    IPrec,
    Judged,
    Metric,
    NumQ,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    Success,
    nDCG,
)

REPO = Path(__file__).resolve().parents[2]
QRELS = REPO / "data" / "dl19" / "nist.qrels"
evalset_provider = compat.provider

# the qrels and run of ir_measures' tests (test/test_pytrec_eval.py, test_judged.py, test_providers.py)
QRELS_TEXT = "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 2\n"
RUN_TEXT = ("0 0 D0 1 0.8 run\n0 0 D2 2 0.7 run\n0 0 D1 3 0.3 run\n0 0 D3 4 0.4 run\n0 0 D4 5 0.1 run\n"
            "1 0 D1 1 0.8 run\n1 0 D3 2 0.7 run\n1 0 D4 3 0.3 run\n1 0 D2 4 0.4 run\n")
SUCCESS_QRELS = "0 0 D0 0\n0 0 D1 1\n0 0 D2 2\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 0\n"
SUCCESS_RUN = ("0 0 D0 1 0.8 run\n0 0 D2 2 0.7 run\n0 0 D1 3 0.3 run\n0 0 D3 4 0.4 run\n0 0 D4 5 0.1 run\n"
               "1 0 D1 1 0.8 run\n1 0 D4 2 0.7 run\n1 0 D3 3 0.3 run\n1 0 D2 4 0.4 run\n")
# test_infAP's: grades of -1 (pooled, not judged)
NEGATIVE_QRELS = ("0 0 D0 1\n0 0 D1 -1\n0 0 D2 0\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D4 -1\n"
                  "1 0 D5 0\n")


def qrels_of(text):
    return list(ir_measures.read_trec_qrels(text))


def run_of(text):
    return list(ir_measures.read_trec_run(text))


def rows(metrics) -> dict[tuple[str, str], float]:
    """(query, measure as ir_measures prints it) -> value; no row twice."""
    metrics = list(metrics)
    found = {(m.query_id, str(m.measure)): m.value for m in metrics}
    assert len(found) == len(metrics)
    return found


def test_importing_the_module_registers_the_provider_beside_ir_measures_own():
    assert ir_measures.providers.registry["evalset"] is evalset_provider
    assert ir_measures.evalset is evalset_provider
    assert evalset_provider.is_available()


def test_each_row_of_the_table_is_a_measure_of_both():
    for name, ours in compat.COUNTERPARTS.items():
        assert (ir_measures.measures.registry[name].NAME, ours in MEASURES) == (name, True)
    assert [m.NAME for m in evalset_provider.SUPPORTED_MEASURES] == list(compat.COUNTERPARTS)


WITHOUT_COUNTERPART = {  # evalset's measures that no ir_measures measure is
    "dcg": "ir_measures has no unnormalised DCG (its SDCG is scaled by the maximum grade)",
    "rbp_residual": "ir_measures has no RBP residual",
    "11pt_avg": "ir_measures has no 11-point average",
    **dict.fromkeys(["gm_ap", "gm_bpref", "rprec_mult", "utility", "binary_g", "graded_g", "ndcg_rel", "rndcg",
                     "relative_p", "rbp_resid", "num_nonrel_judged_ret", "unjudged"],
                    "trec_eval's own measure (evalset.metrics.trec_measures): ir_measures has none"),
}
# an ir_measures spelling of each of evalset's other measures (what the CLI, parse_measure, takes), and evalset's
IR_MEASURES_SPELLINGS = [
    ("P(rel=2)@10", "p(rel=2)@10"), ("R@1000", "recall@1000"), ("RR@10", "rr@10"),
    ("AP(judged_only=True)", "ap(judged_only=True)"), ("nDCG(dcg='exp-log2')@10", "ndcg(dcg='exp-log2')@10"),
    ("Rprec", "rprec"), ("Bpref(rel=2)", "bpref(rel=2)"), ("Success@1", "success@1"), ("Judged", "judged"),
    ("Judged@10", "judged@10"), ("ERR@20", "err@20"), ("RBP(p=0.5)@10", "rbp(p=0.5)@10"), ("RBP(rel=2)", "rbp(rel=2)"),
    ("NumRet", "num_ret"), ("NumRel(rel=2)", "num_rel(rel=2)"), ("NumRet(rel=1)", "num_rel_ret(rel=1)"),
    ("NumRelRet(rel=2)", "num_rel_ret(rel=2)"), ("SetP", "set_p"), ("SetF(beta=0.5)", "f(beta=0.5)"),
    ("SetAP(rel=2)", "set_ap(rel=2)"), ("SetP(relative=True)", "set_relative_p"), ("SetP(relative=False)", "set_p"),
    ("IPrec(rel=2)@0.1", "iprec(rel=2)@0.1"), ("infAP", "infap"), ("MAP@100", "ap@100"), ("NDCG@10", "ndcg@10"),
]


@pytest.mark.parametrize(("spelled", "ours"), IR_MEASURES_SPELLINGS)
def test_it_computes_what_the_cli_takes_in_ir_measures_spelling(spelled, ours):
    measure = ir_measures.parse_measure(spelled)
    assert evalset_provider.supports(measure)
    assert compat.evalset_measure(measure) == parse_measure(spelled) == parse_measure(ours)


def test_set_r_is_recall_without_a_cutoff():
    """ir_measures' SetR (trec_eval's set_recall), a name evalset's parser does not take: its recall without k."""
    assert compat.evalset_measure(SetR(rel=2)) == parse_measure("recall(rel=2)")
    assert compat.evalset_measure(SetR) == parse_measure("recall")


def test_every_measure_of_evalset_has_its_ir_measures_spelling_or_a_reason_it_has_none():
    provided = {parse_measure(ours).name for _, ours in IR_MEASURES_SPELLINGS}
    assert provided.isdisjoint(WITHOUT_COUNTERPART)
    assert sorted(provided | set(WITHOUT_COUNTERPART)) == sorted(MEASURES)  # a new measure: add it to one of them


@pytest.mark.parametrize(("measure", "supported"), [
    (P@10, True), (P(rel=2)@10, True), (P(judged_only=True)@10, True), (R(rel=2)@1000, True), (RR, True),
    (RR@10, True), (AP(rel=2)@100, True), (nDCG, True), (nDCG(dcg="exp-log2")@10, True),
    (nDCG(judged_only=True)@10, True), (Rprec(rel=3), True), (Bpref(rel=2), True), (Success@1, True),
    (Judged@10, True), (Judged, True), (ERR@10, True), (SetF(beta=0.5), True), (SetP(relative=False), True),
    (NumRet(rel=1), True), (SetR, True), (IPrec@0.5, True), (RBP(p=0.5), True),
    (nDCG(gains={0: 0, 1: 1, 2: 3})@10, False),  # evalset's gains: the grade or 2^grade - 1
    (AP(rel=0), False), (P(rel=-1)@10, False),  # evalset's rel is >= 1
    (SetP(relative=True), True), (SetAP, True), (NumQ, False),  # NumQ: a count of queries, not a per-query value
    (ir_measures.parse_measure("alpha_nDCG@10"), False),  # not in the table
])
def test_supports_what_evalset_computes_and_nothing_else(measure, supported):
    assert evalset_provider.supports(measure) is supported


def test_a_measure_it_does_not_compute_is_one_line_naming_it():
    with pytest.raises(InputError, match=r"^the evalset provider does not compute alpha_nDCG@10; it computes P, R, RR"):
        evalset_provider.evaluator([P@10, ir_measures.parse_measure("alpha_nDCG@10")], qrels_of(QRELS_TEXT))


def test_the_ir_measures_success_cases():
    """ir_measures' test/test_pytrec_eval.py, test_Success: values and means."""
    qrels, run = qrels_of(SUCCESS_QRELS), run_of(SUCCESS_RUN)
    for measure, expected in [(Success@2, (1, 0)), (Success(rel=2)@2, (1, 0)), (Success(rel=3)@2, (0, 0))]:
        result = list(evalset_provider.iter_calc([measure], qrels, run))
        assert [(r.query_id, r.value) for r in result] == [("0", expected[0]), ("1", expected[1])]
        assert evalset_provider.calc_aggregate([measure], qrels, run)[measure] == np.mean(expected)


def test_the_ir_measures_ap_cases_with_negative_grades():
    """ir_measures' test_infAP (its AP part): grades of -1 are not relevant; AP(rel=2) counts grade 2 only."""
    qrels, run = qrels_of(NEGATIVE_QRELS), run_of(SUCCESS_RUN)
    for measure, expected, mean in [(AP, (0.8333, 0.125), 0.47916666666666663), (AP(rel=2), (0.33333, 0.25), 0.2917)]:
        result = list(evalset_provider.iter_calc([measure], qrels, run))
        assert [r.query_id for r in result] == ["0", "1"]
        np.testing.assert_allclose([r.value for r in result], expected, atol=1e-4)
        assert evalset_provider.calc_aggregate([measure], qrels, run)[measure] == pytest.approx(mean, abs=1e-4)


def test_judged_only_and_negative_grades_as_pytrec_eval():
    """A grade of -1 is unjudged under judged_only (trec_eval's -J), on test_infAP's qrels."""
    measures = [AP(judged_only=True), P(judged_only=True)@2, nDCG(judged_only=True)@3, Bpref, RR, Rprec, R@3]
    qrels, run = qrels_of(NEGATIVE_QRELS), run_of(SUCCESS_RUN)
    theirs = rows(ir_measures.pytrec_eval.iter_calc(measures, qrels, run))
    assert rows(evalset_provider.iter_calc(measures, qrels, run)) == pytest.approx(theirs, abs=1e-12)


def test_the_ir_measures_judged_cases_but_over_k_for_a_short_ranking():
    """ir_measures' test/test_judged.py (values from cwl-eval): query 1 ranks 4 documents, one judged. ir_measures
    divides by the ranking's length when it is shorter than k (1/4 for Judged@10), evalset by k (1/10); without a
    cutoff both divide by the ranking's length."""
    qrels, run = qrels_of(QRELS_TEXT), run_of(RUN_TEXT)
    lengths = {"0": 5, "1": 4}
    for measure, expected in [(Judged@1000, {"0": 1.0, "1": 1 / 4}), (Judged@10, {"0": 1.0, "1": 1 / 4}),
                              (Judged@3, {"0": 1.0, "1": 1 / 3}), (Judged@1, {"0": 1.0, "1": 0.0})]:
        k = measure["cutoff"]
        result = list(evalset_provider.iter_calc([measure], qrels, run))
        assert [r.query_id for r in result] == ["0", "1"]
        for r in result:
            assert r.value == pytest.approx(expected[r.query_id] * min(k, lengths[r.query_id]) / k), (measure, r)
    assert rows(evalset_provider.iter_calc([Judged], qrels, run)) == {("0", "Judged"): 1.0, ("1", "Judged"): 0.25}
    assert rows(ir_measures.judged.iter_calc([Judged], qrels, run)) == {("0", "Judged"): 1.0, ("1", "Judged"): 0.25}


def test_iprec_is_trec_eval_9s_as_pytrec_eval_unless_told_10():
    """4 relevant documents, 2 retrieved at ranks 1 and 3: IPrec@0.3 counts c = (long) (0.3 * 4 + 0.9) = 2 relevant
    documents under trec_eval 9 (pytrec_eval's), c = lround(1.2) = 1 under 10."""
    qrels = qrels_of("q 0 D1 1\nq 0 D2 1\nq 0 D3 1\nq 0 D4 1\n")
    run = run_of("q 0 D1 1 0.9 run\nq 0 X 2 0.8 run\nq 0 D2 3 0.7 run\n")
    measures = [IPrec@0.3, IPrec@0.5, IPrec@0.0]
    expected = {("q", "IPrec@0.3"): 2 / 3, ("q", "IPrec@0.5"): 2 / 3, ("q", "IPrec@0.0"): 1.0}
    assert rows(ir_measures.pytrec_eval.iter_calc(measures, qrels, run)) == pytest.approx(expected, abs=1e-12)
    assert rows(evalset_provider.iter_calc(measures, qrels, run)) == pytest.approx(expected, abs=1e-12)
    ten = compat.EvalsetProvider(trec_eval_version=10)
    assert rows(ten.iter_calc(measures, qrels, run)) == pytest.approx({**expected, ("q", "IPrec@0.3"): 1.0})
    with pytest.raises(InputError, match=r"^trec_eval_version must be one of 9, 10, got 8$"):
        compat.EvalsetProvider(trec_eval_version=8)


def test_the_ir_measures_empty_cases():
    """ir_measures' test/test_providers.py, test_empty: a judged query absent from the run scores 0; a run without
    qrels has no row and a NaN mean."""
    qrels, run, empty = qrels_of(QRELS_TEXT), run_of(RUN_TEXT), []
    assert set(evalset_provider.iter_calc([P@5], qrels, empty)) == {Metric("0", P@5, 0.0), Metric("1", P@5, 0.0)}
    assert list(evalset_provider.iter_calc([P@5], empty, run)) == []
    assert list(evalset_provider.iter_calc([P@5], empty, empty)) == []
    np.testing.assert_equal(evalset_provider.calc_aggregate([P@5], qrels, empty), {P@5: 0.0})
    np.testing.assert_equal(evalset_provider.calc_aggregate([P@5], empty, run), {P@5: float("nan")})
    np.testing.assert_equal(evalset_provider.calc_aggregate([P@5], empty, empty), {P@5: float("nan")})


def test_every_provider_agrees_with_it_on_ir_measures_measure_list():
    """ir_measures' test/test_measures.py, test_measures: each measure of its list that evalset computes equals
    every other available provider's that computes it (to 4 places, as there), but Judged@k over k (above)."""
    qrels = qrels_of("0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n")
    run = run_of("0 0 D0 1 0.8 run\n0 0 D2 2 0.7 run\n0 0 D1 3 0.3 run\n0 0 D3 4 0.4 run\n0 0 D4 5 0.1 run\n")
    cutoffs = [1, 5, 10, 20, 50, 100]  # its list, flattened (ir_measures 0.4.3 has no flatten_measures)
    measures = [
        *(m(rel=rel)@k for m in (P, R, RR, AP) for rel in (1, 2) for k in cutoffs),
        *(m(rel=rel) for m in (RR, Rprec, AP, Bpref) for rel in (1, 2)),
        *(nDCG(dcg=dcg) for dcg in ("log2", "exp-log2")),
        *(nDCG(dcg=dcg)@k for dcg in ("log2", "exp-log2") for k in cutoffs),
        *(Judged@k for k in cutoffs),
    ]
    # ranx (installed with evalset's bench extra) is left out: ir_measures' ranx provider hands it pandas 3's string
    # ids, which ranx refuses (its Qrels.from_df asserts the object dtype); scripts/bench_scoring.py compares ranx
    others = [p for name, p in ir_measures.providers.registry.items()
              if name not in ("evalset", "trectools", "ranx") and p.is_available()]
    assert all(evalset_provider.supports(measure) for measure in measures)
    ours = {id(m.measure): m.value for m in evalset_provider.iter_calc(measures, qrels, run)}  # one call does all
    compared = 0
    for measure in measures:
        scale = min(measure["cutoff"], 5) / measure["cutoff"] if measure.NAME == "Judged" else 1
        for other in (p for p in others if p.supports(measure)):
            (theirs,) = other.iter_calc([measure], qrels, run)  # one at a time, as there
            assert ours[id(measure)] == pytest.approx(theirs.value * scale, abs=1e-4), (measure, other.NAME)
            compared += 1
    assert compared >= len(measures)


@pytest.mark.parametrize("shape", ["namedtuples", "frame", "dict_of_dict"])
def test_ir_measures_input_shapes_give_the_same_rows(shape):
    qrels, run = qrels_of(QRELS_TEXT), run_of(RUN_TEXT)
    if shape == "frame":
        qrels, run = pd.DataFrame(qrels), pd.DataFrame(run)
    elif shape == "dict_of_dict":
        qrels = ir_measures.util.QrelsConverter(qrels).as_dict_of_dict()
        run = ir_measures.util.RunConverter(run).as_dict_of_dict()
    measures = [P@2, nDCG@3, AP(rel=2), RR]
    theirs = rows(ir_measures.pytrec_eval.iter_calc(measures, qrels_of(QRELS_TEXT), run_of(RUN_TEXT)))
    assert rows(evalset_provider.iter_calc(measures, qrels, run)) == pytest.approx(theirs, abs=1e-12)


def test_a_pair_given_twice_keeps_its_last_value_as_ir_measures_does():
    run = run_of(RUN_TEXT + "0 0 D4 6 0.9 run\n")  # D4 (not relevant) moves to the top of query 0
    qrels = qrels_of(QRELS_TEXT + "1 0 D1 1\n1 0 D1 0\n")
    measures = [P@1, AP, nDCG]
    theirs = rows(ir_measures.pytrec_eval.iter_calc(measures, qrels, run))
    assert theirs[("0", "P@1")] == 0.0
    assert rows(evalset_provider.iter_calc(measures, qrels, run)) == pytest.approx(theirs, abs=1e-12)


def test_bad_input_is_one_line():
    where = r" \(query 0, document D0\)$"
    with pytest.raises(InputError, match=r"^ir_measures qrels: relevance must be an integer, found 1\.5" + where):
        evalset_provider.evaluator([P@5], {"0": {"D0": 1.5}})
    with pytest.raises(InputError, match=r"^ir_measures run: score must be a finite number, found nan" + where):
        list(evalset_provider.iter_calc([P@5], qrels_of(QRELS_TEXT), {"0": {"D0": float("nan")}}))
    with pytest.raises(InputError, match=r"^ir_measures run: iterable not a namedtuple iterator$"):
        list(evalset_provider.iter_calc([P@5], qrels_of(QRELS_TEXT), [("0", "D0", 1.0)]))


def test_the_evaluator_prepares_the_qrels_once_and_scores_each_run(monkeypatch):
    prepared = []
    prepare = compat.prepare_qrels
    monkeypatch.setattr(compat, "prepare_qrels", lambda *a, **k: prepared.append(1) or prepare(*a, **k))
    evaluator = evalset_provider.evaluator([P@2, AP], qrels_of(QRELS_TEXT))
    first = evaluator.calc_aggregate(run_of(RUN_TEXT))
    second = evaluator.calc_aggregate(run_of(SUCCESS_RUN))
    assert prepared == [1]
    assert first == ir_measures.pytrec_eval.calc_aggregate([P@2, AP], qrels_of(QRELS_TEXT), run_of(RUN_TEXT))
    assert second == ir_measures.pytrec_eval.calc_aggregate([P@2, AP], qrels_of(QRELS_TEXT), run_of(SUCCESS_RUN))


def test_evalset_imports_without_ir_measures_and_the_module_says_what_to_install(monkeypatch):
    package = REPO / "evalset"
    importing = re.compile(r"^\s*(import|from)\s+ir_measures\b", re.MULTILINE)
    importers = [p.relative_to(package) for p in package.rglob("*.py") if importing.search(p.read_text())]
    assert importers == [Path("compat/ir_measures.py")]
    monkeypatch.setitem(sys.modules, "ir_measures", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "evalset.compat.ir_measures")
    with pytest.raises(ImportError, match=r"needs ir_measures: pip install 'evalset\[ir-measures\]'"):
        importlib.import_module("evalset.compat.ir_measures")


DL19_MEASURES = ["P@10", "P(rel=2)@10", "R(rel=2)@1000", "RR", "AP", "AP(rel=2)@100", "AP(judged_only=True)",
                 "nDCG@10", "nDCG(judged_only=True)", "Rprec", "Bpref(rel=2)", "Success@1", "NumRet", "NumRel",
                 "SetP(rel=2)", "SetF", "SetF(beta=0.5)", "infAP(rel=2)", "NumRet(rel=2)", "SetR(rel=2)", "IPrec@0.3",
                 "IPrec(rel=2)@0.5"]
GAINS = "nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7})@10"  # what exp-log2 means, for pytrec_eval (it has no exp-log2)


@pytest.mark.slow
def test_every_dl19_run_gives_pytrec_eval_providers_rows():
    """Every measure both compute, per query, on all 37 DL19 runs: the same rows, values within 1e-12 (RR without a
    cutoff: pytrec_eval has none, and ir_measures gives RR@10 RR's values when both are asked)."""
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    theirs_measures = [ir_measures.parse_measure(m) for m in [*DL19_MEASURES, GAINS]]
    ours_measures = [ir_measures.parse_measure(m) for m in [*DL19_MEASURES, "nDCG(dcg='exp-log2')@10"]]
    reference = ir_measures.pytrec_eval.evaluator(theirs_measures, qrels)
    evaluator = ir_measures.evalset.evaluator(ours_measures, qrels)
    runs = sorted((REPO / "data" / "dl19" / "runs").glob("*.run.gz"))
    assert len(runs) == 37
    worst = compared = 0
    for path in runs:
        run = read_run(path)[["query_id", "doc_id", "score"]]
        # keyed by the measure's place in the list (an ir_measures measure hashes its repr: slow)
        theirs = values(reference.iter_calc(run), theirs_measures)
        ours = values(evaluator.iter_calc(run), ours_measures)
        assert ours.keys() == theirs.keys(), path.name
        worst = max(worst, max(abs(ours[key] - theirs[key]) for key in ours))
        compared += len(ours)
    assert compared == 37 * 43 * len(ours_measures)
    assert worst <= 1e-12


def values(metrics, measures) -> dict[tuple[str, int], float]:
    """(query, place of the measure in ``measures``) -> value; no row twice."""
    place = {id(measure): i for i, measure in enumerate(measures)}
    metrics = list(metrics)
    found = {(m.query_id, place[id(m.measure)]): m.value for m in metrics}
    assert len(found) == len(metrics)
    return found


def test_calc_aggregate_is_ir_measures_mean_on_dl19():
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    measures = [ir_measures.parse_measure(m) for m in ("nDCG@10", "AP(rel=2)", "P@10", "Bpref")]
    for path in sorted((REPO / "data" / "dl19" / "runs").glob("*.run.gz"))[::18]:
        run = read_run(path)[["query_id", "doc_id", "score"]]
        theirs = ir_measures.pytrec_eval.calc_aggregate(measures, qrels, run)
        ours = ir_measures.evalset.calc_aggregate(measures, qrels, run)
        assert ours.keys() == theirs.keys()
        for measure in measures:
            assert ours[measure] == pytest.approx(theirs[measure], abs=1e-12), (path.name, measure)


def test_a_run_missing_a_judged_query_scores_it_as_ir_measures_does():
    """ir_measures' Evaluator adds ``measure.DEFAULT`` (0) for a judged query absent from the run, for every
    provider; the mean is over every judged query."""
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    run = read_run(sorted((REPO / "data" / "dl19" / "runs").glob("*.run.gz"))[0])
    kept = run[run["query_id"].isin(sorted(run["query_id"].unique())[5:])][["query_id", "doc_id", "score"]]
    measures = [nDCG@10, AP, RR]
    theirs = rows(ir_measures.pytrec_eval.iter_calc(measures, qrels, kept))
    ours = rows(ir_measures.evalset.iter_calc(measures, qrels, kept))
    assert ours == pytest.approx(theirs, abs=1e-12)
    missing = {query for query, _ in ours} - set(kept["query_id"])
    assert len({query for query, _ in ours}) == 43 and missing
    assert all(value == 0.0 for (query, _), value in ours.items() if query in missing)
