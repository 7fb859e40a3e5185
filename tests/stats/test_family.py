"""The comparison family: planned or exploratory, the Bonferroni count given the comparison log (the rule: pure,
evalset.stats.family; the log read and appended: evalset.comparing.setlog); from Python."""

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from evalset.comparing import compare_runs
from evalset.comparing.setlog import record_comparison, set_family
from evalset.errors import InputError
from evalset.evaluation import Evaluation
from evalset.io.annotations import labels_from_file
from evalset.io.comparisonlog import ComparisonLog
from evalset.io.guideline import read_guideline
from evalset.io.queries import read_queries
from evalset.io.trec import read_run
from evalset.sets import freeze
from evalset.stats.family import ComparisonFamily, bonferroni_threshold

GUIDELINE = Path(__file__).resolve().parents[2] / "guidelines" / "relevance-v2.md"

HEADLINE = SimpleNamespace(headline="ndcg@10")  # the set's contract, as the family reads it


def a_set(tmp_path, planned=()):
    folder = tmp_path / "sets" / "s" / "v1"
    folder.mkdir(parents=True)
    return SimpleNamespace(path=folder, planned=list(planned), contract=HEADLINE)


def record(baseline, candidate, metric="ndcg@10"):
    return {"baseline": baseline, "candidate": candidate, "metric": metric}


# ------------------------------------------------------------------------------------------------ the rule
def test_without_a_set_the_family_is_the_comparisons_asked_for_or_the_planned_count():
    assert ComparisonFamily.of(3).size("a", "b", "ndcg@10") == 3
    assert ComparisonFamily.of(3, planned=5).size("a", "b", "ndcg@10") == 5
    family = ComparisonFamily.of(2)
    assert family.kind("a", "anything") == "planned" and family.kind("a", "b", exploratory=True) == "exploratory"


def test_on_a_set_a_comparison_not_planned_is_exploratory(tmp_path):
    family = ComparisonFamily.of(1, frozen=a_set(tmp_path, [("a", "b"), ("a", "c")]))
    assert family.planned_count == 2
    assert family.kind("a", "b") == "planned" and family.kind("a", "d") == "exploratory"
    undeclared = ComparisonFamily.of(4, frozen=a_set(tmp_path / "none"))  # a set that declared no planned one
    assert undeclared.kind("a", "d") == "planned" and undeclared.planned_count == 4


def test_on_a_set_that_plans_its_comparisons_the_count_is_theirs_whatever_the_log_holds(tmp_path):
    # issue 74: each exploratory look used to shrink the planned comparisons' threshold (0.025, then 0.008333 after
    # four looks); a look is never established, so it can make no planned verdict less sure
    frozen = a_set(tmp_path, [("a", "b"), ("a", "c")])
    log = ComparisonLog.of_set(frozen.path, "test")
    for candidate in ("d", "e", "f", "g"):
        log.append(record("a", candidate))
    family = set_family(1, frozen=frozen, split="test")
    assert family.size("a", "b", "ndcg@10") == family.size("a", "c", "ap") == 2
    assert family.basis("a", "b", "ndcg@10") == ("2: the set's planned comparisons; 4 looks off the plan in its log "
                                                 "are not counted (a look decides nothing)")
    assert set_family(1, planned=5, frozen=frozen, split="test").basis("a", "b", "ndcg@10") == "5: --planned 5"


def test_on_a_set_that_plans_none_every_distinct_comparison_made_on_the_split_counts(tmp_path):
    frozen = a_set(tmp_path)  # every comparison on it can be established: repeated peeking is paid for
    log = ComparisonLog.of_set(frozen.path, "test")

    def family(planned=None):
        return set_family(1, planned=planned, frozen=frozen, split="test")

    assert family().size("a", "b", "ndcg@10") == 1  # nothing made yet
    log.append(record("a", "d"))
    log.append(record("a", "d"))  # the same comparison twice counts once
    assert family().size("a", "b", "ndcg@10") == 2  # {a:d, a:b}
    log.append(record("a", "b"))
    assert family().size("a", "c", "ndcg@10") == 3  # {a:d, a:b, a:c}
    assert family().size("a", "b", "ap") == 3  # another metric is another comparison
    ComparisonLog.of_set(frozen.path, "dev").append(record("x", "y"))  # another split: another family
    ComparisonLog(log.path, "v2", "test").append(record("x", "y"))  # another version too
    assert family().size("a", "c", "ndcg@10") == 3
    assert family(planned=5).size("a", "c", "ndcg@10") == 5
    assert family().basis("a", "c", "ndcg@10") == ("3: the distinct comparisons in the set's log on this version and "
                                                   "split, this one included (the set plans none, so every "
                                                   "comparison made on it counts)")


def test_the_family_is_pure_it_counts_the_comparisons_it_is_given_and_those_it_is_told_were_made():
    made = {("a", "d", "ndcg@10"), ("a", "b", "ndcg@10")}
    family = ComparisonFamily.of(1, frozen=SimpleNamespace(planned=[], contract=HEADLINE), made=made)
    assert family.size("a", "c", "ndcg@10") == 3 and family.made == frozenset(made)
    result = SimpleNamespace(baseline="a", candidate="c", metric="ndcg@10", kind="planned", permutation_p=0.01,
                             threshold=0.025)
    after = family.after(result)
    assert after.size("a", "e", "ndcg@10") == 4 and family.size("a", "e", "ndcg@10") == 3  # the family unchanged
    assert ComparisonFamily.log_record(result) == {"baseline": "a", "candidate": "c", "metric": "ndcg@10",
                                                   "kind": "planned", "permutation_p": 0.01, "threshold": 0.025}
    assert ComparisonFamily.of(2).after(result).size("a", "e", "ndcg@10") == 2  # no log: nothing counted
    planned = ComparisonFamily.of(1, frozen=SimpleNamespace(planned=[("a", "b"), ("a", "c")], contract=HEADLINE),
                                  made=made)
    assert planned.after(result).size("a", "e", "ndcg@10") == 2  # a set that plans: its planned count


