"""Pulling the submitted grades of a Label Studio project into a labels table (see :mod:`evalset.labelstudio`)."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from label_studio_sdk import LabelStudio

from evalset.errors import InputError
from evalset.io.annotations import LABELS_COLUMNS, read_labels, write_labels
from evalset.io.guideline import Guideline
from evalset.io.poolfiles import PAIRS_FILE, read_pool_pairs
from evalset.judgments.revisions import grade_revisions, revision_lines
from evalset.labelstudio.project import (
    COMMENT_CONTROL,
    GRADE_CONTROL,
    LabelStudioError,
    call,
    export_snapshot,
    find_project,
    grade_of_choice,
)
from evalset.render import counted

if TYPE_CHECKING:
    from evalset.quality.gold import GoldPolicy, GoldReport


# ---------------------------------------------------------------------------------------------------- pull
@dataclass(frozen=True)
class PullReport:
    """Counts of what a pull read and what it did not turn into grades; with gold, the annotators scored against
    it (``gold``; ``gold_only`` counts the answers on gold-only tasks, kept out of the labels).

    ``to_text()`` is what ``evalset pull`` prints: the counts, then, once :func:`write_pull` wrote them, each file
    written (``labels_path``, then the gold report and ``gold_report_path``).
    """

    tasks: int = 0
    annotations: int = 0
    labels: int = 0
    skipped: int = 0
    no_grade: int = 0
    off_scale: int = 0
    unknown_pair: int = 0
    unknown_annotator: int = 0
    gold_only: int = 0
    skipped_after_grading: tuple[tuple[str, str, str, int], ...] = ()
    revised_after_submission: int = 0
    revisions: pd.DataFrame | None = field(default=None, repr=False)
    previous: str | None = None
    gold: GoldReport | None = field(default=None, repr=False)
    labels_path: str | None = None
    gold_report_path: str | None = None

    def to_text(self) -> str:
        gold = f", {self.gold_only} on gold-only tasks (gold checks only)" if self.gold is not None else ""
        lines = [f"{counted(self.tasks, 'task')}, {counted(self.annotations, 'annotation')}, "
                 f"{counted(self.labels, 'label')} written",
                 f"not turned into grades: {self.skipped} skipped/cancelled, {self.no_grade} without a grade, "
                 f"{self.off_scale} off the scale, {self.unknown_pair} on pairs not in the pool{gold}, "
                 f"{self.unknown_annotator} by unknown users"]
        for query_id, doc_id, annotator, grade in self.skipped_after_grading:
            lines.append(f"kept: {annotator} graded {query_id}/{doc_id} {grade}, then skipped it (Label Studio marks "
                         "it cancelled; the grade was submitted, so it is kept)")
        if self.revised_after_submission:
            lines.append(f"revised: {counted(self.revised_after_submission, 'grade was', 'grades were')} updated after "
                         f"{'its' if self.revised_after_submission == 1 else 'their'} first submission"
                         + ("" if self.previous else " (Label Studio Community keeps no earlier grade: give the "
                            "earlier labels with --previous to see what changed)"))
        if self.revisions is not None:
            lines += revision_lines(self.revisions, f"the previous pull ({self.previous})")
        if self.labels_path:
            lines.append(f"wrote {self.labels_path}")
        if self.gold is not None:
            lines.append(self.gold.to_text())
        if self.gold_report_path:
            lines.append(f"wrote {self.gold_report_path}")
        return "\n".join(lines)


def _choice_and_comment(result: list[dict]) -> tuple[list[str], str]:
    choices, comments = [], []
    for region in result or []:
        value = region.get("value") or {}
        if region.get("from_name") == GRADE_CONTROL:
            choices.extend(str(choice) for choice in value.get("choices") or [])
        elif region.get("from_name") == COMMENT_CONTROL:
            comments.extend(str(text) for text in value.get("text") or [])
    return choices, " ".join(text.strip() for text in comments if text.strip())


def _user_emails(client: LabelStudio) -> dict[int, str]:
    users = call(lambda: list(client.users.list()), "list users")
    return {int(user.id): str(user.email) for user in users}


def labels_from_export(tasks: list[dict], pairs: pd.DataFrame, emails: dict[int, str], guideline: Guideline,
                       project_id: int) -> tuple[pd.DataFrame, PullReport]:
    """Turn an export's submitted annotations into labels rows (see the module docstring for the rules)."""
    where = dict(zip(pairs["pair_id"], zip(pairs["query_id"], pairs["doc_id"], strict=True), strict=True))
    counts: Counter[str] = Counter()
    rows, skipped_after_grading = [], []
    for task in tasks:
        pair = where.get(str((task.get("data") or {}).get("pair_id", "")))
        for annotation in task.get("annotations") or []:
            counts["annotations"] += 1
            choices, comment = _choice_and_comment(annotation.get("result"))
            changed = _changed_after_submission(annotation)
            if annotation.get("was_cancelled") and not (changed and choices):
                counts["skipped"] += 1
                continue
            if not choices:
                counts["no_grade"] += 1
                continue
            grades = {grade_of_choice(choice, guideline) for choice in choices}
            if None in grades or len(grades) != 1:
                counts["off_scale"] += 1
                continue
            if pair is None:
                counts["unknown_pair"] += 1
                continue
            author = annotation.get("completed_by")
            author_id = author.get("id") if isinstance(author, dict) else author
            email = emails.get(int(author_id)) if author_id is not None else None
            if email is None:
                counts["unknown_annotator"] += 1
                continue
            grade = grades.pop()
            if annotation.get("was_cancelled"):
                skipped_after_grading.append((pair[0], pair[1], email, grade))
            elif changed:
                counts["revised_after_submission"] += 1
            rows.append({"query_id": pair[0], "doc_id": pair[1], "annotator": email, "kind": "human",
                         "grade": grade, "source": f"label-studio:{project_id}/{task['id']}/{annotation['id']}",
                         "labeled_at": _utc(annotation.get("updated_at") or annotation.get("created_at")),
                         "comment": comment, "_annotation": int(annotation["id"])})
    frame = pd.DataFrame(rows, columns=[*LABELS_COLUMNS, "_annotation"])
    frame = frame.sort_values(["query_id", "doc_id", "annotator", "_annotation"], kind="stable")
    frame = frame[list(LABELS_COLUMNS)].astype({"grade": "int64"}).reset_index(drop=True)
    return frame, PullReport(tasks=len(tasks), labels=len(frame), skipped_after_grading=tuple(sorted(
        skipped_after_grading)), **counts)


