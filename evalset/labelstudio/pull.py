"""Pulling the submitted grades of a Label Studio project into a labels table (see :mod:`evalset.labelstudio`)."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
from label_studio_sdk import LabelStudio

from evalset.errors import InputError
from evalset.io.annotations import LABELS_COLUMNS, read_labels, write_labels
from evalset.io.guideline import Guideline
from evalset.io.poolfiles import PAIRS_FILE, read_pool_pairs
from evalset.judgments.gold import GoldCheck, GoldScores, gold_pairs_frame, split_gold
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
from evalset.render import counted, fields_dict

# ---------------------------------------------------------------------------------------------------- pull
WITHDRAWN = "withdrawn"
"""A draft that replaced a submitted grade: Submit, Skip, then Cancel skip (Label Studio deleted the annotation)."""
NOT_SUBMITTED = "not submitted"
"""A draft never submitted: a grade chosen and saved as a draft (the view saves one after a few seconds)."""
NOT_UPDATED = "not updated"
"""A draft of a change to a submitted annotation whose Update was not pressed: the label keeps the submitted grade."""
DRAFT_KINDS = (WITHDRAWN, NOT_SUBMITTED, NOT_UPDATED)


@dataclass(frozen=True)
class Draft:
    """A grade Label Studio holds as a draft of ``annotator`` on task ``task_id`` of project ``project_id``, never
    a label (it was not submitted). ``kind`` is one of :data:`DRAFT_KINDS`; ``submitted`` is the grade the label
    keeps (a draft not updated); ``query_id`` and ``doc_id`` are empty for a ``pair_id`` not in the pool."""

    query_id: str
    doc_id: str
    annotator: str
    grade: int
    kind: str
    pair_id: str
    project_id: int
    task_id: int
    submitted: int | None = None

    @property
    def order(self) -> tuple:
        """Where the draft is listed: withdrawn grades first, then by pair, annotator and task."""
        return DRAFT_KINDS.index(self.kind), self.query_id, self.doc_id, self.pair_id, self.annotator, self.task_id

    def to_text(self) -> str:
        pair = f"{self.query_id}/{self.doc_id}" if self.query_id else f"pair_id {self.pair_id} (not in the pool)"
        task = f"they open task {self.task_id} of project {self.project_id} and press"
        if self.kind == WITHDRAWN:
            return (f"withdrawn: {self.annotator} submitted {pair}, then withdrew it (Skip, then Cancel skip): Label "
                    f"Studio deleted the grade and holds {self.grade} as their draft; to restore it, {task} Submit")
        if self.kind == NOT_UPDATED:
            kept = "no grade (the annotation holds none)" if self.submitted is None else str(self.submitted)
            return (f"not updated: {self.annotator} changed {pair} to {self.grade} without pressing Update, so the "
                    f"labels keep {kept}; to change it, {task} Update")
        return f"not submitted: {self.annotator} chose {self.grade} for {pair} and never submitted it; to make it a " \
               f"grade, {task} Submit"


def draft_lines(drafts: tuple[Draft, ...], without_grade: int = 0) -> list[str]:
    """The ``warning:`` block of a pull naming every draft (none: no line)."""
    lines = []
    if drafts:
        lines.append(f"warning: {len(drafts)} grade(s) held as drafts in Label Studio are not submitted, so not in "
                     "the labels:")
        lines += [f"  {draft.to_text()}" for draft in drafts]
    if without_grade:
        lines.append(f"drafts without a grade (nothing to submit): {without_grade}")
    return lines


@dataclass(frozen=True)
class PullReport:
    """Counts of what a pull read and what it did not turn into grades; with gold, the annotators scored against
    it (``gold``; ``gold_only`` counts the answers on gold-only tasks, kept out of the labels).

    ``drafts`` are the grades Label Studio holds as drafts (:class:`Draft`): never labels, each named in a
    ``warning:`` block; ``drafts_without_grade`` counts drafts that hold no grade of the scale.

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
    drafts: tuple[Draft, ...] = ()
    drafts_without_grade: int = 0
    revisions: pd.DataFrame | None = field(default=None, repr=False)
    previous: str | None = None
    gold: GoldScores | None = field(default=None, repr=False)
    labels_path: str | None = None
    gold_report_path: str | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)

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
        lines += draft_lines(self.drafts, self.drafts_without_grade)
        if self.revisions is not None:
            lines += revision_lines(self.revisions, f"the previous pull ({self.previous})")
        if self.labels_path:
            lines.append(f"wrote {self.labels_path}")
        if self.gold is not None:
            lines.append(self.gold.to_text())
        if self.gold_report_path:
            lines.append(f"wrote {self.gold_report_path}")
        return "\n".join(lines)

    @property
    def notes(self) -> list[str]:
        return [f"warning: {line}" for line in self.warnings]


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
    drafts, without_grade = drafts_from_export(tasks, where, emails, guideline, project_id)
    return frame, PullReport(tasks=len(tasks), labels=len(frame), skipped_after_grading=tuple(sorted(
        skipped_after_grading)), drafts=drafts, drafts_without_grade=without_grade, **counts)


