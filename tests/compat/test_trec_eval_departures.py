"""Where ``evalset score --format trec_eval`` departs from NIST's trec_eval 10.0 on purpose: each departure of the
table in docs/coming-from.md ("Where evalset departs from trec_eval 10"), shown on the real trec_eval (built from
../shared/tools) and on evalset side by side. Each test asserts both sides, so it fails if trec_eval and evalset
start to agree (and the table has a row too many) as well as if evalset changes."""

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main

TREC_EVAL_CONTRACT = ["-c", "missing=skip", "-c", "undefined=zero"]


def trec_eval(binary: Path, *arguments: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, arguments)], capture_output=True, text=True)


def evalset_score(*arguments: object):
    return CliRunner().invoke(main, ["score", *map(str, arguments)])


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


@pytest.fixture
def qrels(tmp_path) -> Path:
    return write(tmp_path, "qrels", "1 0 a 1\n1 0 b 0\n2 0 c 1\n")


def test_runid_is_the_runs_name_where_trec_eval_prints_its_last_lines_tag(trec_eval_10, tmp_path, qrels):
    run = write(tmp_path, "mine.run", "1 Q0 a 1 2 first\n2 Q0 c 1 2 last\n")
    theirs = trec_eval(trec_eval_10, "-m", "runid", qrels, run)
    ours = evalset_score("--qrels", qrels, run, "-m", "runid", "--format", "trec_eval")
    assert theirs.stdout == "runid                 \tall\tlast\n"
    assert ours.stdout == "runid                 \tall\tmine\n"


def test_a_judged_query_the_run_lacks_is_skipped_where_trec_eval_10_exits_4(trec_eval_10, tmp_path, qrels):
    run = write(tmp_path, "r", "1 Q0 a 1 2 t\n")
    theirs = trec_eval(trec_eval_10, "-m", "map", qrels, run)
    assert theirs.returncode == 4 and theirs.stderr == "trec_eval: result qid '2' not found in qrels\n"
    ours = evalset_score("--qrels", qrels, run, "-m", "map", "--format", "trec_eval", *TREC_EVAL_CONTRACT)
    assert ours.exit_code == 0 and ours.stdout == "map                   \tall\t1.0000\n"  # as trec_eval 9
    assert "note: r: 1 judged queries absent from the run" in ours.stderr


def test_an_empty_condensed_ranking_scores_0_where_trec_eval_prints_nan(trec_eval_10, tmp_path, qrels):
    run = write(tmp_path, "r", "1 Q0 a 1 2 t\n2 Q0 x 1 2 t\n")  # query 2 retrieved nothing judged
    asked = ["-m", "iprec_at_recall.0,1", "-m", "11pt_avg"]
    theirs = trec_eval(trec_eval_10, "-q", "-J", *asked, qrels, run).stdout.splitlines()
    ours = evalset_score("--qrels", qrels, run, *asked, "--per-query", "--format", "trec_eval", "-c",
                         "unjudged=condensed", *TREC_EVAL_CONTRACT).stdout.splitlines()
    differing = [(their, our) for their, our in zip(theirs, ours, strict=True) if their != our]
    assert differing == [
        ("iprec_at_recall_0.00  \t2\t  -nan", "iprec_at_recall_0.00  \t2\t0.0000"),  # lround(0 * R) = 0: 0 / 0
        ("11pt_avg              \t2\t  -nan", "11pt_avg              \t2\t0.0000"),
        ("iprec_at_recall_0.00  \tall\t  -nan", "iprec_at_recall_0.00  \tall\t0.5000"),
        ("11pt_avg              \tall\t  -nan", "11pt_avg              \tall\t0.5000"),
    ]


def test_num_rel_all_under_c_counts_the_grades_at_the_level_where_trec_eval_counts_every_one(trec_eval_10, tmp_path):
    qrels = write(tmp_path, "qrels", "1 0 a 1\n1 0 b 2\n")
    run = write(tmp_path, "r", "1 Q0 a 1 2 t\n")
    theirs = trec_eval(trec_eval_10, "-q", "-c", "-l2", "-m", "num_rel", qrels, run).stdout
    ours = evalset_score("--qrels", qrels, run, "-m", "num_rel", "--per-query", "--format", "trec_eval",
                         "-c", "rel_level=2", "-c", "missing=zero", "-c", "undefined=zero").stdout
    assert theirs == "num_rel               \t1\t1\nnum_rel               \tall\t2\n"  # its own lines sum to 1
    assert ours == "num_rel               \t1\t1\nnum_rel               \tall\t1\n"


