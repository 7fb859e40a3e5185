"""The judge's settings declare their rules beside them (JudgeSettings.RULES): the library and every command that
asks the endpoint refuse the same values, in one line naming the setting."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.judge.job import judge_pool
from evalset.judge.spec import JudgeSettings
from tests.support.options import HUGE, not_one_of, refusal

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("max_retries", -1, "max_retries must be a non-negative integer, got -1"),
    ("max_invalid", -1, "max_invalid must be a non-negative integer, got -1"),
    ("concurrency", 0, "concurrency must be an integer in [1, 1000], got 0"),
    ("concurrency", 10**20, "concurrency must be an integer in [1, 1000], got 100000000000000000000"),
    ("rpm", 0.0, "rpm must be a number > 0, got 0.0"),
    ("timeout", float("nan"), "timeout must be a number in (0, 86400], got nan"),
    ("timeout", 1e9, "timeout must be a number in (0, 86400], got 1000000000.0"),
    ("structured", "maybe", "structured must be one of auto, on, off, got 'maybe'"),
    ("seed", -1, "seed must be a non-negative integer, got -1"),
])
def test_a_setting_off_its_rule_is_refused(setting, value, message):
    with pytest.raises(InputError) as raised:
        JudgeSettings(model="m", **{setting: value})
    assert str(raised.value) == message


def test_the_command_applies_the_same_rule(tmp_path, shared_data):
    (tmp_path / "pool").mkdir()
    result = CliRunner().invoke(main, ["judge", "probe", str(tmp_path / "pool"), "--guideline",
                                       str(REPO / "guidelines" / "relevance-v2.md"), "--model", "m", "--human",
                                       str(shared_data / "dl19" / "qrels.txt"), "-o", str(tmp_path / "probe.json"),
                                       "-s", "max_retries=-1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output == ("evalset: error: Invalid value for '-s' / '--client': max_retries: must be a "
                             "non-negative integer, got -1\n")


@pytest.mark.parametrize("command", [["judge", "grade"], ["judge", "probe"]])
@pytest.mark.parametrize(("option", "value", "said"), [
    ("-s", "concurrency=0", "concurrency: must be an integer in [1, 1000], got 0"),
    ("-s", f"concurrency={HUGE}", f"concurrency: must be an integer in [1, 1000], got {HUGE}"),
    ("-s", "rpm=0", "rpm: must be a number > 0, got 0.0"),
    ("-s", "tpm=inf", "tpm: must be a number > 0, got inf"),
    ("-s", "timeout=nan", "timeout: must be a number in (0, 86400], got nan"),
    ("-s", "timeout=1e9", "timeout: must be a number in (0, 86400], got 1000000000.0"),
    ("-s", "max_retries=x", "max_retries: must be a non-negative integer, got 'x'"),
    ("-s", "max_invalid=-1", "max_invalid: must be a non-negative integer, got -1"),
    ("-s", "max_tokens=0", "max_tokens: must be a positive integer, got 0"),
    ("-s", "structured=maybe", "structured: " + not_one_of("maybe", "auto", "on", "off")),
    ("--price-in", -1, "must be a number > 0, got -1.0"),
    ("--price-out", "nan", "must be a number > 0, got nan"),
    ("-s", "seed=-1", "seed: must be a non-negative integer, got -1"),
])
def test_every_endpoint_option_off_its_rule_is_refused_naming_it(command, option, value, said):
    assert refusal(command, option, value) == said


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--limit", 0, "must be a positive integer, got 0"),
    ("--limit", "-1", "must be a positive integer, got -1"),
    ("--poll", 0, "must be a number in (0, 86400], got 0.0"),
    ("--poll", "inf", "must be a number in (0, 86400], got inf"),
    ("--poll", "x", "must be a number in (0, 86400], got 'x'"),
])
def test_a_job_option_off_its_rule_is_refused_naming_it(option, value, said):
    assert refusal(["judge", "grade"], option, value) == said


@pytest.mark.parametrize(("given", "message"), [
    ({"limit": 0}, "limit must be a positive integer, got 0"),
    ({"poll_seconds": float("inf")}, "poll_seconds must be a number in (0, 86400], got inf"),
    ({"price_in": 0.0}, "price_in must be a number > 0, got 0.0"),
    ({"price_out": float("nan")}, "price_out must be a number > 0, got nan"),
])
def test_the_job_refuses_what_the_command_refuses_before_reading_the_pool(given, message):
    with pytest.raises(InputError) as raised:
        judge_pool("no-pool", "no-guideline", "labels.tsv", JudgeSettings(model="m"), **given)
    assert str(raised.value) == message
