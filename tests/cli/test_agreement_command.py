"""`evalset agreement` on the real data (LLMJudge: NIST assessors and 33 LLM judges; DL19: NIST and three LLM
label sets with the 37 official runs), the calibration verdict, and the awkward inputs."""

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from evalset.agreement import agreement_report, load_grades
from evalset.cli import main
from evalset.io.annotations import LABELS_COLUMNS
from evalset.io.trec import expand_run_paths, read_qrels, read_run
from evalset.metrics import evaluate_runs
from tests.support.options import HUGE, not_one_of, refusal

SCALE = [0, 1, 2, 3]
GUIDELINE = Path(__file__).resolve().parents[2] / "guidelines" / "relevance-v2.md"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def llmjudge(shared_data):
    root = shared_data / "llmjudge"
    return {"human": root / "human" / "test_qrels.txt",
            "llms": sorted((root / "llm_submissions").glob("*.txt"))}


@pytest.fixture(scope="module")
def llmjudge_report(llmjudge, tmp_path_factory):
    started = time.perf_counter()
    result = invoke("agreement", "--human", llmjudge["human"], *llmjudge["llms"], "--out-of-scale", "drop",
                    "--format", "json")
    seconds = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), seconds


@pytest.mark.slow
def test_all_33_llm_judges_against_the_human_grades_in_one_command_under_30_seconds(llmjudge_report):
    report, seconds = llmjudge_report
    assert seconds < 30
    names = [a["annotator"] for a in report["annotators"]]
    assert len(names) == 34 and names[0] == "test_qrels" and report["annotators"][0]["kind"] == "human"
    assert len(report["pairs"]) == 34 * 33 // 2
    judges = report["calibration"]["judges"]
    assert len(judges) == 33 and {j["human"] for j in judges} == {"test_qrels"}
    assert {j["verdict"] for j in judges} == {"human range unknown: one human annotator only"}
    assert report["calibration"]["human_range"] is None
    assert 0 < report["alpha_ordinal"] < 1


@pytest.mark.slow
def test_every_human_vs_llm_kappa_equals_scikit_learn_on_the_raw_files(llmjudge, llmjudge_report):
    report, _ = llmjudge_report
    human = read_qrels(llmjudge["human"])
    pairs = {p["b"]: p for p in report["pairs"] if p["a"] == "test_qrels"}
    assert len(pairs) == 33
    for path in llmjudge["llms"]:
        llm = read_qrels(path)
        llm = llm[llm["grade"].isin(SCALE)]  # --out-of-scale drop
        both = human.merge(llm, on=["query_id", "doc_id"], suffixes=("_h", "_l"))
        pair = pairs[path.stem]
        assert pair["n"] == len(both)
        assert pair["raw_agreement"] == pytest.approx(np.mean(both["grade_h"] == both["grade_l"]))
        for key, weights in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
            expected = cohen_kappa_score(both["grade_h"], both["grade_l"], labels=SCALE, weights=weights)
            assert pair[key] == pytest.approx(expected, abs=1e-12), (path.stem, key)
            low, high = pair[f"{key}_ci_bootstrap"]
            assert low < pair[key] < high


@pytest.mark.slow
def test_dropped_out_of_scale_grades_are_counted(llmjudge_report):
    report, _ = llmjudge_report
    dropped = {a["annotator"]: a["dropped"] for a in report["annotators"] if a["dropped"]}
    assert dropped == {"RMITIR-llama70B": 2, "h2oloo-zeroshot2": 1}
    rmit = next(p for p in report["pairs"] if p["b"] == "RMITIR-llama70B" and p["a"] == "test_qrels")
    assert rmit["n"] == 4423 - 2


def test_out_of_scale_grades_are_refused_with_file_and_line(llmjudge):
    bad = [p for p in llmjudge["llms"] if p.stem in ("RMITIR-llama70B", "h2oloo-zeroshot2")]
    result = invoke("agreement", "--human", llmjudge["human"], *bad)
    assert result.exit_code == 2
    assert "RMITIR-llama70B.txt:2449: grade 5 is not on the scale (0, 1, 2, 3); 2 such grades" in result.output
    assert "h2oloo-zeroshot2.txt:3187 (grade 10)" in result.output


