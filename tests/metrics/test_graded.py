"""DCG, ERR, RBP and its residual, the counts, F and set P (evalset/metrics/graded.py and their registration),
each against an independent reference: scikit-learn's ``dcg_score``; gdeval.pl (the TREC Web track's script, which
ir_measures ships and runs with perl) for ERR; trec_eval's fixtures for rbp and rbp_resid (p = 0.9, trec_eval's
own); pytrec_eval (through ir_measures) for the counts, set_F and set_P; worked examples by hand and plain Python
loops written here, apart from the engine's vectorised code, for what no tool here computes."""

import gzip
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame, read_qrels, read_run
from evalset.metrics import Measure, evaluate, parse_measure, prepare_qrels
from evalset.metrics.measures import measure_bounds

REPO = Path(__file__).resolve().parents[2]
QRELS = REPO / "data" / "dl19" / "nist.qrels"
RUNS = sorted((REPO / "data" / "dl19" / "runs").glob("*.run.gz"))

# q1: a (3), an unjudged x, c (1), b (0), d (2); q2: its only document is judged non-relevant
HAND_QRELS = qrels_from_frame(pd.DataFrame({"query_id": ["q1"] * 4 + ["q2"], "doc_id": ["a", "b", "c", "d", "e"],
                                            "grade": [3, 0, 1, 2, 0]}))
HAND_RUN = run_from_frame(pd.DataFrame({"query_id": ["q1"] * 5 + ["q2"], "doc_id": ["a", "x", "c", "b", "d", "e"],
                                        "score": [5, 4, 3, 2, 1, 1]}))


def test_every_new_measure_on_a_ranking_worked_by_hand():
    table = evaluate(HAND_RUN, HAND_QRELS, [
        "dcg@3", "err@5", "RBP(p=0.5)", "RBP(p=0.5, rel=2)", "rbp_residual(p=0.5)", "rbp_residual(p=0.5)@3",
        "rbp_residual(p=0.5)@10", "NumRet", "NumRel", "NumRelRet", "F@3", "SetF(beta=2)", "set_P"])
    q1 = table.loc["q1"]
    assert q1["dcg@3"] == 3 / np.log2(2) + 1 / np.log2(4)  # 3.5
    # g_max = 4: R = 7/16, 0, 1/16, 0, 3/16
    assert q1["err@5"] == pytest.approx(7 / 16 + (1 / 16) / 3 * (9 / 16) + (3 / 16) / 5 * (9 / 16) * (15 / 16),
                                        abs=1e-15)
    assert q1["err@5"] == pytest.approx(0.468994140625, abs=1e-15)
    # gains over q1's highest grade 3: 1, 0, 1/3, 0, 2/3
    assert q1["rbp(p=0.5)"] == pytest.approx(0.5 * (1 + 0.25 / 3 + 0.0625 * 2 / 3), abs=1e-15)  # 0.5625
    assert q1["rbp(p=0.5, rel=2)"] == pytest.approx(0.5 * (1 + 0.0625), abs=1e-15)
    # x (rank 2) is unknown, and so is every place beyond the depth: 5 (the ranking's length), 3, and 5 again
    assert q1["rbp_residual(p=0.5)"] == pytest.approx(0.25 + 0.5**5, abs=1e-15)
    assert q1["rbp_residual(p=0.5)@3"] == pytest.approx(0.25 + 0.5**3, abs=1e-15)
    assert q1["rbp_residual(p=0.5)@10"] == q1["rbp_residual(p=0.5)"]
    assert q1[["num_ret", "num_rel", "num_rel_ret"]].tolist() == [5, 3, 3]
    assert q1["f@3"] == pytest.approx(2 * 2 / (3 + 3), abs=1e-15)  # P = R = 2/3
    assert q1["f(beta=2.0)"] == pytest.approx(3 * 3 / (2 * 3 + 5), abs=1e-15)  # P = 3/5, R = 1
    assert q1["set_p"] == 3 / 5
    q2 = table.loc["q2"]  # no relevant document: F is undefined, the others are not
    assert np.isnan(q2["f@3"]) and np.isnan(q2["f(beta=2.0)"])
    assert q2[["dcg@3", "err@5", "rbp(p=0.5)", "num_rel", "num_rel_ret", "set_p"]].tolist() == [0] * 6
    assert q2[["rbp_residual(p=0.5)", "num_ret"]].tolist() == [0.5, 1]


