"""Leave-one-run-out and leave-one-group-out (evalset.reusability): a worked example by hand, and every run and
group of TREC DL 2019 (37 runs, depth 10, groups by participant) against an independent computation: a
plain-Python pool read from the run files, the qrels filtered by it, and pytrec_eval's nDCG@10."""

import gzip
import json
import math
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from scipy import stats

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.io.groups import read_groups
from evalset.io.runframe import run_from_frame
from evalset.io.trec import read_runs
from evalset.pooling.contributions import pool_of_runs
from evalset.reusability import (
    analyse_reusability,
    unique_contributions,
    verdict,
)
from tests.conftest import REPO

LOG3 = math.log2(3)


# ------------------------------------------------------------------------------------ a worked example by hand
def tiny_qrels() -> pd.DataFrame:
    # d5 was judged from outside the depth-2 pool (it stays in every reduced qrels)
    grades = {"d1": 2, "d2": 2, "d3": 0, "d4": 3, "d5": 1}
    return pd.DataFrame({"query_id": "q1", "doc_id": list(grades), "grade": list(grades.values())})


def tiny_run(*docs: str) -> pd.DataFrame:
    return run_from_frame(pd.DataFrame({"query_id": "q1", "doc_id": list(docs),
                                        "score": [float(len(docs) - i) for i in range(len(docs))]}))


TINY_RUNS = {"A": tiny_run("d1", "d2", "d3"), "B": tiny_run("d3", "d1", "d4"), "C": tiny_run("d4", "d3", "d1")}


@pytest.fixture(scope="module")
def tiny():
    scoring = Evaluation(EvaluationContract(), tiny_qrels(), source="tiny")
    groups = pd.Series({"A": "G1", "B": "G1", "C": "G2"}, name="group")
    return analyse_reusability(scoring, TINY_RUNS, depth=2, metric="ndcg@2", groups=groups)


def test_the_unique_contributions_at_depth_2_by_hand():
    # top 2: A {d1, d2}, B {d3, d1}, C {d4, d3}: only A has d2, only C has d4; B shares both of its documents
    top = pool_of_runs(TINY_RUNS, tiny_qrels(), 2).top
    assert unique_contributions(top)[["owner", "doc_id"]].values.tolist() == [["A", "d2"], ["C", "d4"]]
    # groups G1 = {A, B} (top 2: d1, d2, d3) and G2 = {C} (d3, d4): d3 is shared
    by_group = unique_contributions(top, {"A": "G1", "B": "G1", "C": "G2"})
    assert by_group[["owner", "doc_id"]].values.tolist() == [["G1", "d1"], ["G1", "d2"], ["G2", "d4"]]


def test_the_pool_under_expected_ties_is_the_pool_under_trec():
    # d1 and d2 tie, which trec breaks by doc id descending (d2 first); before strict_ties the pool of
    # ties="expected" kept them in line order and pooled d1
    near_tie = run_from_frame(pd.DataFrame({"query_id": "q1", "doc_id": ["d1", "d2"], "score": [1.0, 1.0]}))
    runs = {"A": near_tie, "B": tiny_run("d3", "d4")}
    expected, trec = (pool_of_runs(runs, tiny_qrels(), 1, ties).top for ties in ("expected", "trec"))
    assert expected["doc_id"].tolist() == ["d2", "d3"]
    pd.testing.assert_frame_equal(expected, trec)


