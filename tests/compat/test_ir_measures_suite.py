"""ir_measures' own test suite (v0.4.3) run against evalset's provider (evalset.compat.ir_measures).

The suite (terrierteam/ir_measures, tag v0.4.3, ``tests/``, unmodified) is kept at
``../shared/tools/ir_measures-0.4.3/`` (never edited: ``../shared/tools/README.md``). Each run copies it into the
test's temporary directory, swaps the provider in the copy (:data:`SWAPS`, written into the copy as ``SWAPPED.md``),
runs pytest on the copy in a subprocess and reads each test's outcome, and each subtest's, from a small plugin
added to the copy (:data:`PLUGIN`; it also imports ``evalset.compat.ir_measures``, which registers
``ir_measures.evalset``). Every selected test passes but those of :data:`DEPARTURES`, each of which must fail: one
that starts passing is flagged, so the table stays true. docs/python.md ("evalset as an ir_measures provider") prints
the counts and the table.

The tests swapped (:data:`SELECTED`), the ones that exercise a provider of measures evalset computes:

- ``test_pytrec_eval.py`` (all 13): ir_measures' pytrec_eval provider, whose conventions evalset's follows;
- ``test_judged.py``: the judged provider's Judged;
- ``test_gdeval.py``: gdeval's ERR (evalset's is gdeval's rule) and nDCG (gdeval's, with 2^grade - 1 gains);
- ``test_measures.py::TestMeasures::test_measures``: every available provider against every other on one list of
  measures; evalset joins by being registered, and the list of providers keeps the available ones (the suite
  leaves out trectools only; cwl_eval, pyndeval and ranx are not installed with evalset's test extra, and their
  ``iter_calc`` raises).

Not swapped: ``test_cwl_eval.py`` (cwl_eval's CwlMetric rows with residuals, RBP and C/W/L measures evalset does
not compute), ``test_pyndeval.py`` (the diversity measures alpha_nDCG, ERR_IA, NRBP: evalset has none),
``test_ranx.py`` (ranx's own numbers), ``test_providers.py`` (one assertion per provider of ten; its pytrec_eval
assertions are tests/compat/test_ir_measures_provider.py::test_the_ir_measures_empty_cases), ``test_accuracy.py``,
``test_compat.py`` (measures evalset does not compute), ``test_aggregate.py``, ``test_runtime.py``,
``test_util.py`` (ir_measures' own parsing, aggregation and runtime measures: no provider of evalset's measures).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ir_measures")

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO.parent / "shared" / "tools" / "ir_measures-0.4.3"

SWAPS: dict[str, list[tuple[str, str, int]]] = {
    # file: (text, its replacement, how many times the text occurs: a new version of the suite is noticed)
    "test_pytrec_eval.py": [("ir_measures.providers.PytrecEvalProvider()", "ir_measures.evalset", 11),
                            ("ir_measures.pytrec_eval", "ir_measures.evalset", 3)],
    "test_judged.py": [("ir_measures.judged", "ir_measures.evalset", 1)],
    "test_gdeval.py": [("ir_measures.gdeval", "ir_measures.evalset", 2)],
    "test_measures.py": [("if k != 'trectools']", "if k != 'trectools' and v.is_available()]", 1)],
}
"""What is changed in the copy; every other line is the suite's."""

MEASURES_TEST = "tests/test_measures.py::TestMeasures::test_measures"
SELECTED = ["tests/test_pytrec_eval.py", "tests/test_judged.py", "tests/test_gdeval.py", MEASURES_TEST]
"""The tests run (17; module docstring: why these)."""

JUDGED_OVER_K = ("evalset's Judged@k divides by k when the ranking is shorter than k (as P@k does); the judged "
                 "provider divides by the ranking's length")
GDEVAL_PLACES = ("equal to gdeval's to the 5 decimal places it prints, compared by the test exactly (assertEqual) "
                 "with those")
DEPARTURES: dict[str, str] = {
    "tests/test_pytrec_eval.py::TestPytrecEval::test_NumQ":
        "NumQ: a count of queries, not a value per query: evalset's per-query tables have no such measure "
        "(--format trec_eval prints num_q)",
    "tests/test_pytrec_eval.py::TestPytrecEval::test_nDCG":
        "nDCG(gains={0:1,1:4}): evalset's nDCG gains are the grade or 2^grade - 1 (dcg=), not a map of grades; its "
        "nDCG and nDCG@3 cases pass",
    "tests/test_judged.py::TestMeasures::test_judged (measure=Judged@1000)": JUDGED_OVER_K,
    "tests/test_judged.py::TestMeasures::test_judged (measure=Judged@10)": JUDGED_OVER_K,
    "tests/test_gdeval.py::TestPytrecEval::test_ERR":
        f"{GDEVAL_PLACES}: ERR@20 of query 0 is 0.10174560546875 (gdeval 0.10175), the mean 0.097747802734375 "
        "(0.09775); ERR@2 passes",
    "tests/test_gdeval.py::TestPytrecEval::test_nDCG":
        "gdeval's nDCG has 2^grade - 1 gains, ir_measures' nDCG (dcg='log2', the default) the grade; evalset's "
        f"nDCG(dcg='exp-log2') is gdeval's nDCG ({GDEVAL_PLACES})",
    **{f"{MEASURES_TEST} (measure=Judged@{k}, p1=JudgedProvider, p2=EvalsetProvider)":
       f"{JUDGED_OVER_K} (a ranking of 5 documents)" for k in (10, 20, 50, 100)},
}
"""The tests (or subtests: the id, then its message or parameters) that fail against evalset's provider, and why."""