def test_err_scale_is_gdeval_4_raised_only_for_a_query_graded_above_it():
    graded_5 = pd.concat([HAND_QRELS, pd.DataFrame({"query_id": ["q2"], "doc_id": ["f"], "grade": [5]})])
    run = pd.concat([HAND_RUN, run_from_frame(pd.DataFrame({"query_id": ["q2"], "doc_id": ["f"], "score": [0]}))])
    both = evaluate(run, qrels_from_frame(graded_5), ["err@5"])["err@5"]
    assert both["q1"] == evaluate(HAND_RUN, HAND_QRELS, ["err@5"]).loc["q1", "err@5"]  # q1 keeps 2^4
    assert both["q2"] == pytest.approx(0 + (2**5 - 1) / 2**5 / 2, abs=1e-15)  # e (0), then f (5): 31/32 at rank 2


def test_a_query_the_run_misses_has_the_counts_of_its_qrels_and_an_unknown_residual():
    run = HAND_RUN[HAND_RUN["query_id"] == "q1"]
    table = evaluate(run, HAND_QRELS, ["NumRet", "NumRel", "rbp_residual", "RBP", "err@5"])
    assert table.loc["q2"].tolist() == [0, 0, 1, 0, 0]
    table = evaluate(HAND_RUN[HAND_RUN["query_id"] == "q2"], HAND_QRELS, ["NumRet", "NumRel", "rbp_residual"])
    assert table.loc["q1"].tolist() == [0, 3, 1]


# ------------------------------------------------------------------------------------------------------ loops
def ranked(run: pd.DataFrame) -> dict[str, list[str]]:
    """Each query's documents as trec_eval orders them: score descending at single precision, then doc id
    descending (written here apart from evalset.metrics.ranking)."""
    rankings = {}
    for query, group in run.groupby("query_id"):
        docs = sorted(zip(group["score"], group["doc_id"], strict=True), key=lambda pair: pair[1], reverse=True)
        rankings[query] = [doc for _, doc in sorted(docs, key=lambda pair: -np.float32(pair[0]))]
    return rankings


def loop_err(grades: list[int], k: int | None, top: int) -> float:
    value, going_on = 0.0, 1.0
    for rank, grade in enumerate(grades[:k], start=1):
        stop = (2 ** max(grade, 0) - 1) / 2**top
        value += going_on * stop / rank
        going_on *= 1 - stop
    return value


def loop_rbp(grades: list[int], k: int | None, p: float, highest: int, rel: int | None) -> float:
    total = 0.0
    for rank, grade in enumerate(grades[:k], start=1):
        gain = float(grade >= rel) if rel is not None else max(grade, 0) / max(highest, 1)
        total += (1 - p) * p ** (rank - 1) * gain
    return total


def loop_residual(judged: list[bool], k: int | None, p: float) -> float:
    depth = len(judged[:k])
    return sum((1 - p) * p ** (rank - 1) for rank, known in enumerate(judged[:k], start=1) if not known) + p**depth


UNJUDGED = -(10**9)


def test_err_rbp_and_residual_equal_plain_loops_on_dl19_runs():
    qrels = read_qrels(QRELS)
    grade = dict(zip(zip(qrels["query_id"], qrels["doc_id"], strict=True), qrels["grade"], strict=True))
    highest = qrels.groupby("query_id")["grade"].max()
    prepared = prepare_qrels(qrels)
    checked = 0
    for path in RUNS[::18]:
        run = read_run(path)
        measures = ["err@10", "err", "rbp", "RBP(p=0.95)@20", "RBP(rel=2)@10", "rbp_residual@10",
                    "rbp_residual(p=0.95)"]
        ours = evaluate(run, prepared, measures)
        for query, docs in ranked(run).items():
            if query not in ours.index:
                continue
            grades = [grade.get((query, doc), UNJUDGED) for doc in docs]
            expected = [loop_err(grades, 10, 4), loop_err(grades, None, 4), loop_rbp(grades, None, 0.8, highest[query],
                        None), loop_rbp(grades, 20, 0.95, highest[query], None),
                        loop_rbp(grades, 10, 0.8, highest[query], 2),
                        loop_residual([g >= 0 for g in grades], 10, 0.8),
                        loop_residual([g >= 0 for g in grades], None, 0.95)]
            np.testing.assert_allclose(ours.loc[query].to_numpy(), expected, rtol=0, atol=1e-12,
                                       err_msg=f"{path.name} {query}")
            checked += 1
    assert checked == 3 * 43


