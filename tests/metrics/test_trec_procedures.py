"""iprec@r, 11pt_avg and infAP as trec_eval computes them: trec_eval 10's fixtures byte for byte through
``score --format trec_eval``, trec_eval 9 (pytrec_eval, which builds 9.0.8) per query on DL19 runs, also with a
seeded 30% of the judgments turned into pooled-but-unjudged (grade -1), and worked examples by hand."""

import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame, read_qrels, read_run
from evalset.metrics import Measure, evaluate, evaluate_file, parse_measure, prepare_qrels, trec_eval_name
from evalset.metrics.trec_procedures import relevant_count

pytrec_eval = pytest.importorskip("pytrec_eval")

REPO = Path(__file__).resolve().parents[2]
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
ALL = [*(f"iprec_at_recall_{level:.2f}" for level in LEVELS), "11pt_avg", "infAP"]
TREC_EVAL = ("-c", "missing=skip", "-c", "undefined=zero")


def score(*args: object) -> str:
    result = CliRunner().invoke(main, ["score", *(str(a) for a in args)])
    assert result.exit_code == 0, result.output
    return result.stdout


def fixture_lines(path: Path, names: set[str]) -> str:
    return "".join(line for line in path.read_text().splitlines(keepends=True)
                   if line.split("\t")[0].rstrip() in names)


@pytest.mark.parametrize(("expected", "qrels", "results", "options"), [
    ("out.test.a", "qrels.test", "results.test", TREC_EVAL),
    ("out.test.aq", "qrels.test", "results.test", ("--per-query", *TREC_EVAL)),
    ("out.test.aql", "qrels.rel_level", "results.test", ("--per-query", "-c", "rel_level=2", *TREC_EVAL)),
    ("out.test.aqc", "qrels.test", "results.trunc", ("--per-query", "-c", "missing=zero", "-c", "undefined=zero")),
])
def test_trec_eval_10_fixtures_byte_for_byte(shared_data, tmp_path, expected, qrels, results, options):
    fixtures = shared_data / "trec_eval"
    run = tmp_path / "STANDARD"  # trec_eval prints the run's tag as runid
    shutil.copyfile(fixtures / results, run)
    asked = [part for name in (*reversed(ALL), "num_q", "runid") for part in ("-m", name)]  # in trec_eval's order
    ours = score("--qrels", fixtures / qrels, run, *asked, "--format", "trec_eval", *options)
    assert ours == fixture_lines(fixtures / expected, {"runid", "num_q", *ALL})
    assert len(ours.splitlines()) == (4 if "--per-query" in options else 1) * len(ALL) + 2


def test_recall_levels_given_as_parameters_equal_out_test_meas_params(shared_data, tmp_path):
    # trec_eval -miprec_at_recall..10,.20,.25,.75,.50 -q: the levels ascending, named %3.2f
    fixtures = shared_data / "trec_eval"
    run = tmp_path / "STANDARD"
    shutil.copyfile(fixtures / "results.test", run)
    asked = ("iprec@.10", "IPrec@0.2", "iprec(recall=0.25)", "iprec_at_recall_0.75", "iprec@0.5")
    ours = score("--qrels", fixtures / "qrels.test", run, *(p for m in asked for p in ("-m", m)), "--format",
                 "trec_eval", "--per-query", *TREC_EVAL)
    names = {f"iprec_at_recall_{level}" for level in ("0.10", "0.20", "0.25", "0.50", "0.75")}
    ours = "".join(line for line in ours.splitlines(keepends=True) if not line.startswith(("runid ", "num_q ")))
    assert ours == fixture_lines(fixtures / "out.test.meas_params", names)  # (that call printed no runid, num_q)


