"""A differential property: on generated collections shaped as real ones and as hostile ones, every line of
``evalset score --per-query --format trec_eval -m all_trec`` equals the real trec_eval 10.0's (built from
../shared/tools) under each configuration (plain, ``-c``, ``-l2``, ``-c -l2``, ``-M5``, ``-J``, ``-c -J``), and under
``-c trec_eval_version=9`` every per-query value equals pytrec_eval's (trec_eval 9.0.8) to 1e-9.

The shapes: grades -1 to 4, queries without a relevant document or with only negative grades, queries in the run
but not the qrels and the reverse, ranks from 0 or 1 and out of score order, heavy ties, scores that tie as 32-bit
floats but not as doubles, exponent and signed numbers, white space at either end of a line, tabs and spaces,
comment lines, text after the tag, lines shuffled across queries, a document twice in a ranking or a qrels line
twice, rankings shorter than every cutoff and one deeper than 200, ids that sort differently as text and as
numbers. What trec_eval 10 refuses or departs from on purpose is compared against trec_eval on the input it reads
as evalset does, each such reading a row of docs/coming-from.md's departures table: a run lacking a judged query
without ``-c`` against the qrels of the run's queries (trec_eval 9's reading); a repeated document or qrels line
against the input without the repeat. The counts print at the end of the session (conftest: ``compatibility``).

A self-test patches one measure wrong (precision that divides by the documents retrieved when a ranking is shorter
than k, a classic) and requires the bounded profile to catch it.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from evalset.contract import EvaluationContract
from evalset.io.runframe import run_from_frame
from evalset.io.trec import qrels_from_frame
from evalset.metrics import MEASURES, evaluate, expand_measures, parse_measure, trec_eval_name
from tests.conftest import PROPERTY_PROFILE
from tests.support.trec_eval10 import Comparison, departure, evalset_lines, trec_eval_lines

QUICK = 10
EXAMPLES = {"quick": QUICK, "full": 60}[PROPERTY_PROFILE]
"""Generated collections a run of the suite compares (each under every configuration): the quick tier's bounded
profile (the self-test's too), and the full suite's."""
DIFFERENTIAL = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                        suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
"""Derandomized (the same collections on every run), and no shrinking: an example runs 14 programs, and the failure
message prints the collection whole, to become a plain regression test."""
CONFIGURATIONS = ([], ["-c"], ["-l2"], ["-c", "-l2"], ["-M5"], ["-J"], ["-c", "-J"])

QUERY_IDS = ("1", "2", "9", "10", "003", "100", "a", "B")  # "10" < "9" as text; "003" is 3 as a number
DOC_IDS = (*(f"d{i}" for i in range(1, 25)), "9", "10", "010", "D1")
TAG = "tag"  # the run's file name too: trec_eval's runid is the tag, evalset's the file name


@dataclass(frozen=True)
class Collection:
    """Judgments (query -> [(doc, grade)], a pair twice when repeated) and a run (query -> [(doc, score text,
    rank)]), and how their lines are written."""

    qrels: dict[str, list[tuple[str, int]]]
    run: dict[str, list[tuple[str, str, int]]]
    qrels_text: str
    run_text: str

    def write(self, folder: Path) -> tuple[Path, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        qrels, run = folder / "qrels", folder / TAG
        qrels.write_text(self.qrels_text)
        run.write_text(self.run_text)
        return qrels, run

    def as_trec_eval_reads(self, flags: list[str]) -> tuple[Collection, list[str]]:
        """The input trec_eval 10 is given to read as evalset reads this one, and the departures used (module
        docstring)."""
        used = []
        qrels = {query: list(dict.fromkeys(pairs)) for query, pairs in self.qrels.items()}
        if qrels != self.qrels:
            used.append("a qrels line repeated")
        run = {}
        for query, entries in self.run.items():
            best: dict[str, tuple[str, str, int]] = {}
            for entry in entries:  # the first place in trec_eval's order: the highest score
                if entry[0] not in best or float(entry[1]) > float(best[entry[0]][1]):
                    best[entry[0]] = entry
            run[query] = list(best.values())
        if run != self.run:
            used.append("a document twice in a ranking")
        if "-c" not in flags and set(qrels) - set(run):
            qrels = {query: pairs for query, pairs in qrels.items() if query in run}
            used.append("a judged query the run lacks, without -c")
        if not used:
            return self, []
        return Collection(qrels, run, _qrels_text(qrels), _run_text(run)), used


def _qrels_text(qrels: dict[str, list[tuple[str, int]]]) -> str:
    return "".join(f"{query} 0 {doc} {grade}\n" for query, pairs in qrels.items() for doc, grade in pairs)


def _run_text(run: dict[str, list[tuple[str, str, int]]]) -> str:
    return "".join(f"{query} Q0 {doc} {rank} {score} {TAG}\n" for query, entries in run.items()
                   for doc, score, rank in entries)


SCORE_VALUES = st.one_of(
    st.integers(0, 3).map(float),  # heavy ties
    st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 3)),
    st.sampled_from([0.1, 0.1 + 1e-9, 1 / 3, np.float32(1 / 3).item(), 1e-7, 1.00000001e-7]),  # float32 ties
)


@st.composite
def score_texts(draw) -> str:
    value = draw(SCORE_VALUES)
    spelled = draw(st.sampled_from(["plain", "exponent", "signed"]))
    if spelled == "exponent":
        return f"{value:.6e}"
    text = repr(value)
    return f"+{text}" if spelled == "signed" and not text.startswith("-") else text


@st.composite
def line_shapes(draw, line: str) -> str:
    """``line`` written as files have it: tabs or spaces, white space at either end, text after a run's tag."""
    fields = line.split()
    separator = draw(st.sampled_from([" ", "\t", "  ", " \t"]))
    text = separator.join(fields)
    if len(fields) == 6 and draw(st.integers(0, 9)) == 0:
        text += " trailing text"
    return draw(st.sampled_from(["", "", "", " ", "\t"])) + text + draw(st.sampled_from(["", "", "", " ", "\t"]))


@st.composite
def collections(draw) -> Collection:
    queries = sorted(draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True)))
    queries = [queries[0], *draw(st.permutations(queries[1:]))]  # the lowest id, evaluated first, is the shared one
    grades = st.sampled_from([-1, 0, 0, 0, 1, 1, 2, 3, 4])
    qrels: dict[str, list[tuple[str, int]]] = {}
    run: dict[str, list[tuple[str, str, int]]] = {}
    for index, query in enumerate(queries):
        # one query judged (a grade >= 0) and retrieved, so that neither tool refuses the pair; trec_eval 10.0 exits
        # 4 when the first query it evaluates has only negative grades (a departure of its own)
        shared = index == 0
        if shared or draw(st.integers(0, 4)) > 0:
            docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=10, unique=True))
            pairs = [(doc, draw(grades)) for doc in docs]
            if shared and all(grade < 0 for _, grade in pairs):
                pairs[0] = (pairs[0][0], 0)
            if draw(st.integers(0, 19)) == 0:
                pairs.append(pairs[0])  # a qrels line twice
            qrels[query] = pairs
        if shared or draw(st.integers(0, 4)) > 0:
            depth = draw(st.one_of(st.integers(0 if not shared else 1, 14), st.just(210)))
            docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=depth, max_size=depth, unique=True)) \
                if depth <= len(DOC_IDS) else [*DOC_IDS, *(f"x{i}" for i in range(depth - len(DOC_IDS)))]
            first_rank = draw(st.sampled_from([0, 1]))
            ranks = range(first_rank, first_rank + len(docs))
            if draw(st.booleans()):
                ranks = draw(st.permutations(list(ranks)))  # ranks out of score order
            entries = [(doc, draw(score_texts()), rank) for doc, rank in zip(docs, ranks, strict=True)]
            if entries and draw(st.integers(0, 19)) == 0:
                entries.append((entries[0][0], draw(score_texts()), 99))  # a document twice
            if entries:
                run[query] = entries
    lines = {"qrels": _qrels_text(qrels).splitlines(), "run": _run_text(run).splitlines()}
    texts = {}
    for kind, written in lines.items():
        shaped = [draw(line_shapes(line)) for line in written]
        if draw(st.booleans()):
            shaped = draw(st.permutations(shaped))  # queries' lines interleaved
        if draw(st.integers(0, 4)) == 0:  # trec_eval 10 reads a qrels comment at column 0 only, one at a time,
            # and never as the last line (a departure of its own)
            comments = ["# a comment", "  #x y z", ""] if kind == "run" else ["# a comment x y"]
            last = len(shaped) if kind == "run" else len(shaped) - 1
            shaped.insert(draw(st.integers(0, last)), draw(st.sampled_from(comments)))
        texts[kind] = "".join(line + "\n" for line in shaped)
    return Collection(qrels, run, texts["qrels"], texts["run"])