REVISION_DELAY_S = 1.0
"""An annotation saved this long after it was created was changed after its submission (Update, or Skip)."""


def _changed_after_submission(annotation: dict) -> bool:
    created, updated = annotation.get("created_at"), annotation.get("updated_at")
    if not created or not updated:
        return False
    return (pd.Timestamp(updated) - pd.Timestamp(created)).total_seconds() > REVISION_DELAY_S


def _utc(stamp: str | None) -> str:
    if not stamp:
        return ""
    return pd.Timestamp(stamp).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def pull(client: LabelStudio, title: str, pool_dir: str | os.PathLike, guideline: Guideline,
         gold: pd.DataFrame | None = None, policy: GoldPolicy | None = None,
         previous: str | os.PathLike | None = None) -> tuple[pd.DataFrame, PullReport]:
    """Every submitted annotation of the project titled ``title`` as labels rows, with a :class:`PullReport`.

    With ``previous`` (the labels table of an earlier pull), the report's ``revisions`` are the grades revised or
    withdrawn since (:func:`evalset.judgments.revisions.grade_revisions`).

    With ``gold`` (:func:`evalset.quality.gold.read_gold`), answers on gold pairs score each annotator under
    ``policy`` (default :class:`~evalset.quality.gold.GoldPolicy`; the report's ``gold``), and answers on gold
    pairs not in ``pool.tsv`` (gold-only tasks) are kept out of the labels (counted as ``gold_only``).
    """
    pairs, known = known_pairs(pool_dir, gold)
    project = find_project(client, title)
    if project is None:
        raise LabelStudioError(f"no project titled {title!r} on this Label Studio")
    labels, report = labels_from_export(export_snapshot(client, project.id), known, _user_emails(client), guideline,
                                        project.id)
    return finish_pull(labels, report, pairs, guideline, gold, policy, previous)


def known_pairs(pool_dir: str | os.PathLike, gold: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(pool pairs, every pair a task may carry)``: the pool's ``pool.tsv``, and with ``gold`` its pairs too."""
    from evalset.quality.gold import gold_pairs_frame

    pairs = read_pool_pairs(Path(pool_dir) / PAIRS_FILE)
    return pairs, pairs if gold is None else pd.concat([pairs, gold_pairs_frame(gold, pairs)], ignore_index=True)


def finish_pull(labels: pd.DataFrame, report: PullReport, pairs: pd.DataFrame, guideline: Guideline,
                gold: pd.DataFrame | None = None, policy: GoldPolicy | None = None,
                previous: str | os.PathLike | None = None) -> tuple[pd.DataFrame, PullReport]:
    """The labels and report of a pull once every project was read: with ``gold``, the gold-only answers taken out
    of the labels and every annotator scored on the gold answers under ``policy`` (the report's ``gold`` and
    ``gold_only``); with ``previous``, the grades revised or withdrawn since (``revisions``)."""
    if gold is not None:
        from evalset.quality.gold import GoldPolicy, gold_report, split_gold

        kept, answers = split_gold(labels, pairs, gold)
        gold_only = len(labels) - len(kept)
        scored = gold_report(answers, gold, guideline.grades, policy or GoldPolicy(), gold_only)
        report, labels = replace(report, gold_only=gold_only, labels=len(kept), gold=scored), kept
    if previous is not None:
        report = replace(report, revisions=grade_revisions(read_labels(previous), labels), previous=os.fspath(previous))
    return labels, report


def write_pull(labels: pd.DataFrame, report: PullReport, output: str | os.PathLike,
               gold_report: str | os.PathLike | None = None) -> PullReport:
    """Write the labels table to ``output`` and, with ``gold_report``, the report's gold scores there (``.tsv``: a
    table; else JSON); returns the report naming the files written. A gold report needs a pull with gold."""
    if gold_report is not None and report.gold is None:
        raise InputError("a gold report needs a pull with gold (the gold file given to push)")
    write_labels(labels, output)
    written = report.gold.write(gold_report) if gold_report is not None else None
    return replace(report, labels_path=os.fspath(output), gold_report_path=written)
