"""The LLM judge: grade pool pairs with the guideline verbatim through any OpenAI-compatible endpoint."""

from evalset.judge.client import (
    JudgeSettings,
    JudgeStats,
    judge_pairs,
    label_source,
    labels_from_journal,
    make_client,
)
from evalset.judge.endpoint import EndpointUnreachable, JudgeAborted
from evalset.judge.journal import Answer, Journal
from evalset.judge.prompt import DEFAULT_TEMPLATE, InvalidAnswer, PromptTemplate, parse_answer, read_template

__all__ = [
    "DEFAULT_TEMPLATE",
    "Answer",
    "EndpointUnreachable",
    "InvalidAnswer",
    "Journal",
    "JudgeAborted",
    "JudgeSettings",
    "JudgeStats",
    "PromptTemplate",
    "judge_pairs",
    "label_source",
    "labels_from_journal",
    "make_client",
    "parse_answer",
    "read_template",
]
