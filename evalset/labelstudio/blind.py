"""Blind judging on Label Studio Community: one project per annotator, each on a Label Studio server of their own.

Label Studio Community has no annotator role: every member of an organization sees all its projects, their Data
Manager (with who annotated what), every annotation, and may edit the labeling config; and organizations do not
separate annotators on one server either: its annotation, task-list, summary, next-task and draft routes answer for
any organization's objects by id (``tests/test_labelstudio_isolation.py`` finds them). So each annotator gets a
server of their own (``scripts/label-studio.sh start-team``: its own data, database, ``SECRET_KEY`` and port, the
annotator in an organization of their own there) and, with ``--annotators``, a project of their own on it.
Conventions:

- **The annotators file** (``$LABEL_STUDIO_ANNOTATORS``, written by ``start-team`` or ``add-annotator``): a TSV
  with the header ``email password token organization url``, one annotator a line, mode 600 (a file others may
  read is refused). The e-mail, token, organization and server URL are read; tokens are never printed, never
  arguments.
- **Projects**: annotator ``a@x`` gets the project titled ``<title> [a@x]``, made with their own token (so in
  their organization) from the guideline like any evalset project, with ``maximum_annotations`` 1: the overlap is
  across projects, never inside one.
- **Assignment** (:func:`assign_pairs`): each pair goes to ``overlap`` annotators. Pairs already in an
  annotator's project stay there (a push never moves or removes a task); each other pair, in judging order, goes
  to the annotators who hold the fewest pairs so far, ties broken by their place in ``--annotators``. The result
  depends only on the pool, the list of annotators and what the projects hold: the same push twice gives the same
  projects, and every annotator gets the same number of pairs (within one) when the projects start empty.
- **Pull** reads every annotator's project with their token, as one labels table (the rows of
  :func:`evalset.labelstudio.pull.labels_from_export`; ``source`` names project, task and annotation). In
  annotator a@x's project only a@x's annotations count; another user's are counted as by unknown users.
- **Edited projects are refused**: an annotator owns their organization and can edit their project's labeling
  config, instructions or description. Push and pull compare them with what push writes and refuse a project
  that differs, naming it and what changed.
- **Annotators who share a server are refused** (:func:`check_blind`) unless the caller accepts it
  (``shared_server``; ``--shared-server``): then push and pull warn that the judging is not blind. On a shared
  server pull also refuses an annotation last changed by anyone but its project's annotator (any user's token can
  change any annotation by its id there); a read leaves no trace.
"""

from __future__ import annotations

import html
import os
import re
import stat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import pandas as pd
from label_studio_sdk import LabelStudio

from evalset.contract import PUSH_RULES
from evalset.errors import InputError
from evalset.io.documents import read_tsv_rows
from evalset.io.guideline import Guideline
from evalset.judgments.gold import GoldCheck, GoldPlan
from evalset.labelstudio.project import (
    DEFAULT_BATCH_SIZE,
    LabelStudioError,
    call,
    description_matches,
    export_snapshot,
    find_project,
    instructions_html,
    labeling_config,
    project_pair_ids,
    server_url,
)
from evalset.labelstudio.pull import PullReport, finish_pull, known_pairs, labels_from_export
from evalset.labelstudio.push import (
    PushResult,
    pool_tasks,
    push_tasks,
    refuse_worked_examples,
    remark_lines,
    without_text,
)
from evalset.params import check, validate_params
from evalset.render import counted, fields_dict

ANNOTATORS_VARIABLE = "LABEL_STUDIO_ANNOTATORS"
ANNOTATORS_COLUMNS = ("email", "password", "token", "organization", "url")


@dataclass(frozen=True)
class Annotator:
    """An annotator of the annotators file: e-mail, organization id, the server's URL ('' if not recorded), and the
    API token (never shown)."""

    email: str
    organization: int
    url: str
    token: str = field(repr=False)


