"""Check that the real-output blocks of README.md and docs/*.md are what their commands print; --update rewrites them.

Conventions (for whoever writes the docs):

- A fenced block whose first line starts with ``$ `` is a command block. Each line starting with ``$ `` is a
  command (a trailing backslash continues it on the next line); the lines after it, up to the next command, are
  what it prints: stdout and stderr together, in order, as a terminal shows them.
- A line that is ``...`` alone (indentation allowed) stands for any number of lines, none included. Nothing else
  is elided: every other line must equal the output's line (trailing blanks ignored).
- A block whose opening fence follows the line ``<!-- output not checked: REASON -->`` is not run (a live LLM
  endpoint, a Label Studio server, timings, a browser's version): keep those few, and say why.
- The commands run in bash, in document order, one sandbox per Markdown file: a temporary folder that holds links
  to the repository's ``data/``, ``pools/``, ``guidelines/`` and ``scripts/``, an empty ``docs/`` of its own, and
  ``../shared`` beside it, so the paths read as they do from the repository's root; what an earlier block writes
  (``out/demo/...``) is an input of the later blocks of the same file. The environment: ``SOURCE_DATE_EPOCH``
  fixed, ``PYTHONUNBUFFERED=1`` (stdout and stderr interleave as on a terminal), this Python's ``evalset`` first
  on ``PATH``, and no ``LABEL_STUDIO_*`` or ``OPENAI_*`` variables.

Usage (from anywhere; tests/test_docs.py runs the check in the suite)::

    python scripts/check_docs.py [FILE.md ...]            # exit 1 and print a diff for each stale block
    python scripts/check_docs.py --update [FILE.md ...]   # rewrite the stale blocks with what the commands print
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
LINKED = ("data", "pools", "guidelines", "scripts")
NOT_CHECKED = re.compile(r"^<!--\s*output not checked:\s*(?P<reason>.+?)\s*-->\s*$")
ELLIPSIS = "..."
SOURCE_DATE_EPOCH = "1764460800"  # 2025-11-30T00:00:00Z
BLOCK_TIMEOUT = 600


def documents() -> list[Path]:
    """The Markdown files checked: README.md and docs/*.md."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass
class Command:
    """One ``$`` command of a block: its text (continuation lines joined by newlines) and its expected lines."""

    lines: list[str]
    expected: list[str] = field(default_factory=list)

    @property
    def script(self) -> str:
        return "\n".join(line.removeprefix("$ ") if i == 0 else line for i, line in enumerate(self.lines))


@dataclass
class Block:
    """A command block: where it is in its file (0-based line of the first command) and its commands."""

    start: int
    end: int  # the closing fence's line
    commands: list[Command]
    skip_reason: str | None

    def render(self) -> list[str]:
        return [line for command in self.commands for line in (*command.lines, *command.expected)]


def parse_blocks(text: str) -> list[Block]:
    """Every fenced block whose first line starts with ``$ ``, in document order."""
    lines = text.split("\n")
    blocks, index = [], 0
    while index < len(lines):
        if not lines[index].startswith("```"):
            index += 1
            continue
        close = index + 1
        while close < len(lines) and not lines[close].startswith("```"):
            close += 1
        body = lines[index + 1:close]
        if body and body[0].startswith("$ "):
            marker = NOT_CHECKED.match(lines[index - 1]) if index else None
            blocks.append(Block(index + 1, close, _commands(body), marker["reason"] if marker else None))
        index = close + 1
    return blocks


def _commands(body: list[str]) -> list[Command]:
    commands: list[Command] = []
    continued = False
    for line in body:
        if continued:
            commands[-1].lines.append(line)
        elif line.startswith("$ "):
            commands.append(Command([line]))
        else:
            commands[-1].expected.append(line)
        continued = (continued or line.startswith("$ ")) and line.endswith("\\")
    return commands


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` fits ``expected``, a line ``...`` standing for any number of lines."""
    pattern = "".join(r"(?:[^\n]*\n)*?" if line.strip() == ELLIPSIS else re.escape(line) + r"\n"
                      for line in expected)
    return re.fullmatch(pattern, "".join(line + "\n" for line in actual)) is not None


def refreshed(expected: list[str], actual: list[str]) -> list[str]:
    """``expected`` rewritten from ``actual``, keeping its ``...`` lines where they still fit best.

    The literal runs between ``...`` lines keep their length; each is placed where its lines resemble the
    output most (after the previous run; the first run at the top unless the block opens with ``...``, the last
    at the bottom unless it ends with one). Without any ``...`` the output replaces the block whole.
    """
    if matches(expected, actual):
        return expected
    if not any(line.strip() == ELLIPSIS for line in expected):
        return actual
    runs: list[list[str]] = [[]]
    gaps: list[str] = []
    for line in expected:
        if line.strip() == ELLIPSIS:
            gaps.append(line)
            runs.append([])
        else:
            runs[-1].append(line)
    result: list[str] = []
    position = 0
    for number, run in enumerate(runs):
        last = number == len(runs) - 1
        if number == 0:
            start = 0
        elif last and run:
            start = max(position, len(actual) - len(run))
        else:
            start = _best_place(run, actual, position)
        placed = actual[start:start + len(run)]
        result.extend(placed)
        position = start + len(placed)
        if not last:
            result.append(gaps[number])
    return result


def _best_place(run: list[str], actual: list[str], position: int) -> int:
    if not run:
        return position
    best, best_score = position, -1.0
    for start in range(position, max(position, len(actual) - len(run)) + 1):
        score = sum(difflib.SequenceMatcher(None, want, got).ratio()
                    for want, got in zip(run, actual[start:start + len(run)], strict=False))
        if score > best_score:
            best, best_score = start, score
    return best


def _sandbox(root: Path) -> Path:
    work = root / REPO.name
    work.mkdir()
    for name in LINKED:
        (work / name).symlink_to(REPO / name, target_is_directory=True)
    (work / "docs").mkdir()
    if SHARED.is_dir():
        (root / "shared").symlink_to(SHARED, target_is_directory=True)
    return work


def _environment() -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("LABEL_STUDIO_", "OPENAI_", "EVALSET_DEMO_"))}
    environment.update(SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8",
                       PATH=f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}")
    return environment


def run_block(block: Block, work: Path) -> list[list[str]]:
    """The output lines of each command of ``block``, run one after the other in one bash in ``work``."""
    marker = f"@@check-docs-{os.getpid()}-{time.monotonic_ns()}@@"
    script = "\n".join(f"printf '%s\\n' '{marker}'\n{command.script}" for command in block.commands)
    done = subprocess.run(["bash", "-c", script], cwd=work, env=_environment(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=BLOCK_TIMEOUT, check=False)
    parts = done.stdout.decode("utf-8", errors="replace").split(marker + "\n")[1:]
    if len(parts) != len(block.commands):
        raise RuntimeError(f"the block's commands did not all run:\n{done.stdout.decode(errors='replace')}")
    outputs = []
    for part in parts:
        lines = [line.rstrip() for line in part.split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        outputs.append(lines)
    return outputs


@dataclass
class Outcome:
    path: Path
    checked: int
    skipped: list[str]
    stale: list[str]  # a diff per stale block
    text: str  # the file with every stale block refreshed


def check_file(path: Path, work: Path) -> Outcome:
    """Run every checked block of ``path`` in the sandbox ``work``; the stale ones, and the refreshed text."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    blocks = parse_blocks(text)
    stale, skipped, checked = [], [], 0
    replacements = []
    for block in blocks:
        where = f"{path.relative_to(REPO)}:{block.start + 1}"
        if block.skip_reason:
            skipped.append(f"{where}: {block.skip_reason}")
            continue
        checked += 1
        outputs = run_block(block, work)
        old = block.render()
        for command, actual in zip(block.commands, outputs, strict=True):
            command.expected = refreshed(command.expected, actual)
        new = block.render()
        if new != old:  # refreshed() keeps a block that fits as it is
            diff = difflib.unified_diff(old, new, f"{where} (documented)", f"{where} (printed)", lineterm="")
            stale.append("\n".join(diff))
            replacements.append((block.start, block.end, new))
    for start, end, new in reversed(replacements):  # from the end: earlier blocks keep their line numbers
        lines[start:end] = new
    return Outcome(path, checked, skipped, stale, "\n".join(lines))


def _check_in_sandbox(path: Path) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="evalset-docs-") as root:
        return check_file(path, _sandbox(Path(root)))


def check(paths: list[Path], update: bool = False, jobs: int = 2) -> list[Outcome]:
    """Check each file in its own sandbox, ``jobs`` files at a time; with ``update``, rewrite the stale blocks."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(pool.map(_check_in_sandbox, paths))
    for outcome in outcomes:
        if update and outcome.stale:
            outcome.path.write_text(outcome.text, encoding="utf-8")
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="Markdown files [default: README.md and docs/*.md]")
    parser.add_argument("--update", action="store_true", help="rewrite stale blocks with the printed output")
    options = parser.parse_args(argv)
    paths = [path.resolve() for path in options.files] or documents()
    if not SHARED.is_dir():
        print(f"check_docs: the shared data is not at {SHARED}", file=sys.stderr)
        return 2
    stale = 0
    for outcome in check(paths, options.update):
        for diff in outcome.stale:
            print(diff)
        stale += len(outcome.stale)
        state = (f"{len(outcome.stale)} stale" + (" (rewritten)" if options.update else "")) if outcome.stale else "ok"
        print(f"{outcome.path.relative_to(REPO)}: {outcome.checked} blocks checked, {state}; "
              f"{len(outcome.skipped)} not checked", file=sys.stderr)
    return 1 if stale and not options.update else 0


if __name__ == "__main__":
    sys.exit(main())
