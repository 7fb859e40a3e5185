"""`evalset estimate select documents` on TREC DL 2019: the depth-10 pool of the 37 official runs (2,495 pairs, one
without text: the frame is the 2,494 others), a sample of 1,000 judgments expected. The record's pi are the design's
(recomputed here from pool_sources.tsv), the folder is what push and judge read, the draw is seeded; bad input is one
line, exit 2, nothing written."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.estimate.documents.sample import inclusion_probabilities, poisson_sample
from evalset.io.poolfiles import TASK_FIELDS, read_pool_pairs, read_tasks
from evalset.io.samplerecord import read_sample, sample_frame
from evalset.labelstudio.pull import known_pairs
from evalset.labelstudio.push import pool_tasks
from evalset.pooling.pool import pair_id

BUDGET = 1000


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pool") / "pool"
    result = invoke("pool", "--spec", "pools/dl19-demo.toml", "-o", folder)
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture(scope="module")
def drawn(pool, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sample") / "sample"
    result = invoke("estimate", "select", "documents", pool, "--budget", BUDGET, "--seed", 1, "-o", folder)
    assert result.exit_code == 0, result.output
    return folder, result.output


def _reference_pi(pool, budget):
    """The design computed here from the pool's files: per pair that has a task (a text to grade), the sum of
    (1/log2(rank + 1)) ** 0.25 over the runs that rank it in their top 10, floored at 0.3; then min(1, c * prior)
    summing to the budget."""
    pairs = pd.read_csv(pool / "pool.tsv", sep="\t", dtype=str).assign(order=lambda f: f["order"].astype(int))
    pairs = pairs[pairs["pair_id"].isin(set(read_tasks(pool / "tasks.jsonl")["pair_id"]))]
    pairs = pairs.sort_values("order").reset_index(drop=True)
    sources = pd.read_csv(pool / "pool_sources.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    sources = sources[sources["rank"] <= 10]
    weight = ((1 / np.log2(sources["rank"] + 1)) ** 0.25).groupby([sources["query_id"], sources["doc_id"]]).sum()
    keys = zip(pairs["query_id"], pairs["doc_id"], strict=True)
    prior = np.array([max(weight.get(key, 0.0), 0.3) for key in keys])
    return pairs, prior, inclusion_probabilities(prior, budget)


@pytest.mark.slow
def test_the_record_holds_every_pooled_pair_with_text_with_the_designs_pi_summing_to_the_budget(pool, drawn):
    folder, output = drawn
    record = read_sample(folder)
    pairs, prior, pi = _reference_pi(pool, BUDGET)
    assert record.pairs["pair_id"].tolist() == pairs["pair_id"].tolist()  # every pair with text, in judging order
    assert record.source["no_text"] == [pair_id("87181", "8732212")]  # the pool's one pair without text
    np.testing.assert_allclose(record.pairs["prior"], prior, rtol=1e-12)
    np.testing.assert_allclose(record.pairs["pi"], pi, rtol=1e-12)
    assert abs(record.pairs["pi"].sum() - BUDGET) < 1e-9
    assert record.pairs["sampled"].tolist() == poisson_sample(record.pairs["pi"].to_numpy(), 1).tolist()
    assert (record.seed, record.depth, record.budget, record.floor, record.prior_power) == (1, 10, BUDGET, 0.3, 0.25)
    frame = sample_frame(folder, pool)  # drawn from this pool: its hash matches
    assert list(frame.columns) == ["query_id", "doc_id", "pi", "sampled"] and len(frame) == 2494
    drawn_count = int(frame["sampled"].sum())
    per_query = frame.groupby("query_id")["sampled"].sum()
    assert output.splitlines()[:4] == [
        f"2,494 pairs in the pool with text; budget 1,000 judgments expected; drawn {drawn_count:,} (seed 1)",
        f"pi = 1 for {int((frame['pi'] == 1).sum())} pairs; smallest pi {frame['pi'].min():.4f} (priors: the runs' "
        "ranks within depth 10, power 0.25, floor 0.3)",
        "left out 1 pooled pair(s) without text (pool.json): nobody can grade them, so they count as unjudged, as a "
        "document outside the pool",
        f"drawn per query (43 queries): min {per_query.min()}, median {per_query.median():g}, max {per_query.max()}"]
    assert abs(drawn_count - BUDGET) < 4 * np.sqrt((pi * (1 - pi)).sum())  # Poisson: the budget in expectation


@pytest.mark.slow
def test_the_folder_is_the_drawn_pairs_as_push_and_judge_read_them(pool, drawn):
    folder, _ = drawn
    record = read_sample(folder)
    chosen = record.drawn["pair_id"].tolist()
    assert read_pool_pairs(folder / "pool.tsv")["pair_id"].tolist() == chosen
    source_lines = (pool / "pool.tsv").read_text().splitlines()
    assert (folder / "pool.tsv").read_text().splitlines() == [source_lines[0], *(
        line for line in source_lines[1:] if line.split("\t")[0] in set(chosen))]
    with_text = set(read_tasks(pool / "tasks.jsonl")["pair_id"])
    tasks = read_tasks(folder / "tasks.jsonl")  # what `evalset judge` reads
    assert tasks["pair_id"].tolist() == chosen and set(chosen) <= with_text  # every drawn pair can be graded
    pushed = pool_tasks(folder)  # what `evalset push` sends: pool.tsv and tasks.jsonl, in judging order
    assert pushed["pair_id"].tolist() == tasks["pair_id"].tolist()
    assert pushed.attrs["without_text"] == 0
    keys = {key for line in (folder / "tasks.jsonl").read_text().splitlines() for key in json.loads(line)}
    assert keys == set(TASK_FIELDS)  # no prior, pi or sampled in a task
    bare = folder.parent / "bare"
    shutil.copytree(folder, bare)
    for name in ("sample.tsv", "sample.json"):
        (bare / name).unlink()
    pd.testing.assert_frame_equal(pool_tasks(bare), pushed)  # the record plays no part in what is pushed
    pairs, _ = known_pairs(folder)  # what `evalset pull` checks the annotations against: the drawn pairs
    assert pairs["pair_id"].tolist() == chosen
    sources = pd.read_csv(folder / "pool_sources.tsv", sep="\t", dtype=str)
    assert set(zip(sources["query_id"], sources["doc_id"], strict=True)) == set(
        zip(record.drawn["query_id"], record.drawn["doc_id"], strict=True))
    manifest = json.loads((folder / "pool.json").read_text())
    assert manifest["counts"]["pairs"] == len(chosen) and manifest["source_pool"]["depth"] == 10
    assert "--budget B|P%" in invoke("estimate", "select", "documents", "--help").output
    assert invoke("push", "--help").exit_code == 0


@pytest.mark.slow
def test_the_same_seed_gives_the_same_files_and_another_seed_another_sample(pool, drawn, tmp_path):
    folder, _ = drawn
    again, other = tmp_path / "again", tmp_path / "other"
    assert invoke("estimate", "select", "documents", pool, "--budget", BUDGET, "--seed", 1, "-o", again).exit_code == 0
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(p.name for p in again.iterdir())
    assert all((folder / n).read_bytes() == (again / n).read_bytes() for n in names)
    assert invoke("estimate", "select", "documents", pool, "--budget", BUDGET, "--seed", 2, "-o", other).exit_code == 0
    first, second = read_sample(folder), read_sample(other)
    np.testing.assert_array_equal(first.pairs["pi"], second.pairs["pi"])  # the design does not depend on the seed
    assert set(first.drawn["pair_id"]) != set(second.drawn["pair_id"])
    share = tmp_path / "share"
    result = invoke("estimate", "select", "documents", pool, "--budget", "10%", "--seed", 1, "-o", share)
    assert result.exit_code == 0, result.output
    record = read_sample(share)
    assert record.fraction == 0.1 and abs(record.pairs["pi"].sum() - 249.4) < 1e-9  # of the 2,494 with text
    assert "budget 249.4 judgments expected (0.1 of the pairs)" in result.output


@pytest.mark.slow
def test_bad_input_is_one_line_exit_2_and_nothing_written(pool, drawn, tmp_path):
    no_sources = tmp_path / "no-sources"
    no_sources.mkdir()
    for name in ("pool.tsv", "pool.json", "tasks.jsonl"):
        shutil.copy(pool / name, no_sources / name)
    out = tmp_path / "out"
    cases = [
        ((pool, "--budget", 2494), "a budget of 2,494 judgments for a pool of 2,494 pairs"),
        ((pool, "--budget", 3000), "a budget of 3,000 judgments for a pool of 2,494 pairs"),
        ((pool, "--budget", 0), "Invalid value for '--budget': budget must be a positive integer, got 0"),
        ((pool, "--budget", -5), "Invalid value for '--budget': budget must be a positive integer, got -5"),
        ((pool, "--budget", "12.5"), "give a number of judgments (1000) or a percentage"),
        ((pool, "--budget", "100%"), "fraction must be a number in (0, 1), got 1.0"),
        ((no_sources, "--budget", 100), "pool_sources.tsv: no such file: the document sample's priors need"),
        ((drawn[0], "--budget", 100), "pool.json: no pool depth"),
        ((pool, "--budget", 100, "--seed", 3), "a document sample of 108 drawn pairs over 43 queries (2.51 a "
                                               "query) is too small for the design's estimators: they need at "
                                               "least 3 a query on average (129 here); drawn with seed 3 at a "
                                               "budget of 100: give a larger budget"),
        ((pool, "--budget", 100, "--size", 5), "No such option '--size'"),
    ]
    for args, message in cases:
        result = invoke("estimate", "select", "documents", *args, "-o", out)
        assert result.exit_code == 2 and message in result.output, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1, result.output
        assert not out.exists()
    result = invoke("estimate", "select", "documents", pool, "--budget", 100, "-o", pool)
    assert result.exit_code == 2 and "is the input POOL_DIR" in result.output
    assert (pool / "pool.tsv").exists() and not (pool / "sample.tsv").exists()
    before = {p.name: p.read_bytes() for p in drawn[0].iterdir()}
    result = invoke("estimate", "select", "documents", pool, "--budget", 100, "-o", drawn[0])
    assert result.exit_code == 2 and "--force" in result.output
    assert {p.name: p.read_bytes() for p in drawn[0].iterdir()} == before
    forced = tmp_path / "forced"
    assert invoke("estimate", "select", "documents", pool, "--budget", 200, "-o", forced).exit_code == 0
    assert invoke("estimate", "select", "documents", pool, "--budget", 300, "-o", forced, "--force").exit_code == 0
    assert read_sample(forced).budget == 300


def _small_pool(folder):
    """Seven pairs of two queries: q's first pair ranked first by two runs, and r's (their pi are 1 at a budget of
    6); the text of q's first pair holds other line separators."""
    folder.mkdir()
    pairs = [("p1", "q", "a"), ("p2", "q", "b"), ("p3", "q", "c"), ("p4", "r", "d"), ("p5", "r", "e"),
             ("p6", "r", "f"), ("p7", "r", "g")]
    (folder / "pool.tsv").write_text("pair_id\tquery_id\tdoc_id\torder\n" + "".join(
        f"{p}\t{q}\t{d}\t{i}\n" for i, (p, q, d) in enumerate(pairs, start=1)))
    ranks = [("q", "a", "x", 1), ("q", "a", "y", 1), ("q", "b", "x", 2), ("q", "c", "y", 2), ("r", "d", "x", 1),
             ("r", "d", "y", 1), ("r", "e", "x", 2), ("r", "f", "y", 2), ("r", "g", "x", 3)]
    (folder / "pool_sources.tsv").write_text("query_id\tdoc_id\tsystem\trank\n" + "".join(
        f"{q}\t{d}\t{s}\t{r}\n" for q, d, s, r in ranks))
    (folder / "pool.json").write_text('{"depth": 10}\n')
    texts = {"p1": "one\u2028line\x85still"}
    (folder / "tasks.jsonl").write_text("".join(json.dumps(
        {"pair_id": p, "query_id": q, "doc_id": d, "query": q.upper(), "text": texts.get(p, d)}, ensure_ascii=False)
        + "\n" for p, q, d in pairs), encoding="utf-8")


