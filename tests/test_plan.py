"""evalset plan: queries needed, smallest detectable difference, simulation, judging budget; known answers."""

import gzip
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import optimize, stats

from evalset.cli import main
from evalset.errors import InputError
from evalset.planning import budget, plan
from evalset.pooling import PoolSpec, build_from_spec, write_pool
from evalset.stats import power

REPO = Path(__file__).resolve().parents[1]
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def t_test_power_by_hand(sd, delta, n, alpha):
    """Two-sided one-sample t-test power from the noncentral t distribution (scipy, not statsmodels)."""
    df, noncentrality = n - 1, delta * math.sqrt(n) / sd
    critical = stats.t.ppf(1 - alpha / 2, df)
    lower_tail = stats.nct.cdf(-critical, df, noncentrality)  # scipy returns NaN where it underflows
    return stats.nct.sf(critical, df, noncentrality) + (0.0 if math.isnan(lower_tail) else lower_tail)


def queries_needed_by_hand(sd, delta, power, alpha):
    n = 2
    while t_test_power_by_hand(sd, delta, n, alpha) < power:
        n += 1
    return n


def detectable_by_hand(sd, n, power, alpha):
    return optimize.brentq(lambda d: t_test_power_by_hand(sd, d, n, alpha) - power, 1e-9 * sd, 5 * sd,
                           xtol=1e-12)