# -------------------------------------------------------------------------------------------------- references
@pytest.mark.slow
def test_dcg_equals_scikit_learn_dcg_score_with_its_tie_averaging_on_dl19_runs():
    """scikit-learn averages the gains of tied scores: evalset's ``ties=expected`` (slow: importing scikit-learn
    takes seconds)."""
    from sklearn.metrics import dcg_score

    qrels = read_qrels(QRELS)
    prepared = prepare_qrels(qrels, EvaluationContract(ties="expected"))
    checked = 0
    for path in RUNS[::36]:
        run = read_run(path)
        ours = evaluate(run, prepared, ["dcg@10", "dcg", "dcg(dcg='exp-log2')@10"])
        merged = run.merge(qrels, on=["query_id", "doc_id"], how="left").fillna({"grade": 0})
        for query, group in merged.groupby("query_id"):
            gains = np.maximum(group["grade"].to_numpy(float), 0)[None]
            scores = group["score"].to_numpy(float)[None]
            expected = [dcg_score(gains, scores, k=10), dcg_score(gains, scores),
                        dcg_score(2**gains - 1, scores, k=10)]
            np.testing.assert_allclose(ours.loc[query].to_numpy(), expected, rtol=1e-13, err_msg=query)
            checked += 1
    assert checked == 2 * 43


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs perl")
def test_err_equals_gdeval_on_dl19_runs(tmp_path):
    """gdeval.pl prints 5 decimals; it compares scores as doubles, trec_eval's tie rule (evalset's ``trec``) at
    single precision, so it is given the scores rounded to single precision."""
    ir_measures = pytest.importorskip("ir_measures")
    gdeval = Path(ir_measures.__file__).parent / "bin" / "gdeval.pl"
    prepared = prepare_qrels(read_qrels(QRELS))
    checked = 0
    for path in RUNS[::9]:
        lines = gzip.decompress(path.read_bytes()).decode().splitlines()
        rounded = tmp_path / path.name.removesuffix(".gz")
        # the shortest decimal of each single-precision score: equal where the floats are, in their order
        rounded.write_text("".join(f"{q} {z} {d} {r} {np.float32(s)} {t}\n"
                                   for q, z, d, r, s, t in (line.split() for line in lines)))
        ours = evaluate(read_run(path), prepared, ["err@20"])["err@20"]
        output = subprocess.run(["perl", str(gdeval), str(QRELS), str(rounded), "20"], capture_output=True,
                                text=True, check=True).stdout
        for line in output.splitlines()[1:]:
            _, query, _, err = line.split(",")
            assert ours[query] == pytest.approx(float(err), abs=5e-6 + 1e-12), (path.name, query)
            checked += 1
    assert checked == 5 * 43


@pytest.mark.parametrize(("expected", "qrels", "results", "rel_level"), [
    ("out.test.aq", "qrels.test", "results.test", 1),
    ("out.test.aql", "qrels.rel_level", "results.test", 2),  # grades up to 4, -1 (pooled, unjudged) for 304 pairs
])
def test_rbp_and_its_residual_at_p_0_9_equal_trec_eval_rbp_and_rbp_resid(shared_data, expected, qrels, results,
                                                                          rel_level):
    fixtures = shared_data / "trec_eval"
    truth = {(name, query): float(value) for name, query, value in
             (line.split() for line in (fixtures / expected).read_text().splitlines())
             if name in ("rbp", "rbp_resid")}
    contract = EvaluationContract(rel_level=rel_level, missing="skip", undefined="zero")
    ours = evaluate(read_run(fixtures / results), read_qrels(fixtures / qrels),
                    ["RBP(p=0.9)", "rbp_residual(p=0.9)"], contract)
    for (name, query), value in truth.items():
        column = ours["rbp(p=0.9)" if name == "rbp" else "rbp_residual(p=0.9)"]
        assert (column.mean() if query == "all" else column[query]) == pytest.approx(value, abs=5e-5), (name, query)
    assert len(truth) == 8


