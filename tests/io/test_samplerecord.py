"""The document sample's record (sample.tsv, sample.json): written to round-trip exactly, read back with every check
the estimate relies on, each refusal one line naming the file and line."""

import json

import numpy as np
import pandas as pd
import pytest

from evalset.errors import InputError
from evalset.io.digests import file_sha256
from evalset.io.samplerecord import SampleRecord, check_source, read_sample, record_texts, sample_frame

PI = [1.0, 0.1 + 0.2, 2 / 3, 1 / 3 - 1e-17, 0.7]  # sums to 3.0 up to rounding; repr round-trips every one


def _record(tmp_path, pool_sha256="0" * 64):
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(5)], "query_id": ["1", "1", "1", "2", "2"],
                          "doc_id": ["a", "b", "c", "a", "d"], "prior": [5.0, 1.5, 1.0, 0.3, 2.1], "pi": PI,
                          "sampled": [True, False, True, False, True]})
    record = SampleRecord(float(sum(PI)), None, 4, 10, 0.3, {"pool": "pool", "pool_sha256": pool_sha256}, pairs)
    for name, text in record_texts(record, "test").items():
        (tmp_path / name).write_text(text)
    return record


def test_the_record_reads_back_exactly_and_gives_the_estimates_frame(tmp_path):
    record = _record(tmp_path)
    again = read_sample(tmp_path)
    pd.testing.assert_frame_equal(again.pairs, record.pairs)  # every float as written, bit for bit
    assert (again.budget, again.seed, again.depth, again.floor) == (record.budget, 4, 10, 0.3)
    frame = sample_frame(tmp_path / "sample.json")
    assert list(frame.columns) == ["query_id", "doc_id", "pi", "sampled"]
    assert frame["pi"].tolist() == PI and frame["sampled"].tolist() == [True, False, True, False, True]
    assert frame["sampled"].dtype == bool and frame["pi"].dtype == np.float64
    assert json.loads((tmp_path / "sample.json").read_text())["counts"] == {"pairs": 5, "drawn": 3, "certain": 1,
                                                                           "queries": 2}


def _edit(tmp_path, line, column, value):
    path = tmp_path / "sample.tsv"
    lines = path.read_text().splitlines()
    fields = lines[line - 1].split("\t")
    fields[column] = value
    lines[line - 1] = "\t".join(fields)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("line", "column", "value", "message"), [
    (3, 4, "0", "pi 0 is outside (0, 1]"),
    (4, 4, "1.2", "pi 1.2 is outside (0, 1]"),
    (4, 4, "", "a sampled pair without its pi (1 c)"),
    (3, 4, "", "pi missing (1 b)"),
    (3, 4, "x", "pi must be a number, found 'x'"),
    (5, 5, "2", "sampled must be 1 (drawn) or 0, found '2'"),
    (3, 3, "-1", "prior must be a number above 0"),
    (4, 2, "b", "pair 1 b appears twice (lines 3 and 4)"),
    (4, 0, "p1", "pair_id p1 appears twice (lines 3 and 4)"),
    (3, 4, "0.5", "the pairs' pi sum to 3.2, not the recorded budget 3"),
])
def test_a_bad_line_is_refused_naming_the_file_and_line(tmp_path, line, column, value, message):
    _record(tmp_path)
    _edit(tmp_path, line, column, value)
    with pytest.raises(InputError) as caught:
        read_sample(tmp_path)
    text = str(caught.value)
    assert message in text and "\n" not in text and str(tmp_path / "sample.tsv") in text
    if "budget" not in message:
        assert f"sample.tsv:{line}:" in text


def test_a_record_of_another_pool_or_a_torn_record_is_refused(tmp_path):
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "pool.tsv").write_text("pair_id\tquery_id\tdoc_id\torder\np0\t1\ta\t1\n")
    record = _record(tmp_path, pool_sha256=file_sha256(pool / "pool.tsv"))
    check_source(record, pool, tmp_path)  # the pool it was drawn from: accepted
    (pool / "pool.tsv").write_text("pair_id\tquery_id\tdoc_id\torder\np0\t1\tb\t1\n")
    with pytest.raises(InputError) as caught:
        sample_frame(tmp_path, pool)
    line = next(n for n, text in enumerate((tmp_path / "sample.json").read_text().splitlines(), 1)
                if '"pool_sha256"' in text)
    assert str(caught.value).startswith(f"{tmp_path / 'sample.json'}:{line}: the sample was drawn from another pool")
    (tmp_path / "sample.tsv").write_text("\n".join((tmp_path / "sample.tsv").read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(InputError, match=r"4 pairs, but sample\.json records 5"):
        read_sample(tmp_path)
    (tmp_path / "sample.json").write_text('{"design": "uniform"}')
    with pytest.raises(InputError, match="not a document sample's record"):
        read_sample(tmp_path / "sample.json")


def test_the_drawn_pairs_pool_tsv_beside_the_record_must_hold_exactly_the_sampled_pairs(tmp_path):
    _record(tmp_path)
    header = "pair_id\tquery_id\tdoc_id\torder\n"
    (tmp_path / "pool.tsv").write_text(header + "p0\t1\ta\t1\np2\t1\tc\t3\np4\t2\td\t5\n")
    assert read_sample(tmp_path).drawn["pair_id"].tolist() == ["p0", "p2", "p4"]
    (tmp_path / "pool.tsv").write_text(header + "p0\t1\ta\t1\np1\t1\tb\t2\np2\t1\tc\t3\np4\t2\td\t5\n")
    with pytest.raises(InputError, match=r"pair_id p1 is not a sampled pair of sample\.tsv"):
        read_sample(tmp_path)
    (tmp_path / "pool.tsv").write_text(header + "p0\t1\ta\t1\np4\t2\td\t5\n")
    with pytest.raises(InputError, match=r"the sampled pair_id p2 of sample\.tsv is not in pool\.tsv"):
        read_sample(tmp_path)
