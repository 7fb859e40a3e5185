"""One judging job over a pool folder: read the tasks, judge (online or batch), write labels and failures."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from evalset.io.files import atomic_path, writing_to
from evalset.io.guideline import Guideline, read_guideline
from evalset.io.poolfiles import TASKS_FILE, read_tasks
from evalset.judge.batch import judge_pairs_batch
from evalset.judge.client import JudgeStats, judge_pairs, labels_from_journal
from evalset.judge.endpoint import resolve_endpoint
from evalset.judge.journal import Answer, Journal
from evalset.judge.prompt import DEFAULT_TEMPLATE, PromptTemplate, read_template
from evalset.judge.spec import JUDGE_JOB_RULES, JudgeSettings
from evalset.params import validate_params
from evalset.pooling.examples import refuse_worked_examples
from evalset.render import fields_dict


@dataclass(frozen=True)
class JudgeResult:
    """What a job did and wrote. ``labels``/``failures`` cover every task asked for, this run or earlier;
    ``price_in`` and ``price_out`` (per million tokens, if given) price the tokens of this run.

    ``to_text()`` is the end-of-run summary ``evalset judge`` prints: pairs judged and failed, this run's requests
    and retries, tokens and cost, the grades, and the files written.
    """

    stats: JudgeStats
    labels: pd.DataFrame
    failures: pd.DataFrame
    labels_path: str
    failures_path: str
    journal_path: str
    price_in: float | None = None
    price_out: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The job's counts and files (the labels and failures are in them)."""
        return {"stats": fields_dict(self.stats), "labels": len(self.labels), "failures": len(self.failures),
                "labels_path": self.labels_path, "failures_path": self.failures_path,
                "journal_path": self.journal_path, "price_in": self.price_in, "price_out": self.price_out}

    def to_text(self) -> str:
        stats, price_in, price_out = self.stats, self.price_in, self.price_out
        rate = stats.requests / stats.seconds if stats.seconds else 0.0
        errors = (stats.rate_limited + stats.server_errors + stats.timeouts + stats.connection_errors
                  + stats.invalid_answers)
        lines = [
            f"pairs {stats.pairs:,}: judged {len(self.labels):,}, failed {len(self.failures):,} "
            f"({stats.already_answered:,} answered by an earlier run, taken from the journal)",
            f"this run: judged {stats.judged:,}, failed {stats.failed:,}, requests {stats.requests:,} "
            f"({rate:.1f}/s over {stats.seconds:.1f} s), retries {stats.retries:,} after {errors:,} errors (429: "
            f"{stats.rate_limited:,}, 5xx: {stats.server_errors:,}, timeouts: {stats.timeouts:,}, connection "
            f"errors: {stats.connection_errors:,}, invalid answers: {stats.invalid_answers:,}; an error past a "
            "pair's last retry ends the pair)",
            f"tokens: {stats.prompt_tokens:,} in, {stats.completion_tokens:,} out",
        ]
        if stats.unanswered:
            lines.insert(1, f"not answered {len(stats.unanswered):,} of the failed (the endpoint gave no answer: "
                            f"errors or refusals to the end): not in the journal, so the next run asks them again")
        cost = stats.cost(price_in, price_out)
        if cost is not None:
            lines[-1] += f", cost {cost:.4f} (prices per million tokens: in {price_in or 0:g}, out {price_out or 0:g})"
        if stats.batches:
            lines.append(f"batches: {', '.join(stats.batches)}")
        grades = self.labels["grade"].value_counts().sort_index()
        if len(grades):
            lines.append("grades: " + ", ".join(f"{grade}: {count:,}" for grade, count in grades.items()))
        lines += [f"wrote {self.labels_path}", f"wrote {self.failures_path}", f"journal {self.journal_path}"]
        return "\n".join(lines)


PROGRESS_DELAY = 2.0  # seconds before the bar shows: a run shorter than that prints only its summary


def default_paths(output: str | os.PathLike) -> tuple[str, str]:
    """The journal and failures files beside ``labels.tsv``: ``labels.tsv.journal.sqlite``, ``labels.failures.tsv``."""
    output = Path(output)
    stem = output.name[:-4] if output.name.endswith(".tsv") else output.name
    return str(output) + ".journal.sqlite", str(output.with_name(stem + ".failures.tsv"))


