"""`evalset compare --all` and `--baseline NAME`: many systems at once, on the 37 official DL19 runs; the rules of a
single comparison (missing queries, a set's weights and dev split, the holes) hold for them too."""

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.comparing import compare_many
from evalset.errors import InputError
from evalset.evaluation import Evaluation, per_query_values
from evalset.io.annotations import labels_from_file
from evalset.io.guideline import read_guideline
from evalset.io.queries import read_queries
from evalset.io.setfolder import load_set
from evalset.io.trec import read_run
from evalset.sets import freeze

REPO = Path(__file__).resolve().parents[2]
DL19 = REPO / "data" / "dl19"
RUNS = DL19 / "runs"
QRELS = DL19 / "nist.qrels"
BM25 = sorted(RUNS.glob("bm25*.run.gz"))
FEW = [RUNS / "bm25base_p.run.gz", RUNS / "bm25tuned_p.run.gz", RUNS / "idst_bert_p1.run.gz"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def all_37():
    outputs = {}
    for form in ("table", "json", "tsv"):
        result = invoke("compare", "--qrels", QRELS, "--all", RUNS, "--permutations", 1999, "--format", form)
        assert result.exit_code == 0, result.output
        outputs[form] = result.stdout
    return outputs


@pytest.mark.slow
def test_every_pair_of_the_37_dl19_runs_by_mean_with_letters(all_37):
    names = sorted(path.name.removesuffix(".run.gz") for path in RUNS.glob("*.run.gz"))
    assert len(names) == 37
    text = all_37["table"]
    assert text.startswith("37 runs on ndcg@10 (43 queries): every pair of the 37 runs, 666 pairs in the family\n")
    assert "randomised Tukey HSD" in text and "1999 permutations, seed 20191, alpha 0.05" in text
    assert all(f"\n  {name} " in text for name in names)
    assert "two-way ANOVA (system + topic): system F(36, 1512) = 35.2" in text
    document = json.loads(all_37["json"])
    assert set(document) >= {"metric", "runs", "means", "letters", "adjusted_p", "raw_p", "pairs", "anova",
                             "settings"}
    assert sorted(document["runs"]) == names and document["raw_p"] is None
    means = list(document["means"].values())
    assert means == sorted(means, reverse=True) and document["runs"][0] == "idst_bert_p1"
    assert document["settings"].items() >= {"family": "all pairs", "pairs": 666, "correction": "tukey",
                                            "permutations": 1999, "weighting": "uniform",
                                            "exploratory": False}.items()
    assert document["anova"]["df_system"] == 36 and document["anova"]["df_residual"] == 1512
    matrix = pd.read_csv(io.StringIO(all_37["tsv"]), sep="\t", index_col="run")
    assert matrix.shape == (37, 37) and list(matrix.index) == list(matrix.columns) == document["runs"]
    assert np.array_equal(matrix.to_numpy(), matrix.to_numpy().T) and (np.diag(matrix) == 1).all()
    assert matrix.loc["idst_bert_p1", "UNH_exDL_bm25"] == pytest.approx(1 / 2000)
    assert matrix.loc["idst_bert_p1", "bm25base_p"] == document["adjusted_p"]["bm25base_p"]["idst_bert_p1"]
    # the letters: two runs share one exactly when their adjusted p is not below alpha (no holes in the way here)
    letters = document["letters"]
    for pair in document["pairs"]:
        shared = bool(set(letters[pair["a"]]) & set(letters[pair["b"]]))
        assert shared == (not pair["significant"]) == (matrix.loc[pair["a"], pair["b"]] >= 0.05)


@pytest.mark.slow
def test_every_run_against_a_baseline_with_holm_gives_raw_and_adjusted_p(tmp_path):
    result = invoke("compare", "--qrels", QRELS, "--baseline", "bm25base_p", *BM25, RUNS / "idst_bert_p1.run.gz",
                    "--correction", "holm", "--permutations", 999, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["settings"]["family"] == "baseline" and document["settings"]["pairs"] == 8
    assert document["letters"] is None
    raw = [pair["raw_p"] for pair in document["pairs"]]
    from statsmodels.stats.multitest import multipletests

    assert [pair["p"] for pair in document["pairs"]] == pytest.approx(multipletests(raw, method="holm")[1])
    assert {pair["b"] for pair in document["pairs"]} == {"bm25base_p"}
    bert = next(pair for pair in document["pairs"] if pair["a"] == "idst_bert_p1")
    assert bert["verdict"] == "established" and bert["difference"] == pytest.approx(0.2586, abs=1e-4)
    table = invoke("compare", "--qrels", QRELS, "--baseline", "bm25base_p", *FEW, "--permutations", 999)
    assert "every run against bm25base_p, 2 pairs in the family" in table.stdout
    assert "  bm25base_p    0.5058   1.000      baseline" in table.stdout


def test_usage_errors_of_the_many_options():
    assert "--correction is for many systems at once: give --all or --baseline NAME" in invoke(
        "compare", "--qrels", QRELS, *FEW[:2], "--correction", "holm").output
    tsv = invoke("compare", "--qrels", QRELS, *FEW[:2], "--format", "tsv")
    assert tsv.exit_code == 2 and "--format tsv is the matrix of adjusted p-values" in tsv.output
    assert "give one of them without both --all and --baseline" in invoke(
        "compare", "--qrels", QRELS, "--all", "--baseline", "x", *FEW).output
    assert "--why is now `evalset explain`" in invoke("compare", "--qrels", QRELS, "--all", *FEW, "--why").output
    missing = invoke("compare", "--qrels", QRELS, FEW[0])
    assert missing.exit_code == 2 and "Missing argument 'CANDIDATES...'" in missing.output
    folder = invoke("compare", "--qrels", QRELS, RUNS, FEW[0])
    assert folder.exit_code == 2 and "is a directory" in folder.output
    unknown = invoke("compare", "--qrels", QRELS, "--baseline", "nope", *FEW)
    assert unknown.exit_code == 2 and "the baseline 'nope' is none of the runs given" in unknown.output


# ------------------------------------------------------------------------------------------------ missing queries
@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    """bm25tuned_p without its first three judged queries."""
    with gzip.open(FEW[1], "rt") as handle:
        lines = handle.read().splitlines()
    dropped = list(dict.fromkeys(line.split()[0] for line in lines))[:3]
    path = tmp_path_factory.mktemp("short") / "bm25tuned_short.run"
    path.write_text("".join(line + "\n" for line in lines if line.split()[0] not in dropped))
    return path, dropped


def test_a_judged_query_missing_from_a_run_is_refused_until_a_policy_is_given(short_run):
    path, dropped = short_run
    refused = invoke("compare", "--qrels", QRELS, "--all", FEW[0], path, FEW[2], "--permutations", 99)
    assert refused.exit_code == 2
    assert "run bm25tuned_short lacks 3 of the 43 judged queries: give -c missing=zero (they score 0" in refused.output
    zero = invoke("compare", "--qrels", QRELS, "--all", FEW[0], path, FEW[2], "--permutations", 99, "-c",
                  "missing=zero")
    assert zero.exit_code == 0 and "(43 queries)" in zero.stdout
    assert "note: run bm25tuned_short lacks 3 of the 43 judged queries: scored 0 (-c missing=zero)" in zero.stderr
    skip = invoke("compare", "--qrels", QRELS, "--all", FEW[0], path, FEW[2], "--permutations", 99, "-c",
                  "missing=skip", "--format", "json")
    assert skip.exit_code == 0 and json.loads(skip.stdout)["settings"]["queries"] == 40
    assert "left out for every run (-c missing=skip)" in skip.stderr
    skipped = per_query_values(Evaluation.on_qrels(QRELS), {"base": FEW[0]}).column("base", "ndcg@10")
    assert json.loads(skip.stdout)["means"]["bm25base_p"] == pytest.approx(skipped.drop(dropped).mean())
    with pytest.raises(InputError, match="lacks 3 of the 43"):
        compare_many(Evaluation.on_qrels(QRELS), [FEW[0], path])


# ------------------------------------------------------------------------------------------------ holes
@pytest.mark.slow
def test_a_difference_the_holes_could_flip_is_not_established(tmp_path):
    """Judged from the depth-10 pool of the BM25 runs only: the BERT run's unjudged top 10 could turn its loss."""
    runs = {path.name.removesuffix(".run.gz"): read_run(path) for path in [*BM25, RUNS / "idst_bert_p1.run.gz"]}
    qrels = pd.read_csv(QRELS, sep=r"\s+", names=["query_id", "q0", "doc_id", "grade"], dtype=str)
    ranked = pd.concat(run.assign(system=name) for name, run in runs.items() if name.startswith("bm25"))
    ranked = ranked.sort_values(["system", "query_id", "score", "doc_id"], ascending=[True, True, False, False])
    pooled = ranked.groupby(["system", "query_id"]).head(10)[["query_id", "doc_id"]].drop_duplicates()
    reduced = qrels.merge(pooled, on=["query_id", "doc_id"]).astype({"grade": int})
    evaluation = Evaluation.on_qrels(reduced[["query_id", "doc_id", "grade"]])
    result = compare_many(evaluation, runs, permutations=1999)
    assert result.unjudged == {"idst_bert_p1": 220}
    low, high = result.bounds["idst_bert_p1"]
    assert low == pytest.approx(result.means[result.runs.index("idst_bert_p1")]) and high > 0.85
    flipped = [pair for pair in result.significant if "idst_bert_p1" in (pair.a, pair.b)]
    assert flipped and all(pair.verdict == "not established: holes could flip" for pair in flipped)
    assert all(pair.low <= 0 <= pair.high for pair in flipped)
    assert len(set(result.letters)) == 1  # no difference established: one group
    assert "note: 220 unjudged documents in the top 10 of 1 of 9 runs" in result.notes
    accepted = compare_many(evaluation, runs, permutations=1999, accept_holes=True)
    assert {pair.verdict for pair in accepted.significant} == {"established"}
    assert accepted.letters[accepted.runs.index("idst_bert_p1")] != accepted.letters[0]
    assert "accepted (--accept-holes)" in accepted.notes[-1]


# ------------------------------------------------------------------------------------------------ a frozen set
@pytest.fixture(scope="module")
def strata_set(tmp_path_factory):
    topics = read_queries(DL19 / "topics.tsv")
    queries = topics.assign(stratum=["agent" if i % 3 == 0 else "human" for i in range(len(topics))],
                            split=["dev" if i % 5 == 0 else "test" for i in range(len(topics))])
    queries["stratum_share"] = queries["stratum"].map({"agent": 0.3, "human": 0.7})
    target = freeze(labels_from_file(QRELS, "human"), queries, read_guideline(REPO / "guidelines" / "relevance-v2.md"),
                    "strata", tmp_path_factory.mktemp("sets"))
    return load_set(target.path), queries


def test_on_a_set_weighted_by_traffic_the_means_and_the_test_use_the_traffic_weights(strata_set):
    frozen, queries = strata_set
    evaluation = Evaluation.on_set(frozen, "test")
    result = compare_many(evaluation, FEW, permutations=999)
    assert "traffic-weighted" in result.to_text() and result.to_dict()["settings"]["weighting"] == "traffic"
    values = per_query_values(evaluation, FEW).values("ndcg@10")
    test = queries[queries["split"] == "test"].set_index("query_id")
    for name, mean in zip(result.runs, result.means, strict=True):
        by_stratum = values[name].groupby(test["stratum"].reindex(values.index)).mean()
        assert mean == pytest.approx(0.3 * by_stratum["agent"] + 0.7 * by_stratum["human"])
        assert mean == pytest.approx(per_query_values(evaluation, FEW).mean(name, "ndcg@10"))
    assert not result.exploratory and "exploratory" not in result.to_text()


def test_on_a_weighted_set_the_text_says_the_anova_weighs_every_query_the_same(strata_set):
    """Issue 51: the means and Tukey were traffic-weighted and the ANOVA beside them plain, unsaid."""
    frozen, _ = strata_set
    weighted = compare_many(Evaluation.on_set(frozen, "test"), FEW, permutations=99)
    lines = weighted.to_text().splitlines()
    assert lines[lines.index(weighted.anova.to_text().splitlines()[-1]) + 1] == (
        "  the ANOVA weighs every query the same (it has no traffic-weighted form); the means, the tests and the "
        "groups above are traffic-weighted")
    assert weighted.to_dict()["anova"]["weighting"] == "uniform"
    plain = compare_many(Evaluation.on_qrels(QRELS), FEW, permutations=99)
    assert "the ANOVA weighs every query the same" not in plain.to_text()


def test_on_the_dev_split_nothing_is_established(strata_set):
    frozen, _ = strata_set
    result = compare_many(Evaluation.on_set(frozen, "dev"), FEW, permutations=999)
    assert result.exploratory and "exploratory (dev split)" in result.to_text().splitlines()[0]
    assert result.significant and {pair.verdict for pair in result.significant} == {"exploratory: dev split"}
    with pytest.raises(InputError, match="contradicts the set's contract"):
        compare_many(Evaluation.on_set(frozen, "dev"), FEW, missing="skip")


def test_strata_given_on_qrels_weigh_the_queries_by_traffic():
    topics = read_queries(DL19 / "topics.tsv")
    strata = topics.assign(stratum=["agent" if i % 3 == 0 else "human" for i in range(len(topics))])
    strata["stratum_share"] = strata["stratum"].map({"agent": 0.3, "human": 0.7})
    result = compare_many(Evaluation.on_qrels(QRELS), FEW, permutations=99, strata=strata)
    assert result.weighted and "traffic-weighted" in result.to_text()
    values = per_query_values(Evaluation.on_qrels(QRELS), FEW).values("ndcg@10")
    stratum = strata.set_index("query_id")["stratum"].reindex(values.index)
    for name, mean in zip(result.runs, result.means, strict=True):
        by_stratum = values[name].groupby(stratum).mean()
        assert mean == pytest.approx(0.3 * by_stratum["agent"] + 0.7 * by_stratum["human"])
