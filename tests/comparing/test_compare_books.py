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


@pytest.mark.parametrize(("gap", "said"), [
    ("0.15", "; at least 0.15, the smallest gap worth the change (BCa interval [+0.1934, +0.3354])"),
    ("0.3", "; not shown to reach 0.3, the smallest gap worth the change (BCa interval [+0.1934, +0.3354] holds it)"),
    ("0.4", "; but below 0.4, the smallest gap worth the change (BCa interval [+0.1934, +0.3354])"),
])
def test_3_an_established_difference_is_read_against_the_smallest_gap_worth_the_change(dl19, gap, said):
    root, _, runs = dl19
    done = cli("compare", "--qrels", root / "qrels.txt", runs[0], runs[1], "--min-effect", gap, "--format", "json")
    [result] = json.loads(done.stdout)
    assert result["established"] and result["verdict"] == "established: candidate better (p = 0.0001 < 0.05)" + said


def test_3_the_gap_is_a_positive_number_and_not_for_many_systems_at_once(dl19):
    root, _, runs = dl19
    zero = cli("compare", "--qrels", root / "qrels.txt", runs[0], runs[1], "--min-effect", "0")
    assert zero.exit_code == 2 and "--min-effect" in zero.output
    many = cli("compare", "--qrels", root / "qrels.txt", *runs, "--all", "--min-effect", "0.1")
    assert many.exit_code == 2 and "give one of them without --min-effect" in many.output


def test_4_the_permutation_test_alone_decides_by_name_and_the_default_asks_the_interval_too(dl19):
    root, _, _ = dl19
    pair = [root / "runs" / "official_top100" / f"{name}.run.gz" for name in ("bm25tuned_p", "bm25tuned_ax_p")]
    default = json.loads(cli("compare", "--qrels", root / "qrels.txt", *pair, "--format", "json").stdout)[0]
    books = json.loads(cli("compare", "--qrels", root / "qrels.txt", *pair, "--decide", "permutation",
                           "--format", "json").stdout)[0]
    assert (default["permutation_p"], round(default["ci_low"], 4)) == (0.048, -0.0017)  # p below, BCa holds 0
    assert default["verdict"] == "not established (p = 0.048, BCa interval at 0.95 holds 0)"
    assert books["verdict"] == "established: candidate better (p = 0.048 < 0.05)"
    assert (books["ci_low"], books["ci_high"]) == (default["ci_low"], default["ci_high"])  # printed all the same
    old = cli("compare", "--qrels", root / "qrels.txt", *pair, "--test", "t")
    assert old.exit_code == 2 and "--test is now --decide t+bca" in old.output


@pytest.mark.slow
def test_4_bca_under_covers_on_dl19_sized_samples_the_reason_for_the_default(shared_data):
    import subprocess
    import sys

    from tests.conftest import REPO

    done = subprocess.run([sys.executable, str(REPO / "scripts" / "bca_coverage.py"), "--draws", "100", "--pairs",
                           "12"], capture_output=True, text=True, timeout=300, check=True)
    coverage = {line.split()[0]: float(line.split()[2].rstrip("%")) for line in done.stdout.splitlines()
                if " covers " in line}
    assert coverage["BCa"] < 95 - 1  # under-covers: the interval never decides alone
    assert coverage["t"] > coverage["BCa"]


def test_5_a_difference_of_floating_point_noise_is_a_tie_as_explain_counts_no_change():
    import pandas as pd

    from evalset.contract import NO_CHANGE
    from evalset.stats.paired import compare_paired

    baseline = pd.Series([0.1, 0.2, 0.3, 0.4], index=list("abcd"))
    noise = pd.Series([1e-15, -1e-15, 0.1, 0.0], index=list("abcd"))  # sums of the same terms in another order
    result = compare_paired(baseline, baseline + noise, permutations=99)
    assert (result.wins, result.losses, result.ties) == (1, 0, 3)
    assert [row["query_id"] for row in result.largest_gains] == ["c"] and result.largest_losses == []
    from evalset.comparing.movement import TOLERANCE
    assert TOLERANCE == NO_CHANGE  # explain's default epsilon: one notion of no change


def test_5_scipys_bootstrap_is_given_its_generator_as_rng_and_hides_no_warning_but_a_degenerate_sample():
    import ast

    from tests.conftest import REPO

    for module in ("resampling.py", "strata.py"):
        tree = ast.parse((REPO / "evalset" / "stats" / module).read_text())
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and getattr(node.func, "attr", "") == "bootstrap"]
        assert calls and all({"rng"} <= {k.arg for k in call.keywords} and "random_state" not in
                             {k.arg for k in call.keywords} for call in calls), module
        filters = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                   and getattr(node.func, "attr", "") == "simplefilter"]
        assert all(len(call.args) == 2 for call in filters), module  # a category named, never every warning


def test_5_the_contract_line_names_ndcgs_gain_discount_and_ideal(dl19):
    root, _, runs = dl19
    text = cli("score", "--qrels", root / "qrels.txt", runs[0], "-m", "ndcg@10", "-m", "nDCG(dcg='exp-log2')@10").stdout
    assert ("ndcg@10: gain the grade (linear), discount 1/log2(rank + 1), ideal: every judged document of the query "
            "in grade order, cut at k where the measure has one (trec_eval's)") in text
    assert "nDCG(dcg='exp-log2')@10: gain 2^grade - 1 (exponential), discount 1/log2(rank + 1)" in text


def test_5_a_comparison_of_the_top_shows_what_each_runs_candidates_hold(dl19, tmp_path):
    root, _, runs = dl19
    base = read_run(runs[0])
    reranked = tmp_path / "reranked.run"  # bm25base_p's candidates in reverse order: a reranker of the same list
    lines = [f"{row.query_id} Q0 {row.doc_id} {row.rank} {-row.score} reranked\n" for row in base.itertuples()]
    reranked.write_text("".join(lines))
    same = json.loads(cli("compare", "--qrels", root / "qrels.txt", runs[0], reranked, "--format", "json").stdout)[0]
    assert same["first_stage"]["baseline"] == same["first_stage"]["candidate"] == pytest.approx(0.4531, abs=5e-5)
    text = cli("compare", "--qrels", root / "qrels.txt", runs[0], reranked, runs[1]).stdout
    assert "  recall (all)      baseline 0.4531, candidate 0.4531 (the same candidates)\n" in text
    assert ("  recall (all)      baseline 0.4531, candidate 0.5621 (other candidates: the gain mixes what they hold "
            "with how they are ranked)\n") in text


def test_5_explains_epsilon_counts_the_wins_and_losses_compare_counts_at_its_own(dl19):
    root, _, runs = dl19
    pair = [runs[0], root / "runs" / "official_top100" / "bm25tuned_p.run.gz"]
    compared = json.loads(cli("compare", "--qrels", root / "qrels.txt", *pair, "--format", "json").stdout)[0]
    explained = cli("explain", "--qrels", root / "qrels.txt", *pair).stdout.splitlines()[1]
    assert (compared["wins"], compared["losses"], compared["ties"]) == (16, 22, 5)
    assert explained == ("  38 of 43 queries changed (16 up, 22 down: compare's wins and losses at this epsilon), "
                         "5 unchanged")
    coarse = cli("explain", "--qrels", root / "qrels.txt", *pair, "--epsilon", "0.01").stdout.splitlines()[1]
    assert coarse.startswith("  30 of 43 queries changed by more than epsilon 0.01 (12 up, 18 down: ")
