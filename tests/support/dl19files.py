"""TREC DL 2019 grades as the document design's tests hand them over: NIST's and an LLM judge's qrels read as
``(query_id, doc_id) -> grade`` (strings), any pairs written back as qrels (a pair a file does not grade: 0), and
a drawn document sample of the DL19 demo pool, and the loopback judge's rule of the end-to-end tests."""

from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from evalset.cli import main

NIST = "data/dl19/nist.qrels"
LLAMA = "data/dl19/llm_labels/llama-3-70b.fourprompts.qrels"


def qrels_grades(path: str | Path) -> pd.Series:
    """A qrels file's grades by (query_id, doc_id), as strings."""
    frame = pd.read_csv(path, sep=r"\s+", header=None, dtype=str, names=["query_id", "it", "doc_id", "grade"])
    return frame.set_index(["query_id", "doc_id"])["grade"]


def write_qrels(path: Path, keys, grades) -> Path:
    """``keys`` (query_id, doc_id) as qrels with their ``grades`` (0 where absent)."""
    path.write_text("".join(f"{q} 0 {d} {grades.get((q, d), '0')}\n" for q, d in keys))
    return path


def llm_grade(pair_id: str, nist: int) -> int:
    """The loopback judge's grade of a pair: NIST's, one higher on a fifth of the pairs and one lower on another
    fifth (by the pair id), within 0-3."""
    shift = {0: 1, 1: -1}.get(int(pair_id, 16) % 5, 0)
    return min(3, max(0, nist + shift))


def invoke(*args):
    """The command line, as a user types it (each argument as text)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def drawn_sample(root: Path, budget: int, seed: int, whole_pool: bool = False) -> dict:
    """The depth-10 pool of the 37 runs (``pools/dl19-demo.toml``: 2,495 pairs, one without text) in ``root/pool``,
    a document sample of ``budget`` drawn from it in ``root/sample``, and: every pair of the sample's frame
    (``keys``), the drawn ones, NIST's and Llama-3-70B's grades, the human qrels of the drawn pairs and the LLM
    qrels of every pair of the frame. ``whole_pool``: the record as ``estimate select`` drew it before a pair
    without text was left out of the frame (every pooled pair, the pool's own priors, the same seed), which the
    estimate still reads: the tests that keep an earlier draw's figures."""
    assert invoke("pool", "--spec", "pools/dl19-demo.toml", "-o", root / "pool").exit_code == 0
    result = invoke("estimate", "select", "documents", root / "pool", "--budget", budget, "--seed", seed, "-o",
                    root / "sample")
    assert result.exit_code == 0, result.output
    if whole_pool:
        _redraw_whole_pool(root / "pool", root / "sample", budget, seed)
    pairs = pd.read_csv(root / "sample" / "sample.tsv", sep="\t", dtype=str)
    keys = list(zip(pairs["query_id"], pairs["doc_id"], strict=True))
    drawn = [key for key, s in zip(keys, pairs["sampled"], strict=True) if s == "1"]
    nist, llama = qrels_grades(NIST), qrels_grades(LLAMA)
    return {"root": root, "sample": root / "sample", "keys": keys, "drawn": drawn, "nist": nist, "llama": llama,
            "human": write_qrels(root / "human.qrels", drawn, nist),
            "llm": write_qrels(root / "llm.qrels", keys, llama)}


def _redraw_whole_pool(pool: Path, sample: Path, budget: int, seed: int) -> None:
    """Write in ``sample`` the record drawn over every pair of ``pool`` (:func:`drawn_sample`'s ``whole_pool``)."""
    import dataclasses
    import shutil

    from evalset.estimate.documents.sample import PRIOR_POWER, document_prior, inclusion_probabilities, poisson_sample
    from evalset.estimate.documents.select import read_pool_sources
    from evalset.io.poolfiles import read_pool_pairs
    from evalset.io.samplerecord import read_sample, record_texts

    record = read_sample(sample)
    pairs = read_pool_pairs(pool / "pool.tsv")
    prior = document_prior(pairs, read_pool_sources(pool / "pool_sources.tsv"), record.depth, record.floor,
                           PRIOR_POWER)
    pi = inclusion_probabilities(prior, budget)
    table = pairs[["pair_id", "query_id", "doc_id"]].assign(prior=prior, pi=pi, sampled=poisson_sample(pi, seed))
    source = {key: value for key, value in record.source.items() if key != "no_text"}
    record = dataclasses.replace(record, source=source, pairs=table)
    shutil.rmtree(sample)
    sample.mkdir()
    for name, text in record_texts(record, "0.1.0").items():
        (sample / name).write_text(text)
