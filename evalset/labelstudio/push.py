"""Pushing a pool's tasks to a Label Studio project: idempotent, in batches, in judging order (see
:mod:`evalset.labelstudio`)."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
from label_studio_sdk import LabelStudio
from tqdm import tqdm

from evalset.contract import PUSH_RULES
from evalset.io.guideline import Guideline
from evalset.io.poolfiles import read_pairs_and_tasks
from evalset.judgments.gold import GoldPlan
from evalset.labelstudio.project import (
    DEFAULT_BATCH_SIZE,
    DESCRIPTION_PATTERN,
    PROGRESS_FIELD,
    TASK_DATA_FIELDS,
    LabelStudioError,
    call,
    description_matches,
    description_record,
    find_project,
    instructions_html,
    labeling_config,
    progress_text,
    project_description,
    project_pair_ids,
    refresh_interface,
)
from evalset.params import validate_params
from evalset.pooling.examples import refuse_worked_examples
from evalset.render import counted, fields_dict


# ---------------------------------------------------------------------------------------------------- push
@dataclass(frozen=True)
class PushResult:
    """What a push did to the project titled ``title``. ``duplicates`` counts pair ids held by more than one task
    before the push; ``remarks`` are what it changed or left out (the overlap, pairs without text); ``gold`` the
    plan of the gold tasks it mixed in, if any.

    ``to_text()`` is what ``evalset push`` prints (the counts, a ``note:`` line per remark, the gold line);
    ``notes`` warns of duplicates.
    """

    title: str
    project_id: int
    project_created: bool
    pool_tasks: int
    already_present: int
    added: int
    duplicates: int
    overlap: int
    remarks: tuple[str, ...] = ()
    gold: GoldPlan | None = None

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)

    def to_text(self) -> str:
        state = "created" if self.project_created else "found"
        what = counted(self.pool_tasks, "pool task") if self.gold is None else \
            f"{counted(self.pool_tasks, 'task')} (pool and gold)"
        return "\n".join([f"project {self.title!r} (id {self.project_id}, {state}): {what}, "
                          f"{self.already_present} already there, {self.added} added; overlap {self.overlap}",
                          *remark_lines(self.remarks, self.gold)])

    @property
    def notes(self) -> list[str]:
        notes = [f"warning: the project holds {counted(self.duplicates, 'duplicate task')} of the same pair_id (not "
                 "made by this push)"] if self.duplicates else []
        if self.overlap > 1:
            notes.append(f"warning: --overlap {self.overlap} in one shared project: on Label Studio Community every "
                         "annotator of a project sees the others' grades, so this double judging is not blind; push "
                         "with --annotators a@x,b@y for a project per annotator, each on a server of their own "
                         "(scripts/label-studio.sh start-team; docs/labelstudio.md)")
        return notes


def remark_lines(remarks: tuple[str, ...], gold: GoldPlan | None) -> list[str]:
    """What a push says after its counts: a ``note:`` line per remark, then the gold plan's line, if any."""
    return [f"note: {remark}" for remark in remarks] + ([gold.to_text()] if gold is not None else [])


def without_text(count: int) -> str:
    """The remark of a push on the pairs of ``pool.tsv`` it could not push (no text in the corpus)."""
    return counted(count, "pair of pool.tsv has no text and was", "pairs of pool.tsv have no text and were") + \
        " not pushed"


def pool_tasks(pool_dir: str | os.PathLike) -> pd.DataFrame:
    """The pool's tasks (``pair_id, query, text``) in judging order (the ``order`` of ``pool.tsv``).

    Pairs of ``pool.tsv`` without a task (no text in the corpus) are not pushed; ``attrs["without_text"]``
    counts them. A task whose pair is not in ``pool.tsv`` is refused.
    """
    pairs, tasks = read_pairs_and_tasks(pool_dir)
    result = tasks[list(TASK_DATA_FIELDS)].copy()
    result.attrs["without_text"] = len(pairs) - len(tasks)
    return result