@dataclass
class Tally:
    """What the suite compared: collections, lines (per query and ``all``), the departures' lines and readings."""

    collections: int = 0
    lines: Counter = None
    accepted: Counter = None

    def __post_init__(self) -> None:
        self.lines, self.accepted = Counter(), Counter()

    def said(self) -> str:
        accepted = ", ".join(f"{count:,} {kind}" for kind, count in sorted(self.accepted.items())) or "none"
        return (f"{self.collections:,} generated collections x {len(CONFIGURATIONS)} configurations; "
                f"{self.lines['per query']:,} per-query and {self.lines['all']:,} all lines compared; "
                f"departures of the table: {accepted}")


def differences(binary: Path, collection: Collection, folder: Path, tally: Tally) -> list[tuple[str, str, str]]:
    """The lines (configuration, trec_eval's, evalset's) that differ and no departure of the table explains."""
    tally.collections += 1
    unexplained = []
    qrels, run = collection.write(folder / "given")
    for flags in CONFIGURATIONS:
        read, used = collection.as_trec_eval_reads(flags)
        tally.accepted.update(used)
        their_qrels, their_run = read.write(folder / "read") if used else (qrels, run)
        theirs = trec_eval_lines(binary, their_qrels, their_run, flags)
        comparison = Comparison()
        comparison.add(TAG, theirs, evalset_lines(qrels, [run], flags))
        tally.lines.update(comparison.compared)
        for _, their, our in comparison.differing:
            kind = departure(their, our, theirs, their_qrels, flags)
            if kind is None:
                unexplained.append((" ".join(flags) or "(plain)", their, our))
            else:
                tally.accepted[kind] += 1
        if comparison.order:
            unexplained.append((" ".join(flags), "lines in another order", ""))
    return unexplained