def test_a_document_twice_in_a_ranking_counts_once_where_trec_eval_refuses_the_run(trec_eval_10, tmp_path, qrels):
    run = write(tmp_path, "r", "1 Q0 a 1 2 t\n1 Q0 a 2 1 t\n2 Q0 c 1 1 t\n")
    theirs = trec_eval(trec_eval_10, "-m", "num_ret", qrels, run)
    assert theirs.returncode == 4 and "duplicate docs a" in theirs.stderr
    ours = evalset_score("--qrels", qrels, run, "-m", "num_ret", "--format", "trec_eval", *TREC_EVAL_CONTRACT)
    assert ours.stdout == "num_ret               \tall\t2\n"
    assert "note: r: 1 repeated documents counted once" in ours.stderr


def test_a_qrels_line_repeated_is_collapsed_where_trec_eval_refuses_the_qrels(trec_eval_10, tmp_path):
    qrels = write(tmp_path, "qrels", "1 0 a 1\n1 0 a 1\n")
    run = write(tmp_path, "r", "1 Q0 a 1 2 t\n")
    theirs = trec_eval(trec_eval_10, "-m", "num_rel", qrels, run)
    assert theirs.returncode == 4 and "duplicate docs a" in theirs.stderr
    ours = evalset_score("--qrels", qrels, run, "-m", "num_rel", "--format", "trec_eval", *TREC_EVAL_CONTRACT)
    assert ours.exit_code == 0 and ours.stdout == "num_rel               \tall\t1\n"
    assert "note: the qrels: 1 repeated lines collapsed" in ours.stderr


def test_a_run_that_shares_no_query_with_the_qrels_is_refused_where_trec_eval_c_prints_zeros(trec_eval_10, tmp_path,
                                                                                             qrels):
    run = write(tmp_path, "r", "3 Q0 a 1 2 t\n")
    theirs = trec_eval(trec_eval_10, "-c", "-m", "map", qrels, run)
    assert theirs.returncode == 0 and theirs.stdout == "map                   \tall\t0.0000\n"
    ours = evalset_score("--qrels", qrels, run, "-m", "map", "--format", "trec_eval", "-c", "missing=zero")
    assert ours.exit_code == 2 and "run r shares no query with the judgments" in ours.stderr


@pytest.mark.parametrize(("line", "their_num_ret", "message"), [
    ("1 Q0 b 2 0x1p3 t\n", 2, "score must be a finite number, found '0x1p3'"),
    ("1 Q0 b 2 inf t\n", 2, "score must be a finite number, found 'inf'"),
    ("1 Q0 b 2 2.5x t\n", 2, "score must be a finite number, found '2.5x'"),
])
def test_a_score_c_reads_in_part_is_refused_where_trec_eval_reads_it(trec_eval_10, tmp_path, qrels, line,
                                                                     their_num_ret, message):
    run = write(tmp_path, "r", "1 Q0 a 1 2 t\n" + line + "2 Q0 c 1 1 t\n")
    theirs = trec_eval(trec_eval_10, "-q", "-m", "num_ret", qrels, run)
    assert theirs.returncode == 0 and f"num_ret               \t1\t{their_num_ret}\n" in theirs.stdout
    ours = evalset_score("--qrels", qrels, run, "-m", "num_ret", "--format", "trec_eval")
    assert ours.exit_code == 2 and ours.stderr == f"evalset: error: {run}:2: {message}\n"


@pytest.mark.parametrize(("grade", "atol"), [("1.7", 1), ("two", 0)])
def test_a_grade_that_is_no_integer_is_refused_where_trec_eval_reads_its_prefix(trec_eval_10, tmp_path, grade, atol):
    qrels = write(tmp_path, "qrels", f"1 0 a 1\n1 0 b {grade}\n")
    run = write(tmp_path, "r", "1 Q0 b 1 2 t\n")
    theirs = trec_eval(trec_eval_10, "-m", "P.1", qrels, run)
    assert theirs.returncode == 0 and theirs.stdout == f"P_1                   \tall\t{atol:.4f}\n"
    ours = evalset_score("--qrels", qrels, run, "-m", "P.1", "--format", "trec_eval")
    assert ours.exit_code == 2 and ours.stderr == f"evalset: error: {qrels}:2: grade must be an integer, found " \
                                                  f"{grade!r}\n"


