"""`evalset sample`: what it prints and writes, byte for byte, and how it refuses bad input."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from tests.support.options import not_one_of, refusal

EXCITE_ARGS = ["-l", "header=no", "-l", "query=3", "-l", "user_id=1", "-l", "timestamp=2"]


@pytest.fixture(scope="module")
def excite(shared_data):
    return str(shared_data / "querylog" / "excite-small.log")


def run(*args: str):
    return CliRunner().invoke(main, ["sample", *args])


def read_tsv(path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", keep_default_na=False)


def test_prints_the_excite_figures(excite, tmp_path):
    result = run(excite, *EXCITE_ARGS, "--per-stratum", "20", "-o", str(tmp_path / "queries.tsv"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == ("read 4,501 submissions (pandas); kept 3,952; dropped: empty 533, email 6, phone 3, "
                        "long_digits 7")
    assert lines[1] == "2,086 distinct normalised queries, counted by submissions"
    assert lines[2].split() == ["head", "196", "queries", "1,318", "traffic", "(33.4%)", "sampled", "20",
                                "(test", "0)"]
    assert lines[3].split()[:5] == ["torso", "573", "queries", "1,317", "traffic"]
    assert lines[4].split()[:5] == ["tail", "1,317", "queries", "1,317", "traffic"]


def test_count_by_users_prints_other_strata(excite, tmp_path):
    result = run(excite, *EXCITE_ARGS, "--count-by", "users", "--per-stratum", "5", "-o",
                 str(tmp_path / "q.tsv"))
    assert result.exit_code == 0, result.output
    sizes = [line.split()[1] for line in result.output.splitlines()[2:5]]
    assert sizes == ["674", "706", "706"]


def test_writes_the_contract_columns_and_a_manifest(excite, tmp_path):
    out = tmp_path / "queries.tsv"
    result = run(excite, *EXCITE_ARGS, "--per-stratum", "head=10,torso=20,tail=30", "--holdout", "0.2",
                 "--seed", "9", "-o", str(out))
    assert result.exit_code == 0, result.output
    queries = read_tsv(out)
    assert queries.columns.tolist() == ["query_id", "query", "stratum", "frequency", "stratum_share",
                                        "weight", "split"]
    assert queries["stratum"].value_counts().to_dict() == {"tail": 30, "torso": 20, "head": 10}
    manifest = json.loads((tmp_path / "queries.manifest.json").read_text(encoding="utf-8"))
    with open(excite, "rb") as handle:
        assert manifest["inputs"][0]["sha256"] == hashlib.sha256(handle.read()).hexdigest()
    assert manifest["seed"] == 9 and manifest["holdout"] == 0.2
    assert manifest["cut_points"] == {"head": 1 / 3, "torso": 2 / 3, "tail": 1.0}
    assert [s["distinct_queries"] for s in manifest["strata"]] == [196, 573, 1317]
    assert [s["test"] for s in manifest["strata"]] == [2, 4, 6]
    submissions = manifest["submissions"]
    assert submissions["read"] == submissions["kept"] + sum(submissions["dropped"].values()) == 4501
    assert len(submissions["dropped"]) == 12  # every reason, zeros included


def test_same_seed_same_bytes_other_seed_other_sample(excite, tmp_path):
    outputs = {}
    for name, seed in (("a", "1"), ("b", "1"), ("c", "2")):
        result = run(excite, *EXCITE_ARGS, "--per-stratum", "25", "--seed", seed, "--holdout", "0.2", "-o",
                     str(tmp_path / name / "queries.tsv"))
        assert result.exit_code == 0, result.output
        outputs[name] = [(tmp_path / name / f).read_bytes() for f in ("queries.tsv", "queries.manifest.json")]
    assert outputs["a"] == outputs["b"]
    assert outputs["a"][0] != outputs["c"][0]
    assert set(read_tsv(tmp_path / "a" / "queries.tsv")["query_id"]) != set(
        read_tsv(tmp_path / "c" / "queries.tsv")["query_id"])


def test_holdout_keeps_stratum_sizes(excite, tmp_path):
    for holdout in ("0", "0.3"):
        result = run(excite, *EXCITE_ARGS, "--per-stratum", "10", "--holdout", holdout, "-o",
                     str(tmp_path / holdout / "queries.tsv"))
        assert result.exit_code == 0, result.output
    plain, held = (read_tsv(tmp_path / h / "queries.tsv") for h in ("0", "0.3"))
    assert plain["query_id"].tolist() == held["query_id"].tolist()
    assert (plain["split"] == "dev").all()
    assert held.groupby("stratum")["split"].apply(lambda s: (s == "test").sum()).tolist() == [3, 3, 3]


def test_duckdb_engine_writes_the_same_queries(excite, tmp_path):
    for engine in ("pandas", "duckdb"):
        result = run(excite, *EXCITE_ARGS, "--per-stratum", "30", "--engine", engine, "--since",
                     "1997-09-16T08:00:00", "-l", "timestamp_format=%y%m%d%H%M%S", "-o",
                     str(tmp_path / engine / "queries.tsv"))
        assert result.exit_code == 0, result.output
    written = [(tmp_path / engine / "queries.tsv").read_bytes() for engine in ("pandas", "duckdb")]
    assert written[0] == written[1]


# --------------------------------------------------------------------------------------------- bad input
def assert_refused(result, tmp_path, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert message.startswith("evalset: error: ") and "\n" not in message
    for fragment in fragments:
        assert fragment in message
    assert list(tmp_path.rglob("*queries*")) == []  # nothing written, not even a temporary file


def test_missing_column_is_refused(tmp_path):
    log = tmp_path / "log.tsv"
    log.write_text("user\tq\nu1\thello\n", encoding="utf-8")
    result = run(str(log), "--per-stratum", "1", "-o", str(tmp_path / "out" / "queries.tsv"))
    assert_refused(result, tmp_path, str(log), "no query column 'query'", "'user', 'q'")


def test_unreadable_file_is_refused(tmp_path):
    missing = tmp_path / "nope.log"
    assert_refused(run(str(missing), "--per-stratum", "1", "-o", str(tmp_path / "queries.tsv")), tmp_path,
                   f"{missing}: no such file")
    broken = tmp_path / "broken.tsv.gz"
    broken.write_bytes(b"not gzip at all")
    assert_refused(run(str(broken), "--per-stratum", "1", "-o", str(tmp_path / "queries.tsv")), tmp_path,
                   str(broken))


def test_malformed_line_is_named(tmp_path):
    log = tmp_path / "log.tsv"
    log.write_text("user\tquery\nu1\thello\nu2\tworld\textra\n", encoding="utf-8")
    for engine in ("pandas", "duckdb"):
        result = run(str(log), "--per-stratum", "1", "--engine", engine, "-o", str(tmp_path / "queries.tsv"))
        assert_refused(result, tmp_path, f"{log}:3:")


def test_count_larger_than_a_stratum_is_refused(excite, tmp_path):
    result = run(excite, *EXCITE_ARGS, "--per-stratum", "head=197,torso=1,tail=1", "-o",
                 str(tmp_path / "queries.tsv"))
    assert_refused(result, tmp_path, "stratum 'head' has 196 distinct queries, fewer than the 197 asked for")


def test_bad_options_are_refused(excite, tmp_path):
    out = str(tmp_path / "queries.tsv")
    assert_refused(run(excite, *EXCITE_ARGS, "--per-stratum", "ten", "-o", out), tmp_path, "per-stratum")
    assert_refused(run(excite, *EXCITE_ARGS, "--per-stratum", "1", "--strata", "head:0.7,torso:0.4,tail",
                       "-o", out), tmp_path, "cut points")
    assert_refused(run(excite, "--per-stratum", "1", "-l", "query=query", "-l", "header=no", "-o", out), tmp_path,
                   "column positions")
    assert_refused(run(excite, *EXCITE_ARGS[:4], "--count-by", "users", "--per-stratum", "1", "-o", out),
                   tmp_path, "user column")


def test_an_unreadable_memory_limit_is_one_line_naming_the_option(excite, tmp_path):
    result = run(excite, *EXCITE_ARGS, "--per-stratum", "2", "--engine", "duckdb", "--memory-limit", "lots",
                 "-o", str(tmp_path / "queries.tsv"))
    assert result.exit_code == 2
    assert result.output.startswith("evalset: error: --memory-limit 'lots': ") and result.output.count("\n") == 1
    assert not (tmp_path / "queries.tsv").exists()


@pytest.mark.parametrize("count, message", [
    ("0", "per_stratum must be a positive integer, got 0"),
    ("-3", "per_stratum must be a positive integer, got -3"),
    ("head=0,torso=0,tail=0", "per_stratum must ask for at least one query, got 0 for every stratum"),
])
def test_a_sample_of_no_query_is_refused(excite, tmp_path, count, message):
    result = run(excite, *EXCITE_ARGS, "--per-stratum", count, "-o", str(tmp_path / "queries.tsv"))
    assert_refused(result, tmp_path, message)


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--seed", -1, "must be a non-negative integer, got -1"),
    ("--seed", "x", "must be a non-negative integer, got 'x'"),
    ("--holdout", 1, "must be a number in [0, 1), got 1.0"),
    ("--holdout", -0.1, "must be a number in [0, 1), got -0.1"),
    ("--holdout", "nan", "must be a number in [0, 1), got nan"),
    ("--holdout", "inf", "must be a number in [0, 1), got inf"),
    ("-l", "format=xml", "format: " + not_one_of("xml", "tsv", "csv", "jsonl", "parquet")),
    ("-l", "header=0", "header: " + not_one_of("0", "yes", "no")),
    ("-l", "query=", "query: must be a text of 1 to 1000 characters, got ''"),
    ("-l", "user=1", "expected NAME=VALUE, NAME one of format, header, query, count, timestamp, timestamp_format, "
                     "user_id, source; got 'user=1'"),
    ("--format", "tsv", not_one_of("tsv", "table", "json")),
    ("--count-by", "sessions", not_one_of("sessions", "submissions", "users")),
    ("--engine", "polars", not_one_of("polars", "auto", "pandas", "duckdb", "spark")),
])
def test_an_option_off_its_rule_is_refused_naming_it(option, value, said):
    assert refusal(["sample"], option, value) == said


def test_a_new_sample_excluding_an_earlier_one_shares_no_query_with_it_quotes_included(excite, tmp_path):
    # issue 74: a query holding " (three of the demo's 60) was written CSV-quoted and read back with its quotes
    # doubled, so --exclude never matched it and it was sampled again. Every query sampled, then excluded: none left
    first = tmp_path / "first.tsv"
    everything = ["--per-stratum", "head=196,torso=573,tail=1317"]
    assert run(excite, *EXCITE_ARGS, *everything, "-o", str(first)).exit_code == 0
    earlier = pd.read_csv(first, sep="\t", quoting=3, dtype=str, keep_default_na=False)  # 3: csv.QUOTE_NONE
    assert len(earlier) == 2086 and earlier["query"].str.contains('"').sum() > 0
    again = run(excite, *EXCITE_ARGS, "--per-stratum", "20", "--exclude", str(first), "-o", str(tmp_path / "b.tsv"))
    assert again.exit_code == 2 and "excluded 3,952)" in again.output  # every kept submission


# --- what a new user tripped on (issue 74 item 7)
def test_a_column_position_in_a_log_read_with_a_header_is_refused_naming_the_first_line(excite, tmp_path):
    result = run(excite, "-l", "query=3", "--per-stratum", "5", "-o", str(tmp_path / "q.tsv"))
    assert result.exit_code == 2
    assert result.output == (f"evalset: error: {excite}:1: -l query=3 is a column position, and the log is read with a "
                             "header line (its first line would be the names: '2A9EABFB35F5B954', '970916105432', "
                             "'+md foods +proteins'): give -l header=no for a file without one, or name the column\n")


def test_a_per_stratum_count_of_no_stratum_is_refused_naming_it(excite, tmp_path):
    result = run(excite, *EXCITE_ARGS, "--per-stratum", "head=5,foo=2", "-o", str(tmp_path / "q.tsv"))
    assert result.exit_code == 2
    assert result.output == ("evalset: error: --per-stratum names 'foo', which is no stratum of this log (its strata: "
                             "head, torso, tail)\n")


def test_a_timestamp_column_without_a_window_is_said_to_be_unchecked(excite, tmp_path):
    result = run(excite, *EXCITE_ARGS, "--per-stratum", "5", "-o", str(tmp_path / "q.tsv"))
    assert ("note: the timestamp column is read only for a time window (--since, --until): without one its values "
            "are neither parsed nor checked") in result.stderr
    windowed = run(excite, *EXCITE_ARGS, "--per-stratum", "5", "--since", "1997-09-16", "-l",
                   "timestamp_format=%y%m%d%H%M%S", "-o", str(tmp_path / "w.tsv"))
    assert windowed.exit_code == 0 and "timestamp column is read only" not in windowed.stderr