# ------------------------------------------------------------------------------------------- the annotators
def read_annotators(path: str | os.PathLike) -> dict[str, Annotator]:
    """The annotators file (see the module docstring), by e-mail. A file others may read, a wrong header or a
    malformed line is refused with its line."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(f"cannot read the annotators file: {exc.strerror}", path) from None
    rows = read_tsv_rows(path)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise InputError(f"the annotators file holds passwords and tokens but others may read it (mode "
                         f"{stat.S_IMODE(mode):o}): chmod 600 {path}", path)
    if not rows or tuple(rows[0]) != ANNOTATORS_COLUMNS:
        raise InputError(f"the header is not {' '.join(ANNOTATORS_COLUMNS)} (scripts/label-studio.sh add-annotator "
                         "writes this file)", path, 1)
    found: dict[str, Annotator] = {}
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(ANNOTATORS_COLUMNS) or not row[0] or not row[2] or not row[3].isdigit():
            raise InputError("not an annotator line (email, password, token, organization id, url)", path, number)
        if row[0] in found:
            raise InputError(f"{row[0]} is listed twice", path, number)
        found[row[0]] = Annotator(email=row[0], organization=int(row[3]), url=row[4], token=row[2])
    return found


def annotator_team(emails: str, variable: str = ANNOTATORS_VARIABLE) -> tuple[Annotator, ...]:
    """The annotators named in ``emails`` (comma-separated, in that order) from the files named by ``$variable``
    (one path, or several separated by ``:`` as in ``PATH``: one file per server when each annotator has a server of
    their own). An e-mail in two of the files is refused."""
    names = [email.strip() for email in emails.split(",") if email.strip()]
    if not names:
        raise InputError("--annotators names no e-mail (give a@x,b@y)")
    repeated = sorted({email for email in names if names.count(email) > 1})
    if repeated:
        raise InputError(f"--annotators names {repeated[0]} twice")
    path = os.environ.get(variable)
    if not path:
        raise InputError(f"--annotators: no annotators file: set {variable} to the file scripts/label-studio.sh "
                         "add-annotator wrote (DATA_DIR/evalset-annotators.tsv)")
    known: dict[str, Annotator] = {}
    for one in path.split(os.pathsep):
        for email, annotator in read_annotators(one).items():
            if email in known:
                raise InputError(f"{email} is in two annotators files of {variable}", one)
            known[email] = annotator
    missing = [email for email in names if email not in known]
    if missing:
        raise InputError(f"{missing[0]} is not an annotator of {variable}'s files: scripts/label-studio.sh "
                         f"add-annotator {missing[0]} --data-dir DATA_DIR", path)
    return tuple(known[email] for email in names)


def annotator_title(title: str, email: str) -> str:
    """The title of ``email``'s own project of the project family ``title``."""
    return f"{title} [{email}]"


def connect_annotator(url: str | None, annotator: Annotator) -> tuple[LabelStudio, int]:
    """A client of the annotator's server (the file's URL; else ``url``, else ``$LABEL_STUDIO_URL``) with their
    token, and their user id; a token of another user is refused."""
    url = annotator.url or server_url(url)
    client = LabelStudio(base_url=url.rstrip("/"), api_key=annotator.token, timeout=120.0)
    user = call(lambda: client.users.whoami(), f"connect to Label Studio at {url} as {annotator.email}", url=url,
                key=f"the annotators file for {annotator.email}")
    if str(user.email) != annotator.email:
        raise LabelStudioError(f"the token of {annotator.email} in the annotators file is {user.email}'s")
    return client, int(user.id)


def shared_servers(url: str | None, annotators: Sequence[Annotator]) -> dict[str, tuple[str, ...]]:
    """The Label Studio servers that hold more than one of ``annotators`` (the file's URL; else ``url``, else
    ``$LABEL_STUDIO_URL``), with their annotators' e-mails: on such a server the judging is not blind."""
    by_server: dict[str, list[str]] = {}
    for annotator in annotators:
        server = (annotator.url or server_url(url)).rstrip("/")
        by_server.setdefault(server, []).append(annotator.email)
    return {server: tuple(emails) for server, emails in by_server.items() if len(emails) > 1}


def not_blind_line(shared: Mapping[str, Sequence[str]]) -> str:
    """The warning that annotators share a server: what any of them can read, and the arrangement that prevents it."""
    server, emails = next(iter(shared.items()))
    return (f"not blind: {', '.join(emails)} are on one Label Studio server ({server}), where Label Studio "
            "Community lets each read the others' grades, drafts and counts by URL (docs/labelstudio.md); give each "
            "annotator a server of their own: scripts/label-studio.sh start-team")


def check_blind(url: str | None, annotators: Sequence[Annotator], shared_server: bool = False) -> tuple[str, ...]:
    """Refuse annotators who share a Label Studio server, unless ``shared_server`` (then the warning, returned)."""
    shared = shared_servers(url, annotators)
    if not shared:
        return ()
    if not shared_server:
        raise InputError(not_blind_line(shared).removeprefix("not blind: ") + "; or accept it with --shared-server")
    return (not_blind_line(shared),)


