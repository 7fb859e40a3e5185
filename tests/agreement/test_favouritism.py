"""Favouritism of an LLM judge per run (:mod:`evalset.agreement.favouritism`) on TREC DL 2019: NIST's qrels as the
humans, each of the three recorded LLM label sets as the judge, the 37 official runs. The per-run gaps are
pytrec_eval's nDCG@10 under either qrels; the excess, its Bonferroni t interval and the flags a direct numpy and
scipy computation; the command prints the section and its JSON."""

import gzip
import json
import math
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from click.testing import CliRunner
from scipy import stats

from evalset.agreement.favouritism import favouritism, favouritism_pairs
from evalset.agreement.systems import per_query_scores
from evalset.cli import main
from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.io.trec import read_qrels, read_runs
from evalset.metrics import parse_measure
from tests.support.doubles import ordered_as_doubles

JUDGES = ("llama-3-70b.fourprompts", "flan-t5-large.fourprompts", "llama-3-8b.baseline")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _qrels(path):
    qrels = defaultdict(dict)
    for line in path.read_text().splitlines():
        query, _, doc, grade = line.split()
        qrels[query][doc] = int(grade)
    return dict(qrels)


def _run(path):
    run = defaultdict(dict)
    with gzip.open(path, "rt") as lines:
        for line in lines:
            query, _, doc, _, score, _ = line.split()
            run[query][doc] = float(score)
    return dict(run)