def test_leave_one_run_out_by_hand(tiny):
    rows = tiny.runs.rows.set_index("run")
    ideal = 3 + 2 / LOG3  # grades 3, 2 at ranks 1, 2 (d4, then d1 or d2)
    # full: A = (2 + 2/log2 3)/ideal, B = (0 + 2/log2 3)/ideal, C = 3/ideal
    assert rows.loc["A", "full"] == pytest.approx((2 + 2 / LOG3) / ideal)
    assert rows.loc["B", "full"] == pytest.approx((2 / LOG3) / ideal)
    assert rows.loc["C", "full"] == pytest.approx(3 / ideal)
    # A without d2: its d2 is unjudged, the ideal keeps 3, 2 (d4, d1) -> 2/ideal; B loses nothing
    assert rows.loc["A", "reduced"] == pytest.approx(2 / ideal)
    assert rows.loc["A", "drop"] == pytest.approx((2 / LOG3) / ideal)
    assert rows.loc["A", "relative_drop"] == pytest.approx((2 / LOG3) / (2 + 2 / LOG3))
    assert rows.loc["B", "drop"] == 0
    # C without d4: nothing relevant left in its top 2
    assert rows.loc["C", "reduced"] == 0 and rows.loc["C", "drop"] == pytest.approx(3 / ideal)
    assert rows["rank_full"].to_dict() == {"A": 1, "C": 2, "B": 3}
    # A at 0.469 falls below C's 0.704; C at 0 falls below B's 0.296
    assert rows["rank_reduced"].to_dict() == {"A": 2, "C": 3, "B": 3}
    assert rows["judged_reduced"].to_dict() == {"A": 0.5, "C": 0.5, "B": 1.0}
    counts = tiny.runs.owners.set_index("owner")
    assert counts[["unique", "unique_judged", "unique_relevant", "removed"]].values.tolist() == [
        [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]]
    # full A > C > B, each on its own reduced qrels A > B > C: one pair of three swapped
    assert tiny.runs.kendall_tau == pytest.approx(1 / 3)
    # tau_AP, estimate order A, B, C: B has A above it (right), C has A (right) and B (wrong): 2/2 (1 + 1/2) - 1
    assert tiny.runs.tau_ap == pytest.approx(0.5)
    assert tiny.runs.largest["run"] == "C" and tiny.runs.mean_drop == pytest.approx((2 / LOG3 + 3) / ideal / 3)
    assert tiny.runs.level == "biased"


def test_leave_one_group_out_by_hand(tiny):
    rows = tiny.groups.rows.set_index("run")
    # G1 = {A, B} without d1, d2: left d3 0, d4 3, d5 1; A and B find nothing relevant
    assert rows.loc["A", "reduced"] == 0 and rows.loc["B", "reduced"] == 0
    assert rows.loc["C", "reduced"] == 0  # G2 = {C} without d4, as when C alone is left out
    # A and B scored 0 together, C keeps 0.704: C first, A and B share the second place
    assert rows["rank_reduced"].to_dict() == {"A": 2, "C": 3, "B": 2}
    assert rows.loc["B", "judged_reduced"] == 0.5  # d3 judged, d1 removed
    counts = tiny.groups.owners.set_index("owner")
    assert counts.loc["G1", ["runs", "unique", "unique_judged", "unique_relevant", "removed"]].tolist() == [
        2, 2, 2, 2, 2]
    assert counts.loc["G2", ["runs", "unique_relevant"]].tolist() == [1, 1]


def test_the_printed_and_json_forms_carry_the_same_figures(tiny):
    text = tiny.to_text()
    assert "ndcg@2, pool depth 2: 3 runs, 2 groups, 1 judged queries, 5 judgments (tiny)" in text
    assert "rank changes (2): A 1->2, C 2->3" in text
    assert "Kendall's tau 0.333, tau_AP 0.500" in text
    document = tiny.to_dict()
    assert document["leave_one_run_out"]["summary"]["largest_drop"]["run"] == "C"
    assert [g["owner"] for g in document["leave_one_group_out"]["groups"]] == ["G1", "G2"]


def test_the_verdict_thresholds():
    assert verdict("run", "ndcg@10", 0.01, 0.02, 0.005, 0.95)[0] == "holds"
    assert verdict("run", "ndcg@10", 0.01, 0.07, 0.005, 0.95)[0] == "care"
    assert verdict("run", "ndcg@10", 0.01, 0.02, 0.005, 0.85)[0] == "care"
    assert verdict("run", "ndcg@10", 0.01, 0.11, 0.005, 0.95)[0] == "biased"
    assert verdict("group", "ndcg@10", 0.01, 0.02, 0.005, 0.79)[1].startswith(
        "a new group's runs (a new team) like these lose at most 0.0100 ndcg@10 (2.0%; mean 0.0050); rankings move "
        "(tau 0.790)")


