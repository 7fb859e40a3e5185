"""The judge's prompt, answer parser and task reader (no server)."""

import datetime as dt
import email.utils
import hashlib
import importlib
import importlib.util
import json

import openai
import pytest

from evalset.errors import InputError
from evalset.io.guideline import read_guideline
from evalset.io.poolfiles import read_tasks
from evalset.judge.client import retry_after_seconds
from evalset.judge.prompt import DEFAULT_TEMPLATE, InvalidAnswer, parse_answer, read_template, response_format

GUIDELINE = "guidelines/relevance-v2.md"


@pytest.fixture(scope="module")
def guideline():
    from tests.conftest import REPO

    return read_guideline(REPO / GUIDELINE)


def test_messages_hold_the_guideline_verbatim_then_the_query_and_the_passage(guideline):
    template = read_template()
    messages = template.messages(guideline, "what is a monotonic function", "A passage with {query} and {grades}.")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert guideline.body.strip() in messages[0]["content"]
    assert "<query>\nwhat is a monotonic function\n</query>" in messages[1]["content"]
    # placeholders inside the passage are text, not template fields
    assert "<passage>\nA passage with {query} and {grades}.\n</passage>" in messages[1]["content"]
    assert "(0, 1, 2, 3)" in messages[1]["content"]


def test_template_sha256_is_of_the_file_bytes():
    template = read_template()
    assert template.sha256 == hashlib.sha256(DEFAULT_TEMPLATE.read_bytes()).hexdigest()
    assert template.name == "relevance-judge-v1"


def test_template_without_a_placeholder_is_refused(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("[user]\nGrade {query}.\n")
    with pytest.raises(InputError, match="document, guideline"):
        read_template(path)


def test_structured_output_schema_enumerates_the_scale(guideline):
    schema = response_format(guideline)["json_schema"]
    assert schema["strict"] is True
    assert schema["schema"]["properties"]["grade"]["enum"] == [0, 1, 2, 3]


@pytest.mark.parametrize("content, grade", [('{"grade": 2, "reason": "partial"}', 2),
                                            (' \n{"reason": "none", "grade": 0}\n', 0)])
def test_a_well_formed_answer_is_read(content, grade):
    assert parse_answer(content, [0, 1, 2, 3])[0] == grade


@pytest.mark.parametrize("content, why", [
    ('{"grade": 4, "reason": "x"}', "not on the scale"),
    ('{"grade": -1, "reason": "x"}', "not on the scale"),
    ('{"grade": true, "reason": "x"}', "not an integer"),
    ('{"grade": 2.0, "reason": "x"}', "not an integer"),
    ('{"grade": "2", "reason": "x"}', "not an integer"),
    ('{"grade": 2}', "exactly the keys"),
    ('{"grade": 2, "reason": "x", "confidence": 1}', "exactly the keys"),
    ('```json\n{"grade": 2, "reason": "x"}\n```', "not JSON"),
    ('{"grade": 2, "reason": "x"', "not JSON"),
    ("", "empty"),
    (None, "empty"),
])
def test_an_answer_off_the_shape_or_scale_is_refused_never_repaired(content, why):
    with pytest.raises(InvalidAnswer, match=why):
        parse_answer(content, [0, 1, 2, 3])


def test_read_tasks_keeps_judging_order_and_limit(tmp_path):
    path = tmp_path / "tasks.jsonl"
    rows = [{"pair_id": f"p{i}", "query_id": "q", "doc_id": f"d{i}", "query": "x", "text": "t"} for i in range(5)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert read_tasks(path, limit=3)["pair_id"].tolist() == ["p0", "p1", "p2"]
    assert len(read_tasks(path)) == 5


def test_read_tasks_refuses_a_repeated_pair_naming_the_line(tmp_path):
    path = tmp_path / "tasks.jsonl"
    row = {"pair_id": "p", "query_id": "q", "doc_id": "d", "query": "x", "text": "t"}
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(InputError, match=r"tasks.jsonl:2: pair_id p appears twice \(lines 1 and 2\)"):
        read_tasks(path)


@pytest.mark.parametrize("headers, seconds", [({"retry-after": "2"}, 2.0), ({"retry-after": "0.5"}, 0.5),
                                              ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
                                              ({"retry-after": "soon"}, None), ({}, None)])
def test_retry_after_reads_seconds_and_milliseconds(headers, seconds):
    assert retry_after_seconds(_rate_limited(headers)) == seconds


def test_retry_after_reads_an_http_date():
    when = email.utils.format_datetime(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30), usegmt=True)
    assert 28 <= retry_after_seconds(_rate_limited({"retry-after": when})) <= 30


def _rate_limited(headers: dict) -> openai.RateLimitError:
    http = importlib.import_module("httpx2" if importlib.util.find_spec("httpx2") else "httpx")  # the openai client's
    request = http.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = http.Response(429, headers=headers, request=request)
    return openai.RateLimitError("rate limited", response=response, body=None)