# ------------------------------------------------------------------------------------------------ the formula
def test_the_solver_is_close_to_the_normal_approximation_rule_of_thumb():
    sd, delta = 1.0, 0.25
    whole, solved = power.queries_needed(sd, delta, power=0.8, alpha=0.05)
    # normal approximation: N = ((z_0.975 + z_0.8) sd / delta)^2 = 7.85 (sd / delta)^2, i.e. about (2.8 sd / delta)^2
    rule = ((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * sd / delta) ** 2
    assert rule == pytest.approx(125.6, abs=0.1)
    assert solved == pytest.approx(rule, rel=0.03)  # the t-test needs a query or two more than the normal rule
    assert solved > rule
    assert whole == 128 == queries_needed_by_hand(sd, delta, 0.8, 0.05)
    # (2 sd / delta)^2 = 64 queries is the rule for 50% power, not 80%: z_0.975 ~ 2 and z_0.5 = 0
    assert power.power_at(sd, delta, round((2 * sd / delta) ** 2), 0.05) == pytest.approx(0.5, abs=0.03)


@pytest.mark.parametrize(("sd", "delta", "alpha"), [(0.048, 0.0085, 0.05), (0.2, 0.05, 0.05 / 3), (1.0, 0.9, 0.01)])
def test_queries_needed_and_detectable_difference_match_the_noncentral_t(sd, delta, alpha):
    whole, _ = power.queries_needed(sd, delta, power=0.8, alpha=alpha)
    assert whole == queries_needed_by_hand(sd, delta, 0.8, alpha)
    assert power.detectable_difference(sd, 43, power=0.8, alpha=alpha) == pytest.approx(
        detectable_by_hand(sd, 43, 0.8, alpha), rel=1e-5)


def test_an_effect_of_seven_sds_is_counted_where_statsmodels_gives_nan():
    """statsmodels' power is NaN at 2 and 3 queries for this effect (its lower tail underflows) and its solver finds
    no root; `plan --delta 1.5` on nDCG used to stop there with a traceback."""
    assert power.power_at(0.2068, 1.5, 3, 0.05) == pytest.approx(t_test_power_by_hand(0.2068, 1.5, 3, 0.05))
    assert power.queries_needed(0.2068, 1.5)[0] == queries_needed_by_hand(0.2068, 1.5, 0.8, 0.05) == 3


def test_edge_cases_of_the_formula():
    assert power.queries_needed(0.1, 10.0) == (2, 2.0)          # a huge effect still needs two queries
    assert power.queries_needed(0.0, 0.01) == (2, 2.0)          # no spread at all
    assert power.queries_needed(0.1, 0.0) == (math.inf, math.inf)
    assert power.detectable_difference(0.0, 43) == 0.0
    with pytest.raises(InputError, match="power"):
        power.queries_needed(1.0, 0.1, power=1.5)


# --------------------------------------------------------------------------------------------- the simulation
def standardised(values):
    return (values - values.mean()) / values.std(ddof=1)


def test_simulation_agrees_with_the_formula_on_normal_differences():
    pilot = standardised(np.random.default_rng(7).normal(size=400))  # sd 1 exactly
    delta = 0.3
    needed, _ = power.queries_needed(1.0, delta, 0.8, 0.05)
    for n in (20, needed // 2, needed):
        simulated = power.simulated_power(pilot, delta, n, 0.05, resamples=400)
        formula = power.power_at(1.0, delta, n, 0.05)
        assert abs(simulated.power - formula) < 3 * simulated.se + 0.01, (n, simulated, formula)


def test_simulation_departs_from_the_formula_on_heavy_tailed_differences():
    # 10% of queries with six times the spread: the sd is inflated by a few extreme queries, which the formula
    # takes as the spread of every query; the permutation test conditions on the observed magnitudes and sees
    # the tight bulk, so at small N (few extreme queries drawn) it finds the difference far more often.
    rng = np.random.default_rng(7)
    pilot = standardised(rng.normal(size=400) * np.where(rng.random(400) < 0.1, 6.0, 1.0))
    assert stats.kurtosis(pilot) > 5
    simulated = power.simulated_power(pilot, 0.3, 20, 0.05, resamples=400)
    formula = power.power_at(1.0, 0.3, 20, 0.05)
    assert simulated.power > formula + 6 * simulated.se


def test_the_simulation_is_seeded_and_independent_of_the_grid():
    pilot = standardised(np.random.default_rng(1).normal(size=50))
    first = power.simulated_power(pilot, 0.4, 30, 0.05, resamples=100, seed=5)
    assert first == power.simulated_power(pilot, 0.4, 30, 0.05, resamples=100, seed=5)
    assert first != power.simulated_power(pilot, 0.4, 30, 0.05, resamples=100, seed=6)


def test_bonferroni_threshold_counts_the_planned_comparisons():
    rng = np.random.default_rng(2)
    frames = [pd.DataFrame({"baseline": "a", "candidate": c, "query_id": [f"q{i}" for i in range(30)],
                            "stratum": "all", "difference": rng.normal(0.05, 0.1, 30)}) for c in ("b", "c", "d")]
    result = plan.plan_power(pd.concat(frames), metric="ndcg@10", delta=0.05, sizes=[30], resamples=20)
    assert result.threshold == pytest.approx(0.05 / 3)
    for row in result.rows.itertuples():
        assert row.queries_needed == queries_needed_by_hand(row.sd, 0.05, 0.8, 0.05 / 3)


def test_an_undefined_number_prints_as_undef_and_an_infinite_need_as_never():
    differences = pd.DataFrame({"baseline": "a", "candidate": ["b", "c", "c"], "query_id": ["q1", "q1", "q2"],
                                "stratum": "all", "difference": [0.1, 0.1, -0.1]})
    lines = plan.plan_power(differences, metric="ndcg@10", sizes=[5], resamples=10).to_text().split("\n")
    one_query = next(line for line in lines if line.startswith("b vs a")).split()
    assert one_query == ["b", "vs", "a", "all", "1", "+0.1000", "undef", "0.1000", "undef", "undef", "/", "undef",
                         "undef", "undef", "undef"]  # one query: no sd, so nothing that needs it
    no_difference = next(line for line in lines if line.startswith("c vs a")).split()
    assert no_difference[5:9] == ["+0.0000", "0.1414", "0.0000", "never"]


# ------------------------------------------------------------------------------------------- DL19 by hand
def ndcg_at_10_by_hand(run_path, qrels_path):
    """nDCG@10 per query, written out: linear gain, 1/log2(rank + 1), trec ties (score desc, doc id desc)."""
    grades = defaultdict(dict)
    for line in Path(qrels_path).read_text().splitlines():
        query, _, doc, grade = line.split()
        grades[query][doc] = int(grade)
    ranked = defaultdict(list)
    with gzip.open(run_path, "rt") as handle:
        for line in handle:
            query, _, doc, _, score, _ = line.split()
            ranked[query].append((float(score), doc))
    values = {}
    for query, judged in grades.items():
        top = sorted(ranked.get(query, []), reverse=True)[:10]
        dcg = sum(judged.get(doc, 0) / math.log2(rank + 2) for rank, (_, doc) in enumerate(top))
        ideal = sorted(judged.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal))
        values[query] = dcg / idcg
    return values


def test_dl19_bm25_base_vs_tuned_equals_a_computation_by_hand(shared_data):
    root = shared_data / "dl19"
    runs = root / "runs" / "official_top100"
    base = ndcg_at_10_by_hand(runs / "bm25base_p.run.gz", root / "qrels.txt")
    tuned = ndcg_at_10_by_hand(runs / "bm25tuned_p.run.gz", root / "qrels.txt")
    nist = json.loads((root / "nist_summaries.json").read_text())
    assert round(statistics.fmean(base.values()), 4) == nist["bm25base_p"]["trec_eval"]["ndcg_cut_10"] == 0.5058
    assert round(statistics.fmean(tuned.values()), 4) == nist["bm25tuned_p"]["trec_eval"]["ndcg_cut_10"] == 0.4973
    differences = [tuned[q] - base[q] for q in base]
    sd, delta = statistics.stdev(differences), abs(statistics.fmean(differences))

    result = invoke("plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz",
                    runs / "bm25tuned_p.run.gz",
                    "--sizes", "43", "--resamples", "100", "--format", "json")
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)["comparisons"][0]
    assert row["n"] == len(differences) == 43
    assert row["sd"] == pytest.approx(sd, abs=1e-12)
    assert row["delta"] == pytest.approx(delta, abs=1e-12)
    assert row["queries_needed"] == queries_needed_by_hand(sd, delta, 0.8, 0.05)
    assert row["detectable_at_43"] == pytest.approx(detectable_by_hand(sd, 43, 0.8, 0.05), rel=1e-5)
    # the figures reported in docs/plan.md
    assert round(sd, 4) == 0.0480 and round(delta, 4) == 0.0085
    assert row["queries_needed"] == 253 and round(row["detectable_at_43"], 4) == 0.0210

    table = invoke("plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz",
                   runs / "bm25tuned_p.run.gz",
                   "--sizes", "43", "--resamples", "100")
    assert "bm25tuned_p vs bm25base_p  all      43       -0.0085    0.0480  0.0085  253" in table.stdout
    assert "detectable at 43" in table.stdout and "0.0210" in table.stdout