def test_clipping_moves_out_of_scale_grades_to_the_top_and_counts_them(llmjudge):
    rmit = next(p for p in llmjudge["llms"] if p.stem == "RMITIR-llama70B")
    grades, _ = load_grades([str(rmit)], [str(llmjudge["human"])])
    report = agreement_report(grades, SCALE, out_of_scale="clip", resamples=20)
    row = next(a for a in report.annotators if a["annotator"] == "RMITIR-llama70B")
    raw = read_qrels(rmit)["grade"]
    assert row["clipped"] == 2 and row["dropped"] == 0
    assert row["grades"]["3"] == int((raw == 3).sum()) + 2


# ---------------------------------------------------------------------------------------------------- DL19
@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    return {"qrels": root / "qrels.txt", "llm": sorted((root / "llm_labels").glob("*.qrels")),
            "runs": root / "runs" / "official_top100", "topics": root / "topics.tsv",
            "corpus": root / "passages.jsonl.gz"}


@pytest.fixture(scope="module")
def dl19_study(dl19):
    grades, counts = load_grades([str(p) for p in dl19["llm"]], [str(dl19["qrels"])])
    runs = {name: read_run(path) for name, path in expand_run_paths([dl19["runs"]]).items()}
    report = agreement_report(grades, SCALE, resamples=200, runs=runs, input_counts=counts)
    return report, runs


@pytest.mark.slow
def test_dl19_system_rankings_kendall_tau_is_scipys_on_independently_scored_runs(dl19, dl19_study):
    report, runs = dl19_study
    assert len(runs) == 37
    nist = {name: table["ndcg@10"].mean()
            for name, table in evaluate_runs(runs, read_qrels(dl19["qrels"]), ["ndcg@10"]).items()}
    names = sorted(nist)
    against_nist = [r for r in report.rankings if r.a == "qrels"]
    assert len(against_nist) == 3
    for ranking in against_nist:
        llm_path = next(p for p in dl19["llm"] if p.name.startswith(ranking.b))
        llm = {name: table["ndcg@10"].mean()
               for name, table in evaluate_runs(runs, read_qrels(llm_path), ["ndcg@10"]).items()}
        expected = stats.kendalltau([nist[n] for n in names], [llm[n] for n in names])
        assert ranking.queries == 43 and ranking.runs == 37
        assert ranking.kendall_tau == pytest.approx(expected.statistic, abs=1e-12)
        assert ranking.kendall_p == pytest.approx(expected.pvalue)
        assert ranking.scores_a == pytest.approx(nist) and ranking.scores_b == pytest.approx(llm)
        assert -1 <= ranking.tau_ap <= 1 and ranking.moves
        top = ranking.moves[0]
        assert abs(top["shift"]) == max(abs(m["shift"]) for m in ranking.moves)


@pytest.mark.slow
def test_dl19_matrix_and_calibration(dl19_study):
    report, _ = dl19_study
    matrix = report.matrix()
    assert list(matrix.index) == ["qrels", "flan-t5-large.fourprompts", "llama-3-70b.fourprompts",
                                  "llama-3-8b.baseline"]
    for pair in report.pairs:
        assert matrix.loc[pair.a, pair.b] == matrix.loc[pair.b, pair.a] == pair.kappas["quadratic"].value
        assert pair.n == 9260 and pair.queries == 43
    assert report.calibration["human_range"] is None and len(report.calibration["judges"]) == 3


