"""`evalset estimate` on TREC DL 2019: NIST's grades as the humans, recorded LLM grades as the judge, the 37
official runs. The estimates are ppi_py's on the same per-query values; bad input is one line and exit 2."""

import json
from pathlib import Path

import numpy as np
import ppi_py
import pytest
from click.testing import CliRunner
from scipy import stats

from evalset.cli import main
from evalset.contract import EvaluationContract
from evalset.estimate import estimate_runs, read_grades, select_slice
from evalset.estimate.inputs import values_by_run
from evalset.io.slicerecord import read_slice
from evalset.io.trec import read_qrels, read_runs

LLAMA_70B = "data/dl19/llm_labels/llama-3-70b.fourprompts.qrels"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def runs():
    return read_runs(["data/dl19/runs"])


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pool") / "pool"
    assert invoke("pool", "--spec", "pools/dl19-demo.toml", "--depth", "3", "-o", folder).exit_code == 0
    return folder


@pytest.fixture(scope="module")
def sliced(pool, tmp_path_factory):
    """A 10-query slice of the pool, and NIST's grades of its queries alone (the humans)."""
    folder = tmp_path_factory.mktemp("slice") / "slice"
    result = invoke("estimate", "select", "slice", pool, "--size", 10, "--seed", 5, "-o", folder)
    assert result.exit_code == 0, result.output
    chosen = set(json.loads((folder / "slice.json").read_text())["slice"])
    human = folder.parent / "human.qrels"
    human.write_text("".join(line for line in Path("data/dl19/nist.qrels").read_text().splitlines(keepends=True)
                             if line.split()[0] in chosen))
    return folder, human, sorted(chosen)


@pytest.mark.slow
def test_select_writes_the_slice_pool_and_record_seeded(pool, sliced, tmp_path):
    folder, _, chosen = sliced
    record = read_slice(folder)
    assert record.design == "uniform" and record.seed == 5 and len(record.queries) == 43
    assert list(record.slice) == chosen
    pairs = [line.split("\t") for line in (folder / "pool.tsv").read_text().splitlines()[1:]]
    assert {p[1] for p in pairs} == set(chosen)
    every = [line.split("\t") for line in (pool / "pool.tsv").read_text().splitlines()[1:]]
    assert len(pairs) == sum(p[1] in set(chosen) for p in every)
    tasks = [json.loads(line) for line in (folder / "tasks.jsonl").read_text().splitlines()]
    assert [t["pair_id"] for t in tasks] == [p[0] for p in pairs]  # the pool's judging order, kept
    again = tmp_path / "again"
    assert invoke("estimate", "select", "slice", pool, "--size", 10, "--seed", 5, "-o", again).exit_code == 0
    assert (again / "slice.json").read_text().replace(str(pool), "") == (folder / "slice.json").read_text().replace(
        str(pool), "")
    assert read_slice(again).slice == record.slice
    assert select_slice(record.queries["query_id"], size=10, seed=6).slice != record.slice


def test_a_stratified_slice_takes_its_number_per_stratum_and_carries_the_shares():
    queries = __import__("pandas").DataFrame({"query_id": [f"q{i}" for i in range(12)],
                                              "stratum": ["head"] * 3 + ["tail"] * 9,
                                              "stratum_share": [0.7] * 3 + [0.3] * 9})
    record = select_slice(queries["query_id"], per_stratum=4, queries=queries, seed=1)
    chosen = record.queries[record.in_slice]
    assert chosen.groupby("stratum").size().to_dict() == {"head": 3, "tail": 4}  # all of a small stratum
    assert dict(zip(record.queries["stratum"], record.queries["stratum_share"], strict=False)) == {"head": 0.7,
                                                                                                  "tail": 0.3}
    by_fraction = select_slice(queries["query_id"], fraction=0.25, queries=queries, seed=1)
    assert by_fraction.queries[by_fraction.in_slice].groupby("stratum").size().to_dict() == {"head": 2, "tail": 3}