def test_bad_pools_are_refused():
    with pytest.raises(InputError, match="at least 2; got 1"):
        analyse_reusability(Evaluation(EvaluationContract(), tiny_qrels()), {"A": TINY_RUNS["A"]}, 2)
    with pytest.raises(InputError, match=r"depth 4 is larger than every ranking of 3 run\(s\).*A \(at most 3\)"):
        pool_of_runs(TINY_RUNS, tiny_qrels(), 4)
    outsider = {**TINY_RUNS, "E": tiny_run("d8", "d9")}
    with pytest.raises(InputError, match=r"1 run\(s\) were not among the runs that made the pool at depth 2: E "
                                         r"\(100.0% of its top 2 unjudged\)"):
        pool_of_runs(outsider, tiny_qrels(), 2)
    two_queries = pd.concat([tiny_qrels(), tiny_qrels().assign(query_id="q2")], ignore_index=True)
    on_both = {name: pd.concat([run, run.assign(query_id="q2")], ignore_index=True) for name, run in TINY_RUNS.items()}
    short = pool_of_runs({**on_both, "S": pd.concat([tiny_run("d1"), on_both["A"].iloc[3:]])}, two_queries, 2)
    assert short.notes == ["note: 1 run(s) have fewer than 2 documents on some of the 2 judged queries: S (1 query); "
                           "they contribute what they have"]
    scoring = Evaluation(EvaluationContract(), tiny_qrels())
    with pytest.raises(InputError, match="group file names unknown runs Z"):
        analyse_reusability(scoring, TINY_RUNS, 2, groups=pd.Series({"A": "G", "B": "G", "C": "H", "Z": "H"}))
    with pytest.raises(InputError, match=r"1 run\(s\) given have no group in the group file: C"):
        analyse_reusability(scoring, TINY_RUNS, 2, groups=pd.Series({"A": "G", "B": "G"}))
    with pytest.raises(InputError, match="every run is in one group"):
        analyse_reusability(scoring, TINY_RUNS, 2, groups=pd.Series({"A": "G", "B": "G", "C": "G"}))


# ------------------------------------------------------------------- TREC DL 2019 against an independent computation
def plain_top_k(path, k: int, queries: set[str]) -> dict[str, list[str]]:
    """Per query, the first k distinct documents by trec_eval's order: score (as a C float) descending, then doc
    id descending."""
    rows = defaultdict(list)
    with gzip.open(path, "rt") as handle:
        for line in handle:
            query, _, doc, _, score, _ = line.split()
            if query in queries:
                rows[query].append((np.float32(score), doc))
    top = {}
    for query, ranked in rows.items():
        ranked.sort(reverse=True)
        top[query] = list(dict.fromkeys(doc for _, doc in ranked))[:k]
    return top


def plain_run(path) -> dict[str, dict[str, float]]:
    run = defaultdict(dict)
    with gzip.open(path, "rt") as handle:
        for line in handle:
            query, _, doc, _, score, _ = line.split()
            run[query].setdefault(doc, float(score))
    return run


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    qrels = defaultdict(dict)
    for line in (root / "qrels.txt").read_text().splitlines():
        query, _, doc, grade = line.split()
        qrels[query][doc] = int(grade)
    paths = {path.name.removesuffix(".run.gz"): path for path in sorted((root / "runs" / "official_top100").iterdir())}
    metadata = pd.read_csv(root / "run_metadata.tsv", sep="\t", dtype=str)
    group_of = dict(zip(metadata["runid"], metadata["participant"], strict=True))
    scoring = Evaluation.on_qrels(root / "qrels.txt")
    result = analyse_reusability(scoring, read_runs(paths.values()), 10,
                                 groups=read_groups(root / "run_metadata.tsv", "runid", "participant"))
    return {"qrels": dict(qrels), "paths": paths, "group_of": group_of, "result": result}


def independent(dl19, owner_of: dict[str, str]) -> dict[str, dict]:
    """Per run: its reduced qrels, and pytrec_eval's mean nDCG@10 and plain judged@10 on them."""
    qrels, paths = dl19["qrels"], dl19["paths"]
    tops = {name: plain_top_k(path, 10, set(qrels)) for name, path in paths.items()}
    pooled = defaultdict(set)
    for name, top in tops.items():
        pooled[owner_of[name]] |= {(q, d) for q, docs in top.items() for d in docs}
    out = {}
    for name, path in paths.items():
        owner = owner_of[name]
        others = set().union(*(pairs for other, pairs in pooled.items() if other != owner))
        unique = pooled[owner] - others
        reduced = {q: {d: g for d, g in docs.items() if (q, d) not in unique} for q, docs in qrels.items()}
        reduced = {q: docs for q, docs in reduced.items() if docs}
        run = plain_run(path)
        values = pytrec_eval.RelevanceEvaluator(reduced, {"ndcg_cut.10"}).evaluate(run)
        defined = [q for q, docs in reduced.items() if any(g > 0 for g in docs.values())]
        ndcg = sum(values[q]["ndcg_cut_10"] if q in values else 0.0 for q in defined) / len(defined)
        judged = sum(sum(d in reduced[q] and reduced[q][d] >= 0 for d in tops[name].get(q, [])) / 10
                     for q in reduced) / len(reduced)
        relevant = sum(qrels[q].get(d, -1) >= 1 for q, d in unique)
        out[name] = {"unique": len(unique), "relevant": relevant, "ndcg": ndcg, "judged": judged,
                     "removed": sum(len(qrels[q]) for q in qrels) - sum(len(v) for v in reduced.values())}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["run", "group"])