def drafts_from_export(tasks: list[dict], where: dict[str, tuple[str, str]], emails: dict[int, str],
                       guideline: Guideline, project_id: int) -> tuple[tuple[Draft, ...], int]:
    """Every draft of an export (``drafts`` expanded, as :func:`~evalset.labelstudio.project.export_snapshot` makes
    it) holding a grade, as a :class:`Draft` (in their ``order``), and the number holding none.

    The kind: a draft of an annotation (``annotation`` set) is ``not updated``, reported only when its grade differs
    from the annotation's. A draft of no annotation is ``withdrawn`` when the task was last changed by the draft's
    author at or after the draft was made and the task holds no annotation of theirs: Label Studio records on the
    task (``updated_by``, ``updated_at``) who last saved or deleted an annotation of it, and Cancel skip saves the
    draft, then deletes the annotation. Otherwise ``not submitted``. The trace is the task's last change only: once
    another user saves an annotation of the task, a withdrawn grade reads as ``not submitted`` (``--previous`` still
    tells it: :func:`finish_pull`).
    """
    found, without_grade = [], 0
    for task in tasks:
        pair_id = str((task.get("data") or {}).get("pair_id", ""))
        annotations = task.get("annotations") or []
        for draft in task.get("drafts") or []:
            if not isinstance(draft, dict):
                raise LabelStudioError(f"the export lists the drafts of task {task.get('id')} by id only: it was not "
                                       "made with the drafts expanded (export_snapshot)")
            grade = _single_grade(draft.get("result"), guideline)
            if grade is None:
                without_grade += 1
                continue
            author_id, author = _draft_author(draft, emails)
            kind, submitted = _draft_kind(draft, task, annotations, author_id, guideline)
            if kind is None:
                continue
            query_id, doc_id = where.get(pair_id, ("", ""))
            found.append(Draft(query_id=query_id, doc_id=doc_id, annotator=author, grade=grade, kind=kind,
                               pair_id=pair_id, project_id=project_id, task_id=int(task["id"]), submitted=submitted))
    return tuple(sorted(found, key=lambda draft: draft.order)), without_grade


def _single_grade(result: list[dict] | None, guideline: Guideline) -> int | None:
    choices, _ = _choice_and_comment(result)
    grades = {grade_of_choice(choice, guideline) for choice in choices}
    return grades.pop() if len(grades) == 1 and None not in grades else None


def _user_id(value) -> int | None:
    value = value.get("id") if isinstance(value, dict) else value
    return int(value) if isinstance(value, int) or (isinstance(value, str) and value.isdigit()) else None


def _draft_author(draft: dict, emails: dict[int, str]) -> tuple[int | None, str]:
    """The draft's author as (user id, e-mail): Label Studio 1.23.2 exports ``user`` as the e-mail and
    ``created_username`` as ``"[name ]email, id"``; a user not in ``emails`` is named as the export names them."""
    user, name = draft.get("user"), str(draft.get("created_username") or "")
    author_id = _user_id(user)
    if author_id is None:
        author_id = _user_id(name.rpartition(", ")[2].strip())
    if author_id is not None and author_id in emails:
        return author_id, emails[author_id]
    shown = user if isinstance(user, str) and user and not user.isdigit() else name or f"user {author_id}"
    return author_id, f"{shown} (not a user this pull knows)"


def _draft_kind(draft: dict, task: dict, annotations: list[dict], author_id: int | None,
                guideline: Guideline) -> tuple[str | None, int | None]:
    """(kind, the submitted grade the label keeps) of a draft holding a grade; kind None: nothing to report (a draft
    of an annotation with the same grade)."""
    of_annotation = _user_id(draft.get("annotation"))
    if of_annotation is not None:
        annotation = next((a for a in annotations if _user_id(a.get("id")) == of_annotation), None)
        submitted = _single_grade(annotation.get("result"), guideline) if annotation else None
        if submitted == _single_grade(draft.get("result"), guideline):
            return None, None
        return NOT_UPDATED, submitted
    theirs = [a for a in annotations if _user_id(a.get("completed_by")) == author_id]
    changed_by_author = author_id is not None and _user_id(task.get("updated_by")) == author_id
    if changed_by_author and not theirs and _at_or_after(task.get("updated_at"), draft.get("created_at")):
        return WITHDRAWN, None
    return NOT_SUBMITTED, None


