"""The registry of merge rules: the names the command line offers, each rule's grade and tie on a hand-made table,
and the two tie policies (a tie left unresolved for freeze, settled low for estimate)."""

import pandas as pd
import pytest

from evalset.contract import AGGREGATION_RULES, MERGE_RULES
from evalset.errors import InputError
from evalset.judgments import RULES, pair_grades

# a: 1 and 3 (a tie under both rules); b: 2, 2, 0 (2 under both); c: 0 and 1 (a tie); d: 0, 3, 3, 1 (majority 3;
# middle grades 1 and 3: a median tie); e: one grade
LABELS = pd.DataFrame(
    [("q", "a", "x", 1), ("q", "a", "y", 3), ("q", "b", "x", 2), ("q", "b", "y", 2), ("q", "b", "z", 0),
     ("q", "c", "x", 0), ("q", "c", "y", 1), ("q", "d", "x", 0), ("q", "d", "y", 3), ("q", "d", "z", 3),
     ("q", "d", "w", 1), ("q", "e", "z", 2)],
    columns=["query_id", "doc_id", "annotator", "grade"])


def grades(rule, ties, **options):
    merged = pair_grades(LABELS, rule, ties=ties, **options)
    return {doc: None if pd.isna(grade) else int(grade) for (_, doc), grade in merged.table["grade"].items()}


def test_the_registry_holds_the_rules_the_contract_names_and_says_which_can_tie():
    assert tuple(RULES) == MERGE_RULES
    assert tuple(name for name, rule in RULES.items() if rule.crowd_class) == AGGREGATION_RULES
    assert {name for name, rule in RULES.items() if rule.tie} == {"median", "majority"}
    assert RULES["median"].tie == "an even number of grades whose two middle grades differ"
    assert RULES["majority"].tie == "two or more grades equally the most frequent"


def test_a_median_tie_is_left_unresolved_or_settled_on_the_lower_middle_grade():
    assert grades("median", "unresolved") == {"a": None, "b": 2, "c": None, "d": None, "e": 2}
    assert grades("median", "low") == {"a": 1, "b": 2, "c": 0, "d": 1, "e": 2}
    merged = pair_grades(LABELS, "median", ties="low")
    assert merged.tied == 3 and merged.table["n"].tolist() == [2, 3, 2, 4, 1]
    assert merged.qrels().to_dict("list") == {"query_id": ["q"] * 5, "doc_id": ["a", "b", "c", "d", "e"],
                                              "grade": [1, 2, 0, 1, 2]}


def test_a_majority_tie_is_left_unresolved_or_settled_on_the_lowest_tied_grade():
    assert grades("majority", "unresolved") == {"a": None, "b": 2, "c": None, "d": 3, "e": 2}
    assert grades("majority", "low") == {"a": 1, "b": 2, "c": 0, "d": 3, "e": 2}
    unresolved = pair_grades(LABELS, "majority")
    assert unresolved.tied == 2 and unresolved.qrels()["doc_id"].tolist() == ["b", "d", "e"]


def test_annotator_priority_never_ties():
    assert grades("annotator-priority", "unresolved", priority=["y"]) == {"a": 3, "b": 2, "c": 1, "d": 3, "e": 2}
    assert grades("annotator-priority", "low", priority=["w"]) == {"a": 1, "b": 2, "c": 0, "d": 1, "e": 2}  # then names
    assert pair_grades(LABELS, "annotator-priority", priority=["w"]).tied == 0
    with pytest.raises(InputError, match=r"^the merge rule annotator-priority needs --merge priority=NAMES"):
        pair_grades(LABELS, "annotator-priority")


def test_an_unknown_rule_or_tie_policy_is_an_input_error():
    with pytest.raises(InputError, match=r"^merge rule must be one of median, majority, annotator-priority, "
                                         r"dawid-skene, one-coin, mace, glad, got 'mean'$"):
        pair_grades(LABELS, "mean")
    with pytest.raises(InputError, match="tie policy must be one of unresolved, low, got 'high'"):
        pair_grades(LABELS, "median", ties="high")