def test_every_dl19_run_and_group_rescored_equals_pytrec_eval_on_plainly_filtered_qrels(dl19, kind):
    result = dl19["result"]
    part = result.runs if kind == "run" else result.groups
    owner_of = {name: name for name in dl19["paths"]} if kind == "run" else dl19["group_of"]
    expected = independent(dl19, owner_of)
    rows = part.rows.set_index("run")
    counts = part.owners.set_index("owner")
    assert len(rows) == 37 and len(counts) == (37 if kind == "run" else 12)
    for name, figures in expected.items():
        assert rows.loc[name, "reduced"] == pytest.approx(figures["ndcg"], abs=1e-12), name
        assert rows.loc[name, "judged_reduced"] == pytest.approx(figures["judged"], abs=1e-12), name
        owner = counts.loc[owner_of[name]]
        assert (owner["unique"], owner["unique_relevant"], owner["removed"]) == (
            figures["unique"], figures["relevant"], figures["removed"]), name
    full = rows["full"]
    assert part.kendall_tau == pytest.approx(stats.kendalltau(full, [expected[n]["ndcg"] for n in rows.index])[0])
    for name in rows.index:  # its rank when it (its group) is rescored and every other run keeps its score
        others = [full[o] for o in rows.index if owner_of[o] != owner_of[name]]
        mates = [expected[o]["ndcg"] for o in rows.index if owner_of[o] == owner_of[name]]
        assert rows.loc[name, "rank_reduced"] == 1 + sum(v > expected[name]["ndcg"] for v in others + mates), name


@pytest.mark.slow
def test_dl19_figures_the_docs_quote(dl19):
    result = dl19["result"]
    runs, groups = result.runs.rows.set_index("run"), result.groups.rows.set_index("run")
    assert runs.loc["ICT-CKNRM_B50", "drop"] == pytest.approx(0.0622, abs=5e-5)
    assert result.runs.largest["run"] == "ICT-CKNRM_B50"
    assert result.runs.kendall_tau == pytest.approx(0.964, abs=5e-4)
    assert result.groups.kendall_tau == pytest.approx(0.883, abs=5e-4)
    assert groups.loc["idst_bert_p1", ["rank_full", "rank_reduced"]].tolist() == [1, 2]
    assert (result.runs.level, result.groups.level) == ("biased", "biased")


def test_plot_labels_of_points_close_together_are_moved_apart_and_far_ones_stay_put():
    from matplotlib.figure import Figure

    from evalset.reusability.plot import _LABEL_HEIGHT, _label_lifts

    axis = Figure(figsize=(6, 4), dpi=100).subplots()
    axis.set_xlim(0, 40)
    axis.set_ylim(0, 0.07)
    points = [(12.0, 0.0152), (13.0, 0.0156), (12.5, 0.0154), (40.0, 0.062)]
    lifts = _label_lifts(axis, points, ["ICT-CKNRM_B", "srchvrs_ps_run2", "UNH_bm25", "far"])
    assert lifts[0] == 3.0 and lifts[3] == 3.0  # the first and a lone point: just above their points
    bottoms = np.sort(axis.transData.transform(points[:3])[:, 1] * 72 / 100 + lifts[:3])
    assert np.diff(bottoms).min() >= _LABEL_HEIGHT - 1e-9


# ------------------------------------------------------------------------------------------------ issue 29
DL19_RUNS, DL19_QRELS = REPO / "data" / "dl19" / "runs", REPO / "data" / "dl19" / "nist.qrels"


