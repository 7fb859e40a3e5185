"""Group files (evalset.io.groups): a header naming the columns, one run a line; bad lines named."""

import pytest

from evalset.errors import InputError
from evalset.io.groups import read_groups, read_run_groups


def write(tmp_path, text):
    path = tmp_path / "groups.tsv"
    path.write_text(text)
    return path


def test_run_and_group_columns_by_default_and_by_name(tmp_path, shared_data):
    groups = read_groups(write(tmp_path, "run\tgroup\nA\tG1\nB\tG1\nC\tG2\n"))
    assert groups.to_dict() == {"A": "G1", "B": "G1", "C": "G2"}
    metadata = read_groups(shared_data / "dl19" / "run_metadata.tsv", "runid", "participant")
    assert len(metadata) == 37 and metadata["idst_bert_p1"] == "IDST" and metadata.nunique() == 12


@pytest.mark.parametrize("text, message", [
    ("run\tgroup\n", "no runs: the group file has a header (run, group) and no line"),
    ("runid\tgroup\nA\tG\n", "missing column(s) run in header"),
    ("run\tgroup\nA\tG1\nA\tG2\n", "run A appears twice (lines 2 and 3)"),
    ("run\tgroup\nA\t \n", "empty group"),
])
def test_bad_group_files_are_refused_naming_the_line(tmp_path, text, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_groups(write(tmp_path, text))


def test_one_column_for_both_is_refused(tmp_path):
    with pytest.raises(InputError, match="one column"):
        read_groups(write(tmp_path, "run\tgroup\nA\tG\n"), "run", "run")


def test_the_columns_are_found_by_their_names_or_a_two_column_file_is_run_then_group(tmp_path):
    trec = read_run_groups(write(tmp_path, "runid\ttype\tparticipant\nA\tauto\tG1\nB\tmanual\tG2\n"))
    assert trec.to_dict() == {"A": "G1", "B": "G2"} and trec.attrs["source"].endswith("groups.tsv")
    assert read_run_groups(write(tmp_path, "system\tteam\nA\tG1\n")).to_dict() == {"A": "G1"}
    with pytest.raises(InputError, match="names run and group, or runid and participant, or two columns; got a, b, c"):
        read_run_groups(write(tmp_path, "a\tb\tc\nA\tG1\tx\n"))
