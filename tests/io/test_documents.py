"""Files of one document (evalset.io.documents): read whole, or refused in one line naming the file."""

import pytest

from evalset.errors import InputError
from evalset.io.documents import read_json, read_toml, read_tsv_rows


def test_a_json_a_toml_and_a_tsv_file_are_read_whole(tmp_path):
    (tmp_path / "a.json").write_text('{"kappa": 0.5, "judges": ["a", "b"]}\n', encoding="utf-8")
    (tmp_path / "a.toml").write_text('depth = 10\nruns = ["x.run"]\n', encoding="utf-8")
    (tmp_path / "a.tsv").write_text('email\ttoken\na@x.org\t"t\tq"\n', encoding="utf-8")
    assert read_json(tmp_path / "a.json") == {"kappa": 0.5, "judges": ["a", "b"]}
    assert read_toml(tmp_path / "a.toml") == {"depth": 10, "runs": ["x.run"]}
    assert read_tsv_rows(tmp_path / "a.tsv") == [["email", "token"], ["a@x.org", "t\tq"]]


def test_a_tsv_field_in_quotes_keeps_its_tab_and_its_line_break(tmp_path):
    (tmp_path / "a.tsv").write_text('email\tnote\na@x.org\t"two\nlines"\nb@x.org\tone\n', encoding="utf-8")
    assert read_tsv_rows(tmp_path / "a.tsv") == [["email", "note"], ["a@x.org", "two\nlines"], ["b@x.org", "one"]]


@pytest.mark.parametrize(("content", "reader", "said"), [
    (b"{not json", read_json,
     "not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    (b"depth = = 5", read_toml, "not valid TOML: Invalid value (at line 1, column 9)"),
    (b'{"a": "\xff"}', read_json, "not UTF-8 text: invalid start byte at byte 7"),
])
def test_a_file_not_of_its_kind_is_refused_naming_it(tmp_path, content, reader, said):
    path = tmp_path / "doc"
    path.write_bytes(content)
    with pytest.raises(InputError) as refused:
        reader(path)
    assert str(refused.value) == f"{path}: {said}"


def test_a_missing_file_and_a_folder_are_refused_naming_them(tmp_path):
    for reader in (read_json, read_toml, read_tsv_rows):
        with pytest.raises(InputError, match=rf"^{tmp_path / 'none'}: no such file$"):
            reader(tmp_path / "none")
        with pytest.raises(InputError, match=rf"^{tmp_path}: cannot read: Is a directory$"):
            reader(tmp_path)
