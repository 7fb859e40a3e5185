"""`evalset score --format trec_eval` prints what trec_eval prints, byte for byte, on trec_eval's own fixtures.

trec_eval's defaults, and the contract options that give its numbers: relevance level 1 (``-l``, evalset's default
too); a query of the run absent from the qrels is ignored (evalset too); a judged query absent from the run is
skipped (``-c missing=skip``; ``-c`` is ``-c missing=zero``); a query with no relevant document scores 0
(``-c undefined=zero``); neither cuts a ranking unless asked (``-M N`` is ``--max-retrieved N``). trec_eval prints
the run's tag (``STANDARD``) as ``runid`` and evalset the run's name: the run file is copied to a file named
``STANDARD``.
"""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
# every measure of out.test.aq that evalset has, in trec_eval's spelling (recall without a cutoff: set_recall)
BOTH_HAVE = ("map", "Rprec", "bpref", "recip_rank", "recall", "ndcg", *(f"P_{k}" for k in CUTOFFS),
             *(f"recall_{k}" for k in CUTOFFS), *(f"ndcg_cut_{k}" for k in CUTOFFS),
             *(f"map_cut_{k}" for k in CUTOFFS), "success_1", "success_5", "success_10",
             "num_ret", "num_rel", "num_rel_ret", "set_P", "set_F")  # counts: integers, summed in "all"
PRINTED = {"runid", "num_q", "set_recall", *BOTH_HAVE} - {"recall"}
TREC_EVAL_DEFAULTS = ("-c", "missing=skip", "-c", "undefined=zero")


@pytest.fixture(scope="module")
def fixtures(shared_data: Path) -> Path:
    return shared_data / "trec_eval"


def run_named_standard(fixtures: Path, results: str, folder: Path) -> Path:
    target = folder / "STANDARD"
    shutil.copyfile(fixtures / results, target)
    return target


def expected_lines(path: Path, names: set[str]) -> str:
    """The fixture's lines whose measure evalset prints (the name is padded to 22 characters, then a tab)."""
    return "".join(line for line in path.read_text().splitlines(keepends=True) if line.split("\t")[0].rstrip()
                   in names)


def score(*args: object) -> str:
    result = CliRunner().invoke(main, ["score", *(str(a) for a in args)])
    assert result.exit_code == 0, result.output
    return result.stdout


def metric_options(names: tuple[str, ...]) -> list[str]:
    return [part for name in names for part in ("-m", name)]


@pytest.mark.parametrize(
    ("expected", "qrels", "results", "options"),
    [
        ("out.test.aq", "qrels.test", "results.test", ["--per-query", *TREC_EVAL_DEFAULTS]),
        ("out.test.aql", "qrels.rel_level", "results.test", ["--per-query", "-c", "rel_level=2",
                                                             *TREC_EVAL_DEFAULTS]),
        # -c: a judged query absent from the run (results.trunc has no 303) scores 0 and counts in num_q
        ("out.test.aqc", "qrels.test", "results.trunc", ["--per-query", "-c", "missing=zero", "-c", "undefined=zero"]),
        ("out.test.a", "qrels.test", "results.test", TREC_EVAL_DEFAULTS),  # no -q: the "all" lines only
    ],
)
def test_output_equals_trec_eval_fixture_byte_for_byte(fixtures, tmp_path, expected, qrels, results, options):
    run = run_named_standard(fixtures, results, tmp_path)
    ours = score("--qrels", fixtures / qrels, run, *metric_options(("runid", "num_q", *BOTH_HAVE)), "--format",
                 "trec_eval", *options)
    truth = expected_lines(fixtures / expected, PRINTED)
    assert ours == truth
    assert len(ours.splitlines()) == (4 if "--per-query" in options else 1) * (len(BOTH_HAVE)) + 2


def test_official_measures_of_out_test(fixtures, tmp_path):
    # trec_eval's default measures (no -m), those evalset has, asked in another order: printed in trec_eval's
    official = ("P_1000", "P_5", "recip_rank", "bpref", "Rprec", "map", *(f"P_{k}" for k in CUTOFFS[1:-1]))
    run = run_named_standard(fixtures, "results.test", tmp_path)
    ours = score("--qrels", fixtures / "qrels.test", run, *metric_options(("runid", "num_q", *official)), "--format",
                 "trec_eval",
                 *TREC_EVAL_DEFAULTS)
    assert ours == expected_lines(fixtures / "out.test", {"runid", "num_q", *official})