# ------------------------------------------------------------------------------------------- strata, frozen set
@pytest.mark.slow
def test_a_stratified_frozen_set_plans_its_planned_comparisons_per_stratum(tmp_path, shared_data):
    root = shared_data / "dl19"
    topics = pd.read_csv(root / "topics.tsv", sep="\t", header=None, names=["query_id", "query"], dtype=str)
    strata = ["head" if i % 3 else "tail" for i in range(len(topics))]
    queries = topics.assign(stratum=strata, stratum_share=[0.8 if s == "head" else 0.2 for s in strata])
    queries.to_csv(tmp_path / "queries.tsv", sep="\t", index=False)
    runs = root / "runs" / "official_top100"
    frozen = invoke("freeze", root / "qrels.txt", "--queries", tmp_path / "queries.tsv", "--guideline", GUIDELINE,
                    "--name", "dl19", "--sets-dir", tmp_path / "sets", "--plan", "bm25base_p:bm25tuned_p",
                    "--plan", "bm25base_p:p_bert")
    assert frozen.exit_code == 0, frozen.output
    result = invoke("plan", "power", "--set", tmp_path / "sets" / "dl19" / "v1", runs / "bm25base_p.run.gz",
                    runs / "bm25tuned_p.run.gz", runs / "p_bert.run.gz", "--delta", "0.02", "--sizes", "43",
                    "--resamples", "50", "--format", "json")
    assert result.exit_code == 0, result.output
    pilot = json.loads(result.stdout)
    assert pilot["planned"] == 2 and pilot["threshold"] == pytest.approx(0.025)
    base = ndcg_at_10_by_hand(runs / "bm25base_p.run.gz", root / "qrels.txt")
    tuned = ndcg_at_10_by_hand(runs / "bm25tuned_p.run.gz", root / "qrels.txt")
    rows = {(r["candidate"], r["stratum"]): r for r in pilot["comparisons"]}
    assert set(rows) == {(c, s) for c in ("bm25tuned_p", "p_bert") for s in ("all", "head", "tail")}
    for stratum in ("head", "tail"):
        ids = queries.loc[queries["stratum"] == stratum, "query_id"]
        differences = [tuned[q] - base[q] for q in ids]
        row = rows[("bm25tuned_p", stratum)]
        assert row["n"] == len(ids)
        assert row["sd"] == pytest.approx(statistics.stdev(differences), abs=1e-12)
        assert row["queries_needed"] == queries_needed_by_hand(row["sd"], 0.02, 0.8, 0.025)


