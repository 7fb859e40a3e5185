"""evalset pool: blind judging pools from several systems, and judge-the-holes (issue #4).

Figures on TREC DL 2019 (37 official runs, 43 topics) are asserted exactly; the per-system figures are checked
against a brute-force count that parses the run files with plain Python, independently of the library.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.annotations import read_judged_pairs
from evalset.io.corpus import read_corpus
from evalset.io.queries import read_queries
from evalset.io.trec import expand_run_paths, read_run
from evalset.pooling import PoolSpec, apply_budget, build_pool, pair_id
from tests.support.options import HUGE, not_one_of, refusal

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def dl19(shared_data: Path) -> Path:
    return shared_data / "dl19"


@pytest.fixture(scope="module")
def official_runs(dl19: Path) -> dict[str, pd.DataFrame]:
    return {name: read_run(path) for name, path in expand_run_paths([dl19 / "runs" / "official_top100"]).items()}


@pytest.fixture(scope="module")
def judged(dl19: Path) -> pd.DataFrame:
    return read_judged_pairs(dl19 / "qrels.txt")


@pytest.fixture(scope="module")
def brute_force_top(dl19: Path) -> dict[int, dict[str, set[tuple[str, str]]]]:
    """Each run's top-k pairs at k = 10 and 20, from the raw lines, sorted by score then doc id descending."""
    tops: dict[int, dict[str, set[tuple[str, str]]]] = {10: {}, 20: {}}
    for path in sorted((dl19 / "runs" / "official_top100").iterdir()):
        by_query: dict[str, list[tuple[float, str]]] = defaultdict(list)
        with gzip.open(path, "rt") as handle:
            for line in handle:
                qid, _, docid, _, score, _ = line.split()
                by_query[qid].append((float(score), docid))
        name = path.name.removesuffix(".run.gz")
        for k in tops:
            tops[k][name] = {(qid, doc) for qid, docs in by_query.items()
                             for _, doc in sorted(docs, reverse=True)[:k]}
    return tops


def invoke(*args: str):
    return CliRunner().invoke(main, [str(arg) for arg in args])


# ------------------------------------------------------------------------------------ DL19 pool figures
@pytest.mark.parametrize(("depth", "pairs", "holes"), [(10, 2495, 1), (20, 4926, 1800)])
def test_dl19_pool_sizes_and_holes_left_by_the_nist_qrels(official_runs, judged, depth, pairs, holes):
    full = build_pool(official_runs, depth)
    assert len(full.pairs) == full.candidates == pairs
    assert full.pairs_per_query.sum() == pairs and len(full.pairs_per_query) == 43

    unjudged = build_pool(official_runs, depth, judged=judged)
    assert len(unjudged.pairs) == holes
    assert unjudged.judged_excluded == pairs - holes
    assert unjudged.candidates == pairs


@pytest.mark.parametrize("depth", [10, 20])
def test_per_system_contributions_agree_with_a_brute_force_count(official_runs, brute_force_top, depth):
    pool = build_pool(official_runs, depth)
    tops = brute_force_top[depth]
    for name, pairs in tops.items():
        others = set().union(*(other for other_name, other in tops.items() if other_name != name))
        assert pool.systems.loc[name, "contributed"] == len(pairs), name
        assert pool.systems.loc[name, "unique"] == len(pairs - others), name
    assert pool.overlap.loc["UNH_exDL_bm25", "p_bert"] == len(tops["UNH_exDL_bm25"] & tops["p_bert"])
    assert len(set(zip(pool.pairs["query_id"], pool.pairs["doc_id"], strict=True))) == len(set().union(*tops.values()))


def test_dl19_depth_10_unique_contributions_known_values(official_runs):
    systems = build_pool(official_runs, 10).systems
    assert systems.loc["UNH_exDL_bm25", "unique"] == 369
    assert systems.loc["ICT-CKNRM_B50", "unique"] == 94
    assert systems.loc["idst_bert_p3", "unique"] == 0
    assert systems["unique"].sum() == 889