def test_a_task_whose_text_holds_other_line_separators_is_kept_whole(tmp_path):
    from evalset.estimate.documents.select import select_document_pool, select_documents

    _small_pool(tmp_path / "pool")
    selection = select_document_pool(tmp_path / "pool", tmp_path / "out", budget=6, seed=2)
    record = selection.record
    second, third = (1 / np.log2(3)) ** 0.25, 0.5 ** 0.25  # a run's rank 2 and 3: (1 / log2(rank + 1)) ** 0.25
    share = 4 / (4 * second + third)  # a and d capped at 1, the other five share the 4 left
    np.testing.assert_allclose(record.pairs["pi"], [1, share * second, share * second, 1, share * second,
                                                    share * second, share * third])
    assert record.pairs["sampled"].iloc[0] and record.pairs["sampled"].sum() >= 6  # the minimum: 3 a query
    tasks = read_tasks(tmp_path / "out" / "tasks.jsonl")
    assert tasks["pair_id"].tolist() == record.drawn["pair_id"].tolist()
    assert tasks["text"].iloc[0] == "one\u2028line\x85still"
    assert (tmp_path / "out" / "tasks.jsonl").read_bytes().splitlines()[0] == (
        tmp_path / "pool" / "tasks.jsonl").read_bytes().splitlines()[0]
    tiny = inclusion_probabilities(record.pairs["prior"].to_numpy(), 0.07)  # a budget of 1% of the 7 pairs
    empty = next(s for s in range(100) if not poisson_sample(tiny, s).any())
    with pytest.raises(InputError, match=rf"the draw \(seed {empty}\) took none of the 7 pairs"):
        select_documents(tmp_path / "pool", fraction=0.01, seed=empty)
    short = next(s for s in range(100) if poisson_sample(record.pairs["pi"].to_numpy(), s).sum() < 6)
    with pytest.raises(InputError, match=r"over 2 queries \(2\.\d\d a query\) is too small for the design's "
                                         r"estimators: they need at least 3 a query on average \(6 here\)"):
        select_documents(tmp_path / "pool", budget=6, seed=short)