@pytest.mark.slow
def test_under_condensed_lists_a_score_that_rises_is_not_read_as_reusable():
    """Condensed lists pull deeper judged documents up: UNH_exDL_bm25's reduced nDCG@10 rises from 0.0817 to
    0.1698 (-107.7%): the verdict looked at drops only and said "reusable"."""
    runs = read_runs([DL19_RUNS])
    evaluation = Evaluation.on_qrels(DL19_QRELS, EvaluationContract(unjudged="condensed"))
    part = analyse_reusability(evaluation, runs, 10).runs
    row = part.rows.set_index("run").loc["UNH_exDL_bm25"]
    assert round(row["drop"], 4) == -0.0880
    assert part.level == "biased"
    assert part.verdict.startswith("a new run like these gains up to 0.0880 ndcg@10 (107.7%")
    assert "its score can be biased, here upwards" in part.verdict


def test_a_run_sharing_no_query_is_refused_with_the_cause():
    runs = read_runs([DL19_RUNS / "bm25base_p.run.gz"])
    runs["stranger"] = runs["bm25base_p"].assign(query_id="x" + runs["bm25base_p"]["query_id"].astype(str))
    with pytest.raises(InputError, match="run stranger shares no query with the judgments"):
        analyse_reusability(Evaluation.on_qrels(DL19_QRELS), runs, 10)


@pytest.mark.parametrize("command", ["reusability", "compare", "plan power"])
def test_a_command_reading_one_metric_refuses_two(command):
    from click.testing import CliRunner

    from evalset.cli import main

    result = CliRunner().invoke(main, [*command.split(), "--qrels", str(DL19_QRELS),
                                       str(DL19_RUNS / "bm25base_p.run.gz"),
                                       str(DL19_RUNS / "bm25tuned_p.run.gz"), "-m", "ndcg@10", "-m", "ap"])
    assert result.exit_code == 2
    assert "this command reads one metric, got 2 (ndcg@10, ap)" in result.output


# ------------------------------------------------------------------------------------------------ issue 48
LACKED = ("19335", "47923")


def _lacking_run(tmp_path) -> str:
    """DL19's bm25tuned_p without 2 of the 43 judged queries."""
    path = tmp_path / "bm25tuned_p.run.gz"
    with gzip.open(DL19_RUNS / "bm25tuned_p.run.gz", "rt") as source, gzip.open(path, "wt") as target:
        target.writelines(line for line in source if line.split()[0] not in LACKED)
    return str(path)


def test_a_pool_run_lacking_judged_queries_is_refused_unless_missing_is_chosen(tmp_path):
    from click.testing import CliRunner

    from evalset.cli import main

    lacking = _lacking_run(tmp_path)
    args = ["reusability", "--qrels", str(DL19_QRELS), str(DL19_RUNS / "bm25base_p.run.gz"),
            str(DL19_RUNS / "idst_bert_p1.run.gz"), lacking, "--depth", "10"]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    assert refused.output == (
        f"evalset: error: {lacking}: run bm25tuned_p lacks 2 of the 43 judged queries: give -c missing=zero (they "
        "score 0, as a system that returned nothing) or -c missing=skip (they are left out of the comparison)\n")
    full = {}
    for missing, said in (("zero", "scored 0 (-c missing=zero)"),
                          ("skip", "left out of its means (-c missing=skip)")):
        result = CliRunner().invoke(main, [*args, "-c", f"missing={missing}", "--format", "json"])
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        note = f"note: run bm25tuned_p lacks 2 of the 43 judged queries: {said}"
        assert document["notes"][0] == note and note in result.stderr
        rows = {row["run"]: row for row in document["leave_one_run_out"]["rows"]}
        full[missing] = rows["bm25tuned_p"]["full"]
    # the same 41 answered queries: over 43 (the 2 lacking scored 0) or over 41
    assert round(full["zero"], 4) == 0.4734 and round(full["skip"], 4) == 0.4965
    assert full["zero"] * 43 == pytest.approx(full["skip"] * 41, abs=1e-12)


@pytest.mark.parametrize(("depth", "message"), [
    (0, "depth must be an integer in [1, 1000000], got 0"),
    (10**20, "depth must be an integer in [1, 1000000], got 100000000000000000000"),
    (2.5, "depth must be an integer in [1, 1000000], got 2.5"),
])
def test_the_analysis_refuses_what_the_command_refuses_before_reading_a_run(depth, message):
    with pytest.raises(InputError) as raised:
        analyse_reusability(None, ["no-such.run"], depth)
    assert str(raised.value) == message