def test_a_set_whose_planned_comparisons_name_runs_not_given_plans_the_others_and_names_the_rest(tmp_path,
                                                                                                   shared_data):
    # issue 74: plan --help's own example failed on the demo's set (bm25base_p:idst_bert_p1 planned, not given)
    root = shared_data / "dl19"
    runs = root / "runs" / "official_top100"
    assert invoke("freeze", root / "qrels.txt", "--queries", root / "topics.tsv", "--guideline", GUIDELINE, "--name",
                  "dl19", "--sets-dir", tmp_path / "sets", "--plan", "bm25base_p:idst_bert_p1", "--plan",
                  "bm25base_p:bm25tuned_p").exit_code == 0
    result = invoke("plan", "power", "--set", tmp_path / "sets" / "dl19" / "v1", runs / "bm25base_p.run.gz",
                    runs / "bm25tuned_p.run.gz", "--resamples", "20", "--sizes", "43", "--format", "json")
    assert result.exit_code == 0, result.output
    pilot = json.loads(result.stdout)
    assert {r["candidate"] for r in pilot["comparisons"]} == {"bm25tuned_p"} and pilot["planned"] == 2
    assert ("note: the set's planned comparison bm25base_p:idst_bert_p1 is not in this plan: run idst_bert_p1 not "
            "given") in result.stderr
    none = invoke("plan", "power", "--set", tmp_path / "sets" / "dl19" / "v1", runs / "p_bert.run.gz",
                  runs / "runid3.run.gz")
    assert none.exit_code == 2 and "none of the set's planned comparisons" in none.output


def test_a_comparison_naming_a_run_not_given_is_refused(shared_data):
    root = shared_data / "dl19"
    runs = root / "runs" / "official_top100"
    result = invoke("plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz", runs / "p_bert.run.gz",
                    "--compare", "bm25base_p:nope")
    assert result.exit_code == 2 and "names run 'nope', which was not given" in result.output