def test_overlap_is_symmetric_with_contributions_on_the_diagonal(official_runs):
    pool = build_pool(official_runs, 10)
    assert (pool.overlap.to_numpy() == pool.overlap.to_numpy().T).all()
    assert (np.diag(pool.overlap) == pool.systems["contributed"]).all()


def test_sources_give_every_pooled_pair_its_systems_and_ranks(official_runs):
    pool = build_pool(official_runs, 10)
    sources = pool.sources.astype({"query_id": str, "doc_id": str, "system": str})
    best = sources.groupby(["query_id", "doc_id"])["rank"].min()
    pairs = pool.pairs.set_index(["query_id", "doc_id"])
    assert len(best) == len(pairs)
    assert (pairs["best_rank"] == best.reindex(pairs.index)).all()
    assert sources["rank"].between(1, 10).all()
    assert len(sources) == pool.systems["contributed"].sum()


# ---------------------------------------------------------------------------------- ids and judging order
def test_pair_id_is_a_sha256_prefix_of_query_and_doc_id():
    assert pair_id("19335", "1017759") == hashlib.sha256(b"19335\t1017759").hexdigest()[:16]


def test_pair_id_ignores_seed_and_run_order_and_order_is_a_seeded_permutation(official_runs):
    first = build_pool(official_runs, 10, seed=1).pairs
    reversed_runs = dict(reversed(list(official_runs.items())))
    again = build_pool(reversed_runs, 10, seed=1).pairs
    other_seed = build_pool(official_runs, 10, seed=2).pairs
    pd.testing.assert_frame_equal(first, again)
    keyed = first.set_index("pair_id")[["query_id", "doc_id"]]
    assert keyed.sort_index().equals(other_seed.set_index("pair_id")[["query_id", "doc_id"]].sort_index())
    assert sorted(first["order"]) == list(range(1, len(first) + 1))
    assert not first["order"].equals(other_seed.set_index("pair_id")["order"].reindex(first["pair_id"]))


def test_judging_order_keeps_a_query_together_and_hides_the_ranking(official_runs):
    pairs = build_pool(official_runs, 10, seed=7).pairs
    blocks = pairs["query_id"].ne(pairs["query_id"].shift()).sum()
    assert blocks == 43
    # Within a query the order is random, so it is not the best-rank order.
    assert abs(np.corrcoef(pairs["order"], pairs["best_rank"])[0, 1]) < 0.1


