"""BEIR's files (qrels with a header, corpus.jsonl, queries.jsonl) read like the TREC files they copy."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.corpus import read_corpus
from evalset.io.queries import read_queries
from evalset.io.trec import read_qrels

RUNS = ("TUA1-1", "ICT-BERT2", "TUW19-p1-f")


@pytest.fixture(scope="module")
def beir(shared_data: Path, tmp_path_factory) -> Path:
    """DL19 written as a BEIR folder: ``qrels/test.tsv``, ``corpus.jsonl``, ``queries.jsonl``."""
    folder = tmp_path_factory.mktemp("beir")
    (folder / "qrels").mkdir()
    qrels = read_qrels(shared_data / "dl19" / "qrels.txt")
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{g}" for q, d, g in qrels.itertuples(index=False))]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    with gzip.open(shared_data / "dl19" / "passages.jsonl.gz", "rt") as source, \
            open(folder / "corpus.jsonl", "w") as out:
        for line in source:
            record = json.loads(line)
            out.write(json.dumps({"_id": record["doc_id"], "title": "", "text": record["text"]}) + "\n")
    topics = pd.read_csv(shared_data / "dl19" / "topics.tsv", sep="\t", header=None, dtype=str)
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t, "metadata": {}}) + "\n"
                                                  for q, t in topics.itertuples(index=False)))
    return folder


def _score(qrels: Path, runs: list[Path]) -> str:
    result = CliRunner().invoke(main, ["score", "--qrels", str(qrels), *map(str, runs), "--format", "json"])
    assert result.exit_code == 0, result.output
    return result.output


def test_beir_qrels_score_like_trec_qrels(beir: Path, shared_data: Path) -> None:
    runs = [shared_data / "dl19" / "runs" / "official_top100" / f"{name}.run.gz" for name in RUNS]
    assert _score(beir / "qrels" / "test.tsv", runs) == _score(shared_data / "dl19" / "qrels.txt", runs)


def test_beir_qrels_frame_equals_trec(beir: Path, shared_data: Path) -> None:
    trec = read_qrels(shared_data / "dl19" / "qrels.txt")
    pd.testing.assert_frame_equal(read_qrels(beir / "qrels" / "test.tsv"), trec)


@pytest.mark.slow
def test_beir_corpus_and_queries(beir: Path, shared_data: Path) -> None:
    corpus = read_corpus(beir / "corpus.jsonl")
    trec = read_corpus(shared_data / "dl19" / "passages.jsonl.gz")
    assert list(corpus.columns) == ["doc_id", "text", "title"]
    pd.testing.assert_frame_equal(corpus[["doc_id", "text"]], trec[["doc_id", "text"]])
    queries = read_queries(beir / "queries.jsonl")
    topics = read_queries(shared_data / "dl19" / "topics.tsv")
    pd.testing.assert_frame_equal(queries[["query_id", "query"]], topics[["query_id", "query"]])


def test_pool_takes_the_beir_corpus(beir: Path, shared_data: Path, tmp_path: Path) -> None:
    run = shared_data / "dl19" / "runs" / "official_top100" / "TUA1-1.run.gz"
    result = CliRunner().invoke(main, ["pool", str(run), "-k", "3", "-o", str(tmp_path / "pool"), "--corpus",
                                       str(beir / "corpus.jsonl"), "--queries", str(beir / "queries.jsonl")])
    assert result.exit_code == 0, result.output
    tasks = [json.loads(line) for line in (tmp_path / "pool" / "tasks.jsonl").read_text().splitlines()]
    assert len(tasks) == 43 * 3
    assert all(task["text"] and task["query"] and task["title"] == "" for task in tasks)


def test_bad_beir_lines_are_named(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\thigh\n")
    with pytest.raises(InputError, match=r"test.tsv:3: grade must be an integer, found 'high'"):
        read_qrels(path)
    path.write_text("query-id\tcorpus-id\n1\td1\t1\n")
    with pytest.raises(InputError, match=r"test.tsv:1: a BEIR qrels header"):
        read_qrels(path)
    path.write_text("query-id\tcorpus-id\tscore\n1\td1\n")
    with pytest.raises(InputError, match=r"test.tsv:2: expected 3 whitespace-separated fields"):
        read_qrels(path)
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "1", "text": "a"}\n{"_id": "2"}\n')
    with pytest.raises(InputError, match=r"queries.jsonl:2: a query needs text or query"):
        read_queries(queries)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "title": "t", "text": "a"}\n{"_id": "d1", "text": "b"}\n')
    with pytest.raises(InputError, match=r"corpus.jsonl:2: document id d1 appears twice"):
        read_corpus(corpus)
