"""The README's and docs/'s real-output blocks are what their commands print (scripts/check_docs.py; its docstring
states the conventions: ``$`` commands, ``...`` for any lines, ``<!-- output not checked: REASON -->``).

To regenerate the blocks after a change of output: ``python scripts/check_docs.py --update``.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_docs", REPO / "scripts" / "check_docs.py")
check_docs = importlib.util.module_from_spec(_spec)
sys.modules["check_docs"] = check_docs  # dataclasses look their module up
_spec.loader.exec_module(check_docs)


def test_a_line_of_three_dots_stands_for_any_lines_and_nothing_else_is_elided():
    assert check_docs.matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert check_docs.matches(["a", "  ...", "b"], ["a", "b"])
    assert check_docs.matches(["...", "c"], ["a", "b", "c"])
    assert not check_docs.matches(["a", "...", "d"], ["a", "b", "c", "e"])
    assert not check_docs.matches(["a (merge: median; ...)"], ["a (merge: median; 0 pairs)"])
    assert not check_docs.matches(["a"], ["a", "b"])


def test_blocks_commands_continuations_and_the_not_checked_marker_are_read_from_markdown():
    text = "\n".join([
        "text", "```", "$ evalset score --qrels q \\", "    run", "run  ndcg@10", "$ evalset verify s", "OK s", "```",
        "<!-- output not checked: needs a server -->", "```", "$ evalset push p", "added 3", "```",
        "```", "evalset score --qrels QRELS RUN", "```",
    ])
    first, second = check_docs.parse_blocks(text)
    assert [c.script for c in first.commands] == ["evalset score --qrels q \\\n    run", "evalset verify s"]
    assert [c.expected for c in first.commands] == [["run  ndcg@10"], ["OK s"]]
    assert first.skip_reason is None and second.skip_reason == "needs a server"


def test_a_stale_block_is_rewritten_from_the_output_keeping_its_elisions():
    expected = ["pooled 2,495 pairs", "  A  1", "...", "warning: one pair has no text"]
    actual = ["pooled 2,496 pairs", "  A  2", "  B  3", "  C  4", "warning: one pair has no text"]
    assert check_docs.refreshed(expected, actual) == ["pooled 2,496 pairs", "  A  2", "...",
                                                      "warning: one pair has no text"]


@pytest.mark.slow
def test_every_real_output_block_of_the_readme_and_docs_is_what_its_command_prints(shared_data):
    outcomes = check_docs.check(check_docs.documents())
    stale = [diff for outcome in outcomes for diff in outcome.stale]
    assert sum(outcome.checked for outcome in outcomes) >= 15
    assert not stale, ("stale real-output blocks (python scripts/check_docs.py --update rewrites them):\n"
                       + "\n\n".join(stale))