def ensure_project(client: LabelStudio, title: str, guideline: Guideline, overlap: int,
                   tasks: int = 0) -> tuple[Any, bool]:
    """Find the project titled ``title`` or create it from the guideline (its description saying ``tasks``
    pairs). Returns ``(project, created)``.

    An existing project made from another guideline (by its recorded sha256) is refused.
    """
    project = find_project(client, title)
    if project is None:
        created = call(lambda: client.projects.create(
            title=title, description=project_description(guideline, tasks), label_config=labeling_config(guideline),
            expert_instruction=instructions_html(guideline), show_instruction=True, show_skip_button=True,
            maximum_annotations=overlap, overlap_cohort_percentage=100, sampling="Sequential sampling",
            skip_queue="REQUEUE_FOR_OTHERS",
        ), f"create project {title!r}")
        return created, True
    recorded = DESCRIPTION_PATTERN.search(project.description or "")
    if recorded is None or recorded["sha256"] != guideline.sha256:
        what = (f"guideline {recorded['name']} v{recorded['version']} sha256 {recorded['sha256'][:12]}..."
                if recorded else "no evalset guideline")
        raise LabelStudioError(f"project {title!r} was made from {what}, not from {guideline.path} "
                               f"(sha256 {guideline.sha256[:12]}...); use a new project title for a new guideline")
    return project, False


@validate_params(PUSH_RULES)
def push(client: LabelStudio, pool_dir: str | os.PathLike, guideline: Guideline, title: str, overlap: int = 1,
         batch_size: int = DEFAULT_BATCH_SIZE, progress: bool = True,
         on_batch: Callable[[int, int], None] | None = None, gold: GoldPlan | None = None) -> PushResult:
    """Push the pool's tasks not yet in the project (keyed by ``pair_id``), in batches, in judging order.

    ``on_batch(done, total)`` is called after each imported batch (progress reporting, tests). With ``gold`` (the
    plan of :func:`evalset.judgments.gold.prepare_gold_push`), its tasks, pool and gold mixed blind, replace the
    pool's. ``overlap`` and ``batch_size`` are checked against :data:`evalset.contract.PUSH_RULES`.
    """
    tasks = pool_tasks(pool_dir) if gold is None else gold.tasks
    refuse_worked_examples(guideline, tasks["pair_id"], pool_dir)
    return push_tasks(client, tasks, guideline, title, overlap, batch_size, progress, on_batch, gold)


@validate_params(PUSH_RULES)
def push_tasks(client: LabelStudio, tasks: pd.DataFrame, guideline: Guideline, title: str, overlap: int = 1,
               batch_size: int = DEFAULT_BATCH_SIZE, progress: bool = True,
               on_batch: Callable[[int, int], None] | None = None, gold: GoldPlan | None = None) -> PushResult:
    """Push these ``tasks`` (``pair_id, query, text``, in judging order) to the project titled ``title``, as
    :func:`push` does for a pool's: the project found or created, only the pairs not yet there imported, each with
    its place in the project (``progress``: ``Pair 4 of 8``, counted after the tasks already there)."""
    project, created = ensure_project(client, title, guideline, overlap, len(tasks))
    remarks = []
    if not created and project.maximum_annotations != overlap:
        call(lambda: client.projects.update(project.id, maximum_annotations=overlap, overlap_cohort_percentage=100),
             "set the overlap")
        remarks.append(f"overlap changed from {project.maximum_annotations} to {overlap}")
    if not created and (refreshed := refresh_interface(client, project, guideline)):
        remarks.append(refreshed)
    present = Counter() if created else project_pair_ids(client, project.id)
    duplicates = sum(count - 1 for pair, count in present.items() if count > 1 and pair)
    todo = tasks[~tasks["pair_id"].isin(present.keys())]
    records = todo[list(TASK_DATA_FIELDS)].to_dict(orient="records")
    before = sum(present.values())  # the tasks already there come first in the project's order
    for number, record in enumerate(records, start=before + 1):
        record[PROGRESS_FIELD] = progress_text(number, before + len(records))
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
    if not created and (described := describe(client, project, guideline, sum(present.values()) + len(records))):
        remarks.append(described)
    if tasks.attrs.get("without_text"):
        remarks.append(without_text(tasks.attrs["without_text"]))
    return PushResult(title=title, project_id=project.id, project_created=created, pool_tasks=len(tasks),
                      already_present=len(tasks) - len(todo), added=len(records), duplicates=duplicates,
                      overlap=overlap, remarks=tuple(remarks), gold=gold)


def describe(client: LabelStudio, project: Any, guideline: Guideline, tasks: int) -> str | None:
    """Bring the description of a project found by push to what push writes for its ``tasks`` pairs. Returns a
    remark when it was the record alone (made by an earlier evalset) or edited in Label Studio; None when it
    was already right or only its count of pairs changed."""
    stored, written = (project.description or "").strip(), project_description(guideline, tasks)
    if stored == written.strip():
        return None
    call(lambda: client.projects.update(project.id, description=written), "update the project's description")
    if stored == description_record(guideline):
        return "description updated to a sentence for annotators (the guideline's record kept at its end)"
    if not description_matches(stored, guideline):
        return "description was edited in Label Studio; written again as push writes it"
    return None
