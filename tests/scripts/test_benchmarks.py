"""Every benchmark script runs at a small size and prints the figures docs/benchmarks.md quotes, with its own check of
the values it compares, and writes them as a record with ``--json`` (scripts/benchlib.py). The full sizes are for a
person with time (docs/benchmarks.md); these keep the scripts from rotting when the library they call changes."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location("benchlib", REPO / "scripts" / "benchlib.py")
benchlib = sys.modules.setdefault("benchlib", importlib.util.module_from_spec(_spec))
if not hasattr(benchlib, "check"):
    _spec.loader.exec_module(benchlib)


def bench(script: str, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run([sys.executable, str(REPO / "scripts" / script), *args], cwd=REPO, capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def record(path: Path, bench_name: str, case: str | None) -> dict[str, dict[str | None, dict]]:
    """The record a bench wrote with ``--json`` (a record by benchlib's check, of this bench and case): its figures
    by name, then by anchor; each ratio is the figure's value over its anchor's (when the anchor is a figure of the
    same record)."""
    found = benchlib.read(path)
    assert (found["bench"], found["case"]) == (bench_name, case)
    assert found["command"][0] == f"scripts/{bench_name}.py" and found["command"][-2:] == ["--json", str(path)]
    figures: dict[str, dict[str | None, dict]] = {}
    for figure in found["figures"]:
        figures.setdefault(figure["what"], {})[figure["anchor"]] = figure
    for what, by_anchor in figures.items():
        for anchor, figure in by_anchor.items():
            prefix = what.split(": ", 1)[0] + ": " if ": " in what else ""
            quantity = what.rsplit(" ", 2)[-2:]
            theirs = figures.get(f"{prefix}{anchor} {' '.join(quantity)}", {}).get(None)
            if anchor and theirs:
                assert figure["ratio"] == pytest.approx(figure["value"] / theirs["value"], rel=2e-3)
    return figures


def test_bench_scoring_three_cases_agree_with_pytrec_eval_and_the_in_memory_path(tmp_path):
    out = bench("bench_scoring.py", "--lines", "100000", "--repeat", "1", "--runs", "4", "--qrels-sets", "2",
                "--data", str(tmp_path), "--cli", "--cli-tools", "pytrec_eval,ir_measures", "--json",
                str(tmp_path / "record.json"))
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d \w+; \d+ cores; load average [\d.]+ at start$", out, re.M)
    main_rows = dict(re.findall(r"^(evalset|evalset_streamed|pytrec_eval) +[\d.]+ +[\d.]+ +\d+ +([\d.]+) ", out, re.M))
    assert set(main_rows) == {"evalset", "evalset_streamed", "pytrec_eval"}  # time ratios against evalset
    differences = re.findall(r"^largest difference of a mean, \w+ vs \w+: ([\d.e+-]+) \((\d+) means\)$", out, re.M)
    assert [n for _, n in differences] == ["4", "4", "32"] and all(float(d) < 1e-12 for d, _ in differences)
    assert re.search(r"^big / main \(evalset\): wall [\d.]+x for 10x the lines \(goal <= 10\), peak [\d.]+ GB", out,
                     re.M)
    assert "check: 1,000 queries, every per-query value EQUAL to the in-memory path" in out
    commands = dict(re.findall(r"^(evalset score|pytrec_eval|ir_measures|floor \(polars scan\)) +([\d.]+) +[\d.]+ +\d+ "
                               r"+[\d.]+ +[\d.]+   [\d./]+$", out, re.M))
    assert set(commands) == {"evalset score", "pytrec_eval", "ir_measures", "floor (polars scan)"}  # one turn each
    ratio = (r"^evalset score is [\d.]+x faster than pytrec_eval in wall time \(medians; per turn [\d.]+x; "
             r"goal >= 8x\), [\d.]+x less CPU \(goal >= 5x\), [\d.]+x less memory; [\d.]+x the floor's wall time "
             r"\(goal <= 2x\)$")
    assert re.search(ratio, out, re.M)
    printed = dict(re.findall(r"^the means evalset score and (\w+) printed: largest difference ([\d.e+-]+) over 4 "
                              r"means$", out, re.M))
    assert set(printed) == {"pytrec_eval", "ir_measures"} and all(float(d) < 1e-12 for d in printed.values())
    big = r"^evalset score: [\d.]+ s wall, [\d.]+ s CPU, peak [\d.]+ GB \(\d+ MiB; goal < 0.8 GB\), [\d.]+x the main"
    assert re.search(big, out, re.M)  # the command on the big run
    printed = re.search(r"^the means it printed against the library call's: largest difference ([\d.e+-]+) over 4", out,
                        re.M)
    assert printed and float(printed.group(1)) < 1e-12
    figures = record(tmp_path / "record.json", "bench_scoring", "main+many --lines 100000 --runs 4 --qrels-sets 2")
    assert set(figures["cli: evalset score wall time"]) == {"pytrec_eval", "ir_measures", "floor (polars scan)"}
    assert set(figures["main: evalset wall time"]) == {"pytrec_eval"}
    assert set(figures["big: evalset_streamed wall time"]) == {"main: evalset", "main: evalset_streamed"}
    assert set(figures["cli big: evalset score wall time"]) == {"cli: evalset score"}
    assert set(figures["many: many_evalset wall time"]) == {"many_pytrec_eval"}
    assert {"cli: pytrec_eval peak memory", "main: pytrec_eval CPU time", "many: many_pytrec_eval wall time"} <= set(
        figures)


def test_bench_parsers_reads_the_same_rows_with_each_parser(tmp_path):
    out = bench("bench_parsers.py", "--lines", "100000", "--repeat", "1", "--data", str(tmp_path), "--json",
                str(tmp_path / "record.json"))
    rows = re.findall(r"^(arrow pieces|arrow whole|polars scan|polars scan -> arrow|polars pieces -> arrow) +[\d.]+ "
                      r"+([\d.]+) +\d+ +([\d.]+)   [\d./]+$", out, re.M)
    assert [name for name, *_ in rows] == ["arrow pieces", "arrow whole", "polars scan", "polars scan -> arrow",
                                           "polars pieces -> arrow"]
    assert rows[0][2] == "1.00"  # the CPU ratios are against arrow pieces'
    assert "every parser read 100,000 rows" in out
    figures = record(tmp_path / "record.json", "bench_parsers", "--lines 100000")
    assert set(figures["arrow pieces CPU time"]) == {name for name, *_ in rows[1:]}


def test_bench_pool_pools_synthetic_runs_and_matches_the_same_pool_computed_by_duckdb(tmp_path):
    out = bench("bench_pool.py", "--runs", "3", "--queries", "300", "--depth", "20", "--candidates", "60", "--json",
                str(tmp_path / "record.json"))
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d \w+, \d+ CPUs, load average \d+\.\d\d$", out, re.M)
    assert "pool at depth 20: 18,000 top-k rows -> " in out  # 3 runs x 300 queries x 20
    assert re.search(r"^time: [\d.]+ s, [\d.]+ s CPU \(read, rank and pool [\d.]+ s, write [\d.]+ s\); peak memory "
                     r"[\d,]+ MiB", out, re.M)
    assert re.search(r"^the anchor, the same pool in DuckDB \(ranked by trec_eval's tie rule, each run's top 20, the "
                     r"distinct pairs with their best rank and sources\) in its own process: [\d.]+ s, [\d.]+ s CPU, "
                     r"[\d,]+ MiB: evalset pool takes [\d.]+x its wall time \(goal <= 1.5x\) and [\d.]+x its memory "
                     r"\(goal <= 1.0x\)$", out, re.M)
    assert re.search(r"^beside it, a bare DuckDB distinct count \(no ranking, no ties\): ", out, re.M)
    assert re.search(r"^check: [\d,]+ pairs, the same pairs as DuckDB's pool query \(sha256 of the sorted pairs\) and "
                     r"as many as its distinct count$", out, re.M)
    figures = record(tmp_path / "record.json", "bench_pool", "--runs 3 --queries 300 --depth 20 --candidates 60")
    assert set(figures["evalset pool wall time"]) == {"DuckDB pool query"}
    assert set(figures["evalset pool peak memory"]) == {"DuckDB pool query"}
    assert {"DuckDB pool query wall time", "DuckDB distinct count wall time"} <= set(figures)


def test_bench_judge_runs_the_command_path_against_the_loopback_server(tmp_path):
    out = bench("bench_judge.py", "--pairs", "60", "--concurrency", "1", "8", "--latency", "0.02", "--json",
                str(tmp_path / "record.json"))
    assert re.search(r": 60 DL19 pairs, server latency 20 ms, \d+ CPUs, load average before \d+\.\d\d$", out, re.M)
    rows = re.findall(r"^\s+(\d+)\s+[\d.]+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%", out, re.M)
    assert [int(c) for c, *_ in rows] == [1, 8]
    assert all(float(ideal) == int(c) / 0.02 for c, _, ideal, _ in rows)  # the ideal the ratio is against
    assert "check: every one of the 60 pairs judged at each concurrency, none failed" in out
    figures = record(tmp_path / "record.json", "bench_judge", "--pairs 60 --latency 0.02 --concurrency 1 8")
    assert figures["concurrency 8 ideal throughput"][None]["value"] == 400
    assert set(figures["concurrency 8 throughput"]) == {"ideal"}


@pytest.mark.labelstudio
def test_bench_labelstudio_pushes_and_pulls_against_the_real_server(label_studio, tmp_path):
    import os

    out = bench("bench_labelstudio.py", "--pairs", "150", "--json", str(tmp_path / "record.json"),
                env={**os.environ, **label_studio.env(), "PYTHONPATH": str(REPO)})
    assert re.search(r"^push 150 tasks: [\d.]+ s; push again \(0 added\): [\d.]+ s$", out, re.M)
    assert re.search(r"^pull 150 annotations -> 150 labels: [\d.]+ s; load average", out, re.M)
    assert "check: the second push added nothing; the 150 pulled grades are the ones entered" in out
    figures = record(tmp_path / "record.json", "bench_labelstudio", "--pairs 150")
    assert set(figures) == {"push wall time", "push again (0 added) wall time", "pull wall time"}


def test_bench_labelstudio_against_a_dead_server_says_so_in_one_line():
    import os
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_labelstudio.py"), "--pairs", "10"], cwd=REPO,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "LABEL_STUDIO_URL": f"http://127.0.0.1:{port}",
                                 "LABEL_STUDIO_API_KEY": "x", "PYTHONPATH": str(REPO)})
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"bench_labelstudio: cannot connect to Label Studio at http://127.0.0.1:{port}: Label " \
                            f"Studio at http://127.0.0.1:{port} is not answering (ConnectError)\n"


def test_bench_sample_times_the_command_against_a_bare_duckdb_count_and_both_engines_agree(tmp_path):
    out = bench("bench_sample.py", "--lines", "100000", "--distinct", "10000", "--repeat", "1", "--other-engine",
                "--cache", str(tmp_path), "--json", str(tmp_path / "record.json"))
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d \w+; load average [\d.]+", out, re.M)
    assert re.search(r"^duckdb GROUP BY query  : median +[\d.]+ s .* peak [\d.]+ GiB", out, re.M)
    assert re.search(r"^ratio [\d.]+x the floor", out, re.M)
    assert "check: --engine duckdb and --engine pandas write the same queries.tsv" in out  # auto: pandas here
    figures = record(tmp_path / "record.json", "bench_sample", "--lines 100000 --distinct 10000")
    assert set(figures["evalset sample wall time"]) == {"DuckDB GROUP BY query"}
    assert {"evalset sample --engine duckdb wall time", "DuckDB GROUP BY query peak memory"} <= set(figures)


@pytest.mark.spark
def test_bench_sample_spark_gives_the_same_sample_as_duckdb(spark, tmp_path):
    out = bench("bench_sample_spark.py", "--lines", "100000", "--master", "local[2]", "--cache", str(tmp_path),
                "--json", str(tmp_path / "record.json"))
    assert re.search(r"^\s+spark +[\d.]+ s  peak [\d.]+ GiB  \(load average", out, re.M)
    assert "same queries.tsv: yes" in out
    figures = record(tmp_path / "record.json", "bench_sample_spark", "--lines 100000 --master local[2]")
    assert set(figures["--engine spark wall time"]) == {"--engine duckdb"}


def test_bench_tukey_times_the_randomised_tukey_hsd_against_the_plain_loop_and_both_agree(tmp_path):
    out = bench("bench_tukey.py", "--runs", "8", "--permutations", "500", "--json", str(tmp_path / "record.json"))
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d \w+; \d+ cores; load average [\d.]+$", out, re.M)
    assert "input: nDCG@10 of 8 DL19 runs on 43 queries (28 pairs), 500 permutations" in out
    seconds = dict(re.findall(r"^(evalset max_statistic_p_values|anchor \(per-permutation loop\)) +([\d.]+) s$", out,
                              re.M))
    assert len(seconds) == 2
    assert re.search(r"^evalset compare_many \(from files\) +[\d.]+ s \(must be < 10\)$", out, re.M)
    ratio = float(re.search(r"^ratio anchor / evalset: ([\d.]+)x$", out, re.M)[1])
    assert ratio == pytest.approx(float(seconds["anchor (per-permutation loop)"])
                                  / float(seconds["evalset max_statistic_p_values"]), rel=0.1, abs=0.1)
    found = re.search(r"^check: (\d+) of 28 adjusted p-values within Monte Carlo error of the anchor \(largest "
                      r"difference ([\d.]+)\); significant at 0.05: (\d+) \(evalset\), (\d+) \(anchor\)$", out, re.M)
    assert found and int(found[1]) == 28 and float(found[2]) < 0.1
    assert "check: compare_many's matrix EQUALS max_statistic_p_values' on the runs by mean (same seed)" in out
    figures = record(tmp_path / "record.json", "bench_tukey", "--runs 8 --permutations 500")
    assert set(figures["evalset max_statistic_p_values wall time"]) == {"per-permutation loop"}
