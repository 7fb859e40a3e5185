"""A log with nothing left to sample is refused with the cause (every row dropped, by reason), not with the
symptom "stratum 'head' has 0 distinct queries" (issue 15, item 12)."""

import pytest

from evalset.errors import InputError
from evalset.sampling import LogLayout, sample_log


@pytest.mark.parametrize(("text", "cause"), [
    ("", "the log is empty: no header, no line"),
    ("query\n", "the query log has no row: nothing to sample"),
    ("query\n\n  \n   \n", "no query left to sample"),
])
def test_an_empty_log_or_only_empty_queries(tmp_path, text, cause):
    log = tmp_path / "log.tsv"
    log.write_text(text)
    with pytest.raises(InputError, match=cause) as caught:
        sample_log([str(log)], 1)
    assert caught.value.path == str(log) and "distinct queries" not in str(caught.value)


def test_the_reasons_are_counted(tmp_path):
    log = tmp_path / "log.tsv"
    log.write_text("query\tcount\n\t3\n  \t2\n")
    with pytest.raises(InputError) as caught:
        sample_log([str(log)], 1, layout=LogLayout(count="count"))
    assert caught.value.message == "no query left to sample: all 5 submissions read were dropped (empty 5)"