# ------------------------------------------------------------------------------------------ the assignment
def assign_pairs(pair_ids: Sequence[str], annotators: Sequence[str], overlap: int,
                 present: Mapping[str, Collection[str]] | None = None) -> dict[str, tuple[str, ...]]:
    """The pairs each annotator judges, in judging order: every pair given to ``overlap`` annotators.

    ``present`` holds, by annotator, the pairs already in their project: they stay, and count towards the pair's
    ``overlap`` and the annotator's load. Every other pair, in the order of ``pair_ids``, goes to the annotators
    with the fewest pairs so far (ties: the first in ``annotators``). A pair already held by more annotators than
    ``overlap`` keeps them all.
    """
    check("overlap", overlap, PUSH_RULES["overlap"])
    if overlap > len(annotators):
        raise InputError(f"--overlap {overlap} needs at least {overlap} annotators; --annotators names "
                         f"{len(annotators)}")
    held = {email: set((present or {}).get(email, ())) & set(pair_ids) for email in annotators}
    load = {email: len(pairs) for email, pairs in held.items()}
    place = {email: number for number, email in enumerate(annotators)}
    given: dict[str, list[str]] = {email: [] for email in annotators}
    for pair in pair_ids:
        holders = [email for email in annotators if pair in held[email]]
        others = sorted((email for email in annotators if pair not in held[email]),
                        key=lambda email: (load[email], place[email]))
        for email in others[:max(0, overlap - len(holders))]:
            load[email] += 1
            holders.append(email)
        for email in holders:
            given[email].append(pair)
    return {email: tuple(pairs) for email, pairs in given.items()}


def check_unchanged(project: Any, guideline: Guideline, email: str) -> None:
    """Refuse an annotator's project whose description, labeling config or instructions differ from what push
    writes from ``guideline`` (the annotator owns their organization and can edit them).

    The instructions are compared as text (entities resolved, tags dropped, runs of white space as one space):
    Label Studio cleans the HTML it stores (bleach drops attributes such as ``style``), never the words.
    """
    edited = [what for what, now, written, same in (
        ("description (the guideline it was made from)", project.description, guideline,
         description_matches),
        ("labeling config", project.label_config, labeling_config(guideline), _same_lines),
        ("instructions", project.expert_instruction, instructions_html(guideline), _same_text))
        if not same(now or "", written)]
    if edited:
        raise LabelStudioError(f"project {project.title!r} (id {project.id}) of {email} was edited in Label Studio: "
                               f"its {', '.join(edited)} not what push writes from {guideline.path} (an annotator "
                               "owns their organization and can edit their project); refused")


def _same_lines(stored: str, written: str) -> bool:
    return stored.strip() == written.strip()


def _same_text(stored: str, written: str) -> bool:
    def text(markup: str) -> str:
        return " ".join(re.sub(r"<[^>]*>", " ", html.unescape(markup)).split())

    return text(stored) == text(written)


# ------------------------------------------------------------------------------------------------- push
@dataclass(frozen=True)
class BlindPushResult:
    """What a push to one project per annotator did: ``results`` holds each annotator's :class:`PushResult` (in the
    order of ``--annotators``), ``tasks`` the pool's (and gold) tasks, each given to ``overlap`` annotators.

    ``to_text()`` is what ``evalset push --annotators`` prints: a summary line, one line per annotator's project,
    a ``note:`` line per remark, the gold line. ``notes`` warns of duplicates in any project.
    """

    title: str
    overlap: int
    tasks: int
    results: tuple[PushResult, ...]
    emails: tuple[str, ...]
    remarks: tuple[str, ...] = ()
    gold: GoldPlan | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)

    def to_text(self) -> str:
        where = ("on one server, each in their own organization" if self.warnings
                 else "each on a Label Studio server of their own")
        lines = [f"{counted(self.tasks, 'task')} for {counted(len(self.emails), 'annotator')}, each task in the "
                 f"projects of {self.overlap} (one project per annotator, {where})"]
        for email, result in zip(self.emails, self.results, strict=True):
            state = "created" if result.project_created else "found"
            lines.append(f"  {email}: project {result.title!r} (id {result.project_id}, {state}): "
                         f"{counted(result.pool_tasks, 'task')}, {result.already_present} already there, "
                         f"{result.added} added")
        return "\n".join(lines + remark_lines(self.remarks, self.gold))

    @property
    def notes(self) -> list[str]:
        return [f"warning: {line}" for line in self.warnings] + [
            f"{note} ({result.title!r})" for result in self.results for note in result.notes]