def test_a_recorded_comparison_is_appended_stamped_and_counted(tmp_path):
    frozen = a_set(tmp_path)
    result = SimpleNamespace(baseline="a", candidate="x", metric="ap", kind="exploratory", permutation_p=0.5,
                             threshold=0.05)
    family = record_comparison(set_family(1, frozen=frozen, split="dev"), result, frozen, "dev")
    assert family.size("a", "b", "ap") == 2
    [logged] = [json.loads(line) for line in ComparisonLog.of_set(frozen.path, "dev").path.read_text().splitlines()]
    assert logged.pop("at").endswith("+00:00")
    assert logged == {"version": "v1", "split": "dev", "baseline": "a", "candidate": "x", "metric": "ap",
                      "kind": "exploratory", "permutation_p": 0.5, "threshold": 0.05}
    unlogged = set_family(1)
    assert record_comparison(unlogged, result, None) is unlogged  # no set: nothing written


def test_a_malformed_log_line_names_the_file_and_line(tmp_path):
    frozen = a_set(tmp_path)
    log = ComparisonLog.of_set(frozen.path, "test")
    log.append(record("a", "b"))
    with open(log.path, "a") as handle:
        handle.write("{not json\n")
    with pytest.raises(InputError, match=f"{log.path}:2: not a comparison record"):
        log.made()


# ------------------------------------------------------------------------------------------------ from Python
@pytest.fixture
def dl19_set(shared_data, tmp_path):
    root = shared_data / "dl19"
    return freeze(labels_from_file(root / "qrels.txt", "human"), read_queries(root / "topics.tsv"),
                  read_guideline(GUIDELINE), "dl19", tmp_path / "sets", planned=[("bm25base_p", "idst_bert_p1")]).path


@pytest.mark.slow
def test_comparing_from_python_logs_each_comparison_and_the_planned_one_keeps_its_threshold(dl19_set, shared_data):
    folder = shared_data / "dl19" / "runs" / "official_full"
    runs = {name: read_run(folder / f"{name}.run.gz") for name in ("bm25base_p", "idst_bert_p1", "p_bert")}
    evaluation = Evaluation.on_set(dl19_set)
    log = dl19_set.parent / "comparisons.jsonl"

    [peek] = compare_runs(evaluation, {"bm25base_p": runs["bm25base_p"], "p_bert": runs["p_bert"]},
                          permutations=999).results
    assert peek.kind == "exploratory" and not peek.established and peek.threshold == 0.05
    assert len(log.read_text().splitlines()) == 1

    [planned] = compare_runs(evaluation, {"bm25base_p": runs["bm25base_p"], "idst_bert_p1": runs["idst_bert_p1"]},
                             permutations=999).results
    assert planned.kind == "planned" and planned.established
    assert planned.threshold == 0.05  # the set's one planned comparison: the peek is logged, never counted
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["candidate"], r["kind"], r["threshold"], r["version"], r["split"]) for r in records] == [
        ("p_bert", "exploratory", 0.05, "v1", "test"), ("idst_bert_p1", "planned", 0.05, "v1", "test")]
    assert records[1]["permutation_p"] == planned.permutation_p


def test_the_bonferroni_threshold_is_alpha_over_the_family_size():
    assert bonferroni_threshold(0.05, 37) == pytest.approx(0.05 / 37)
    assert bonferroni_threshold(0.05, 1) == 0.05
    with pytest.raises(InputError, match="a family's comparisons must be a positive integer, got 0"):
        bonferroni_threshold(0.05, 0)


@pytest.mark.parametrize("planned", [0, -1, 1.5, True])
def test_a_planned_count_that_is_not_a_positive_integer_is_refused_never_the_default(planned):
    with pytest.raises(InputError, match="planned must be a positive integer"):
        ComparisonFamily.of(3, planned=planned)


def test_on_a_set_a_measure_other_than_its_headline_is_exploratory_and_spellings_of_it_are_not():
    family = ComparisonFamily.of(1, frozen=SimpleNamespace(planned=[("a", "b")], contract=HEADLINE))
    assert family.kind("a", "b", metric="p@10") == "exploratory" and family.off_headline("p@10")
    assert family.kind("a", "b", metric="ndcg@20") == "exploratory"
    assert [family.kind("a", "b", metric=m) for m in ("ndcg@10", "nDCG@10", "ndcg_cut_10")] == ["planned"] * 3
    assert ComparisonFamily.of(1).kind("a", "b", metric="p@10") == "planned"  # no set: any measure may be planned
    result = family.compare(pd.Series([0.1, 0.2, 0.3, 0.4]), pd.Series([0.5, 0.6, 0.7, 0.9]), baseline_name="a",
                            candidate_name="b", metric="p@10", permutations=99)
    assert (result.kind, result.established) == ("exploratory", False)
    assert result.verdict.startswith("exploratory (p = ")