def _at_or_after(later: str | None, earlier: str | None) -> bool:
    return bool(later and earlier) and pd.Timestamp(later) >= pd.Timestamp(earlier)


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
         gold: GoldCheck | None = None,
         previous: str | os.PathLike | None = None) -> tuple[pd.DataFrame, PullReport]:
    """Every submitted annotation of the project titled ``title`` as labels rows, with a :class:`PullReport`.

    With ``previous`` (the labels table of an earlier pull), the report's ``revisions`` are the grades revised or
    withdrawn since (:func:`evalset.judgments.revisions.grade_revisions`).

    With ``gold`` (the gold pairs and their scoring: :func:`evalset.quality.gold_check`), answers on gold pairs
    score each annotator (the report's ``gold``), and answers on gold pairs not in ``pool.tsv`` (gold-only tasks)
    are kept out of the labels (counted as ``gold_only``).
    """
    pairs, known = known_pairs(pool_dir, gold.gold if gold is not None else None)
    project = find_project(client, title)
    if project is None:
        raise LabelStudioError(f"no project titled {title!r} on this Label Studio")
    labels, report = labels_from_export(export_snapshot(client, project.id), known, _user_emails(client), guideline,
                                        project.id)
    return finish_pull(labels, report, pairs, guideline, gold, previous)


def known_pairs(pool_dir: str | os.PathLike, gold: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(pool pairs, every pair a task may carry)``: the pool's ``pool.tsv``, and with ``gold``
    (:func:`evalset.judgments.gold.read_gold`) its pairs too."""
    pairs = read_pool_pairs(Path(pool_dir) / PAIRS_FILE)
    return pairs, pairs if gold is None else pd.concat([pairs, gold_pairs_frame(gold, pairs)], ignore_index=True)


def finish_pull(labels: pd.DataFrame, report: PullReport, pairs: pd.DataFrame, guideline: Guideline,
                gold: GoldCheck | None = None,
                previous: str | os.PathLike | None = None) -> tuple[pd.DataFrame, PullReport]:
    """The labels and report of a pull once every project was read: with ``gold``, the gold-only answers taken out
    of the labels and every annotator scored on the gold answers by ``gold.score`` (the report's ``gold`` and
    ``gold_only``); with ``previous``, the grades revised or withdrawn since (``revisions``), and a draft of a pair
    whose grade by its author was withdrawn since told as ``withdrawn``. The drafts of every project are listed in
    their ``order``."""
    if gold is not None:
        kept, answers = split_gold(labels, pairs, gold.gold)
        gold_only = len(labels) - len(kept)
        scored = gold.score(answers, guideline.grades, gold_only)
        report, labels = replace(report, gold_only=gold_only, labels=len(kept), gold=scored), kept
    drafts = report.drafts
    if previous is not None:
        revisions = grade_revisions(read_labels(previous), labels)
        report, drafts = replace(report, revisions=revisions, previous=os.fspath(previous)), \
            _withdrawn_since(drafts, revisions)
    return labels, replace(report, drafts=tuple(sorted(drafts, key=lambda draft: draft.order)))


def _withdrawn_since(drafts: tuple[Draft, ...], revisions: pd.DataFrame) -> tuple[Draft, ...]:
    """``drafts`` with each ``not submitted`` one whose pair and annotator lost a grade since the earlier pull
    (``withdrawn`` in ``revisions``) told as ``withdrawn``: the earlier pull saw it submitted."""
    gone = revisions[revisions["change"] == "withdrawn"]
    lost = set(zip(gone["query_id"], gone["doc_id"], gone["annotator"], strict=True))
    return tuple(replace(draft, kind=WITHDRAWN) if draft.kind == NOT_SUBMITTED and (
        draft.query_id, draft.doc_id, draft.annotator) in lost else draft for draft in drafts)


def write_pull(labels: pd.DataFrame, report: PullReport, output: str | os.PathLike,
               gold_report: str | os.PathLike | None = None) -> PullReport:
    """Write the labels table to ``output`` and, with ``gold_report``, the report's gold scores there (``.tsv``: a
    table; else JSON); returns the report naming the files written. A gold report needs a pull with gold."""
    if gold_report is not None and report.gold is None:
        raise InputError("a gold report needs a pull with gold (the gold file given to push)")
    write_labels(labels, output)
    written = report.gold.write(gold_report) if gold_report is not None else None
    return replace(report, labels_path=os.fspath(output), gold_report_path=written)