# -------------------------------------------------------------------- budget, depth per system, exact toys
def toy_run(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    frame["rank"] = frame.groupby("query_id").cumcount() + 1
    return frame


TOY_RUNS = {
    "a": toy_run([("q1", "d1", 3), ("q1", "d2", 2), ("q1", "d3", 1), ("q2", "d1", 3), ("q2", "d5", 2)]),
    "b": toy_run([("q1", "d2", 3), ("q1", "d4", 2), ("q1", "d9", 1), ("q2", "d6", 9), ("q2", "d7", 1)]),
}


def test_toy_pool_union_provenance_and_per_system_depth():
    pool = build_pool(TOY_RUNS, 2, depths={"b": 1})
    got = set(zip(pool.pairs["query_id"], pool.pairs["doc_id"], strict=True))
    assert got == {("q1", "d1"), ("q1", "d2"), ("q2", "d1"), ("q2", "d5"), ("q2", "d6")}
    assert pool.systems.to_dict(orient="index") == {
        "a": {"depth": 2, "contributed": 4, "unique": 3, "in_pool": 4},
        "b": {"depth": 1, "contributed": 2, "unique": 1, "in_pool": 2},
    }
    assert pool.depths == {"b": 1}
    sources = pool.sources.astype(str).values.tolist()
    assert sources[:3] == [["q1", "d1", "a", "1"], ["q1", "d2", "a", "2"], ["q1", "d2", "b", "1"]]


def test_ties_follow_the_declared_rule_of_scoring():
    tied = {"a": toy_run([("q", "d1", 1.0), ("q", "d3", 1.0), ("q", "d2", 1.0)])}
    assert build_pool(tied, 1).pairs["doc_id"].tolist() == ["d3"]  # trec: doc id descending
    assert build_pool(tied, 1, ties="docid").pairs["doc_id"].tolist() == ["d1"]
    assert build_pool(tied, 1, ties="run").pairs["doc_id"].tolist() == ["d1"]


def test_budget_keeps_best_ranked_pairs_filling_queries_round_robin():
    pool = build_pool(TOY_RUNS, 3, budget=4)
    kept = sorted(zip(pool.pairs["query_id"], pool.pairs["doc_id"], pool.pairs["best_rank"], strict=True))
    # q1 candidates: d1 (1), d2 (1, two systems), d3 (3), d4 (2), d9 (3); q2: d1 (1), d6 (1), d5 (2), d7 (2).
    # Round 1 takes q1/d2 (rank 1, two systems) and q2's best; round 2 takes q1/d1 and q2's second.
    assert kept[:2] == [("q1", "d1", 1), ("q1", "d2", 1)]
    assert {doc for q, doc, _ in kept if q == "q2"} == {"d1", "d6"}
    assert pool.budget_dropped == 5 and len(pool.pairs) == 4


def test_budget_on_dl19_is_fair_across_queries_and_prefers_top_ranks(official_runs):
    pool = build_pool(official_runs, 20, budget=1000)
    assert len(pool.pairs) == 1000 and pool.budget_dropped == 4926 - 1000
    counts = pool.pairs_per_query
    assert counts.max() - counts.min() <= 1
    everything = build_pool(official_runs, 20).pairs
    dropped = everything[~everything["pair_id"].isin(pool.pairs["pair_id"])]
    worst_kept = pool.pairs.groupby("query_id")["best_rank"].max()
    best_dropped = dropped.groupby("query_id")["best_rank"].min()
    assert (worst_kept <= best_dropped.reindex(worst_kept.index)).all()


def test_apply_budget_returns_everything_under_the_budget():
    pairs = pd.DataFrame({"pair_id": ["x"], "query_code": [0], "best_rank": [1], "systems": [1]})
    assert apply_budget(pairs, 5).equals(pairs)


def test_judge_the_holes_of_one_new_run_is_its_unjudged_top_k(dl19, judged):
    new_run = read_run(dl19 / "runs" / "rankllm" / "BM25.dl19.top100.run.gz")
    pool = build_pool({"bm25": new_run}, 10, judged=judged)
    with gzip.open(dl19 / "runs" / "rankllm" / "BM25.dl19.top100.run.gz", "rt") as handle:
        rows = [line.split() for line in handle]
    by_query = defaultdict(list)
    for qid, _, doc, _, score, _ in rows:
        by_query[qid].append((float(score), doc))
    top = {(q, d) for q, docs in by_query.items() for _, d in sorted(docs, reverse=True)[:10]}
    holes = top - set(zip(judged["query_id"], judged["doc_id"], strict=True))
    assert set(zip(pool.pairs["query_id"], pool.pairs["doc_id"], strict=True)) == holes
    assert pool.systems.loc["bm25", "judged_at_k"] == pytest.approx(1 - len(holes) / (10 * 43))


def test_labels_table_counts_as_judged_like_qrels(tmp_path, official_runs, judged):
    labels = judged.head(3000).assign(annotator="nist", kind="human", grade=1, source="qrels",
                                      labeled_at="2019-10-01", comment="")
    path = tmp_path / "labels.tsv"
    labels.to_csv(path, sep="\t", index=False)
    from_labels = read_judged_pairs(path)
    assert len(from_labels) == 3000
    pool = build_pool(official_runs, 10, judged=from_labels)
    expected = build_pool(official_runs, 10, judged=judged.head(3000))
    assert pool.pairs.equals(expected.pairs)


def test_queries_filter_restricts_the_pool(official_runs):
    pool = build_pool(official_runs, 10, query_ids=["1037798", "104861"])
    assert pool.pairs_per_query.index.tolist() == ["1037798", "104861"]
    assert set(pool.pairs["query_id"]) == {"1037798", "104861"}


# ------------------------------------------------------------------------------------------ readers
def test_read_queries_reads_topics_and_queries_tsv(tmp_path, dl19):
    topics = read_queries(dl19 / "topics.tsv")
    assert len(topics) == 43 and topics.loc[0].tolist() == ["156493", "do goldfish grow"]
    sampled = pd.DataFrame({"query_id": ["a", "b"], "query": ['say "hi"', "x\ty"], "stratum": ["human", "agent"],
                            "frequency": [3, 1], "stratum_share": [0.5, 0.5], "weight": [0.25, 0.5],
                            "split": ["test", "dev"]})
    sampled.to_csv(tmp_path / "queries.tsv", sep="\t", index=False)
    read_back = read_queries(tmp_path / "queries.tsv")
    assert read_back["query"].tolist() == ['say "hi"', "x\ty"]
    assert read_back.columns.tolist() == list(sampled.columns)


def test_read_corpus_reads_jsonl_gz_and_tsv_keeping_only_wanted_docs(tmp_path, dl19):
    corpus = read_corpus(dl19 / "passages.jsonl.gz", doc_ids={"350", "nope"})
    assert corpus["doc_id"].tolist() == ["350"] and corpus["text"].iloc[0].startswith("The melting point")
    (tmp_path / "c.tsv").write_text("doc_id\ttext\nd1\tone\ttab\nd2\ttwo\n")
    assert read_corpus(tmp_path / "c.tsv").values.tolist() == [["d1", "one\ttab"], ["d2", "two"]]


# ---------------------------------------------------------------------------------------- the command
@pytest.fixture(scope="module")
def cli_pool_with_texts(dl19, tmp_path_factory):
    out = tmp_path_factory.mktemp("pool") / "dl19"
    result = invoke("pool", dl19 / "runs" / "official_top100", "--depth", 10, "-o", out, "--seed", 3,
                    "--queries", dl19 / "topics.tsv", "--corpus", dl19 / "passages.jsonl.gz")
    return result, out


@pytest.mark.slow
def test_cli_writes_the_four_files_and_reports_the_pair_without_text(cli_pool_with_texts):
    result, out = cli_pool_with_texts
    assert result.exit_code == 0, result.output
    assert "pooled 2,495 pairs over 43 queries from 37 runs" in result.output
    assert "1 pair(s) have no text in the corpus" in result.output and "87181/8732212" in result.output
    assert (out / "pool.tsv").read_text().startswith("pair_id\tquery_id\tdoc_id\torder\n")
    pool = pd.read_csv(out / "pool.tsv", sep="\t", dtype=str)
    assert pool.columns.tolist() == ["pair_id", "query_id", "doc_id", "order"] and len(pool) == 2495
    sources = pd.read_csv(out / "pool_sources.tsv", sep="\t", dtype=str)
    assert sources.columns.tolist() == ["query_id", "doc_id", "system", "rank"]
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert len(tasks) == 2494
    assert list(tasks[0]) == ["pair_id", "query_id", "doc_id", "query", "text"]
    with_text = pool[pool["doc_id"] != "8732212"]
    assert [t["pair_id"] for t in tasks] == with_text["pair_id"].tolist()  # tasks come in judging order
    manifest = json.loads((out / "pool.json").read_text())
    assert manifest["counts"] == {"queries": 43, "candidates": 2495, "judged_excluded": 0, "budget_dropped": 0,
                                  "pairs": 2495, "missing_text": 1}
    assert manifest["missing_text"] == [{"pair_id": pair_id("87181", "8732212"), "query_id": "87181",
                                         "doc_id": "8732212"}]
    assert manifest["systems"]["UNH_exDL_bm25"]["unique"] == 369
    assert len(manifest["inputs"]["runs"]) == 37 and len(manifest["inputs"]["corpus"]["sha256"]) == 64


@pytest.mark.slow
def test_cli_is_deterministic_to_the_byte(cli_pool_with_texts, dl19, tmp_path):
    _, first = cli_pool_with_texts
    result = invoke("pool", dl19 / "runs" / "official_top100", "--depth", 10, "-o", tmp_path, "--seed", 3,
                    "--queries", dl19 / "topics.tsv", "--corpus", dl19 / "passages.jsonl.gz")
    assert result.exit_code == 0
    for name in ("pool.tsv", "pool_sources.tsv", "pool.json", "tasks.jsonl"):
        assert (tmp_path / name).read_bytes() == (first / name).read_bytes(), name


def test_cli_judge_the_holes_prints_judged_at_k_per_run(dl19, tmp_path):
    result = invoke("pool", dl19 / "runs" / "official_top100", "-k", 20, "-o", tmp_path,
                    "--exclude-judged", dl19 / "qrels.txt")
    assert result.exit_code == 0, result.output
    assert "pooled 1,800 pairs" in result.output and "judged_at_k" in result.output
    assert len(pd.read_csv(tmp_path / "pool.tsv", sep="\t")) == 1800
    assert not (tmp_path / "tasks.jsonl").exists()


@pytest.mark.slow
def test_shipped_spec_builds_the_dl19_demo_pool_and_options_override_it(tmp_path, monkeypatch):
    spec = PoolSpec.from_toml(REPO / "pools" / "dl19-demo.toml")
    assert spec.depth == 10 and all(Path(p).exists() for p in (*spec.runs, spec.queries, spec.corpus))
    monkeypatch.chdir(REPO)
    result = invoke("pool", "--spec", "pools/dl19-demo.toml", "-o", tmp_path, "--depth", 20, "--budget", 3000)
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "pool.json").read_text())
    assert (manifest["depth"], manifest["seed"], manifest["budget"]) == (20, 2019, 3000)
    assert manifest["counts"]["pairs"] == 3000 and manifest["counts"]["candidates"] == 4926
    assert manifest["inputs"]["spec_file"]["path"] == "pools/dl19-demo.toml"