PLUGIN = '''"""Added by evalset's tests/compat/test_ir_measures_suite.py (SWAPPED.md): registers evalset's provider
(ir_measures.evalset) and writes each test's outcome, and each subtest's, to the file EVALSET_SUITE_OUTCOMES names."""
import json
import os
import re

import evalset.compat.ir_measures  # noqa: F401

OUTCOMES = {}
AN_OBJECT = re.compile(r"<[\\w.]*?(\\w+) object at 0x[0-9a-f]+>")


def _described(context):
    """A subtest as pytest prints it, an object by its class (not its address): p1=JudgedProvider."""
    shown = ", ".join(f"{k}={AN_OBJECT.sub(lambda found: found.group(1), str(v))}" for k, v in context.kwargs.items())
    parts = ([f"[{context.msg}]"] if context.msg is not None else []) + ([f"({shown})"] if shown else [])
    return " ".join(parts)


def pytest_runtest_logreport(report):
    context = getattr(report, "context", None)
    key = report.nodeid if context is None else f"{report.nodeid} {_described(context)}"
    if report.when == "call" or report.failed:
        OUTCOMES[key] = "failed" if report.failed or OUTCOMES.get(key) == "failed" else report.outcome


def pytest_sessionfinish(session):
    with open(os.environ["EVALSET_SUITE_OUTCOMES"], "w") as handle:
        json.dump(OUTCOMES, handle, indent=1, sort_keys=True)
'''


def swapped_copy(into: Path) -> Path:
    """The suite copied into ``into`` with :data:`SWAPS` made, the plugin added and SWAPPED.md saying so."""
    if not SUITE.is_dir():
        pytest.fail(f"ir_measures' test suite not found at {SUITE}")
    copy = into / SUITE.name
    shutil.copytree(SUITE, copy)
    lines = ["# What evalset changed in this copy", "",
             f"A copy of {SUITE} (ir_measures 0.4.3's tests), run against evalset's ir_measures provider by",
             "evalset's tests/compat/test_ir_measures_suite.py. Changed:", ""]
    for name, swaps in SWAPS.items():
        path = copy / "tests" / name
        text = path.read_text()
        for old, new, count in swaps:
            assert text.count(old) == count, (name, old, text.count(old))
            text = text.replace(old, new)
            lines.append(f"- `tests/{name}`: `{old}` -> `{new}` ({count}x)")
        path.write_text(text)
    (copy / "evalset_swap.py").write_text(PLUGIN)
    (copy / "pytest.ini").write_text("[pytest]\n")
    lines += ["- added `evalset_swap.py` (loaded with `-p evalset_swap`): imports `evalset.compat.ir_measures`, "
              "which registers the provider `evalset` (`ir_measures.evalset`), and records each test's outcome",
              "- added `pytest.ini` (empty): the copy is its own rootdir", "",
              "Run: " + " ".join(SELECTED), ""]
    (copy / "SWAPPED.md").write_text("\n".join(lines))
    return copy


def run_suite(copy: Path) -> dict[str, str]:
    """Each selected test's outcome (and each subtest's) from a pytest subprocess on the copy."""
    outcomes = copy / "outcomes.json"
    env = {**os.environ, "EVALSET_SUITE_OUTCOMES": str(outcomes),
           "PYTHONPATH": os.pathsep.join([str(copy), str(REPO), os.environ.get("PYTHONPATH", "")])}
    interpreter = [sys.executable, *(["-S"] if sys.flags.no_site else [])]
    done = subprocess.run([*interpreter, "-m", "pytest", "-p", "evalset_swap", "-p", "no:cacheprovider", "-q",
                           *SELECTED], cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    if not outcomes.exists():
        pytest.fail(f"the suite did not run:\n{done.stdout}\n{done.stderr}")
    return json.loads(outcomes.read_text())


@pytest.mark.slow  # 4 s alone, 14 s beside the other tests on 2 cores
def test_ir_measures_suite_passes_against_evalset_but_for_the_departures_listed(tmp_path, record_property):
    copy = swapped_copy(tmp_path)
    assert "ir_measures.evalset" in (copy / "tests" / "test_pytrec_eval.py").read_text()
    outcomes = run_suite(copy)
    tests = {key: outcome for key, outcome in outcomes.items() if " " not in key}  # a subtest's key: "id msg"
    subtests = {key: outcome for key, outcome in outcomes.items() if " " in key}
    failed = {key for key, outcome in outcomes.items() if outcome == "failed"}
    assert len(tests) == 17
    assert set(DEPARTURES) <= set(outcomes), sorted(set(DEPARTURES) - set(outcomes))  # each one still exists
    assert sorted(failed - set(DEPARTURES)) == []  # no failure without its reason
    assert sorted(set(DEPARTURES) - failed) == []  # no departure that now passes
    departing = {key.split(" ")[0] for key in DEPARTURES}
    passed = sorted(key for key in tests if key not in departing)
    said = (f"ir_measures 0.4.3's suite against evalset's provider: {len(tests)} tests, {len(passed)} passed, "
            f"{len(departing)} with departures ({len(DEPARTURES)} listed; {len(failed & set(subtests))} of "
            f"{len(subtests)} subtests)")
    record_property("compatibility", said)
    assert (len(passed), len(departing)) == (11, 6)  # docs/python.md's counts
    assert (len(subtests), len(failed & set(subtests))) == (103, 6)