def test_trec_eval_9_is_its_own_count_on_the_fixtures(shared_data, tmp_path):
    # trec_eval 9.0.x's out.test.a (usnistgov/trec_eval before lround) and pytrec_eval: 0.3884, 0.0822, 0.1958
    fixtures = shared_data / "trec_eval"
    run = tmp_path / "STANDARD"
    shutil.copyfile(fixtures / "results.test", run)
    asked = ("iprec@0.1", "iprec@0.6", "11pt_avg")
    args = ("--qrels", fixtures / "qrels.test", run, *(p for m in asked for p in ("-m", m)), "--format", "trec_eval",
            *TREC_EVAL)
    nine = score(*args, "-c", "trec_eval_version=9").splitlines()
    ten = score(*args).splitlines()
    assert [line.split("\t")[2] for line in nine] == ["0.3884", "0.0822", "0.1958"]
    assert [line.split("\t")[2] for line in ten] == ["0.3885", "0.0858", "0.1962"]


def as_dict(frame: pd.DataFrame, value: str) -> dict[str, dict[str, float]]:
    nested: dict[str, dict[str, float]] = defaultdict(dict)
    for query, doc, v in frame[["query_id", "doc_id", value]].itertuples(index=False):
        nested[str(query)][str(doc)] = v
    return nested


@pytest.mark.slow
def test_trec_eval_9_equals_pytrec_eval_per_query_on_dl19_runs_also_with_pooled_unjudged_judgments():
    qrels = read_qrels(REPO / "data/dl19/nist.qrels")
    hidden = qrels.copy()
    hidden.loc[np.random.default_rng(31).random(len(hidden)) < 0.3, "grade"] = -1  # 30% pooled but not judged
    runs = [read_run(path) for path in sorted((REPO / "data/dl19/runs").glob("*.run.gz"))[::4]]
    ours_asked = [*(f"iprec@{level}" for level in LEVELS), "11pt_avg", "infap", "iprec(rel=2)@0.3", "infap(rel=2)",
                  "11pt_avg(rel=2)", "iprec(judged_only=True)@0.3"]
    trec = EvaluationContract(missing="skip", undefined="zero", trec_eval_version=9)
    checked = 0
    for judgments in (qrels, hidden):
        nested = as_dict(judgments.astype({"grade": int}), "grade")
        names = {"iprec_at_recall", "11pt_avg", "infAP"}
        at_1 = pytrec_eval.RelevanceEvaluator(nested, names)
        at_2 = pytrec_eval.RelevanceEvaluator(nested, names, relevance_level=2)
        judged = pytrec_eval.RelevanceEvaluator(nested, {"iprec_at_recall"}, judged_docs_only_flag=True)
        prepared = prepare_qrels(judgments, trec)
        for run in runs:
            ours = evaluate(run, prepared, ours_asked)
            nested_run = as_dict(run, "score")
            one, two, only = at_1.evaluate(nested_run), at_2.evaluate(nested_run), judged.evaluate(nested_run)
            theirs = pd.DataFrame({
                **{f"iprec@{level}": {q: v[f"iprec_at_recall_{level:.2f}"] for q, v in one.items()}
                   for level in LEVELS},
                "11pt_avg": {q: v["11pt_avg"] for q, v in one.items()},
                "infap": {q: v["infAP"] for q, v in one.items()},
                "iprec(rel=2)@0.3": {q: v["iprec_at_recall_0.30"] for q, v in two.items()},
                "infap(rel=2)": {q: v["infAP"] for q, v in two.items()},
                "11pt_avg(rel=2)": {q: v["11pt_avg"] for q, v in two.items()},
                "iprec(judged_only=True)@0.3": {q: v["iprec_at_recall_0.30"] for q, v in only.items()},
            })
            pd.testing.assert_frame_equal(ours, theirs.loc[ours.index.astype(str)].set_axis(ours.index),
                                          check_exact=False, rtol=0, atol=1e-12)
            checked += ours.size
    assert checked == 2 * 10 * 43 * len(ours_asked)
    assert (hidden["grade"] == -1).mean() == pytest.approx(0.3, abs=0.01)