@validate_params(PUSH_RULES)
def push_blind(url: str | None, annotators: Sequence[Annotator], pool_dir: str | os.PathLike, guideline: Guideline,
               title: str, overlap: int = 1, batch_size: int = DEFAULT_BATCH_SIZE, progress: bool = True,
               gold: GoldPlan | None = None, shared_server: bool = False) -> BlindPushResult:
    """Push the pool's tasks (or the gold plan's) to one project per annotator, each task to ``overlap`` of them
    (:func:`assign_pairs`); every annotator's client and project are checked before anything is imported.

    Annotators who share a Label Studio server are refused (:func:`check_blind`) unless ``shared_server``: then
    the result says the judging is not blind."""
    emails = tuple(annotator.email for annotator in annotators)
    assign_pairs([], emails, overlap)  # the overlap, every title and the servers are checked before any request
    for email in emails:
        check("--project with its ' [e-mail]'", annotator_title(title, email), PUSH_RULES["title"])
    warnings = check_blind(url, annotators, shared_server)
    tasks = pool_tasks(pool_dir) if gold is None else gold.tasks
    refuse_worked_examples(guideline, tasks["pair_id"], pool_dir)
    clients, present = {}, {}
    for annotator in annotators:
        client, _ = connect_annotator(url, annotator)
        project = find_project(client, annotator_title(title, annotator.email))
        if project is not None:
            check_unchanged(project, guideline, annotator.email)
            present[annotator.email] = set(project_pair_ids(client, project.id))
        clients[annotator.email] = client
    given = assign_pairs(tasks["pair_id"].tolist(), emails, overlap, present)
    results = []
    for email in emails:
        mine = tasks[tasks["pair_id"].isin(set(given[email]))].reset_index(drop=True)
        results.append(push_tasks(clients[email], mine, guideline, annotator_title(title, email), overlap=1,
                                  batch_size=batch_size, progress=progress))
    remarks = []
    held = pd.Series([pair for email in emails for pair in given[email]]).value_counts()
    if (held > overlap).any():
        remarks.append(f"{counted(int((held > overlap).sum()), 'task is', 'tasks are')} in the projects of more than "
                       f"{overlap} annotators "
                       "(pushed before with another overlap or other annotators); none was removed")
    if tasks.attrs.get("without_text"):
        remarks.append(without_text(tasks.attrs["without_text"]))
    return BlindPushResult(title=title, overlap=overlap, tasks=len(tasks), results=tuple(results), emails=emails,
                           remarks=tuple(remarks), gold=gold, warnings=warnings)


# ------------------------------------------------------------------------------------------------- pull
def pull_blind(url: str | None, annotators: Sequence[Annotator], title: str, pool_dir: str | os.PathLike,
               guideline: Guideline, gold: GoldCheck | None = None,
               previous: str | os.PathLike | None = None) -> tuple[pd.DataFrame, PullReport]:
    """Every submitted annotation of every annotator's project as one labels table, with one :class:`PullReport`
    (counts summed over the projects); gold and ``previous`` as :func:`evalset.labelstudio.pull.pull` does them.

    Each project is read with its annotator's token and checked unedited (:func:`check_unchanged`) first; a
    missing project is refused. Annotators who share a server are pulled with a warning: their grades were not
    given blind.
    """
    pairs, known = known_pairs(pool_dir, gold.gold if gold is not None else None)
    frames, reports = [], []
    for annotator in annotators:
        client, user_id = connect_annotator(url, annotator)
        project = find_project(client, annotator_title(title, annotator.email))
        if project is None:
            raise LabelStudioError(f"{annotator.email} has no project titled "
                                   f"{annotator_title(title, annotator.email)!r}: push with --annotators first")
        check_unchanged(project, guideline, annotator.email)
        tasks = export_snapshot(client, project.id)
        check_authors(tasks, user_id, project, annotator.email)
        labels, report = labels_from_export(tasks, known, {user_id: annotator.email}, guideline, project.id)
        frames.append(labels)
        reports.append(report)
    labels = pd.concat(frames, ignore_index=True).sort_values(["query_id", "doc_id", "annotator"], kind="stable")
    shared = shared_servers(url, annotators)
    report = replace(sum_reports(reports), warnings=(not_blind_line(shared),) if shared else ())
    return finish_pull(labels.reset_index(drop=True), report, pairs, guideline, gold, previous)


def check_authors(tasks: list[dict], user_id: int, project: Any, email: str) -> None:
    """Refuse an export of ``email``'s project holding an annotation last changed by another user (``updated_by``):
    Label Studio 1.23.2 lets any user change any annotation by its id (docs/labelstudio.md)."""
    for task in tasks:
        for annotation in task.get("annotations") or []:
            author = annotation.get("updated_by")
            author = author.get("id") if isinstance(author, dict) else author
            if author is not None and int(author) != user_id:
                raise LabelStudioError(f"annotation {annotation.get('id')} of task {task.get('id')} in project "
                                       f"{project.title!r} (id {project.id}) was last changed by user {author}, not by "
                                       f"{email} (user {user_id}); refused: see who did in Label Studio")


def sum_reports(reports: Sequence[PullReport]) -> PullReport:
    """One report of several projects' pulls: every count summed, every list joined (no gold, no revisions and no
    file yet: :func:`~evalset.labelstudio.pull.finish_pull` adds them)."""
    empty = PullReport()
    joined = {item.name: (sum((getattr(report, item.name) for report in reports), start=getattr(empty, item.name)))
              for item in fields(PullReport) if isinstance(getattr(empty, item.name), (int, tuple))}
    return replace(empty, **joined)