# ----------------------------------------------------------------------------------------- bad input
def refused(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    message = result.stderr if hasattr(result, "stderr") else result.output
    for fragment in fragments:
        assert fragment in message, message


def test_unknown_query_id_in_the_filter_is_refused_and_nothing_written(dl19, tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("156493\tdo goldfish grow\nNOPE-1\tno such query\n")
    out = tmp_path / "out"
    refused(invoke("pool", dl19 / "runs" / "official_top100", "-k", 10, "-o", out, "--queries", topics),
            f"{topics}:2: query id NOPE-1 is in no run")
    assert not out.exists()


def test_two_runs_with_the_same_name_are_refused(dl19, tmp_path):
    source = dl19 / "runs" / "official_top100" / "p_bert.run.gz"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(source, tmp_path / folder / "p_bert.run.gz")
    out = tmp_path / "out"
    refused(invoke("pool", tmp_path / "a", tmp_path / "b" / "p_bert.run.gz", "-k", 10, "-o", out),
            "two runs are named 'p_bert'", str(tmp_path / "a" / "p_bert.run.gz"))
    assert not out.exists()


def test_a_zero_depth_for_one_run_is_refused(dl19, tmp_path):
    out = tmp_path / "out"
    refused(invoke("pool", dl19 / "runs" / "official_top100" / "p_bert.run.gz", "--depth", 5, "--system-depth",
                   "p_bert=0", "-o", out), "depth of p_bert must be an integer in [1, 1000000], got 0")
    assert not out.exists()


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--depth", 0, "must be an integer in [1, 1000000], got 0"),
    ("--depth", HUGE, f"must be an integer in [1, 1000000], got {HUGE}"),
    ("--depth", "inf", "must be an integer in [1, 1000000], got 'inf'"),
    ("--budget", 0, "must be a positive integer, got 0"),
    ("--budget", "nan", "must be a positive integer, got 'nan'"),
    ("--seed", -1, "must be a non-negative integer, got -1"),
    ("-c", "ties=random", "ties: " + not_one_of("random", "trec", "run", "docid", "expected")),
])
def test_an_option_off_its_rule_is_refused_naming_it(option, value, said):
    assert refusal(["pool"], option, value) == said