def check_against_trec_eval_10(binary: Path, folder: Path, tally: Tally, profile: settings = DIFFERENTIAL) -> None:
    @profile
    @given(collections())
    def every_line_equal(collection: Collection) -> None:
        unexplained = differences(binary, collection, folder / str(tally.collections), tally)
        assert not unexplained, (f"{len(unexplained)} lines differ, e.g. {unexplained[:4]}\n"
                                 f"qrels:\n{collection.qrels_text}run:\n{collection.run_text}")

    every_line_equal()


def test_every_line_equals_trec_eval_10s_on_generated_collections(trec_eval_10, tmp_path, record_property):
    tally = Tally()
    check_against_trec_eval_10(trec_eval_10, tmp_path, tally)
    record_property("compatibility", f"differential, trec_eval 10.0 -q -m all_trec: {tally.said()}")
    assert tally.collections >= EXAMPLES and tally.lines["per query"] > 0


def wrong_precision(x):
    """P@k divided by the documents retrieved when a ranking is shorter than k: the self-test's planted defect."""
    retrieved = np.minimum(x.rows.retrieved, x.cutoff)
    return x.per_query(x.rows.expected_relevant) / np.maximum(retrieved, 1)


def test_the_bounded_profile_catches_a_measure_patched_wrong(trec_eval_10, tmp_path, monkeypatch):
    monkeypatch.setitem(MEASURES, "p", replace(MEASURES["p"], compute=wrong_precision))
    quick = settings(DIFFERENTIAL, max_examples=QUICK)
    with pytest.raises(AssertionError, match=r"lines differ, e\.g\. .*P_"):
        check_against_trec_eval_10(trec_eval_10, tmp_path, Tally(), quick)


