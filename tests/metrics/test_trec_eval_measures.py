"""trec_eval 10's own measures of ``-m all_trec`` (evalset/metrics/trec_measures.py, and rbp as rbp(p=0.9)) equal
trec_eval 10 per query, as it prints them (%.4f), and their summaries: trec_eval built from its source in shared/
and run on its fixtures (-l1, -l2, -c) and on DL19 runs (-l1, -l2, -c on a run with queries taken out)."""

import gzip
from collections import Counter
from pathlib import Path

import pytest

from evalset.contract import EvaluationContract
from evalset.io.trec import read_qrels, read_run
from evalset.metrics import evaluate, parse_measure, trec_eval_name
from evalset.stats.strata import mean_summary
from tests.support.trec_eval10 import trec_eval_lines

pytestmark = pytest.mark.slow

DL19 = Path(__file__).resolve().parents[2] / "data" / "dl19"
MEASURES = ["gm_ap", "gm_bpref", *(f"rprec_mult@{m}" for m in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
            "utility", "binary_g", "graded_g", "ndcg_rel", "rndcg",
            *(f"relative_p@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)), "set_relative_p", "set_ap",
            "num_nonrel_judged_ret", "rbp(p=0.9)", "rbp_resid", "unjudged@5", "unjudged@10", "unjudged@20"]
NAMES = {trec_eval_name(parse_measure(text)): text for text in MEASURES}
SUMMARY_ONLY = {"gm_map", "gm_bpref"}  # trec_eval prints no per-query line for them
COMPARED: Counter = Counter()


def run_trec_eval(binary: Path, qrels: Path, run: Path, level: int, complete: bool) -> dict[tuple[str, str], str]:
    lines = trec_eval_lines(binary, qrels, run, [f"-l{level}", *(["-c"] if complete else [])])
    return {(name, query): value for name, query, value in (line.split() for line in lines) if name in NAMES}


def compare(binary: Path, qrels: Path, run: Path, level: int, complete: bool) -> int:
    truth = run_trec_eval(binary, qrels, run, level, complete)
    contract = EvaluationContract(rel_level=level, missing="zero" if complete else "skip", undefined="zero")
    ours = evaluate(read_run(run), read_qrels(qrels), MEASURES, contract)
    checked = Counter()
    for (name, query), value in truth.items():
        measure = parse_measure(NAMES[name])
        column = ours[str(measure)]
        if query == "all":
            got = column.sum() if measure.kind.count else mean_summary(column, measure.kind.summary).mean
        else:
            got = column.loc[query]
        printed = f"{got:.0f}" if measure.kind.count else f"{got:.4f}"
        assert printed == value, (run.name, level, complete, name, query, got)
        checked[name] += 1
    for name in NAMES:
        per_query = 0 if name in SUMMARY_ONLY else len(ours)
        assert checked[name] == per_query + 1, (run.name, name)  # every query and "all"
    COMPARED.update(checked)
    return sum(checked.values())


@pytest.mark.parametrize(("qrels", "results", "level", "complete"), [
    ("qrels.test", "results.test", 1, False),
    ("qrels.rel_level", "results.test", 1, False),  # grades up to 4, -1 (pooled, unjudged)
    ("qrels.rel_level", "results.test", 2, False),
    ("qrels.test", "results.trunc", 1, True),  # -c: a query missing from the run scores 0
])
def test_fixtures(trec_eval_10, shared_data, qrels, results, level, complete):
    fixtures = shared_data / "trec_eval"
    assert compare(trec_eval_10, fixtures / qrels, fixtures / results, level, complete) > 0


@pytest.fixture(scope="module")
def dl19_runs(tmp_path_factory) -> list[Path]:
    paths = sorted((DL19 / "runs").glob("*.run.gz"))
    if not paths:
        pytest.skip("no DL19 runs")
    folder = tmp_path_factory.mktemp("dl19")
    chosen = [paths[0], paths[len(paths) // 2], max(paths, key=lambda p: p.stat().st_size)]
    runs = []
    for path in chosen:
        target = folder / path.name.removesuffix(".gz")
        target.write_bytes(gzip.decompress(path.read_bytes()))
        runs.append(target)
    return runs


@pytest.mark.parametrize(("level", "complete"), [(1, False), (2, False), (2, True)])
def test_dl19(trec_eval_10, dl19_runs, tmp_path, level, complete):
    for run in dl19_runs:
        if complete:  # every third query taken out of the run: -c scores them 0
            lines = run.read_text().splitlines()
            queries = sorted({line.split()[0] for line in lines})[::3]
            shorter = tmp_path / run.name
            shorter.write_text("".join(f"{line}\n" for line in lines if line.split()[0] not in queries))
            run = shorter
        assert compare(trec_eval_10, DL19 / "nist.qrels", run, level, complete) > 0


def test_every_measure_was_compared():
    """Runs last in the module: the lines compared per trec_eval name (``pytest -s`` prints them)."""
    if not COMPARED:
        pytest.skip("trec_eval was not built")
    print("\n".join(f"{name}: {COMPARED[name]} lines equal" for name in NAMES))
    assert set(COMPARED) == set(NAMES)


@pytest.mark.parametrize(("expected", "qrels", "results", "options"), [
    ("out.test.aq", "qrels.test", "results.test", ["-c", "missing=skip"]),
    ("out.test.aql", "qrels.rel_level", "results.test", ["-c", "rel_level=2", "-c", "missing=skip"]),
    ("out.test.aqc", "qrels.test", "results.trunc", ["-c", "missing=zero"]),
])
def test_score_format_trec_eval_prints_trec_eval_s_lines(shared_data, tmp_path, expected, qrels, results, options):
    """``evalset score --format trec_eval --per-query`` with the measures in trec_eval's spelling (and rbp(p=0.9))
    prints trec_eval's own fixture lines for them, byte for byte: the order, gm_map's lone "all" line, the count."""
    from click.testing import CliRunner

    from evalset.cli import main

    fixtures = shared_data / "trec_eval"
    run = tmp_path / "STANDARD"  # trec_eval prints the run's tag as runid, evalset the run's name
    run.write_bytes((fixtures / results).read_bytes())
    asked = [part for name in ("runid", "num_q", *NAMES) for part in ("-m", "rbp(p=0.9)" if name == "rbp" else name)]
    result = CliRunner().invoke(main, ["score", "--qrels", str(fixtures / qrels), str(run), *asked, "--per-query",
                                       "-c", "undefined=zero", *options, "--format", "trec_eval"])
    assert result.exit_code == 0, result.output
    printed = {"runid", "num_q", *NAMES}
    truth = "".join(line for line in (fixtures / expected).read_text().splitlines(keepends=True)
                    if line.split("\t")[0].rstrip() in printed)
    assert result.stdout == truth


def test_rankings_without_a_judged_document_and_queries_missing_from_the_run():
    """Nothing judged in a ranking of 3: rbp_resid is p^3 + (1 - p)(1 + p + p^2) = 1, unj_5 3/5 (the empty places
    judged), utility -3; a query the run misses (-c) scores 0 on every measure; empty qrels give an empty table."""
    import pandas as pd

    qrels = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "grade": [2, 0, 1]})
    run = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["u1", "u2", "u3"], "score": [3.0, 2.0, 1.0]})
    table = evaluate(run, qrels, MEASURES, EvaluationContract(missing="zero", undefined="zero"))
    assert table.loc["q1", "rbp_resid"] == pytest.approx(1.0, abs=1e-15)
    assert table.loc["q1", ["unjudged@5", "unjudged@20", "utility"]].tolist() == [0.6, 0.15, -3.0]
    assert (table.drop(columns=["rbp_resid", "unjudged@5", "unjudged@10", "unjudged@20", "utility"]) == 0).all().all()
    assert (table.loc["q2"] == 0).all()
    assert evaluate(run, qrels.iloc[:0], MEASURES).shape == (0, len(MEASURES))
