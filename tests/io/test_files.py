"""Scans of a file's bytes."""

import gzip

import pytest

from evalset.io import files


@pytest.mark.parametrize("text, needle, found", [
    (b"", b"#", False), (b"q0 0 d1 1\n", b"#", False), (b"q0 0 d1 1\n# note\n", b"#", True),
    (b"q0\t0\td1\t1\n", b"\t", True), (b"ab", b"abc", False), (b"abc", b"abc", True),
])
def test_file_contains_finds_a_needle_anywhere(tmp_path, text, needle, found):
    path = tmp_path / "f.txt"
    path.write_bytes(text)
    assert files.file_contains(str(path), needle) is found


def test_file_contains_finds_a_needle_across_two_windows(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "SCAN_WINDOW_BYTES", 8)
    path = tmp_path / "f.txt"
    for at in range(0, 14):  # the needle starting at every place of the first two windows and the third
        path.write_bytes(b"." * at + b"xyz" + b"." * (20 - at))
        assert files.file_contains(str(path), b"xyz"), at
    path.write_bytes(b"." * 7 + b"xy" + b"." * 7 + b"z")
    assert files.file_contains(str(path), b"xyz") is False


def test_file_contains_does_not_know_of_a_compressed_file(tmp_path):
    path = tmp_path / "f.txt.gz"
    path.write_bytes(gzip.compress(b"#"))
    assert files.file_contains(str(path), b"#") is None