@pytest.mark.slow
def test_dl19_cli_writes_heatmap_disagreements_with_texts_and_json_in_one_folder_built_aside(dl19, tmp_path):
    out = tmp_path / "out"
    args = ["agreement", "--human", dl19["qrels"], *dl19["llm"], "--resamples", "50", "--format", "json",
            "--queries", dl19["topics"], "--corpus", dl19["corpus"], "--top", "5"]
    result = invoke(*args, "-o", out)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["written"] == [str(out / name) for name in (
        "agreement.json", "disagreements.tsv", "kappa.png")]
    assert (out / "kappa.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing built aside is left
    assert sorted(p.name for p in out.iterdir()) == ["agreement.json", "disagreements.tsv", "kappa.png"]
    table = pd.read_csv(out / "disagreements.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    # Brute force: items where the four annotators do not all agree.
    grades = pd.concat([read_qrels(p).assign(name=p.name) for p in [dl19["qrels"], *dl19["llm"]]])
    spread = grades.groupby(["query_id", "doc_id"])["grade"].agg(lambda g: g.max() - g.min())
    assert len(table) == int((spread > 0).sum())
    assert table["gap"].is_monotonic_decreasing and table["gap"].iloc[0] == 3
    assert list(table.columns[:4]) == ["query_id", "doc_id", "query", "text"]
    assert (table["text"].fillna("") != "").all()  # every DL19 judged passage has its text
    first = table.iloc[0]
    assert spread.loc[(first["query_id"], first["doc_id"])] == first["gap"]
    report = json.loads((out / "agreement.json").read_text())
    assert report["disagreements"]["items"] == len(table) and len(report["disagreements"]["rows"]) == 5
    assert invoke(*args, "-o", out).exit_code == 2  # a folder that is not empty: refused without --force
    again = invoke(*args, "-o", tmp_path / "again")
    assert again.exit_code == 0
    for name in ("agreement.json", "disagreements.tsv", "kappa.png"):
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes()


# ------------------------------------------------------------------------------------------ awkward inputs
def write_labels(path, rows):
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "kind", "grade"])
    for column in LABELS_COLUMNS[5:]:
        frame[column] = "x"
    frame[list(LABELS_COLUMNS)].to_csv(path, sep="\t", index=False)
    return path


def test_no_items_in_common_and_a_constant_annotator_are_reported_not_crashing(tmp_path):
    rows = []
    for i in range(12):
        rows.append(("q1", f"d{i}", "ann", "human", i % 4))
        rows.append(("q1", f"d{i}", "constant", "llm", 2))
        rows.append(("q2", f"d{i}", "elsewhere", "llm", i % 3))
    labels = write_labels(tmp_path / "labels.tsv", rows)
    result = invoke("agreement", labels, "--format", "json", "--resamples", "50")
    assert result.exit_code == 0, result.output
    pairs = {(p["a"], p["b"]): p for p in json.loads(result.output)["pairs"]}
    apart = pairs[("ann", "elsewhere")]
    assert apart["n"] == 0 and apart["kappa"] is None and apart["raw_agreement"] is None
    assert apart["kappa_reading"] == "undefined" and "no item in common" in apart["notes"][0]
    constant = pairs[("ann", "constant")]
    assert constant["n"] == 12 and constant["raw_agreement"] == pytest.approx(3 / 12)
    assert constant["kappa"] == 0.0 and constant["kappa_quadratic"] == 0.0  # at chance, as scikit-learn says
    assert "constant gave one grade only" in constant["notes"][0]
    table = invoke("agreement", labels, "--resamples", "50")
    assert table.exit_code == 0 and "undef" in table.output and "no item in common" in table.output


def test_calibration_verdicts_against_the_human_range(tmp_path):
    rng = np.random.default_rng(5)
    rows = []
    for q in range(12):
        for d in range(25):
            truth = int(rng.integers(0, 4))
            second = truth if rng.random() < 0.6 else int(rng.integers(0, 4))
            rows += [(f"q{q}", f"d{d}", "h1", "human", truth), (f"q{q}", f"d{d}", "h2", "human", second),
                     (f"q{q}", f"d{d}", "echo", "llm", truth), (f"q{q}", f"d{d}", "noise", "llm",
                                                                 int(rng.integers(0, 4)))]
    report = agreement_report(pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "kind", "grade"]),
                              SCALE, resamples=300)
    calibration = report.calibration
    human_kappa = calibration["human_pairs"][0]["kappa"]
    assert calibration["human_range"] == (human_kappa, human_kappa)
    verdicts = {(j["llm"], j["human"]): j["verdict"] for j in calibration["judges"]}
    assert verdicts[("echo", "h1")] == "above the human range"  # a copy of h1
    assert verdicts[("echo", "h2")] == "within the human range"  # agrees with h2 exactly as h1 does
    assert verdicts[("noise", "h1")] == verdicts[("noise", "h2")] == "below the human range"