@pytest.mark.parametrize(("given", "message"), [
    ({"depth": 0}, "depth must be an integer in [1, 1000000], got 0"),
    ({"depth": 10**20}, "depth must be an integer in [1, 1000000], got 100000000000000000000"),
    ({"depths": {"a": -1}}, "depth of a must be an integer in [1, 1000000], got -1"),
    ({"budget": 0}, "budget must be a positive integer, got 0"),
    ({"seed": -1}, "seed must be a non-negative integer, got -1"),
    ({"ties": "random"}, "ties must be one of trec, run, docid, expected, got 'random'"),
])
def test_a_spec_and_the_pool_refuse_what_the_command_refuses(given, message):
    with pytest.raises(InputError) as raised:
        PoolSpec(**given)
    assert str(raised.value) == message
    with pytest.raises(InputError) as raised:
        PoolSpec().with_overrides(**given)
    assert str(raised.value) == message
    with pytest.raises(InputError) as raised:
        build_pool(TOY_RUNS, **{"depth": 5, **given})
    assert str(raised.value) == message


def test_a_spec_file_off_a_rule_is_refused_naming_the_file(tmp_path):
    spec = tmp_path / "pool.toml"
    spec.write_text('runs = ["x"]\ndepth = 0\n')
    with pytest.raises(InputError) as raised:
        PoolSpec.from_toml(spec)
    assert str(raised.value) == f"{spec}: depth must be an integer in [1, 1000000], got 0"