def hand_run(relevant_ranks: list[int], length: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    docs = [f"d{rank}" for rank in range(1, length + 1)]
    run = run_from_frame(pd.DataFrame({"query_id": "q", "doc_id": docs, "score": np.arange(length, 0, -1.0)}))
    grades = [1 if rank in relevant_ranks else 0 for rank in range(1, length + 1)]
    return run, qrels_from_frame(pd.DataFrame({"query_id": "q", "doc_id": docs, "grade": grades}))


def test_trec_eval_9_and_10_read_a_recall_level_differently_by_hand():
    # R = 4 relevant documents at ranks 1, 3, 5, 6: precision 1, 2/3, 3/5, 4/6 at them. At r = 0.3, r*R = 1.2:
    # 9 truncates 1.2 + 0.9 (c = 2: the highest precision from the 2nd relevant document on, 2/3), 10 rounds 1.2
    # (c = 1: 1). At r = 0.5 (2.0) both take c = 2; at r = 0.9 (3.6) both c = 4: 4/6.
    run, qrels = hand_run([1, 3, 5, 6], 8)
    asked = ["iprec@0.3", "iprec@0.5", "iprec@0.9", "iprec@0.0"]
    nine = evaluate(run, qrels, asked, EvaluationContract(trec_eval_version=9)).loc["q"].tolist()
    ten = evaluate(run, qrels, asked, EvaluationContract(trec_eval_version=10)).loc["q"].tolist()
    assert nine == pytest.approx([2 / 3, 2 / 3, 4 / 6, 1.0])
    assert ten == pytest.approx([1.0, 2 / 3, 4 / 6, 1.0])
    four = np.array([4.0])
    assert [relevant_count(r, four, 9)[0] for r in (0.1, 0.2, 0.3, 0.4, 0.6)] == [1, 1, 2, 2, 3]
    assert [relevant_count(r, four, 10)[0] for r in (0.1, 0.2, 0.3, 0.4, 0.6)] == [0, 1, 1, 2, 2]
    assert relevant_count(0.5, np.array([5.0]), 10)[0] == 3  # 2.5 rounds half away from zero (not to even)


def test_11pt_avg_by_hand_and_a_level_beyond_the_retrieved_is_zero():
    # R = 4, two retrieved (ranks 2 and 4): 10 counts 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4 relevant documents for
    # r = 0.0 .. 1.0; c <= 1 gives 1/2, c = 2 gives 2/4, c > 2 gives 0
    run, qrels = hand_run([2, 4], 6)
    qrels = pd.concat([qrels, qrels_from_frame(pd.DataFrame({"query_id": "q", "doc_id": ["x", "y"], "grade": 1}))])
    values = evaluate(run, qrels, ["11pt_avg", "iprec@1", "iprec@0.4"]).loc["q"]
    assert values["11pt_avg"] == pytest.approx((4 * 0.5 + 3 * 0.5) / 11)
    assert values["iprec@1.0"] == 0.0 and values["iprec@0.4"] == 0.5


def test_infap_by_hand_with_pooled_unjudged_and_unpooled_documents():
    # ranks: 1 relevant, 2 pooled unjudged (-1), 3 not in the qrels, 4 non-relevant, 5 relevant; R = 3 (one not
    # retrieved). Rank 1: 1. Rank 5 (j = 4; a = 1, n = 1, u = 1): 1/5 + 4/5 * (3/4) * (1 + eps) / (2 + 2 eps)
    docs = ["r1", "u", "out", "n", "r2"]
    run = run_from_frame(pd.DataFrame({"query_id": "q", "doc_id": docs, "score": [5.0, 4, 3, 2, 1]}))
    qrels = qrels_from_frame(pd.DataFrame({"query_id": "q", "doc_id": ["r1", "u", "n", "r2", "r3"],
                                           "grade": [1, -1, 0, 2, 1]}))
    eps = 0.00001
    expected = (1 + 1 / 5 + 4 / 5 * (3 / 4) * (1 + eps) / (2 + 2 * eps)) / 3
    assert evaluate(run, qrels, ["infap"]).loc["q", "infap"] == pytest.approx(expected, abs=1e-15)
    # condensed (trec_eval's -J): u and out leave, r2 is at j = 2 with a = 1, n = 1, u = 0
    condensed = (1 + 1 / 3 + 2 / 3 * (2 / 2) * (1 + eps) / (2 + 2 * eps)) / 3
    assert evaluate(run, qrels, ["infap"], EvaluationContract(unjudged="condensed")).loc["q", "infap"] == \
        pytest.approx(condensed, abs=1e-15)
    # at rel=2 only r2 is relevant (R = 1): j = 4, a = 0, n = 2 (r1 and n), u = 1
    at_2 = (1 / 5 + 4 / 5 * (3 / 4) * eps / (2 + 2 * eps)) / 1
    assert evaluate(run, qrels, ["infAP(rel=2)"]).loc["q", "infap(rel=2)"] == pytest.approx(at_2, abs=1e-15)


@pytest.mark.parametrize(("text", "measure", "printed", "trec_eval"), [
    ("IPrec@0.5", Measure("iprec", None, (("recall", 0.5),)), "iprec@0.5", "iprec_at_recall_0.50"),
    ("iprec_at_recall_0.50", Measure("iprec", None, (("recall", 0.5),)), "iprec@0.5", "iprec_at_recall_0.50"),
    ("iprec@1", Measure("iprec", None, (("recall", 1.0),)), "iprec@1.0", "iprec_at_recall_1.00"),
    ("iprec@0.333", Measure("iprec", None, (("recall", 0.333),)), "iprec@0.333", "iprec_at_recall_0.33"),
    ("IPrec(rel=2)@0.1", Measure("iprec", None, (("recall", 0.1), ("rel", 2))), "iprec(rel=2)@0.1", None),
    ("11PT_AVG", Measure("11pt_avg"), "11pt_avg", "11pt_avg"),
    ("infAP", Measure("infap"), "infap", "infAP"),
])
def test_spellings_parse_print_back_and_have_trec_eval_names(text, measure, printed, trec_eval):
    assert parse_measure(text) == measure
    assert str(measure) == printed and parse_measure(printed) == measure
    assert trec_eval_name(measure) == trec_eval


def test_expected_ties_and_an_unknown_version_are_refused():
    run, qrels = hand_run([1], 2)
    with pytest.raises(InputError, match=r"iprec@0\.5 has no expectation over tied orders"):
        evaluate(run, qrels, ["iprec@0.5"], EvaluationContract(ties="expected"))
    with pytest.raises(InputError, match="trec_eval_version must be one of 9, 10, got 8"):
        evaluate(run, qrels, ["ap"], EvaluationContract(trec_eval_version=8))
    result = CliRunner().invoke(main, ["score", "--qrels", "q", "r", "-c", "trec_eval_version=8"])
    assert result.exit_code == 2 and "'8' is not one of '9', '10'" in result.output


def test_a_streamed_run_scores_as_a_whole_one_under_either_version(tmp_path):
    qrels = read_qrels(REPO / "data/dl19/nist.qrels")
    qrels.loc[np.random.default_rng(5).random(len(qrels)) < 0.3, "grade"] = -1
    path = REPO / "data/dl19/runs/TUA1-1.run.gz"
    asked = ["iprec@0.3", "11pt_avg", "infap"]
    for version in (9, 10):
        prepared = prepare_qrels(qrels, EvaluationContract(trec_eval_version=version))
        whole = evaluate(read_run(path), prepared, asked)
        streamed = evaluate_file(path, prepared, asked, stream=True, block_bytes=20_000)
        pd.testing.assert_frame_equal(whole, streamed, check_exact=True)
