"""The judge's settings declare their rules beside them (JudgeSettings.RULES): the library and every command that
asks the endpoint refuse the same values, in one line naming the setting."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.judge.client import JudgeSettings

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("max_retries", -1, "max_retries must be a non-negative integer, got -1"),
    ("max_invalid", -1, "max_invalid must be a non-negative integer, got -1"),
    ("concurrency", 0, "concurrency must be a positive integer, got 0"),
    ("rpm", 0.0, "rpm must be a number > 0, got 0.0"),
    ("timeout", float("nan"), "timeout must be a number > 0, got nan"),
    ("seed", -1, "seed must be a non-negative integer, got -1"),
])
def test_a_setting_off_its_rule_is_refused(setting, value, message):
    with pytest.raises(InputError, match=message):
        JudgeSettings(model="m", **{setting: value})


def test_the_command_applies_the_same_rule(tmp_path, shared_data):
    (tmp_path / "pool").mkdir()
    result = CliRunner().invoke(main, ["judge", "probe", str(tmp_path / "pool"), "--guideline",
                                       str(REPO / "guidelines" / "relevance-v1.md"), "--model", "m", "--human",
                                       str(shared_data / "dl19" / "qrels.txt"), "-o", str(tmp_path / "probe.json"),
                                       "--max-retries", "-1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip() == "evalset: error: max_retries must be a non-negative integer, got -1"
