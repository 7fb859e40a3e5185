"""`evalset.io.querylog_spark` without a Spark: the paths Spark is given, the timestamp patterns it parses with,
and what the command says when PySpark or Java is missing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evalset.errors import InputError
from evalset.io.querylog_spark import expand_log_paths, java_time_pattern, spark_timestamp_sql


def test_a_folder_is_its_part_files_without_spark_markers(tmp_path):
    folder = tmp_path / "logs"
    (folder / "day=2").mkdir(parents=True)
    (folder / "_temporary").mkdir()
    for name in ("part-00001.parquet", "part-00000.parquet", "_SUCCESS", ".part-00000.parquet.crc",
                 "day=2/part-00000.parquet", "_temporary/part-9.parquet"):
        (folder / name).write_bytes(b"x")
    assert expand_log_paths([folder]) == [str(folder / "day=2" / "part-00000.parquet"),
                                          str(folder / "part-00000.parquet"), str(folder / "part-00001.parquet")]


def test_a_glob_is_its_matches_sorted_and_a_url_is_left_to_spark(tmp_path):
    for name in ("b.tsv.gz", "a.tsv.gz", "c.csv"):
        (tmp_path / name).write_bytes(b"x")
    assert expand_log_paths([tmp_path / "*.tsv.gz", "s3a://bucket/logs/"]) == [
        str(tmp_path / "a.tsv.gz"), str(tmp_path / "b.tsv.gz"), "s3a://bucket/logs/"]


@pytest.mark.parametrize(("path", "message"), [("missing.tsv", "no such file"), ("*.nothing", "no file matches"),
                                               ("empty", "the folder holds no log file")])
def test_a_path_that_names_no_log_is_refused_naming_it(tmp_path, path, message):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=message) as raised:
        expand_log_paths([tmp_path / path])
    assert raised.value.path == str(tmp_path / path)


@pytest.mark.parametrize(("strptime", "java"), [
    ("%y%m%d%H%M%S", "yyMMddHHmmss"),
    ("%Y-%m-%dT%H:%M:%S.%f", "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"),
    ("%d/%b/%Y:%H:%M:%S", "dd/MMM/yyyy:HH:mm:ss"),
    ("at %I %p, 100%%", "'at 'hh a, 100%"),
])
def test_strptime_formats_become_java_time_patterns(strptime, java):
    assert java_time_pattern(strptime) == java


def test_a_directive_spark_cannot_parse_is_refused():
    with pytest.raises(InputError, match="%z cannot be parsed by Spark"):
        java_time_pattern("%Y-%m-%d %H:%M:%S%z")


def test_two_digit_years_are_put_in_pythons_century():
    assert spark_timestamp_sql(None) == "try_to_timestamp(timestamp)"
    assert spark_timestamp_sql("%Y%m%d") == "try_to_timestamp(timestamp, 'yyyyMMdd')"
    parsed = "try_to_timestamp(timestamp, 'yyMMdd')"
    assert spark_timestamp_sql("%y%m%d") == (f"CASE WHEN year({parsed}) >= 2069 THEN {parsed} - INTERVAL 100 YEARS "
                                             f"ELSE {parsed} END")


def run_sample(tmp_path, prelude: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    log = tmp_path / "log.tsv"
    log.write_text("query\nred shoes\n", encoding="utf-8")
    code = f"{prelude}\nfrom evalset.cli import main\nmain()"
    return subprocess.run([sys.executable, "-c", code, "sample", str(log), "--per-stratum", "1", "--engine", "spark",
                           "-o", str(tmp_path / "q.tsv")], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.slow
def test_without_pyspark_the_command_names_the_extra(tmp_path):
    done = run_sample(tmp_path, "import sys; sys.modules['pyspark'] = None", os.environ.copy())
    assert done.returncode == 2
    assert done.stderr == ("evalset: error: --engine spark needs PySpark, which is not installed: "
                           "pip install 'evalset[spark]'\n")


@pytest.mark.slow
def test_without_java_the_command_names_the_script(tmp_path):
    pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'evalset[spark]'")
    env = {key: value for key, value in os.environ.items() if key not in ("JAVA_HOME", "SPARK_REMOTE")}
    env["PATH"] = os.path.dirname(sys.executable)  # no java there
    done = run_sample(tmp_path, "", env)
    assert done.returncode == 2
    assert done.stderr.startswith("evalset: error: Spark needs Java 17 or later and none was found")
    assert done.stderr.endswith("install one, e.g. bash scripts/install-java.sh\n")
    assert not (tmp_path / "q.tsv").exists()


def test_a_job_cancelled_by_ctrl_c_is_an_interrupt_and_other_spark_errors_name_the_file():
    errors = pytest.importorskip("pyspark.errors")
    from evalset.io.querylog_spark import spark_errors

    with pytest.raises(KeyboardInterrupt), spark_errors(["log.tsv"]):
        raise errors.PySparkException(message="[SPARK_JOB_CANCELLED] Job 1 cancelled as part of cancellation of "
                                              "all jobs SQLSTATE: XXKDA")
    with pytest.raises(InputError, match=r"log\.tsv: malformed record"), spark_errors(["log.tsv"]):
        raise errors.PySparkException(message="malformed record")


def test_a_text_log_spark_read_with_replacement_characters_is_refused_at_its_line(tmp_path):
    import pyarrow as pa

    from evalset.io.querylog_spark import refuse_replaced_bytes

    log = tmp_path / "log.tsv"
    log.write_bytes(b"query\nred\ncaf\xe9\n")
    refuse_replaced_bytes(pa.table({"query": ["red", "caf"]}), [str(log)])  # no U+FFFD: no scan
    with pytest.raises(InputError, match=r"log.tsv:3: not UTF-8"):
        refuse_replaced_bytes(pa.table({"query": ["red", "caf\ufffd"]}), [str(log)])
    log.write_text("query\nred\ncaf\ufffd\n", encoding="utf-8")  # a U+FFFD written as UTF-8 is text
    refuse_replaced_bytes(pa.table({"query": ["red", "caf\ufffd"]}), [str(log)])
