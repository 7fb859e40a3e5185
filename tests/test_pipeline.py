"""The stages hand each other their files: a sampled, stratified queries.tsv becomes a frozen set that is scored
per stratum and traffic-weighted, checked against a hand computation."""

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.io.queries import read_queries
from evalset.io.trec import read_qrels, read_run, write_qrels, write_run
from evalset.metrics import evaluate

GUIDELINE = Path(__file__).resolve().parents[1] / "guidelines" / "relevance-v2.md"


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def test_sample_freeze_score_weighted_by_traffic(tmp_path, shared_data):
    root = shared_data / "dl19"
    topics = read_queries(root / "topics.tsv")
    # a pre-aggregated log of the DL19 topics with skewed traffic: the query of rank r is searched 200 - 4r times
    log = pd.DataFrame({"query": topics["query"], "count": [200 - 4 * r for r in range(len(topics))]})
    log.to_csv(tmp_path / "log.tsv", sep="\t", index=False)
    invoke("sample", tmp_path / "log.tsv", "-l", "count=count", "--per-stratum", "4", "--seed", "3",
           "--holdout", "0.5", "-o", tmp_path / "queries.tsv")
    sampled = read_queries(tmp_path / "queries.tsv")
    assert sorted(sampled["stratum"].unique()) == ["head", "tail", "torso"]
    assert sampled.groupby("stratum").size().tolist() == [4, 4, 4]

    # the sampler's ids are its own: carry the DL19 qrels and a run over to them through the query text
    to_sampled = dict(zip(topics["query"].str.lower(), topics["query_id"], strict=True))
    dl19_id = {row.query_id: to_sampled[row.query] for row in sampled.itertuples()}
    new_id = {v: k for k, v in dl19_id.items()}
    qrels = read_qrels(root / "qrels.txt")
    qrels = qrels[qrels["query_id"].isin(new_id)].assign(query_id=lambda f: f["query_id"].map(new_id))
    write_qrels(qrels, tmp_path / "nist.qrels")
    run = read_run(root / "runs" / "official_full" / "p_bert.run.gz")
    run = run[run["query_id"].isin(new_id)].assign(query_id=lambda f: f["query_id"].map(new_id))
    write_run(run, tmp_path / "p_bert.run", tag="p_bert")

    invoke("freeze", tmp_path / "nist.qrels", "--queries", tmp_path / "queries.tsv", "--guideline", GUIDELINE,
           "--name", "sampled", "--sets-dir", tmp_path / "sets")
    result = invoke("score", "--set", tmp_path / "sets" / "sampled" / "v1", tmp_path / "p_bert.run", "--format", "json")
    entry = json.loads(result.stdout)["runs"]["p_bert"]["ndcg@10"]

    per_query = evaluate(run, qrels, ["ndcg@10"])["ndcg@10"]
    test = sampled[sampled["split"] == "test"].astype({"stratum_share": float})
    means = test.assign(value=test["query_id"].map(per_query)).groupby("stratum")["value"].mean()
    shares = test.groupby("stratum")["stratum_share"].first()
    assert set(test["split"]) == {"test"} and len(test) == 6  # half of each stratum's 4
    for stratum, mean in means.items():
        assert entry["strata"][stratum]["mean"] == pytest.approx(mean)
    assert entry["weighted_mean"] == pytest.approx((shares * means).sum() / shares.sum())
    assert shares.sum() == pytest.approx(1.0)