@validate_params(JUDGE_JOB_RULES)
def judge_pool(pool_dir: str | os.PathLike, guideline_path: str | os.PathLike, output: str | os.PathLike,
               settings: JudgeSettings, *, template_path: str | os.PathLike = DEFAULT_TEMPLATE,
               limit: int | None = None, journal_path: str | None = None, failures_path: str | None = None,
               batch: bool = False, poll_seconds: float = 30.0, progress: bool | None = None,
               progress_delay: float = PROGRESS_DELAY, price_in: float | None = None,
               price_out: float | None = None) -> JudgeResult:
    """Judge the first ``limit`` tasks of ``POOL_DIR/tasks.jsonl``; write the labels and failures tables.

    Answers go to the journal as they arrive; the two tables are written (atomically) only when every task has
    an answer, so a killed run leaves no partial table, and the next run resumes from the journal. The failures
    table holds the pairs the model answered unusably (journaled, final) and those it did not answer this run
    (``stats.unanswered``: asked again by the next run). ``progress=None`` shows a bar only on a terminal, and only
    once the run has taken more than ``progress_delay`` seconds. ``price_in`` and ``price_out`` (per million
    tokens) only price the summary. ``limit``, ``poll_seconds`` and the prices are checked first
    (:data:`evalset.judge.spec.JUDGE_JOB_RULES`); a guideline whose worked examples grade a pair of the pool is refused
    before anything is asked (:func:`evalset.pooling.examples.refuse_worked_examples`).
    """
    resolve_endpoint(settings.base_url)  # a malformed URL, or OpenAI without a key: refused before anything else
    tasks = read_tasks(Path(pool_dir) / TASKS_FILE, limit).to_dict("records")
    guideline = read_guideline(guideline_path)
    refuse_worked_examples(guideline, (task["pair_id"] for task in tasks), pool_dir, "being judged",
                           "the judge would read its grade in its prompt")
    template = read_template(template_path)
    default_journal, default_failures = default_paths(output)
    journal_path = journal_path or default_journal
    failures_path = failures_path or default_failures
    stats, answers = judge_tasks(tasks, guideline, template, settings, journal_path, batch=batch,
                                 poll_seconds=poll_seconds, progress=progress, progress_delay=progress_delay)
    labels, failures = labels_from_journal(tasks, answers, settings.model, template, guideline)
    for table, path in ((labels, str(output)), (failures, failures_path)):
        with atomic_path(path) as tmp:
            table.to_csv(tmp, sep="\t", index=False, lineterminator="\n")
    return JudgeResult(stats, labels, failures, str(output), failures_path, journal_path, price_in, price_out)


def judge_tasks(tasks: list[dict], guideline: Guideline, template: PromptTemplate, settings: JudgeSettings,
                journal_path: str, *, batch: bool = False, poll_seconds: float = 30.0, progress: bool | None = None,
                progress_delay: float = PROGRESS_DELAY) -> tuple[JudgeStats, dict[str, Answer]]:
    """Judge ``tasks`` (pool task records) through the journal at ``journal_path`` (created with its folder), with
    the progress bar of :func:`judge_pool`; returns this run's stats and every task's answer so far (journaled,
    and this run's unanswered ones). The job of ``evalset judge`` and of ``evalset judge probe``."""
    with writing_to(journal_path):
        Path(journal_path).parent.mkdir(parents=True, exist_ok=True)
    with Journal(journal_path, settings.model, template.sha256, guideline.sha256) as journal:
        known = journal.answers()
        answered = sum(task["pair_id"] in known and (known[task["pair_id"]].status == "judged"
                                                     or not settings.retry_failed) for task in tasks)
        bar = tqdm(total=len(tasks), initial=answered, unit="pair", delay=progress_delay,
                   disable=(not sys.stderr.isatty()) if progress is None else not progress, dynamic_ncols=True)
        base = bar.n

        def tick(stats: JudgeStats) -> None:
            bar.n = base + stats.judged + stats.failed
            bar.set_postfix_str(f"judged={stats.judged} failed={stats.failed} retrying={stats.retrying} "
                                f"429={stats.rate_limited} 5xx={stats.server_errors} timeouts={stats.timeouts} "
                                f"conn={stats.connection_errors}", refresh=False)
            bar.update(0)

        try:
            if batch:
                stats = asyncio.run(judge_pairs_batch(tasks, guideline, template, settings, journal, poll_seconds,
                                                      tick))
            else:
                stats = asyncio.run(judge_pairs(tasks, guideline, template, settings, journal, tick))
        finally:
            bar.close()
        answers = {**journal.answers(), **{answer.pair_id: answer for answer in stats.unanswered}}
    return stats, answers


def run_failure(result: JudgeResult) -> str | None:
    """Why the run must exit non-zero, or None: it asked for pairs and judged none."""
    stats = result.stats
    if stats.judged or not stats.failed:
        return None
    unanswered = len(stats.unanswered)
    return (f"no pair was judged: all {stats.failed:,} pairs asked this run failed ({unanswered:,} got no answer "
            f"from the endpoint and are asked again by the next run; {stats.failed - unanswered:,} were answered "
            f"unusably); see {result.failures_path}")