def test_a_pilot_run_lacking_judged_queries_is_refused_unless_missing_is_chosen(tmp_path, shared_data):
    root = shared_data / "dl19"
    runs = root / "runs" / "official_top100"
    lacked = {"19335", "47923"}
    lacking = tmp_path / "bm25tuned_p.run.gz"
    with gzip.open(runs / "bm25tuned_p.run.gz", "rt") as source, gzip.open(lacking, "wt") as target:
        target.writelines(line for line in source if line.split()[0] not in lacked)
    args = ["plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz", lacking, "--sizes", "43",
            "--resamples", "20"]
    refused = invoke(*args)
    assert refused.exit_code == 2
    assert refused.output == (
        f"evalset: error: {lacking}: run bm25tuned_p lacks 2 of the 43 judged queries: give -c missing=zero (they "
        "score 0, as a system that returned nothing) or -c missing=skip (they are left out of the comparison)\n")
    base = ndcg_at_10_by_hand(runs / "bm25base_p.run.gz", root / "qrels.txt")
    tuned = ndcg_at_10_by_hand(lacking, root / "qrels.txt")  # a query the run lacks: 0
    for missing, kept, said in (("zero", list(base), "scored 0 (-c missing=zero)"),
                                ("skip", [q for q in base if q not in lacked],
                                 "left out of its comparisons (-c missing=skip)")):
        result = invoke(*args, "-c", f"missing={missing}", "--format", "json")
        assert result.exit_code == 0, result.output
        pilot = json.loads(result.stdout)
        row = pilot["comparisons"][0]
        differences = [tuned[q] - base[q] for q in kept]
        assert (row["n"], row["undefined"]) == (len(kept), 0)
        assert row["mean_difference"] == pytest.approx(statistics.fmean(differences), abs=1e-12)
        assert row["sd"] == pytest.approx(statistics.stdev(differences), abs=1e-12)
        note = f"note: run bm25tuned_p lacks 2 of the 43 judged queries: {said}"
        assert pilot["notes"] == [note] and note in result.stderr
    assert len(kept) == 41


