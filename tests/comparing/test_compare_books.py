"""compare as the evaluation books ask (issue 68), each item a specification on DL19."""

import json

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.io.trec import read_run

RUNS = ("bm25base_p", "idst_bert_p1", "ICT-BERT2")


def cli(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def dl19(shared_data, tmp_path_factory):
    root = shared_data / "dl19"
    sets = tmp_path_factory.mktemp("sets")
    frozen = cli("freeze", root / "qrels.txt", "--queries", root / "topics.tsv", "--guideline", "relevance-v2",
                 "--name", "dl19", "--sets-dir", sets, "--plan", "bm25base_p:idst_bert_p1")
    assert frozen.exit_code == 0, frozen.output
    runs = [root / "runs" / "official_top100" / f"{name}.run.gz" for name in RUNS]
    return root, sets / "dl19" / "v1", runs


@pytest.mark.slow
def test_1_a_measure_other_than_the_sets_headline_is_a_lead_never_established(dl19):
    _, version, runs = dl19
    switched = cli("compare", "--set", version, "--split", "all", *runs[:2], "-m", "p@10", "--format", "json")
    assert switched.exit_code == 0, switched.output
    [result] = json.loads(switched.stdout)
    assert (result["kind"], result["established"]) == ("exploratory", False)
    assert result["verdict"] == "exploratory (p = 0.0001): a lead for a planned comparison, never established"
    assert ("note: idst_bert_p1 vs bm25base_p is exploratory: p@10 is not the set's headline (ndcg@10), and a "
            "measure chosen after the scores are seen decides nothing; compare on the headline to decide"
            ) in switched.stderr
    headline = cli("compare", "--set", version, "--split", "all", *runs[:2], "-m", "nDCG@10", "--format", "json")
    assert json.loads(headline.stdout)[0]["established"] is True  # the headline, however spelt, decides
    many = cli("compare", "--set", version, "--split", "all", *runs, "--all", "-m", "p@10")
    assert many.exit_code == 0, many.output
    assert many.stdout.startswith("3 runs on p@10 (43 queries, exploratory (not the set's headline, ndcg@10)): ")
    assert "established" not in many.stdout


def test_2_each_runs_mean_beside_the_difference_and_the_queries_that_moved_most_both_ways(dl19):
    root, _, runs = dl19
    done = cli("compare", "--qrels", root / "qrels.txt", runs[0], runs[1], "--format", "json")
    [result] = json.loads(done.stdout)
    means = result["means"]
    assert (round(means["baseline"], 4), round(means["candidate"], 4)) == (0.5058, 0.7645)  # score's means
    assert means["candidate"] - means["baseline"] == pytest.approx(result["mean_difference"], abs=1e-12)
    gains, losses = result["largest_gains"], result["largest_losses"]
    assert [g["query_id"] for g in gains] == ["962179", "1063750", "1121709", "1106007", "915593"]
    assert [round(g["difference"], 4) for g in gains] == [0.8643, 0.7477, 0.7253, 0.6657, 0.627]
    assert all(row["judged"] == {"baseline": 1.0, "candidate": 1.0} for row in gains + losses)
    text = cli("compare", "--qrels", root / "qrels.txt", runs[0], runs[1]).stdout
    assert "  means             baseline 0.5058 -> candidate 0.7645\n" in text
    assert "  largest gains     962179 (+0.8643), 1063750 (+0.7477), " in text


def test_2_a_moved_query_whose_top_k_has_holes_shows_its_judged_at_k(dl19, tmp_path):
    root, _, runs = dl19
    candidate = read_run(runs[1])
    dropped = set(candidate[candidate["query_id"] == "1133167"].head(10)["doc_id"])
    shallow = tmp_path / "shallow.qrels"  # the judgments of the candidate's top 10 on 1133167 dropped: holes there
    shallow.write_text("".join(line for line in (root / "qrels.txt").read_text().splitlines(keepends=True)
                               if not (line.split()[0] == "1133167" and line.split()[2] in dropped)))
    done = cli("compare", "--qrels", shallow, runs[0], runs[1], "--format", "json", "--accept-holes")
    [result] = json.loads(done.stdout)
    moved = {row["query_id"]: row["judged"] for row in result["largest_gains"] + result["largest_losses"]}
    assert moved["1133167"] == {"baseline": 1.0, "candidate": 0.0}  # the two top 10s share no document there
    text = cli("compare", "--qrels", shallow, runs[0], runs[1], "--accept-holes").stdout
    assert "1133167 (" in text and ", judged@10 1.00/0.00)" in text