def test_conflicting_grades_and_name_clashes_are_refused(tmp_path):
    first = write_labels(tmp_path / "a.tsv", [("q1", "d1", "ann", "human", 1), ("q1", "d2", "ann", "human", 0)])
    second = write_labels(tmp_path / "b.tsv", [("q1", "d1", "ann", "human", 2)])
    result = invoke("agreement", first, second)
    assert result.exit_code == 2 and "annotator ann gives query q1 document d1 two different grades" in result.output
    assert "a.tsv:2 grade 1" in result.output and "b.tsv:2 grade 2" in result.output
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    for folder in ("x", "y"):
        (tmp_path / folder / "judge.qrels").write_text("q1 0 d1 1\n")
    clash = invoke("agreement", tmp_path / "x" / "judge.qrels", tmp_path / "y" / "judge.qrels")
    assert clash.exit_code == 2 and "two inputs are named 'judge'" in clash.output
    unknown = invoke("agreement", tmp_path / "x" / "judge.qrels", "--human", "nobody")
    assert unknown.exit_code == 2 and "--human 'nobody' names no annotator" in unknown.output


def timed_labels(path, rows):
    """A labels table of (query, doc, annotator, grade, labeled_at), kind human; line 2 is the first row."""
    header = "\t".join(LABELS_COLUMNS) + "\n"
    path.write_text(header + "".join(f"{q}\t{d}\t{a}\thuman\t{g}\ttest\t{t}\t\n" for q, d, a, g, t in rows))
    return path


@pytest.fixture
def conflicting_inputs(tmp_path):
    """ann grades q1/d1 1 then (in the second table) 3, and repeats q1/d2 0; the judge's qrels grade d3 2 then 1."""
    first = timed_labels(tmp_path / "a.tsv", [("q1", "d1", "ann", 1, ""), ("q1", "d2", "ann", 0, ""),
                                              ("q1", "d3", "ann", 2, "")])
    second = timed_labels(tmp_path / "b.tsv", [("q1", "d1", "ann", 3, ""), ("q1", "d2", "ann", 0, "")])
    judge = tmp_path / "judge.qrels"
    judge.write_text("q1 0 d1 3\nq1 0 d2 0\nq1 0 d3 2\nq1 0 d3 1\n")
    return first, second, judge


def test_conflicting_grades_in_one_qrels_file_are_refused_naming_both_lines(conflicting_inputs):
    judge = conflicting_inputs[2]
    result = invoke("agreement", judge)
    assert result.exit_code == 2
    assert (f"{judge}:4: annotator judge gives query q1 document d3 two different grades ({judge}:3 grade 2, "
            f"{judge}:4 grade 1)") in result.output


@pytest.mark.parametrize(("rule", "grades", "disagreeing"), [("latest", {"d1": 3, "d3": 1}, "d3"),
                                                             ("first", {"d1": 1, "d3": 2}, "d1")])
def test_conflicting_grades_option_settles_and_counts_in_agreement(conflicting_inputs, rule, grades, disagreeing):
    refused = invoke("agreement", *conflicting_inputs)
    assert refused.exit_code == 2 and "1 more pairs are graded differently by one annotator" in refused.output
    result = invoke("agreement", *conflicting_inputs, "--conflicting-grades", rule, "--format", "json",
                    "--resamples", "10")
    assert result.exit_code == 0, result.output
    assert result.stderr == f"note: 2 conflicting judgments settled by --conflicting-grades {rule}\n"
    report = json.loads(result.stdout)
    counts = {a["annotator"]: (a["unjudged"], a["collapsed_duplicates"], a["conflicting_grades_settled"])
              for a in report["annotators"]}
    assert counts == {"ann": (0, 1, 1), "judge": (0, 0, 1)}
    (row,) = report["disagreements"]["rows"]  # ann grades d1 and the judge d3 as the rule says
    assert row["doc_id"] == disagreeing
    assert (row["ann"], row["judge"]) == ((grades["d1"], 3) if disagreeing == "d1" else (2, grades["d3"]))


