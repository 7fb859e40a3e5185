"""Human judging in Label Studio: push a pool's tasks to a project, pull the submitted grades back.

The toolkit talks to the server only through ``label-studio-sdk``. Conventions:

- A project is found by its title; two projects with the same title are refused (ambiguous). The project
  records the guideline it was made from (name, version, sha256) in its description; pushing to it with a
  different guideline is refused, so one project never mixes two scales or two sets of rules.
- The labeling config is generated from the guideline's scale: one single-choice option per grade, labelled
  ``"<grade> <name>"`` with the grade as its alias (what the export holds) and as its hotkey (for grades
  0-9), a free-text comment box, and the query and document shown with ``Text`` tags, which render the task's
  data as escaped text, never as HTML. The guideline body is the project's instructions, shown escaped in a
  ``<pre>`` block before the first task.
- A task carries ``pair_id``, ``query`` and ``text`` only (no system, rank, stratum, query or document id).
  Tasks are imported in the pool's ``order`` and the project samples sequentially, so annotators see them in
  judging order; pairs added by a later push follow the ones already there.
- Idempotent push: the pair ids already in the project are read from the task list restricted to ``id`` and
  ``data`` (faster than a snapshot for this), and only the missing pairs are imported, in batches. A push
  interrupted by a crash is completed by pushing again: every batch is one import request, which Label Studio
  commits as a whole or not at all, and the next push sees what was committed.
- Pull reads one export snapshot and turns every submitted annotation into one labels row (DESIGN.md):
  ``annotator`` is the annotator's e-mail, ``kind`` is ``human``, ``labeled_at`` the annotation's last update
  (UTC, ISO 8601), ``source`` ``label-studio:<project id>/<task id>/<annotation id>``. Skipped (cancelled)
  annotations, annotations without a grade, grades off the guideline's scale and tasks whose ``pair_id`` is
  not in the pool are counted in the report, never turned into grades. Rows are sorted by query id, doc id,
  annotator and annotation id, so pulling twice gives the same file.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import httpx
import pandas as pd
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError
from tqdm import tqdm

from evalset.errors import InputError, ServiceError
from evalset.guideline import Guideline
from evalset.io.annotations import LABELS_COLUMNS
from evalset.io.poolfiles import read_pool_pairs, read_tasks

URL_VARIABLE = "LABEL_STUDIO_URL"
API_KEY_VARIABLE = "LABEL_STUDIO_API_KEY"
GRADE_CONTROL = "grade"
COMMENT_CONTROL = "comment"
DEFAULT_BATCH_SIZE = 500
TASK_DATA_FIELDS = ("pair_id", "query", "text")
_DESCRIPTION = re.compile(r"evalset guideline (?P<name>\S+) v(?P<version>\d+) sha256 (?P<sha256>[0-9a-f]{64})")


class LabelStudioError(ServiceError):
    """Label Studio could not be reached, refused the request, or holds something we cannot use."""


# ----------------------------------------------------------------------------------------------- interface
def labeling_config(guideline: Guideline) -> str:
    """The Label Studio labeling config (XML) for a guideline's scale.

    One ``Choice`` per grade (value ``"<grade> <name>"``, alias and hotkey the grade, the definition as its
    hint), a required single choice; a ``TextArea`` for the comment; query and document as ``Text`` (escaped
    text). Hotkeys are given only when every grade is a single digit.
    """
    digits = all(0 <= grade.value <= 9 for grade in guideline.scale)
    choices = []
    for grade in sorted(guideline.scale, key=lambda g: -g.value):
        hotkey = f" hotkey={quoteattr(str(grade.value))}" if digits else ""
        choices.append(f"      <Choice value={quoteattr(f'{grade.value} {grade.name}')} "
                       f"alias={quoteattr(str(grade.value))}{hotkey} hint={quoteattr(grade.definition)}/>")
    return "\n".join([
        "<View>",
        '  <Header value="Query"/>',
        '  <Text name="query" value="$query" valueType="text"/>',
        '  <Header value="Document"/>',
        '  <Text name="text" value="$text" valueType="text"/>',
        f'  <Header value={quoteattr(f"Grade ({guideline.name} v{guideline.version})")}/>',
        f'  <Choices name="{GRADE_CONTROL}" toName="text" choice="single-radio" required="true" showInline="false">',
        *choices,
        "  </Choices>",
        f'  <TextArea name="{COMMENT_CONTROL}" toName="text" placeholder="Comment (optional): why this grade, '
        'what was hard" rows="2" maxSubmissions="1" editable="true" showSubmitButton="false"/>',
        "</View>",
    ]) + "\n"


def instructions_html(guideline: Guideline) -> str:
    """The project's instructions: the guideline's body, escaped, in a preformatted block (read as written)."""
    return ('<pre style="white-space: pre-wrap; font-family: inherit">' + html.escape(guideline.body) + "</pre>")


def project_description(guideline: Guideline) -> str:
    """The project description that records which guideline the project was made from."""
    return f"evalset guideline {guideline.name} v{guideline.version} sha256 {guideline.sha256}"


def grade_of_choice(choice: str, guideline: Guideline) -> int | None:
    """The grade a choice stands for (its alias ``"2"``, or its value ``"2 Highly relevant"``); None if none."""
    head = str(choice).strip().split(" ", 1)[0]
    if head.lstrip("-").isdigit() and int(head) in guideline.grades:
        return int(head)
    return None


# ---------------------------------------------------------------------------------------------- connection
def connect(url: str | None = None, api_key_variable: str = API_KEY_VARIABLE, timeout: float = 120.0) -> LabelStudio:
    """A client for the server at ``url`` (default ``$LABEL_STUDIO_URL``) with the key from ``$api_key_variable``.

    The connection and the key are checked with one request; failures raise :class:`LabelStudioError` with a
    message that names the URL and the variable, never the key.
    """
    url = url or os.environ.get(URL_VARIABLE)
    if not url:
        raise LabelStudioError(f"no Label Studio URL: pass --url or set {URL_VARIABLE}")
    api_key = os.environ.get(api_key_variable)
    if not api_key:
        raise LabelStudioError(f"no API key: set {api_key_variable} (scripts/label-studio.sh start prints it)")
    client = LabelStudio(base_url=url.rstrip("/"), api_key=api_key, timeout=timeout)
    call(lambda: client.users.whoami(), f"connect to Label Studio at {url}", url=url, key=api_key_variable)
    return client


def call(request, what: str, url: str | None = None, key: str = API_KEY_VARIABLE):
    """Run one SDK request; turn transport and HTTP failures into one-line :class:`LabelStudioError`."""
    try:
        return request()
    except httpx.TransportError as exc:
        where = f" at {url}" if url else ""
        raise LabelStudioError(f"cannot {what}: Label Studio{where} is not answering ({type(exc).__name__})") from None
    except ApiError as exc:
        if exc.status_code in (401, 403):
            raise LabelStudioError(f"cannot {what}: Label Studio refused the API key in {key} "
                                   f"(HTTP {exc.status_code})") from None
        detail = exc.body.get("detail") if isinstance(exc.body, dict) else exc.body
        raise LabelStudioError(f"cannot {what}: HTTP {exc.status_code}: {str(detail)[:300]}") from None


def find_project(client: LabelStudio, title: str) -> Any | None:
    """The project with this exact title, or None. Two projects with the title are refused."""
    found = [project for project in call(lambda: list(client.projects.list(title=title, page_size=100)),
                                         "list projects") if project.title == title]
    if len(found) > 1:
        raise LabelStudioError(f"{len(found)} projects are titled {title!r} (ids "
                               f"{', '.join(str(p.id) for p in found)}); rename all but one")
    if not found:
        return None
    return call(lambda: client.projects.get(found[0].id), f"read project {title!r}")


# ------------------------------------------------------------------------------------------------- exports
def export_snapshot(client: LabelStudio, project_id: int, timeout_s: float = 600.0) -> list[dict]:
    """Every task of the project with its annotations, from one export snapshot (deleted after download)."""
    snapshot = call(lambda: client.projects.exports.create(project_id, title="evalset"), "create an export snapshot")
    started = time.monotonic()
    try:
        while snapshot.status not in ("completed", "failed"):
            if time.monotonic() - started > timeout_s:
                raise LabelStudioError(f"export snapshot {snapshot.id} not ready after {timeout_s:.0f} s")
            time.sleep(0.2)
            snapshot = call(lambda pk=snapshot.id: client.projects.exports.get(project_id, export_pk=pk),
                            "poll the export snapshot")
        if snapshot.status == "failed":
            raise LabelStudioError(f"export snapshot {snapshot.id} of project {project_id} failed")
        chunks = call(lambda: b"".join(client.projects.exports.download(project_id, snapshot.id, export_type="JSON")),
                      "download the export snapshot")
    finally:
        with contextlib.suppress(ApiError, httpx.HTTPError):  # a snapshot left behind costs disk space only
            client.projects.exports.delete(project_id, snapshot.id)
    try:
        tasks = json.loads(chunks)
    except json.JSONDecodeError as exc:
        raise LabelStudioError(f"the export snapshot is not JSON: {exc.msg}") from None
    if not isinstance(tasks, list):
        raise LabelStudioError("the export snapshot is not a list of tasks")
    return tasks


def pair_id_counts(tasks: list[dict]) -> Counter:
    """How many tasks of an export carry each ``pair_id`` (tasks without one are counted under '')."""
    return Counter(str((task.get("data") or {}).get("pair_id", "")) for task in tasks)


def project_pair_ids(client: LabelStudio, project_id: int, page_size: int = 1000) -> Counter:
    """How many tasks of the project carry each ``pair_id``.

    Reads the task list with only ``id`` and ``data`` (no annotations): measured at about half the time of an
    export snapshot for 5,000 tasks, and a fraction of the default task listing.
    """
    tasks = call(lambda: [task.data or {} for task in client.tasks.list(project=project_id, include="id,data",
                                                                          page_size=page_size)],
                 "list the project's tasks")
    return Counter(str(data.get("pair_id", "")) for data in tasks)


# ---------------------------------------------------------------------------------------------------- push
@dataclass
class PushResult:
    """What a push did. ``duplicates`` counts pair ids held by more than one task before the push."""

    project_id: int
    project_created: bool
    pool_tasks: int
    already_present: int
    added: int
    duplicates: int
    overlap: int
    notes: list[str] = field(default_factory=list)


def pool_tasks(pool_dir: str | os.PathLike) -> pd.DataFrame:
    """The pool's tasks (``pair_id, query, text``) in judging order (the ``order`` of ``pool.tsv``).

    Pairs of ``pool.tsv`` without a task (no text in the corpus) are not pushed; ``attrs["without_text"]``
    counts them. A task whose pair is not in ``pool.tsv`` is refused.
    """
    folder = Path(pool_dir)
    pairs = read_pool_pairs(folder / "pool.tsv")
    tasks = read_tasks(folder / "tasks.jsonl")
    merged = tasks.merge(pairs[["pair_id", "order"]], on="pair_id", how="left", validate="one_to_one")
    stray = merged["order"].isna()
    if stray.any():
        raise InputError(f"pair_id {merged.loc[stray, 'pair_id'].iloc[0]} of tasks.jsonl is not in pool.tsv",
                         str(folder / "tasks.jsonl"))
    merged = merged.sort_values("order", kind="stable").reset_index(drop=True)
    result = merged[list(TASK_DATA_FIELDS)].copy()
    result.attrs["without_text"] = len(pairs) - len(tasks)
    return result


def ensure_project(client: LabelStudio, title: str, guideline: Guideline, overlap: int) -> tuple[Any, bool]:
    """Find the project titled ``title`` or create it from the guideline. Returns ``(project, created)``.

    An existing project made from another guideline (by its recorded sha256) is refused.
    """
    project = find_project(client, title)
    if project is None:
        created = call(lambda: client.projects.create(
            title=title, description=project_description(guideline), label_config=labeling_config(guideline),
            expert_instruction=instructions_html(guideline), show_instruction=True, show_skip_button=True,
            maximum_annotations=overlap, overlap_cohort_percentage=100, sampling="Sequential sampling",
        ), f"create project {title!r}")
        return created, True
    recorded = _DESCRIPTION.search(project.description or "")
    if recorded is None or recorded["sha256"] != guideline.sha256:
        what = (f"guideline {recorded['name']} v{recorded['version']} sha256 {recorded['sha256'][:12]}..."
                if recorded else "no evalset guideline")
        raise LabelStudioError(f"project {title!r} was made from {what}, not from {guideline.path} "
                               f"(sha256 {guideline.sha256[:12]}...); use a new project title for a new guideline")
    return project, False


def push(client: LabelStudio, pool_dir: str | os.PathLike, guideline: Guideline, title: str, overlap: int = 1,
         batch_size: int = DEFAULT_BATCH_SIZE, progress: bool = True,
         on_batch: Callable[[int, int], None] | None = None, tasks: pd.DataFrame | None = None) -> PushResult:
    """Push the pool's tasks not yet in the project (keyed by ``pair_id``), in batches, in judging order.

    ``on_batch(done, total)`` is called after each imported batch (progress reporting, tests). ``tasks`` replaces
    the pool's tasks (ordered, at least :data:`TASK_DATA_FIELDS`; ``attrs["without_text"]`` counted): the plan of
    :func:`evalset.quality.gold.prepare_gold_push`, pool and gold tasks mixed blind.
    """
    if overlap < 1:
        raise InputError(f"overlap must be at least 1, got {overlap}")
    if batch_size < 1:
        raise InputError(f"batch size must be at least 1, got {batch_size}")
    tasks = pool_tasks(pool_dir) if tasks is None else tasks
    project, created = ensure_project(client, title, guideline, overlap)
    notes = []
    if not created and project.maximum_annotations != overlap:
        call(lambda: client.projects.update(project.id, maximum_annotations=overlap, overlap_cohort_percentage=100),
             "set the overlap")
        notes.append(f"overlap changed from {project.maximum_annotations} to {overlap}")
    present = Counter() if created else project_pair_ids(client, project.id)
    duplicates = sum(count - 1 for pair, count in present.items() if count > 1 and pair)
    todo = tasks[~tasks["pair_id"].isin(present.keys())]
    records = todo[list(TASK_DATA_FIELDS)].to_dict(orient="records")
    with tqdm(total=len(records), unit="task", desc=f"push {title}", disable=not progress, file=sys.stderr) as bar:
        for start in range(0, len(records), batch_size):
            batch = records[start:start + batch_size]
            # No client-side retry of an import: a retry after a dropped connection could import a batch the
            # server had already committed. The next push re-reads what is there instead.
            call(lambda batch=batch: client.projects.import_tasks(id=project.id, request=batch,
                                                                  request_options={"max_retries": 0}),
                 f"import tasks (pushed {start} of {len(records)} new tasks before this batch; push again to add "
                 "the rest)")
            bar.update(len(batch))
            if on_batch is not None:
                on_batch(start + len(batch), len(records))
    if tasks.attrs.get("without_text"):
        notes.append(f"{tasks.attrs['without_text']} pair(s) of pool.tsv have no text and were not pushed")
    return PushResult(project_id=project.id, project_created=created, pool_tasks=len(tasks),
                      already_present=len(tasks) - len(todo), added=len(records), duplicates=duplicates,
                      overlap=overlap, notes=notes)


# ---------------------------------------------------------------------------------------------------- pull
@dataclass
class PullReport:
    """Counts of what a pull read and what it did not turn into grades."""

    tasks: int = 0
    annotations: int = 0
    labels: int = 0
    skipped: int = 0
    no_grade: int = 0
    off_scale: int = 0
    unknown_pair: int = 0
    unknown_annotator: int = 0
    gold_only: int = 0
    gold_answers: pd.DataFrame | None = field(default=None, repr=False)

    def lines(self) -> list[str]:
        gold = f", {self.gold_only} on gold-only tasks (gold checks only)" if self.gold_answers is not None else ""
        return [f"{self.tasks} tasks, {self.annotations} annotations, {self.labels} labels written",
                f"not turned into grades: {self.skipped} skipped/cancelled, {self.no_grade} without a grade, "
                f"{self.off_scale} off the scale, {self.unknown_pair} on pairs not in the pool{gold}, "
                f"{self.unknown_annotator} by unknown users"]


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
    report = PullReport(tasks=len(tasks))
    rows = []
    for task in tasks:
        pair = where.get(str((task.get("data") or {}).get("pair_id", "")))
        for annotation in task.get("annotations") or []:
            report.annotations += 1
            if annotation.get("was_cancelled"):
                report.skipped += 1
                continue
            choices, comment = _choice_and_comment(annotation.get("result"))
            if not choices:
                report.no_grade += 1
                continue
            grades = {grade_of_choice(choice, guideline) for choice in choices}
            if None in grades or len(grades) != 1:
                report.off_scale += 1
                continue
            if pair is None:
                report.unknown_pair += 1
                continue
            author = annotation.get("completed_by")
            author_id = author.get("id") if isinstance(author, dict) else author
            email = emails.get(int(author_id)) if author_id is not None else None
            if email is None:
                report.unknown_annotator += 1
                continue
            rows.append({"query_id": pair[0], "doc_id": pair[1], "annotator": email, "kind": "human",
                         "grade": grades.pop(), "source": f"label-studio:{project_id}/{task['id']}/{annotation['id']}",
                         "labeled_at": _utc(annotation.get("updated_at") or annotation.get("created_at")),
                         "comment": comment, "_annotation": int(annotation["id"])})
    frame = pd.DataFrame(rows, columns=[*LABELS_COLUMNS, "_annotation"])
    frame = frame.sort_values(["query_id", "doc_id", "annotator", "_annotation"], kind="stable")
    frame = frame[list(LABELS_COLUMNS)].astype({"grade": "int64"}).reset_index(drop=True)
    report.labels = len(frame)
    return frame, report


def _utc(stamp: str | None) -> str:
    if not stamp:
        return ""
    return pd.Timestamp(stamp).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def pull(client: LabelStudio, title: str, pool_dir: str | os.PathLike, guideline: Guideline,
         gold: pd.DataFrame | None = None) -> tuple[pd.DataFrame, PullReport]:
    """Every submitted annotation of the project titled ``title`` as labels rows, with a :class:`PullReport`.

    With ``gold`` (:func:`evalset.quality.gold.read_gold`), answers on gold pairs are also the report's
    ``gold_answers``, and answers on gold pairs not in ``pool.tsv`` (gold-only tasks) are kept out of the labels
    (counted as ``gold_only``).
    """
    from evalset.quality.gold import gold_pairs_frame, split_gold

    pairs = read_pool_pairs(Path(pool_dir) / "pool.tsv")
    project = find_project(client, title)
    if project is None:
        raise LabelStudioError(f"no project titled {title!r} on this Label Studio")
    known = pairs if gold is None else pd.concat([pairs, gold_pairs_frame(gold, pairs)], ignore_index=True)
    labels, report = labels_from_export(export_snapshot(client, project.id), known, _user_emails(client), guideline,
                                        project.id)
    if gold is not None:
        kept, report.gold_answers = split_gold(labels, pairs, gold)
        report.gold_only, report.labels, labels = len(labels) - len(kept), len(kept), kept
    return labels, report
