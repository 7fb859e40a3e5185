"""`evalset score` on runs big enough to be streamed (the size threshold lowered to a few bytes): the same output,
byte for byte, as reading them whole; a bad line or a truncated file refused with its line, nothing printed."""

import gzip
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.io import runstream


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    return str(root / "qrels.txt"), [str(root / "runs" / "official_full" / f"{name}.run.gz")
                                     for name in ("bm25base_p", "idst_bert_p1", "p_bert")]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def streamed(monkeypatch):
    """Every run file streamed, in blocks of 64 KiB of text."""
    monkeypatch.setattr(runstream, "STREAM_ABOVE_BYTES", 0)
    monkeypatch.setattr(runstream, "STREAM_ABOVE_COMPRESSED_BYTES", 0)
    monkeypatch.setattr(runstream, "STREAM_BLOCK_BYTES", 1 << 16)


@pytest.mark.slow
@pytest.mark.parametrize("options", [["--format", "json", "--per-query"], ["-m", "ap", "-m", "ndcg@5", "-c",
                                                                               "ties=expected", "--per-query"]])
def test_score_streamed_prints_what_score_whole_prints(dl19, monkeypatch, options):
    qrels, runs = dl19
    whole = invoke("score", "--qrels", qrels, *runs, *options)
    with monkeypatch.context() as patched:
        patched.setattr(runstream, "STREAM_ABOVE_BYTES", 0)
        patched.setattr(runstream, "STREAM_ABOVE_COMPRESSED_BYTES", 0)
        patched.setattr(runstream, "STREAM_BLOCK_BYTES", 1 << 16)
        assert runstream.streams(runs[0])
        streamed = invoke("score", "--qrels", qrels, *runs, *options)
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    assert streamed.stdout == whole.stdout and streamed.stderr == whole.stderr
    assert len(whole.stdout) > 1000


def _with_line(run: str, folder: Path, line: str) -> tuple[Path, int]:
    """The run (as ``folder/run.txt``) with its middle line replaced by ``line``, formatted with that line's
    ``fields``, and the line's number."""
    with gzip.open(run, "rt") as handle:
        lines = handle.read().splitlines()
    middle = len(lines) // 2
    lines[middle] = line.format(fields=lines[middle].split())
    folder.mkdir(exist_ok=True)
    changed = folder / "run.txt"
    changed.write_text("\n".join(lines) + "\n")
    return changed, middle + 1


@pytest.mark.slow
def test_a_bad_line_in_the_middle_of_a_streamed_run_prints_no_result(dl19, tmp_path, streamed):
    qrels, runs = dl19
    bad, line = _with_line(runs[0], tmp_path, "{fields[0]} Q0 D1 1 1.5x tag")  # a score that is not a number
    result = invoke("score", "--qrels", qrels, runs[1], bad)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"evalset: error: {bad}:{line}: ")
    assert "score must be a finite number, found '1.5x'" in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("stream", [True, False])
def test_the_rank_field_is_read_only_under_the_tie_rule_that_uses_it(dl19, tmp_path, monkeypatch, stream):
    """trec_eval never reads a run's rank field: scoring reads it only under -c ties=run (streamed or read whole)."""
    qrels, runs = dl19
    if stream:
        monkeypatch.setattr(runstream, "STREAM_ABOVE_BYTES", 0)
        monkeypatch.setattr(runstream, "STREAM_BLOCK_BYTES", 1 << 16)
    odd, line = _with_line(runs[0], tmp_path / "odd", "{fields[0]} Q0 {fields[2]} x {fields[4]} {fields[5]}")
    same = "{fields[0]} {fields[1]} {fields[2]} {fields[3]} {fields[4]} {fields[5]}"
    plain, _ = _with_line(runs[0], tmp_path / "plain", same)
    scored, reference = invoke("score", "--qrels", qrels, odd), invoke("score", "--qrels", qrels, plain)
    assert scored.exit_code == reference.exit_code == 0, scored.output
    assert scored.stdout == reference.stdout
    assert scored.stdout.splitlines()[1].split()[1] == "0.5058"  # bm25base_p's nDCG@10, trec_eval's figure
    refused = invoke("score", "--qrels", qrels, odd, "-c", "ties=run")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == f"evalset: error: {odd}:{line}: rank must be an integer, found 'x'\n"


@pytest.mark.slow
def test_a_truncated_gzip_run_prints_no_result(dl19, tmp_path, streamed):
    qrels, runs = dl19
    data = Path(runs[1]).read_bytes()
    cut = tmp_path / "cut.run.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    result = invoke("score", "--qrels", qrels, runs[0], cut)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"evalset: error: {cut}:") and "ends early" in result.stderr