# --- trec_eval 9 through pytrec_eval
PYTREC_CONFIGURATIONS = ({"relevance_level": 1}, {"relevance_level": 2}, {"relevance_level": 1,
                                                                          "judged_docs_only_flag": True})


def pytrec_differences(collection: Collection, tally: Tally) -> list[tuple[str, str, float, float]]:
    """Per-query values under ``-c trec_eval_version=9`` that differ from pytrec_eval's by more than 1e-9 (query,
    measure, pytrec_eval's, evalset's); pytrec_eval reads dicts, so repeats are gone and a run lacks no judged query
    it evaluates (trec_eval 9 skips it)."""
    import pandas as pd
    import pytrec_eval

    read, _ = collection.as_trec_eval_reads([])
    qrels = {query: {doc: grade for doc, grade in pairs} for query, pairs in read.qrels.items()}
    run = {query: {doc: float(score) for doc, score, _ in entries} for query, entries in read.run.items()}
    spelled = {trec_eval_name(parse_measure(text)): text for text in expand_measures(["all_trec"], 9)}
    qrels_frame = qrels_from_frame(pd.DataFrame(
        [(query, doc, grade) for query, grades in qrels.items() for doc, grade in grades.items()],
        columns=["query_id", "doc_id", "grade"]))
    run_frame = run_from_frame(pd.DataFrame(
        [(query, doc, score) for query, docs in run.items() for doc, score in docs.items()],
        columns=["query_id", "doc_id", "score"]))
    differing = []
    for configuration in PYTREC_CONFIGURATIONS:
        theirs = pytrec_eval.RelevanceEvaluator(qrels, set(pytrec_eval.supported_measures) - {"relstring", "runid"},
                                                **configuration).evaluate(run)
        contract = EvaluationContract(rel_level=configuration["relevance_level"], missing="skip", undefined="zero",
                                      unjudged="condensed" if configuration.get("judged_docs_only_flag")
                                      else "nonrelevant", trec_eval_version=9)
        ours = evaluate(run_frame, qrels_frame, list(spelled.values()), contract)
        for query, values in theirs.items():
            for name, their in values.items():
                if name not in spelled:
                    continue  # num_q: a line, not a value per query
                our = float(ours.loc[query, str(parse_measure(spelled[name]))])
                if name.startswith("gm_"):  # pytrec_eval's per-query value of a geometric mean is its log
                    our = math.log(max(our, 0.00001))
                tally.lines["per query"] += 1
                if math.isnan(their) and our == 0 and configuration.get("judged_docs_only_flag"):
                    tally.accepted["-nan where -J leaves nothing"] += 1
                elif not abs(their - our) <= 1e-9:
                    differing.append((query, name, their, our))
    tally.collections += 1
    return differing


def test_every_value_under_version_9_equals_pytrec_evals_on_generated_collections(record_property):
    pytest.importorskip("pytrec_eval")
    tally = Tally()

    @DIFFERENTIAL
    @given(collections())
    def every_value_equal(collection: Collection) -> None:
        differing = pytrec_differences(collection, tally)
        assert not differing, (f"{len(differing)} values differ, e.g. {differing[:4]}\n"
                               f"qrels:\n{collection.qrels_text}run:\n{collection.run_text}")

    every_value_equal()
    record_property("compatibility", f"differential, pytrec_eval (trec_eval 9) per-query values under "
                                     f"-c trec_eval_version=9: {tally.collections:,} generated collections x "
                                     f"{len(PYTREC_CONFIGURATIONS)} configurations; {tally.lines['per query']:,} "
                                     f"values compared; accepted: {dict(tally.accepted) or 'none'}")
    assert tally.lines["per query"] > 0