@pytest.mark.slow
@pytest.mark.parametrize("interval", ["t", "normal"])
def test_the_estimate_is_ppi_py_on_the_per_query_values(runs, sliced, interval):
    folder, human_path, chosen = sliced
    record = read_slice(folder)
    human, llm = read_grades([human_path], "human"), read_grades([LLAMA_70B], "llm")
    result = estimate_runs(runs, human, llm, record, interval=interval)
    contract = EvaluationContract()
    y = values_by_run(runs, read_qrels(human_path), chosen, "ndcg@10", contract)
    others = sorted(set(record.queries["query_id"]) - set(chosen))
    y_hat = values_by_run(runs, read_qrels(LLAMA_70B), chosen + others, "ndcg@10", contract).fillna(0.0)
    for name in ("bm25base_p", "idst_bert_p1", "ms_duet_passage"):
        row = result.runs.set_index("run").loc[name]
        args = (y[name].to_numpy(), y_hat.loc[chosen, name].to_numpy(), y_hat.loc[others, name].to_numpy())
        assert row["estimate"] == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(*args))[0]))
        assert row["human_mean"] == pytest.approx(y[name].mean())
        assert row["llm_mean"] == pytest.approx(y_hat[name].mean())
        assert (row["n"], row["N"]) == (10, 33)
        low, high = ppi_py.ppi_mean_ci(*args, alpha=0.05)
        se = (high[0] - low[0]) / (2 * stats.norm.ppf(0.975))
        floored = _floored_se(*args, ppi_se=se)
        assert (name == "ms_duet_passage") == (floored > se)  # the floor binds on this slice of its alone
        quantile = stats.t.ppf(0.975, row["df"]) if interval == "t" else stats.norm.ppf(0.975)
        assert row["se"] == pytest.approx(floored, rel=1e-9)
        assert row["high"] - row["low"] == pytest.approx(2 * quantile * floored, rel=1e-9)
        if interval == "t":  # Welch-Satterthwaite's degrees of freedom, from 9 (the slice's) up
            assert 9 <= row["df"] <= 41


def _floored_se(y, y_hat, y_unlabelled, ppi_se):
    """ppi_py's standard error with its rectifier variance at least the departure floor over n, by hand: the
    slice bunches at the bound nearer its estimate; Laplace's share of departures times their mean square."""
    n, big_n = len(y), len(y_unlabelled)
    estimate = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, y_hat, y_unlabelled))[0])
    lam = (estimate - y.mean()) / (y_unlabelled.mean() - y_hat.mean())
    imputed = (lam * y_unlabelled).var() / big_n
    centre = 1.0 if estimate >= 0.5 else 0.0
    departing = y[y != centre] - centre
    share = (len(departing) + 1) / (n + 2)
    floor = share * (1 - share) * np.mean(departing**2)
    return float(np.sqrt(imputed + max(ppi_se**2 - imputed, floor / n)))