def _pytrec_ndcg(qrels, runs):
    """Queries x runs of pytrec_eval's ndcg_cut_10; a query with no relevant document (undefined under evalset's
    contract) is NaN, a judged query a run lacks 0 (the contract's ``missing=zero``)."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    relevant = {q for q, docs in qrels.items() if any(g >= 1 for g in docs.values())}
    table = {}
    for name, run in runs.items():
        scores = evaluator.evaluate(ordered_as_doubles(run))
        table[name] = {q: (scores[q]["ndcg_cut_10"] if q in scores else 0.0) if q in relevant else math.nan
                       for q in qrels}
    return pd.DataFrame(table)


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    folder = root / "runs" / "official_top100"
    pytrec_runs = {path.name.removesuffix(".run.gz"): _run(path) for path in sorted(folder.glob("*.run.gz"))}
    return {"root": root, "runs": folder, "named": read_runs([folder]), "pytrec_runs": pytrec_runs,
            "human": root / "qrels.txt", "llm": {judge: root / "llm_labels" / f"{judge}.qrels" for judge in JUDGES}}


@pytest.fixture(scope="module")
def measured(dl19):
    """Per judge: evalset's favouritism, and pytrec_eval's per-query nDCG@10 under NIST's and the judge's qrels."""
    measure, contract = parse_measure("ndcg@10"), EvaluationContract()
    human = per_query_scores(read_qrels(dl19["human"]), dl19["named"], measure, contract)
    human_pytrec = _pytrec_ndcg(_qrels(dl19["human"]), dl19["pytrec_runs"])
    out = {}
    for judge, path in dl19["llm"].items():
        llm = per_query_scores(read_qrels(path), dl19["named"], measure, contract)
        out[judge] = (favouritism(human, llm, human_name="nist", llm_name=judge, measure="ndcg@10"),
                      human_pytrec, _pytrec_ndcg(_qrels(path), dl19["pytrec_runs"]))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("judge", JUDGES)
def test_dl19_per_run_gaps_are_pytrec_evals_means_over_the_queries_both_define(measured, judge):
    result, human, llm = measured[judge]
    common = human.index[human.notna().all(axis=1) & llm.notna().all(axis=1)]
    assert result.queries == len(common) == 43 and result.runs == 37
    rows = result.rows.set_index("run")
    expected_gap = (llm.loc[common] - human.loc[common]).mean()
    assert rows["gap"].to_dict() == pytest.approx(expected_gap.to_dict(), abs=1e-12)
    assert rows["human_mean"].to_dict() == pytest.approx(human.loc[common].mean().to_dict(), abs=1e-12)
    assert rows["llm_mean"].to_dict() == pytest.approx(llm.loc[common].mean().to_dict(), abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("judge", JUDGES)
def test_dl19_excess_intervals_flags_and_ranks_against_numpy_and_scipy(measured, judge):
    result, human, llm = measured[judge]
    names = list(human.columns)
    d = (llm - human)[names].to_numpy()
    n, r = d.shape
    rows = result.rows.set_index("run").loc[names]
    half_gap = stats.t.ppf(0.975, n - 1) * d.std(axis=0, ddof=1) / np.sqrt(n)
    assert rows["gap_low"].to_numpy() == pytest.approx(d.mean(axis=0) - half_gap, abs=1e-12)
    assert rows["gap_high"].to_numpy() == pytest.approx(d.mean(axis=0) + half_gap, abs=1e-12)
    e = d - d.mean(axis=1, keepdims=True)
    half = stats.t.ppf(1 - 0.05 / r / 2, n - 1) * e.std(axis=0, ddof=1) / np.sqrt(n)
    low, high = e.mean(axis=0) - half, e.mean(axis=0) + half
    assert result.threshold == pytest.approx(0.05 / 37)
    assert rows["excess"].to_numpy() == pytest.approx(d.mean(axis=0) - d.mean(), abs=1e-12)
    assert rows["excess_low"].to_numpy() == pytest.approx(low, abs=1e-12)
    assert rows["excess_high"].to_numpy() == pytest.approx(high, abs=1e-12)
    flags = np.where(low > 0, "inflated", np.where(high < 0, "deflated", ""))
    assert list(rows["flag"]) == list(flags)
    assert list(result.rows["excess"]) == sorted(result.rows["excess"], reverse=True)
    human_rank = stats.rankdata(-human[names].mean().to_numpy(), method="min")
    llm_rank = stats.rankdata(-llm[names].mean().to_numpy(), method="min")
    assert list(rows["rank_human"]) == list(human_rank) and list(rows["rank_llm"]) == list(llm_rank)


@pytest.mark.slow
def test_dl19_the_runs_each_judge_favours(measured):
    """The flags docs/judge.md reports: Llama-3-70B inflates three lexical runs, Llama-3-8B six BM25-like runs
    and runid5 and deflates the four idst BERT runs it ranks lowest for their human score, Flan-T5 none."""
    flagged = {judge: {flag: set(result.flagged(flag)["run"]) for flag in ("inflated", "deflated")}
               for judge, (result, _, _) in measured.items()}
    assert flagged["flan-t5-large.fourprompts"] == {"inflated": set(), "deflated": set()}
    assert flagged["llama-3-70b.fourprompts"] == {"inflated": {"srchvrs_ps_run1", "UNH_bm25", "srchvrs_ps_run3"},
                                                  "deflated": {"UNH_exDL_bm25"}}
    assert flagged["llama-3-8b.baseline"]["inflated"] == {"UNH_bm25", "srchvrs_ps_run1", "bm25base_rm3_p",
                                                          "bm25base_p", "bm25tuned_p", "bm25tuned_rm3_p", "runid5"}
    assert flagged["llama-3-8b.baseline"]["deflated"] == {"idst_bert_p1", "idst_bert_p2", "idst_bert_p3",
                                                          "idst_bert_pr1"}
    text = measured["llama-3-70b.fourprompts"][0].to_text()
    assert "llama-3-70b.fourprompts inflates srchvrs_ps_run1 (+0.072 [0.02, 0.13]) beyond the other runs" in text
    assert "flan-t5-large.fourprompts: no run stands out" in measured["flan-t5-large.fourprompts"][0].to_text()


# ---------------------------------------------------------------------------------------------- small inputs
def _frames():
    index = [f"q{i}" for i in range(6)]
    human = pd.DataFrame({"a": [0.2, 0.4, 0.1, 0.5, 0.3, 0.6], "b": [0.5, 0.5, 0.4, 0.7, 0.6, 0.8],
                          "c": [0.1, 0.2, 0.2, 0.3, 0.1, 0.4]}, index=index)
    llm = human + pd.DataFrame({"a": [0.1, 0.2, 0.1, 0.2, 0.1, 0.2], "b": [0.1, 0.1, 0.0, 0.1, 0.1, 0.0],
                                "c": [0.3, 0.4, 0.35, 0.3, 0.4, 0.45]}, index=index)
    return human, llm


def test_the_gap_interval_is_scipys_t_interval_and_an_inflated_run_is_flagged():
    human, llm = _frames()
    result = favouritism(human, llm, measure="ndcg@10")
    rows = result.rows.set_index("run")
    for run in "abc":
        d = (llm[run] - human[run]).to_numpy()
        low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
        assert (rows.loc[run, "gap_low"], rows.loc[run, "gap_high"]) == pytest.approx((low, high), abs=1e-12)
    assert result.rows["run"].iloc[0] == "c" and rows.loc["c", "flag"] == "inflated"
    assert result.to_dict()["rows"][0]["flag"] == "inflated"
    gaps = (llm - human).mean()
    assert rows.loc["c", "excess"] == pytest.approx(gaps["c"] - gaps.mean(), abs=1e-12)
    assert result.verdicts()[0] == f"llm inflates c (+{gaps['c'] - gaps.mean():.3f} [0.10, 0.24]) beyond the other runs"
    assert result.verdicts()[1].startswith("llm deflates b (-0.128 [")
    assert result.to_dict()["threshold"] == pytest.approx(0.05 / 3)


def test_only_queries_both_grades_define_count_and_a_wider_level_widens():
    human, llm = _frames()
    human.loc["q0", "a"] = np.nan  # no relevant document under the human grades
    llm.loc["q5", "b"] = np.nan
    result = favouritism(human, llm)
    assert result.queries == 4
    d = (llm - human).loc[["q1", "q2", "q3", "q4"]]
    assert result.rows.set_index("run")["gap"].to_dict() == pytest.approx(d.mean().to_dict(), abs=1e-12)
    wide = favouritism(human, llm, level=0.99).rows.set_index("run")
    narrow = result.rows.set_index("run")
    assert ((wide["gap_high"] - wide["gap_low"]) > (narrow["gap_high"] - narrow["gap_low"])).all()


def test_no_common_query_fewer_than_two_runs_or_different_runs_are_refused_and_noted():
    human, llm = _frames()
    with pytest.raises(InputError, match="at least 2 runs"):
        favouritism(human[["a"]], llm[["a"]])
    with pytest.raises(InputError, match="b is scored under one only"):
        favouritism(human[["a", "c"]], llm)
    undefined = llm.copy()
    undefined["a"] = np.nan
    with pytest.raises(InputError, match="no query is defined under both grades"):
        favouritism(human, undefined)
    results, notes = favouritism_pairs({"h": human, "j": undefined, "k": llm}, {"h": "human", "j": "llm",
                                                                              "k": "llm"})
    assert [r.llm_name for r in results] == ["k"]
    assert notes == ["favouritism of j against h: no figures: favouritism of j against h: no query is defined "
                     "under both grades"]


def test_every_human_against_every_llm_and_one_query_gives_no_interval():
    human, llm = _frames()
    results, notes = favouritism_pairs({"j": llm, "h1": human, "h2": human * 0.5},
                                       {"j": "llm", "h1": "human", "h2": "human"})
    assert [(r.human_name, r.llm_name) for r in results] == [("h1", "j"), ("h2", "j")] and not notes
    gaps = (llm - human * 0.5).mean()
    assert results[1].rows.set_index("run")["gap"].to_dict() == pytest.approx(gaps.to_dict(), abs=1e-12)
    lone = favouritism(human.iloc[:1], llm.iloc[:1])
    assert lone.queries == 1 and lone.rows["gap_low"].isna().all() and (lone.rows["flag"] == "").all()
    assert lone.verdicts() == ["llm: 1 query both define: no interval, so no run can stand out"]


# ---------------------------------------------------------------------------------------------- the command
@pytest.mark.slow
def test_agreement_with_runs_prints_the_favouritism_of_each_llm_against_each_human(dl19, tmp_path):
    runs = [dl19["runs"] / f"{name}.run.gz" for name in ("UNH_bm25", "bm25base_p", "idst_bert_p1", "runid3",
                                                          "srchvrs_ps_run1")]
    args = ["agreement", "--human", dl19["human"], *dl19["llm"].values(), "--resamples", 20,
            *[a for run in runs for a in ("--runs", run)]]
    text = invoke(*args)
    assert text.exit_code == 0, text.output
    for judge in JUDGES:
        assert f"Favouritism of {judge} against qrels by ndcg@10: 5 runs, 43 queries both define" in text.output
    assert text.output.index("System rankings") < text.output.index("Favouritism") < \
        text.output.index("Disagreements")
    document = json.loads(invoke(*args, "--format", "json").output)
    pairs = document["favouritism"]["pairs"]
    assert [(p["human"], p["llm"]) for p in pairs] == [("qrels", judge) for judge in JUDGES]  # in input order
    scores = document["systems"]["scores"]
    for pair in pairs:
        for row in pair["rows"]:
            gap = scores[pair["llm"]][row["run"]] - scores["qrels"][row["run"]]  # every query defined under both
            assert row["gap"] == pytest.approx(gap, abs=1e-12)
    without = json.loads(invoke("agreement", "--human", dl19["human"], dl19["llm"][JUDGES[0]], "--resamples", 20,
                                "--format", "json").output)
    assert without["favouritism"] is None


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "measure", "pytrec"), [("official_top100", "ndcg@10", "ndcg_cut_10"),
                                                           ("official_full", "ap", "map")])
def test_under_trec_eval_version_9_the_runs_means_are_pytrec_evals_as_it_computes_them(dl19, folder, measure,
                                                                                         pytrec):
    # pytrec_eval builds trec_eval 9: its scores tie as 32-bit floats, and -c trec_eval_version=9 gives its numbers
    # as they are; the default, 10, compares doubles (TUA1-1's AP moves from 0.4723 to 0.4724)
    runs = sorted((dl19["root"] / "runs" / folder).glob("*.run.gz"))
    args = ["agreement", "--human", dl19["human"], dl19["llm"][JUDGES[0]], "--resamples", 20, "--format", "json",
            "-m", measure, *[a for run in runs for a in ("--runs", run)]]
    nine = json.loads(invoke(*args, "-c", "trec_eval_version=9").output)["favouritism"]["pairs"][0]["rows"]
    ten = {row["run"]: row for row in json.loads(invoke(*args).output)["favouritism"]["pairs"][0]["rows"]}
    evaluator = {side: pytrec_eval.RelevanceEvaluator(_qrels(path), {pytrec.replace("_cut_", "_cut.")})
                 for side, path in (("human", dl19["human"]), ("llm", dl19["llm"][JUDGES[0]]))}
    moved = set()
    for row in nine:
        run = _run(next(path for path in runs if path.name == f"{row['run']}.run.gz"))
        for side in ("human", "llm"):
            scores = evaluator[side].evaluate(run)
            assert row[f"{side}_mean"] == pytest.approx(np.mean([v[pytrec] for v in scores.values()]), abs=1e-9)
            if abs(ten[row["run"]][f"{side}_mean"] - row[f"{side}_mean"]) > 1e-9:
                moved.add(row["run"])
    assert len(nine) == len(runs) and moved == ({"TUA1-1"} if measure == "ap" else set())