# ------------------------------------------------------------------------------------------------- the budget
def test_the_budget_of_the_dl19_37_run_pool_equals_the_pool_sizes(shared_data):
    root = shared_data / "dl19"
    result = invoke("plan", "cost", root / "runs" / "official_top100", "-k", "10", "-k", "20",
                    "--seconds-per-judgment", "30", "--annotators", "3", "--overlap", "2", "--n-queries", "100",
                    "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    pools = {p["depth"]: p for p in document["pools"]}
    assert pools[10]["pairs"] == 2495 and pools[20]["pairs"] == 4926
    assert pools[10]["systems"] == 37 and pools[10]["queries"] == 43
    rows = {(r["depth"], r["queries"]): r for r in document["rows"]}
    assert rows[(10, 43)]["exact"] and rows[(10, 43)]["pairs"] == 2495
    assert rows[(10, 43)]["judgments"] == 2 * 2495
    assert rows[(10, 43)]["annotator_hours"] == pytest.approx(2495 * 2 * 30 / 3600)
    assert rows[(10, 43)]["hours_per_annotator"] == pytest.approx(2495 * 2 * 30 / 3600 / 3)
    assert not rows[(20, 100)]["exact"] and rows[(20, 100)]["pairs"] == pytest.approx(4926 / 43 * 100)


@pytest.mark.slow
def test_llm_cost_from_a_pool_folder_counts_the_tasks_tokens(tmp_path, shared_data):
    root = shared_data / "dl19"
    spec = PoolSpec(runs=(str(root / "runs" / "official_top100"),), depth=10, queries=str(root / "topics.tsv"),
                    corpus=str(root / "passages.jsonl.gz"), output=str(tmp_path / "pool"))
    write_pool(build_from_spec(spec), spec.output)
    tasks = [json.loads(line) for line in (tmp_path / "pool" / "tasks.jsonl").read_text().splitlines()]
    by_hand = sum(math.ceil(len(t["query"] + "\n" + t["text"]) / 4) for t in tasks) / len(tasks) + 300

    result = invoke("plan", "cost", "--pool", tmp_path / "pool", "--price-in", "2.5", "--price-out", "10",
                    "--prompt-tokens", "300", "--output-tokens", "20", "--tokenizer", "chars", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["pools"][0]["pairs"] == 2495 and document["pools"][0]["tasks_with_text"] == 2494
    assert document["pools"][0]["tokens_per_task"] == pytest.approx(by_hand)
    row = document["rows"][0]
    assert row["llm_cost"] == pytest.approx((2495 * by_hand * 2.5 + 2495 * 20 * 10) / 1e6)


def test_a_slices_pool_folder_is_costed_from_its_pairs_and_its_source_pools_depth(tmp_path, shared_data):
    """A slice's pool.json records no pairs per query nor depth: `plan --pool SLICE` was a KeyError traceback (now
    `plan cost --pool SLICE`)."""
    root = shared_data / "dl19"
    runs = [root / "runs" / "official_top100" / f"{name}.run.gz" for name in ("bm25base_p", "idst_bert_p1")]
    assert invoke("pool", *runs, "-k", "10", "-o", tmp_path / "pool").exit_code == 0
    assert invoke("estimate", "select", "slice", tmp_path / "pool", "--size", "5", "-o",
                  tmp_path / "slice").exit_code == 0
    pairs = pd.read_csv(tmp_path / "slice" / "pool.tsv", sep="\t", dtype=str)
    result = invoke("plan", "cost", "--pool", tmp_path / "slice", "--format", "json")
    assert result.exit_code == 0, result.output
    pool = json.loads(result.stdout)["pools"][0]
    assert (pool["depth"], pool["queries"], pool["pairs"]) == (10, 5, len(pairs)) and pool["systems"] == 2


def test_budget_settings_are_checked():
    size = budget.PoolSize(10, "runs", 2, pd.Series([3, 5], index=["a", "b"]))
    with pytest.raises(InputError, match="overlap"):
        budget.judging_budget([size], overlap=3, annotators=2)
    assert budget.count_tokens(["abcde", ""], "chars")[0].tolist() == [2, 0]


@pytest.mark.slow
def test_the_plot_is_a_png(tmp_path, shared_data):
    root = shared_data / "dl19"
    runs = root / "runs" / "official_top100"
    result = invoke("plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz",
                    runs / "bm25tuned_p.run.gz",
                    "--sizes", "20,43,100", "--resamples", "50", "--plot", tmp_path / "power.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "power.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_same_inputs_give_byte_identical_json(shared_data):
    root = shared_data / "dl19"
    runs = root / "runs" / "official_top100"
    args = ("plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz", runs / "bm25tuned_p.run.gz",
            "--sizes", "20,43", "--resamples", "30", "--format", "json")
    first, second = invoke(*args), invoke(*args)
    assert first.exit_code == 0, first.output
    assert first.stdout == second.stdout
    cost = ("plan", "cost", runs / "bm25base_p.run.gz", runs / "bm25tuned_p.run.gz", "-k", "10", "--format", "json")
    assert invoke(*cost).stdout == invoke(*cost).stdout
    assert json.loads(invoke(*cost).stdout)["pools"][0]["systems"] == 2


def test_bad_plan_requests_are_refused_with_one_line(tmp_path, shared_data):
    root = shared_data / "dl19"
    runs = root / "runs" / "official_top100"
    one_run = invoke("plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz")
    assert one_run.exit_code == 2 and "nothing to compare" in one_run.output
    (tmp_path / "topics.tsv").write_text("nope\tno such query\n")
    unknown = invoke("plan", "cost", runs / "bm25base_p.run.gz", "-k", "10",
                     "--queries", tmp_path / "topics.tsv")
    assert unknown.exit_code == 2 and "in no run: nope" in unknown.output
    negative = invoke("plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz",
                      runs / "p_bert.run.gz",
                      "--delta", "-0.01")
    assert negative.exit_code == 2 and "Invalid value for '--delta': must be a number > 0, got -0.01" in negative.output


def test_the_old_plan_is_refused_naming_its_two_commands(shared_data):
    root = shared_data / "dl19"
    for args in (("--qrels", root / "qrels.txt", root / "runs" / "official_top100"), (root / "qrels.txt",)):
        result = invoke("plan", *args)
        assert result.exit_code == 2
        assert result.output.startswith("evalset: error: plan is now two commands: `evalset plan power RUNS...")
        assert len(result.output.splitlines()) == 1


def test_the_power_plan_names_the_cost_command_of_the_queries_needed(shared_data):
    root = shared_data / "dl19"
    runs = root / "runs" / "official_top100"
    result = invoke("plan", "power", "--qrels", root / "qrels.txt", runs / "bm25base_p.run.gz",
                    runs / "bm25tuned_p.run.gz", "--sizes", "43", "--resamples", "20")
    assert result.output.splitlines()[-1] == ("what judging them costs: evalset plan cost --pool POOL (or RUNS -k K) "
                                              "--n-queries 253")