def test_counts_set_f_and_set_p_equal_pytrec_eval_per_query_on_dl19_runs():
    ir_measures = pytest.importorskip("ir_measures")
    provider = ir_measures.providers.registry["pytrec_eval"]
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    prepared = prepare_qrels(read_qrels(QRELS), EvaluationContract(missing="skip", undefined="zero"))
    measures = ["NumRet", "NumRel", "NumRelRet", "NumRet(rel=2)", "SetF", "SetF(beta=0.5)", "SetF(rel=2)", "SetP",
                "SetP(rel=2)"]
    checked = 0
    for path in RUNS[::12]:
        run = list(ir_measures.read_trec_run(str(path)))
        parsed = [ir_measures.parse_measure(m) for m in measures]
        theirs = {(r.query_id, str(r.measure)): r.value for r in provider.iter_calc(parsed, qrels, run)}
        ours = evaluate(read_run(path), prepared, measures)
        for text, their_measure in zip(measures, parsed, strict=True):
            for query, value in ours[str(parse_measure(text))].items():
                assert value == pytest.approx(theirs[(query, str(their_measure))], abs=1e-12), (path.name, text)
                checked += 1
    assert checked == 4 * 43 * len(measures)


# ------------------------------------------------------------------------------------------- spellings, refusals
@pytest.mark.parametrize(("text", "measure"), [
    ("DCG@10", Measure("dcg", 10)),
    ("dcg(dcg='exp-log2')@10", Measure("dcg", 10, (("dcg", "exp-log2"),))),
    ("ERR@10", Measure("err", 10)),
    ("RBP(p=0.8)", Measure("rbp", None, (("p", 0.8),))),
    ("RBP(rel=2)@10", Measure("rbp", 10, (("rel", 2),))),
    ("rbp_residual(p=0.8)", Measure("rbp_residual", None, (("p", 0.8),))),
    ("rbp_resid", Measure("rbp_resid")),  # trec_eval's convention: evalset/metrics/trec_measures.py
    ("NumRet", Measure("num_ret")),
    ("num_rel", Measure("num_rel")),
    ("NumRelRet", Measure("num_rel_ret")),
    ("NumRet(rel=2)", Measure("num_rel_ret", None, (("rel", 2),))),
    ("F@10", Measure("f", 10)),
    ("SetF(beta=0.5)", Measure("f", None, (("beta", 0.5),))),
    ("set_F", Measure("f")),
    ("SetP", Measure("set_p")),
])
def test_ir_measures_and_trec_eval_spellings_parse(text, measure):
    assert parse_measure(text) == measure
    assert parse_measure(str(measure)) == measure


def test_err_is_refused_under_expected_ties_and_an_unbounded_measure_is_not_estimated():
    with pytest.raises(InputError, match="err cannot be scored under ties=expected"):
        evaluate(HAND_RUN, HAND_QRELS, ["err@10"], EvaluationContract(ties="expected"))
    assert measure_bounds("RBP(p=0.8)") == measure_bounds("ERR@10") == (0.0, 1.0)
    for text in ("NumRet", "dcg@10"):
        with pytest.raises(InputError, match=r"has no upper bound \(its values are in \[0, inf\)\)"):
            measure_bounds(text)


def test_err_fixes_its_gain_and_rbp_its_grades_whatever_the_contract():
    linear, exponential = (evaluate(HAND_RUN, HAND_QRELS, ["err@5", "rbp", "dcg@3"], EvaluationContract(gain=gain))
                           for gain in ("linear", "exponential"))
    pd.testing.assert_frame_equal(linear[["err@5", "rbp"]], exponential[["err@5", "rbp"]])
    assert exponential.loc["q1", "dcg@3"] == 7 + 1 / 2