@pytest.mark.parametrize(("text", "theirs_read"), [
    ("# one\n# two x y\n1 0 a 1\n", "a judgment of query #"),  # it skips one comment line at a time
    ("1 0 a 1\n# last\n", "a crash"),  # it reads past its buffer after a comment that ends the file
    (" # indented\n1 0 a 1\n", "a malformed line"),
    ("1 0 a 1\n\n", "a malformed line"),
])
def test_every_comment_and_blank_line_of_qrels_is_skipped_where_trec_eval_skips_some(trec_eval_10, tmp_path, text,
                                                                                   theirs_read):
    qrels = write(tmp_path, "qrels", text)
    run = write(tmp_path, "r", "1 Q0 a 1 2 t\n")
    theirs = trec_eval(trec_eval_10, "-c", "-q", "-m", "num_rel", qrels, run)
    if theirs_read == "a judgment of query #":
        assert theirs.returncode == 0 and "num_rel               \t#\t0\n" in theirs.stdout
    elif theirs_read == "a crash":
        assert theirs.returncode < 0  # SIGSEGV
    else:
        assert theirs.returncode == 2 and "Malformed line" in theirs.stderr
    ours = evalset_score("--qrels", qrels, run, "-m", "num_rel", "--per-query", "--format", "trec_eval", "-c",
                         "missing=zero")
    assert ours.stdout == "num_rel               \t1\t1\nnum_rel               \tall\t1\n"


def test_a_first_query_with_only_negative_grades_is_scored_where_trec_eval_exits_4(trec_eval_10, tmp_path):
    qrels = write(tmp_path, "qrels", "a 0 d1 1\n9 0 d2 -1\n")  # "9" < "a": evaluated first, nothing judged
    run = write(tmp_path, "r", "a Q0 d1 1 1 t\n9 Q0 d1 1 1 t\n")
    theirs = trec_eval(trec_eval_10, "-q", "-m", "num_ret", qrels, run)
    assert theirs.returncode == 4 and theirs.stderr == "trec_eval: Can't calculate measure 'num_ret'\n"
    ours = evalset_score("--qrels", qrels, run, "-m", "num_ret", "--per-query", "--format", "trec_eval",
                         *TREC_EVAL_CONTRACT)
    assert ours.stdout == ("num_ret               \t9\t1\nnum_ret               \ta\t1\n"
                           "num_ret               \tall\t2\n")
    later = write(tmp_path, "later", "a 0 d1 1\nb 0 d2 -1\n")  # such a query evaluated second: it reads it
    run_b = write(tmp_path, "r_b", "a Q0 d1 1 1 t\nb Q0 d1 1 1 t\n")
    assert trec_eval(trec_eval_10, "-q", "-m", "num_ret", later, run_b).returncode == 0


# --- what agrees, byte for byte (issue 73's "Must show")
FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec_eval"


@pytest.mark.parametrize(("qrels", "results", "flags"), [
    ("qrels.test", "results.test", []), ("qrels.rel_level", "results.test", ["-l2"]),
    ("qrels.test", "results.trunc", ["-c"]),
])
def test_map_and_p_10_per_query_are_trec_evals_byte_for_byte_on_its_fixtures(trec_eval_10, qrels, results, flags):
    theirs = trec_eval(trec_eval_10, "-q", "-m", "map", "-m", "P.10", *flags, FIXTURES / qrels, FIXTURES / results)
    contract = {"missing": "skip", "undefined": "zero"} | dict(
        {"-l2": ("rel_level", "2"), "-c": ("missing", "zero")}[flag] for flag in flags)
    ours = evalset_score("--qrels", FIXTURES / qrels, FIXTURES / results, "-m", "map", "-m", "P_10", "--per-query",
                         "--format", "trec_eval", *[arg for key, value in contract.items() for arg in
                                                    ("-c", f"{key}={value}")])
    assert theirs.returncode == 0 and ours.exit_code == 0
    assert ours.stdout == theirs.stdout and len(theirs.stdout.splitlines()) > 2


@pytest.mark.parametrize("ties", ["trec", "run"])
def test_the_shapes_that_were_refused_read_as_trec_eval_reads_them(trec_eval_10, tmp_path, ties):
    # a qrels line ending in a tab (a toolkit's test qrels), a run line starting with a space, + signs in a grade,
    # a rank and a score, an exponent: each once refused, now trec_eval's values
    qrels = write(tmp_path, "qrels", "2\t0\tdoc2_9\t0\t\n2\t0\tdoc2_1\t+1\t\n3 0 d 2 \n")
    run = write(tmp_path, "tag", " 2 Q0 doc2_1 +1 +2.5e0 tag\n2 Q0 doc2_9 +2 1E0 tag\t\n3 Q0 d 1 1 tag\n")
    theirs = trec_eval(trec_eval_10, "-q", "-m", "all_trec", qrels, run)
    ours = evalset_score("--qrels", qrels, run, "-m", "all_trec", "--per-query", "--format", "trec_eval", "-c",
                         f"ties={ties}", *TREC_EVAL_CONTRACT)
    assert theirs.returncode == 0 and ours.exit_code == 0, ours.output
    assert ours.stdout == theirs.stdout
