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
@pytest.mark.parametrize("options", [["--format", "json", "--per-query"], ["-m", "ap", "-m", "ndcg@5", "--ties",
                                                                               "expected", "--per-query"]])
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


@pytest.mark.slow
def test_a_bad_line_in_the_middle_of_a_streamed_run_prints_no_result(dl19, tmp_path, streamed):
    qrels, runs = dl19
    with gzip.open(runs[0], "rt") as handle:
        lines = handle.read().splitlines()
    middle = len(lines) // 2
    lines[middle] = f"{lines[middle].split()[0]} Q0 D1 x 1.5 tag"  # a rank that is not a number
    bad = tmp_path / "bad.run"
    bad.write_text("\n".join(lines) + "\n")
    result = invoke("score", "--qrels", qrels, runs[1], bad)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"evalset: error: {bad}:{middle + 1}: ")
    assert "rank must be an integer, found 'x'" in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.slow
def test_a_truncated_gzip_run_prints_no_result(dl19, tmp_path, streamed):
    qrels, runs = dl19
    data = Path(runs[1]).read_bytes()
    cut = tmp_path / "cut.run.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    result = invoke("score", "--qrels", qrels, runs[0], cut)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"evalset: error: {cut}:") and "ends early" in result.stderr
