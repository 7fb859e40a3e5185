"""The LLM judge: grade pool pairs with the guideline verbatim through any OpenAI-compatible endpoint."""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.judge.client": ("JudgeStats", "judge_pairs", "label_source", "labels_from_journal", "make_client"),
    "evalset.judge.spec": ("JudgeSettings",),
    "evalset.judge.endpoint": ("EndpointUnreachable", "JudgeAborted"),
    "evalset.judge.journal": ("Answer", "Journal"),
    "evalset.judge.prompt": ("DEFAULT_TEMPLATE", "InvalidAnswer", "PromptTemplate", "parse_answer",
                             "read_template"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