@pytest.mark.slow
def test_the_command_prints_runs_and_a_planned_comparison_with_its_verdict(runs, sliced):
    folder, human_path, chosen = sliced
    result = invoke("estimate", "run", "slice", "data/dl19/runs", "--llm", LLAMA_70B, "--human", human_path, "--slice",
                    folder, "--compare", "bm25base_p:idst_bert_p1", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert len(document["runs"]) == 37 and document["settings"]["interval"] == "t"
    (comparison,) = document["comparisons"]
    assert comparison["level"] == pytest.approx(0.95) and comparison["kind"] == "planned"
    assert comparison["low"] > 0 and comparison["verdict"].startswith("established: candidate better")
    (favoured,) = document["favouritism"]  # the slice's: both grades' per-query values on its 10 queries
    assert favoured["runs"] == 37 and favoured["queries"] == 10 and favoured["scope"] == "on the human-graded slice"
    human_means = {row["run"]: row["human_mean"] for row in document["runs"]}
    llm_on_slice = values_by_run(runs, read_qrels(LLAMA_70B), chosen, "ndcg@10", EvaluationContract()).mean()
    for row in favoured["rows"]:
        assert row["human_mean"] == pytest.approx(human_means[row["run"]], abs=1e-12)
        assert row["gap"] == pytest.approx(llm_on_slice[row["run"]] - human_means[row["run"]], abs=1e-12)
    table = invoke("estimate", "run", "slice", "data/dl19/runs", "--llm", LLAMA_70B, "--human", human_path, "--slice",
                   folder, "--compare", "bm25base_p:idst_bert_p1", "--planned", 4, "--exploratory")
    assert "threshold 0.0125: intervals at level 0.9875" in table.output
    assert ("  verdict            exploratory (PPI++ interval at 0.9875): a lead for a planned comparison, never "
            "established") in table.output.splitlines()
    assert "Favouritism of llama-3-70b.fourprompts against human by ndcg@10 on the human-graded slice: 37 runs, " \
           "10 queries both define" in table.output


def _line_of(path, query_id):
    return next(i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if line.split()[0] == query_id)


@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(sliced, tmp_path):
    folder, human_path, chosen = sliced
    base = ["estimate", "run", "slice", "data/dl19/runs", "--slice", folder]
    outside = tmp_path / "outside.qrels"
    outside.write_text(Path("data/dl19/nist.qrels").read_text())
    first_outside = next(line.split()[0] for line in outside.read_text().splitlines() if line.split()[0] not in chosen)
    partial = tmp_path / "partial.qrels"
    partial.write_text("".join(line for line in Path(human_path).read_text().splitlines(keepends=True)
                               if line.split()[0] != chosen[0]))
    llm_partial = tmp_path / "llm.qrels"
    llm_partial.write_text("".join(line for line in Path(LLAMA_70B).read_text().splitlines(keepends=True)
                                   if line.split()[0] != "1037798"))
    tiny = tmp_path / "tiny.json"
    record = json.loads((folder / "slice.json").read_text())
    tiny.write_text(json.dumps({**record, "slice": record["slice"][:1]}))
    cases = {
        "outside": ([*base, "--human", outside, "--llm", LLAMA_70B],
                    f"{outside}:{_line_of(outside, first_outside)}: a human grade of query {first_outside}, which is "
                    "not in the slice"),
        "partial": ([*base, "--human", partial, "--llm", LLAMA_70B],
                    f"{folder}: 1 slice queries have no human grade (e.g. {chosen[0]})"),
        "llm": ([*base, "--human", human_path, "--llm", llm_partial],
                f"{llm_partial}: 1 of the set's 43 queries have no LLM grade (e.g. 1037798)"),
        "tiny": (["estimate", "run", "slice", "data/dl19/runs", "--slice", tiny, "--human", human_path, "--llm",
                  LLAMA_70B],
                 f"{tiny}: a slice of 1 queries: an interval needs at least 2"),
    }
    for name, (args, message) in cases.items():
        result = invoke(*args)
        assert result.exit_code == 2, (name, result.output)
        assert result.stderr.startswith(f"evalset: error: {message}"), (name, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_select_refuses_a_slice_of_fewer_than_2_and_an_output_onto_its_pool(pool, tmp_path):
    result = invoke("estimate", "select", "slice", pool, "--size", 1, "-o", tmp_path / "s")
    assert result.exit_code == 2 and "Invalid value for '--size': must be an integer >= 2, got 1" in result.output
    result = invoke("estimate", "select", "slice", pool, "--size", 43, "-o", tmp_path / "s")
    assert result.exit_code == 2 and "a slice of 43 queries out of 43: give fewer than all (--size;" in result.stderr
    assert not (tmp_path / "s").exists()
    result = invoke("estimate", "select", "slice", pool, "--size", 5, "-o", pool)
    assert result.exit_code == 2 and "is the input POOL_DIR" in result.output


@pytest.mark.slow
def test_on_a_set_with_an_llm_graded_part_the_set_is_the_slice_the_grades_and_the_contract(sliced, tmp_path):
    folder, human_path, chosen = sliced
    freeze = invoke("freeze", human_path, "--llm", LLAMA_70B, "--queries", "data/dl19/topics.tsv",
                    "--guideline", "guidelines/relevance-v2.md", "--name", "part", "--sets-dir", tmp_path,
                    "--plan", "bm25base_p:idst_bert_p1")
    assert freeze.exit_code == 0, freeze.output
    runs = ["data/dl19/runs/bm25base_p.run.gz", "data/dl19/runs/idst_bert_p1.run.gz"]
    on_set = json.loads(invoke("estimate", "run", "set", "--set", tmp_path / "part" / "v1", *runs, "--format",
                               "json").output)
    from_files = json.loads(invoke("estimate", "run", "slice", *runs, "--llm", LLAMA_70B, "--human", human_path,
                                   "--slice", folder,
                                   "--compare", "bm25base_p:idst_bert_p1", "--format", "json").output)
    assert on_set["slice"]["queries"] == chosen and on_set["slice"]["seed"] is None
    assert on_set["runs"] == from_files["runs"]
    assert [c["verdict"] for c in on_set["comparisons"]] == [c["verdict"] for c in from_files["comparisons"]]
    whole = invoke("freeze", "data/dl19/nist.qrels", "--llm", LLAMA_70B, "--queries", "data/dl19/topics.tsv",
                   "--guideline", "guidelines/relevance-v2.md", "--name", "whole", "--sets-dir", tmp_path)
    assert whole.exit_code == 0
    refused = invoke("estimate", "run", "set", "--set", tmp_path / "whole" / "v1", *runs)
    assert refused.exit_code == 2 and "the set has no LLM-graded part on this split" in refused.stderr
    mixed = invoke("estimate", "run", "set", "--set", tmp_path / "part" / "v1", *runs, "--human", human_path)
    assert mixed.exit_code == 2 and "No such option '--human'" in mixed.output  # the set's labels are the grades


def _frozen_part(human_path, sets_dir):
    """A set of the slice's human grades and Llama-3-70B's labels of every query (an LLM-graded part)."""
    freeze = invoke("freeze", human_path, "--llm", LLAMA_70B, "--queries", "data/dl19/topics.tsv",
                    "--guideline", "guidelines/relevance-v2.md", "--name", "part", "--sets-dir", sets_dir)
    assert freeze.exit_code == 0, freeze.output
    return sets_dir / "part" / "v1"


@pytest.mark.slow
def test_a_set_records_its_judge_and_refuses_another_judges_labels_unless_told(sliced, tmp_path):
    folder, human_path, _ = sliced
    part = _frozen_part(human_path, tmp_path)
    manifest = json.loads((part / "manifest.json").read_text())
    assert manifest["judges"] == [{"annotator": "llama-3-70b.fourprompts", "source": "llama-3-70b.fourprompts.qrels"}]
    runs = ["data/dl19/runs/bm25base_p.run.gz", "data/dl19/runs/idst_bert_p1.run.gz"]
    same = json.loads(invoke("estimate", "run", "set", "--set", part, *runs, "--llm", LLAMA_70B, "--format",
                             "json").stdout)
    assert same["runs"] == json.loads(invoke("estimate", "run", "set", "--set", part, *runs, "--format",
                                             "json").stdout)["runs"]
    other = "data/dl19/llm_labels/llama-3-8b.baseline.qrels"
    refused = invoke("estimate", "run", "set", "--set", part, *runs, "--llm", other)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"evalset: error: {other}: these LLM labels come from another judge than the set's calibration: "
        "llama-3-8b.baseline, the set records llama-3-70b.fourprompts (annotator: llama-3-70b.fourprompts -> "
        "llama-3-8b.baseline); compare them first (evalset judge recheck) and give --other-judge to estimate "
        "with them\n")
    told = json.loads(invoke("estimate", "run", "set", "--set", part, *runs, "--llm", other, "--other-judge",
                             "--format", "json").stdout)
    from_files = json.loads(invoke("estimate", "run", "slice", *runs, "--llm", other, "--human", human_path,
                                   "--slice", folder, "--format", "json").stdout)
    assert told["runs"] == from_files["runs"] != same["runs"]
    assert any(note.startswith("JUDGE CHANGED: the set's calibration judge is llama-3-70b.fourprompts, these LLM "
                               "labels are llama-3-8b.baseline") for note in told["notes"])
    alone = invoke("estimate", "run", "slice", *runs, "--llm", other, "--human", human_path, "--slice", folder,
                   "--other-judge")
    assert alone.exit_code == 2 and "No such option '--other-judge'" in alone.stderr  # a set's option


@pytest.mark.slow
def test_estimate_on_a_set_takes_contract_options_under_the_override_rule_of_score(sliced, tmp_path):
    folder, human_path, _ = sliced
    part = _frozen_part(human_path, tmp_path)
    runs = ["data/dl19/runs/bm25base_p.run.gz", "data/dl19/runs/idst_bert_p1.run.gz"]
    refused = invoke("estimate", "run", "set", "--set", part, *runs, "-m", "p@10", "-c", "rel_level=2")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == ("evalset: error: these options contradict the set's contract: rel_level=2 (set: 1); "
                              "add --override-contract to score anyway\n")
    same = invoke("estimate", "run", "set", "--set", part, *runs, "-m", "p@10", "-c", "rel_level=1", "--format", "json")
    assert same.exit_code == 0 and not any("OVERRIDDEN" in note for note in json.loads(same.stdout)["notes"])
    overridden = json.loads(invoke("estimate", "run", "set", "--set", part, *runs, "-m", "p@10", "-c", "rel_level=2",
                                   "--override-contract", "--format", "json").stdout)
    from_files = json.loads(invoke("estimate", "run", "slice", *runs, "--llm", LLAMA_70B, "--human", human_path,
                                   "--slice", folder,
                                   "-m", "p@10", "-c", "rel_level=2", "--format", "json").stdout)
    assert overridden["settings"]["contract"]["rel_level"] == 2
    assert overridden["runs"] == from_files["runs"]
    assert "CONTRACT OVERRIDDEN: rel_level=2 (set: 1)" in overridden["notes"]
    assert overridden["runs"] != json.loads(same.stdout)["runs"]  # the option changed the figures


@pytest.mark.slow
def test_rr_near_the_ceiling_keeps_its_intervals_in_range_and_never_a_point(runs, sliced):
    folder, human_path, _ = sliced
    result = estimate_runs(runs, read_grades([human_path], "human"), read_grades([LLAMA_70B], "llm"),
                           read_slice(folder), metrics=["rr"], pairs=[("bm25base_p", "idst_bert_p1")])
    for table, lowest in ((result.runs, 0.0), (result.comparisons, -1.0)):
        for prefix in ("", "human_"):
            low, high = table[f"{prefix}low"], table[f"{prefix}high"]
            assert (low >= lowest).all() and (high <= 1).all()
            assert (low < high).all()  # never a point, even when every slice query ties
    assert any("intervals clipped to the measure's range [0, 1]" in note for note in result.caveats)