def test_layout_order_and_what_is_left_out(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("9 0 a 1\n9 0 b 0\n10 0 a 2\n10 0 c 1\n")
    run = tmp_path / "mine.run"
    run.write_text("9 Q0 a 1 3 t\n9 Q0 b 2 2 t\n10 Q0 c 1 3 t\n10 Q0 a 2 2 t\n77 Q0 a 1 1 t\n")  # 77 has no qrels
    other = tmp_path / "other.run"
    other.write_text("10 Q0 a 1 3 t\n9 Q0 b 1 3 t\n")
    ours = score("--qrels", qrels, run, other, "-m", "ndcg@10", "-m", "rr@5", "-m", "p@5", "--format", "trec_eval",
                 "--per-query")
    # nDCG@10 of query 10: (1 + 2/log2 3) / (2 + 1/log2 3) = 0.8597, and 2 / (2 + 1/log2 3) = 0.7602
    # trec_eval's measure order (P before ndcg_cut), query ids sorted as strings ("10" < "9"), query 77 ignored;
    # judged@10 (beside nDCG@10) and rr@5 have no trec_eval name and are not printed; one block per run; runid and
    # num_q only when asked, as trec_eval -m P.5 -m ndcg_cut.10 prints them
    assert ours.splitlines() == [
        "P_5                   \t10\t0.4000", "ndcg_cut_10           \t10\t0.8597",
        "P_5                   \t9\t0.2000", "ndcg_cut_10           \t9\t1.0000",
        "P_5                   \tall\t0.3000", "ndcg_cut_10           \tall\t0.9299",
        "P_5                   \t10\t0.2000", "ndcg_cut_10           \t10\t0.7602",
        "P_5                   \t9\t0.0000", "ndcg_cut_10           \t9\t0.0000",
        "P_5                   \tall\t0.1000", "ndcg_cut_10           \tall\t0.3801",
    ]


def test_an_undefined_value_is_not_printed(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n2 0 b 0\n")  # query 2 has no relevant document: its AP is undefined under skip
    run = tmp_path / "r.run"
    run.write_text("1 Q0 a 1 2 t\n2 Q0 b 1 2 t\n")
    ten = score("--qrels", qrels, run, "-m", "map", "--format", "trec_eval", "--per-query")
    assert ten.splitlines() == ["map                   \t1\t1.0000", "map                   \tall\t1.0000"]


def test_a_measure_trec_eval_has_not_is_said_on_stderr_and_none_at_all_is_refused(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("9 0 a 2\n9 0 b 1\n")
    run = tmp_path / "mine.run"
    run.write_text("9 Q0 b 1 3 t\n9 Q0 a 2 2 t\n")
    runner = CliRunner()
    both = runner.invoke(main, ["score", "--qrels", str(qrels), str(run), "-m", "map", "-m", "AP(rel=2)", "-m",
                                "rr@5", "--format", "trec_eval"])
    assert both.exit_code == 0
    assert both.stdout.splitlines()[-1] == "map                   \tall\t1.0000"
    assert both.stderr == "note: not in trec_eval's output (trec_eval has no such measure): AP(rel=2), rr@5\n"
    none = runner.invoke(main, ["score", "--qrels", str(qrels), str(run), "-m", "AP(rel=2)", "--format",
                                "trec_eval"])
    assert none.exit_code == 2
    assert none.stdout == ""
    assert "none of the measures asked (AP(rel=2)) has a trec_eval name" in none.stderr


def invoke_score(fixtures: Path, *args: str):
    return CliRunner().invoke(main, ["score", "--qrels", str(fixtures / "qrels.test"),
                                     str(fixtures / "results.test"), *args, *TREC_EVAL_DEFAULTS])


def test_trec_evals_own_spellings_of_a_request_give_its_lines(fixtures):
    listed = invoke_score(fixtures, "-m", "P.5,10", "-m", "set_recall", "--format", "trec_eval")
    assert listed.exit_code == 0
    assert [line.split("\t")[0].strip() for line in listed.stdout.splitlines()] == ["P_5", "P_10", "set_recall"]
    lines = invoke_score(fixtures, "-m", "P.5", "-m", "num_q", "-m", "runid", "--format", "trec_eval")
    assert lines.stdout.splitlines() == ["runid                 \tall\tresults.test", "num_q                 \tall\t3",
                                         "P_5                   \tall\t0.2667"]  # trec_eval: runid STANDARD, its tag
    cut = invoke_score(fixtures, "-m", "num_ret", "--max-retrieved", "100", "--format", "trec_eval")
    assert cut.stdout.splitlines()[-1] == "num_ret               \tall\t300"
    assert "note: results.test: 1200 documents beyond --max-retrieved left out" in cut.stderr


def test_two_levels_trec_eval_prints_under_one_name_are_refused_and_a_rounded_level_is_said(fixtures):
    both = invoke_score(fixtures, "-m", "iprec@0.123456789", "-m", "iprec@0.12", "--format", "trec_eval")
    assert both.exit_code == 2
    assert ("iprec@0.123456789 and iprec@0.12 are both iprec_at_recall_0.12 in trec_eval's output" in both.stderr)
    one = invoke_score(fixtures, "-m", "iprec@0.123456789", "--format", "trec_eval")
    assert one.exit_code == 0 and "iprec_at_recall_0.12  \tall\t" in one.stdout
    assert ("note: iprec@0.123456789 is printed as iprec_at_recall_0.12, trec_eval's name for it (its level with two "
            "decimals)") in one.stderr


def test_trec_evals_lines_alone_are_refused_in_a_format_that_has_no_place_for_them(fixtures):
    for output_format in ("table", "json", "tsv"):
        alone = invoke_score(fixtures, "-m", "num_q", "-m", "runid", "--format", output_format)
        assert alone.exit_code == 2 and alone.stdout == ""
        assert "no measure asked: relstring, runid and num_q are lines of trec_eval's output" in alone.stderr
    beside = invoke_score(fixtures, "-m", "num_q", "-m", "map")
    assert beside.exit_code == 0 and "map" in beside.stdout
    assert "note: trec_eval's lines that are no measure are printed by --format trec_eval only: num_q" in beside.stderr
