"""`evalset sample --engine spark`: the same queries.tsv and manifest counts as `--engine duckdb`, byte for byte,
on the Excite log and on a synthetic log in part files as Spark writes them; the docs' cluster SQL run on a
real (local) Spark; Spark's errors as one line naming the file.

The synthetic log is SPARK_TEST_LINES lines (default 200,000, 20,000 distinct queries; the issue's 1M lines
with 100k distinct queries run with SPARK_TEST_LINES=1000000, or in scripts/bench_sample_spark.py): at 1M lines
the Spark runs alone take minutes on the 2-core machine."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.sampling import LogLayout, Strata, sample_log, write_sample

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
EXCITE_LAYOUT = LogLayout(header="no", query="3", user_id="1", timestamp="2")
SYNTHETIC_LINES = int(os.environ.get("SPARK_TEST_LINES", "200000"))


def sampled(tmp_path, name, paths, per_stratum=20, **options) -> tuple[bytes, dict]:
    """queries.tsv's bytes and the manifest (without its engine) of one run of the stage."""
    result = sample_log(paths, per_stratum, seed=3, holdout=0.2, **options)
    written, manifest = write_sample(result, tmp_path / f"{name}.tsv")
    record = json.loads(Path(manifest).read_text(encoding="utf-8"))
    assert record.pop("engine") == options["engine"]
    return Path(written).read_bytes(), record


def assert_same_sample(tmp_path, spark_paths, duckdb_paths, **options) -> dict:
    queries_spark, manifest_spark = sampled(tmp_path, "spark", spark_paths, engine="spark", **options)
    queries_duckdb, manifest_duckdb = sampled(tmp_path, "duckdb", duckdb_paths, engine="duckdb", **options)
    assert queries_spark == queries_duckdb
    assert manifest_spark == manifest_duckdb  # counts, drops, strata, inputs with their sha256
    return manifest_spark


@pytest.fixture(scope="module")
def excite(shared_data):
    return str(shared_data / "querylog" / "excite-small.log")


@pytest.mark.parametrize("count_by", ["submissions", "users"])
def test_spark_and_duckdb_write_the_same_sample_of_excite(spark, excite, tmp_path, count_by):
    manifest = assert_same_sample(tmp_path, [excite], [excite], layout=EXCITE_LAYOUT,
                                  count_by=count_by)
    assert manifest["submissions"]["read"] == 4501
    assert [s["distinct_queries"] for s in manifest["strata"]] == ([196, 573, 1317] if count_by == "submissions"
                                                                   else [674, 706, 706])


@pytest.mark.parametrize("count_by", ["submissions", "users"])
def test_spark_and_duckdb_agree_on_excite_in_a_window_with_a_block_list(spark, excite, tmp_path, count_by):
    blocklist = tmp_path / "blocked.txt"
    blocklist.write_text("# terms\nchat\nsex\n", encoding="utf-8")
    window = dict(since=dt.datetime(1997, 9, 16, 1), until=dt.datetime(1997, 9, 16, 12))
    layout = LogLayout(header="no", query="3", user_id="1", timestamp="2", timestamp_format="%y%m%d%H%M%S")
    manifest = assert_same_sample(tmp_path, [excite], [excite], layout=layout,
                                  count_by=count_by, blocklists=[blocklist], **window)
    stamps = [line.split("\t")[1] for line in Path(excite).read_text(encoding="utf-8").splitlines()]
    outside = sum(not "970916010000" <= stamp < "970916120000" for stamp in stamps)  # fixed width: as text
    dropped = manifest["submissions"]["dropped"]
    assert dropped["outside_window"] == outside > 86 and dropped["blocklist"] > 0