def test_agreement_and_freeze_give_one_input_one_treatment(conflicting_inputs, tmp_path):
    first, second, _ = conflicting_inputs
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tquery\n")
    agreement = invoke("agreement", first, second)
    freeze = invoke("freeze", first, second, "--queries", topics, "--guideline", GUIDELINE,
                    "--name", "s", "--sets-dir", tmp_path / "sets")
    assert agreement.exit_code == freeze.exit_code == 2
    message = (f"{second}:2: annotator ann gives query q1 document d1 two different grades ({first}:2 grade 1, "
               f"{second}:2 grade 3); --conflicting-grades latest|first says which judgment stands")
    assert message in agreement.output and message in freeze.output


def test_negative_qrels_grades_are_unjudged_not_out_of_scale(tmp_path):
    (tmp_path / "nist.txt").write_text("q1 0 d1 1\nq1 0 d2 -1\nq1 0 d3 0\nq1 0 d4 2\n")
    (tmp_path / "judge.txt").write_text("q1 0 d1 1\nq1 0 d2 3\nq1 0 d3 0\nq1 0 d4 1\n")
    result = invoke("agreement", "--human", tmp_path / "nist.txt", tmp_path / "judge.txt", "--format", "json",
                    "--resamples", "10")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["annotators"][0]["unjudged"] == 1 and report["pairs"][0]["n"] == 3


def test_no_grade_at_all_is_refused_and_one_annotator_has_no_pairs(tmp_path):
    empty = write_labels(tmp_path / "empty.tsv", [])
    result = invoke("agreement", empty)
    assert result.exit_code == 2 and f"{empty}: no judgments in this file" in result.output
    (tmp_path / "judge.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    alone = invoke("agreement", tmp_path / "judge.qrels", "--format", "json", "--resamples", "10")
    assert alone.exit_code == 2  # issue 74: it exited 0 with empty tables
    assert alone.output == ("evalset: error: agreement compares two annotators or more, and the grades hold 1 "
                            "(judge): give another annotator's grades of the same pairs\n")


def test_a_lone_human_makes_the_human_range_unknown_for_one_human_not_for_none(tmp_path):
    (tmp_path / "nist.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "judge.qrels").write_text("q1 0 d1 1\nq1 0 d2 1\n")
    alone = invoke("agreement", tmp_path / "judge.qrels", "--human", tmp_path / "nist.txt", "--format", "json",
                   "--resamples", "10")
    assert alone.exit_code == 0, alone.output
    calibration = json.loads(alone.output)["calibration"]
    assert calibration["humans"] == ["nist"]
    assert calibration["human_range_note"] == "human range unknown: one human annotator only"


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--resamples", -1, "must be an integer in [0, 1000000], got -1"),
    ("--resamples", HUGE, f"must be an integer in [0, 1000000], got {HUGE}"),
    ("--resamples", "x", "must be an integer in [0, 1000000], got 'x'"),
    ("--level", 0, "must be a number in (0, 1), got 0.0"),
    ("--level", 1, "must be a number in (0, 1), got 1.0"),
    ("--level", "nan", "must be a number in (0, 1), got nan"),
    ("--level", "inf", "must be a number in (0, 1), got inf"),
    ("--seed", -1, "must be a non-negative integer, got -1"),
    ("--seed", "1.5", "must be a non-negative integer, got '1.5'"),
    ("--top", -1, "must be a non-negative integer, got -1"),
    ("--kappa", "cubic", not_one_of("cubic", "unweighted", "linear", "quadratic")),
    ("--out-of-scale", "ignore", not_one_of("ignore", "error", "clip", "drop")),
    ("--pairs", "none", not_one_of("none", "all", "with-human")),
    ("--conflicting-grades", "any", not_one_of("any", "refuse", "latest", "first")),
    ("--format", "tsv", not_one_of("tsv", "table", "json")),
])
def test_an_option_off_its_rule_is_refused_naming_it(option, value, said):
    assert refusal(["agreement"], option, value) == said