def test_corpus_line_without_doc_id_is_refused_with_its_line_and_nothing_written(dl19, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"doc_id": "1", "text": "a"}\n\n{"id": "2", "text": "b"}\n')
    out = tmp_path / "out"
    refused(invoke("pool", dl19 / "runs" / "official_top100" / "p_bert.run.gz", "-k", 10, "-o", out,
                   "--corpus", corpus), f"{corpus}:3: document has no doc_id (keys: id, text)")
    assert not out.exists()


@pytest.mark.parametrize(("content", "message"), [
    ("query_id\tquery\nq1\tone\nq1\tagain\n", ":3: query id q1 appears twice (lines 2 and 3)"),
    ("q1 one\n", ":1: expected `qid<TAB>query`"),
    ("query_id\tquery\n\tone\n", ":2: empty query_id"),
])
def test_bad_queries_files_are_refused_with_their_line(tmp_path, content, message):
    path = tmp_path / "queries.tsv"
    path.write_text(content)
    with pytest.raises(InputError, match=re.escape(message)):
        read_queries(path)


def test_bad_labels_and_specs_are_refused(tmp_path):
    labels = tmp_path / "labels.tsv"
    labels.write_text("query_id\tdoc_id\tannotator\tkind\tgrade\tsource\tlabeled_at\tcomment\n"
                      "q\td\tann\trobot\t1\tx\t2024\t\n")
    with pytest.raises(InputError, match=":2: kind must be one of human, llm"):
        read_judged_pairs(labels)
    spec = tmp_path / "bad.toml"
    spec.write_text('runs = ["x"]\ndepht = 3\n')
    with pytest.raises(InputError, match=r"unknown key.*depht"):
        PoolSpec.from_toml(spec)


def test_per_system_depth_for_an_unknown_run_is_refused():
    with pytest.raises(ValueError, match=r"unknown system.*zzz"):
        build_pool(TOY_RUNS, 2, depths={"zzz": 3})


def test_qrels_given_directly_do_not_count_negative_grades_as_judged():
    qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "grade": [2, -1]})
    pool = build_pool(TOY_RUNS, 2, query_ids=["q1"], judged=qrels)
    # q1's top 2: a has d1, d2; b has d2, d4. d1 is judged; d2's grade -1 is not a judgment.
    assert sorted(pool.pairs["doc_id"]) == ["d2", "d4"]


def test_cli_per_system_depth_and_a_missing_output_folder(dl19, tmp_path):
    run = dl19 / "runs" / "official_top100" / "p_bert.run.gz"
    other = dl19 / "runs" / "official_top100" / "UNH_bm25.run.gz"
    result = invoke("pool", run, other, "-k", 5, "--system-depth", "p_bert=20", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "pool.json").read_text())
    assert manifest["depths"] == {"p_bert": 20}
    assert manifest["systems"]["p_bert"]["contributed"] == 20 * 43
    assert manifest["systems"]["UNH_bm25"]["contributed"] == 5 * 43
    assert invoke("pool", run, "-k", 5).exit_code == 2