# ------------------------------------------------------------------ a synthetic log in part files
@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    """SYNTHETIC_LINES lines over SYNTHETIC_LINES // 10 distinct queries (each at least once, then Zipf), with
    case and space variants, personal data, empty queries, users, sources and ISO timestamps (some broken);
    written as a folder of Parquet part files and one of gzipped TSV part files, as Spark writes them."""
    rng = np.random.default_rng(19)
    distinct = SYNTHETIC_LINES // 10
    vocabulary = np.array([f"q{i} {'red shoes' if i % 3 else 'Paris  hotel'} {i % 97}" for i in range(distinct)])
    vocabulary[::501] = [f"call 555-{i % 900 + 100}-{i % 9000 + 1000}" for i in range(len(vocabulary[::501]))]
    vocabulary[::777] = ""
    ranks = np.concatenate([np.arange(distinct), np.minimum(rng.zipf(1.2, SYNTHETIC_LINES - distinct), distinct) - 1])
    queries = pa.array(vocabulary[ranks])
    queries = pc.if_else(pa.array(rng.random(len(ranks)) < 0.05), pc.utf8_upper(queries), queries)
    seconds = rng.integers(0, 10 * 86400, len(ranks)) + np.datetime64("2026-01-01T00:00:00", "s")
    stamps = pc.strftime(pa.array(seconds), "%Y-%m-%dT%H:%M:%S")
    stamps = pc.if_else(pa.array(rng.random(len(ranks)) < 0.001), "yesterday", stamps)
    table = pa.table({"user_id": pc.binary_join_element_wise("u", pc.cast(pa.array(rng.integers(0, 20_000,
                                                                                                 len(ranks))),
                                                                            pa.string()), ""),
                      "source": pa.array(rng.choice(["agent", "human"], len(ranks), p=[0.3, 0.7])),
                      "timestamp": stamps, "query": queries})
    root = tmp_path_factory.mktemp("synthetic")
    for folder in ("parquet", "tsv"):
        (root / folder).mkdir()
        (root / folder / "_SUCCESS").write_bytes(b"")
    for part, start in enumerate(range(0, table.num_rows, -(-table.num_rows // 4))):
        piece = table.slice(start, -(-table.num_rows // 4))
        pq.write_table(piece, root / "parquet" / f"part-{part:05d}-c0.snappy.parquet")
        with gzip.open(root / "tsv" / f"part-{part:05d}.tsv.gz", "wb", compresslevel=1) as handle:
            handle.write("\t".join(piece.column_names).encode() + b"\n")  # a header in each part, as Spark writes
            pacsv.write_csv(piece, handle, pacsv.WriteOptions(delimiter="\t", quoting_style="none",
                                                              include_header=False))
        (root / "tsv" / f".part-{part:05d}.tsv.gz.crc").write_bytes(b"crc")
    return root


def part_files(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.iterdir() if p.name.startswith("part-"))


def test_a_folder_of_parquet_part_files_by_users_in_a_window(spark, synthetic, tmp_path):
    window = dict(since=dt.datetime(2026, 1, 3), until=dt.datetime(2026, 1, 9))
    manifest = assert_same_sample(tmp_path, [str(synthetic / "parquet")], part_files(synthetic / "parquet"),
                                  layout=LogLayout(user_id="user_id", timestamp="timestamp", source="source"),
                                  count_by="users", per_stratum=5, **window)
    assert [entry["path"] for entry in manifest["inputs"]] == part_files(synthetic / "parquet")  # no _SUCCESS
    dropped = manifest["submissions"]["dropped"]
    assert manifest["submissions"]["read"] == SYNTHETIC_LINES
    assert min(dropped["unparsable_timestamp"], dropped["outside_window"], dropped["phone"], dropped["empty"]) > 0
    assert len(manifest["strata"]) == 6


def test_a_glob_of_gzipped_tsv_part_files_by_submissions(spark, synthetic, tmp_path):
    manifest = assert_same_sample(tmp_path, [str(synthetic / "tsv" / "part-*.tsv.gz")], part_files(synthetic / "tsv"),
                                  layout=LogLayout(source="source"), per_stratum=5)
    assert manifest["submissions"]["read"] == SYNTHETIC_LINES
    assert manifest["distinct_queries"] > SYNTHETIC_LINES // 20


# ------------------------------------------------------------------ the docs' SQL for a cluster
def docs_cluster_sql() -> str:
    text = (REPO / "docs" / "sample.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/sample.md has one Spark SQL block"
    return blocks[0]


def test_the_docs_cluster_sql_on_spark_gives_the_sample_of_the_raw_log(spark, excite, tmp_path):
    logs = spark.read.options(sep="\t", quote="", header="false").csv(excite).toDF("user_id", "ts", "query")
    logs.createOrReplaceTempView("logs")
    spark.sql("DROP TABLE IF EXISTS log_grouped")
    spark.sql(docs_cluster_sql())
    location = spark.sql("DESCRIBE TABLE EXTENDED log_grouped").where("col_name = 'Location'").first().data_type
    grouped = sorted(str(p) for p in Path(location.removeprefix("file:")).glob("*.parquet"))
    command = re.search(r"^evalset sample log_grouped/\*\.parquet (.*) -o queries.tsv$",
                        (REPO / "docs" / "sample.md").read_text(encoding="utf-8"), re.M)
    runner = CliRunner()
    aggregated = runner.invoke(main, ["sample", *grouped, *command.group(1).split(), "-o", str(tmp_path / "a.tsv")])
    assert aggregated.exit_code == 0, aggregated.output
    raw = runner.invoke(main, ["sample", excite, "-l", "header=no", "-l", "query=3", "-l", "user_id=1", "-l",
                               "timestamp=2",
                               "-l", "timestamp_format=%y%m%d%H%M%S", "--since", "1997-09-16T06:00:00",
                               "--count-by", "users", "--per-stratum", "50", "--engine", "duckdb",
                               "-o", str(tmp_path / "raw.tsv")])
    assert raw.exit_code == 0, raw.output
    assert (tmp_path / "a.tsv").read_bytes() == (tmp_path / "raw.tsv").read_bytes()
    spark.sql("DROP TABLE log_grouped")


# ------------------------------------------------------------------ bad input: one line naming the file, exit 2
def sample_command(*args: str):
    return CliRunner().invoke(main, ["sample", *args, "--engine", "spark", "--per-stratum", "2"])


@pytest.mark.parametrize("name", ["log.parquet", "log.tsv.gz"])
def test_a_log_spark_cannot_read_is_one_line_naming_it(spark, tmp_path, name):
    log = tmp_path / name
    log.write_bytes(b"query\nnot what the name says\n" * 10)
    result = sample_command(str(log), "-o", str(tmp_path / "q.tsv"))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"evalset: error: {log}: ") and len(result.output.splitlines()) == 1
    assert not (tmp_path / "q.tsv").exists()


@pytest.mark.parametrize("engine", ["duckdb", "pandas", "spark"])
def test_bytes_that_are_not_utf8_are_refused_with_file_and_line_by_every_engine(spark, tmp_path, engine):
    log = tmp_path / "log.tsv"
    log.write_bytes(b"query\nred shoes\ncaf\xe9 au lait\nmaps\nred shoes\n")
    result = CliRunner().invoke(main, ["sample", str(log), "--engine", engine, "--per-stratum", "1", "-o",
                                       str(tmp_path / "q.tsv")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"evalset: error: {log}:3: ") and len(result.output.splitlines()) == 1
    assert not (tmp_path / "q.tsv").exists()


def test_a_valid_replacement_character_is_text_like_any_other(spark, tmp_path):
    log = tmp_path / "log.tsv"
    log.write_text("query\nred shoes\ncaf\ufffd au lait\nmaps\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["sample", str(log), "--engine", "spark", "--per-stratum", "1", "-o",
                                       str(tmp_path / "q.tsv")])
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_a_spark_run_leaves_no_folder_in_the_temporary_directory(spark, excite, tmp_path):
    """A command of its own (not the tests' shared session): its Spark folders are gone when it ends."""
    import subprocess
    import sys

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = subprocess.run([sys.executable, "-m", "evalset", "sample", excite, "-l", "header=no", "-l", "query=3",
                           "--per-stratum", "2", "--engine", "spark", "-o", str(tmp_path / "q.tsv")],
                          env={**os.environ, "TMPDIR": str(temporary), "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in temporary.iterdir()) == []


def test_a_missing_column_names_the_folder(spark, synthetic, tmp_path):
    result = sample_command(str(synthetic / "parquet"), "-l", "user_id=uid", "-o", str(tmp_path / "q.tsv"))
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: {synthetic / 'parquet'}:1: no user_id column 'uid'; the columns are "
                             "'user_id', 'source', 'timestamp', 'query'\n")


def test_unparsable_timestamps_under_since_are_counted_and_a_log_of_nothing_else_refused(spark, tmp_path):
    log = tmp_path / "log.tsv"
    log.write_text("timestamp\tquery\n2026-01-02T10:00:00\tred shoes\n01/02/2026\tred shoes\nsoon\tmaps\n"
                   "2025-12-31T23:59:59\tmaps\n", encoding="utf-8")
    options = dict(layout=LogLayout(timestamp="timestamp"), since=dt.datetime(2026, 1, 1),
                   strata=Strata(("all",), ()))
    spark_counts = sample_log([log], 1, engine="spark", **options).counts
    duckdb_counts = sample_log([log], 1, engine="duckdb", **options).counts
    assert spark_counts.dropped == duckdb_counts.dropped
    assert spark_counts.dropped["unparsable_timestamp"] == 2 and spark_counts.dropped["outside_window"] == 1
    log.write_text("timestamp\tquery\nsoon\tred shoes\nlater\tmaps\n", encoding="utf-8")
    result = sample_command(str(log), "-l", "timestamp=timestamp", "--since", "2026-01-01", "-o", str(tmp_path / "q"))
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: {log}: no query left to sample: all 2 submissions read were dropped "
                             "(unparsable_timestamp 2)\n")


def test_the_command_prints_the_figures_of_the_docs(spark, excite, tmp_path):
    result = CliRunner().invoke(main, ["sample", excite, "-l", "header=no", "-l", "query=3", "-l", "user_id=1", "-l",
                                       "timestamp=2", "-l", "timestamp_format=%y%m%d%H%M%S",
                                       "--since", "1997-09-16T01:00:00",
                                       "--per-stratum", "20", "--engine", "spark", "-o", str(tmp_path / "q.tsv")])
    assert result.exit_code == 0, result.output
    block = re.search(r"--engine spark -o queries.tsv\n(.*?)wrote queries.tsv", (REPO / "docs" / "sample.md")
                      .read_text(encoding="utf-8"), re.S).group(1)
    assert result.output.splitlines()[:5] == block.splitlines()
    assert result.output.startswith("read 4,501 submissions (spark); kept 3,869; dropped: outside_window 86,")
