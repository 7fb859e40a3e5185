"""A Label Studio project as evalset makes it: the labeling interface from a guideline, the connection, finding a
project by title, and export snapshots (see :mod:`evalset.labelstudio` for the conventions)."""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import time
from collections import Counter
from typing import Any
from xml.sax.saxutils import quoteattr

import httpx
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError

from evalset.errors import ServiceError
from evalset.io.guideline import Grade, Guideline
from evalset.labelstudio.instructions import instructions_html as instructions_html
from evalset.params import is_http_url
from evalset.render import counted

URL_VARIABLE = "LABEL_STUDIO_URL"
API_KEY_VARIABLE = "LABEL_STUDIO_API_KEY"
GRADE_CONTROL = "grade"
COMMENT_CONTROL = "comment"
DEFAULT_BATCH_SIZE = 500
TASK_DATA_FIELDS = ("pair_id", "query", "text")
#: the task data field push adds beside :data:`TASK_DATA_FIELDS`: where the task is in its project
PROGRESS_FIELD = "progress"
PROGRESS_CLASS = "evalset-progress"
DESCRIPTION_PATTERN = re.compile(r"evalset guideline (?P<name>\S+) v(?P<version>\d+) sha256 (?P<sha256>[0-9a-f]{64})")
DESCRIPTION_COUNT = re.compile(r"(\d+) pairs? to grade, ")


class LabelStudioError(ServiceError):
    """Label Studio could not be reached, refused the request, or holds something we cannot use."""


# ----------------------------------------------------------------------------------------------- interface
#: The CSS of the labeling view (the config's ``Style`` tag; measured on Label Studio 1.23.2 in Chromium by
#: tests/test_labelstudio_browser.py). No project setting or labeling-config attribute removes Label Studio's side
#: panels (regions, relations, info, history: the data manager always asks for its ``side-column`` interface), and
#: they hold nothing for a task without regions: hidden, with the padding kept for them (320 px at 1366x768), the
#: task takes the whole width; below their break point they sit under the task (half the screen at 800x900). The
#: app's top bar is in the same page: under 1100 px its logo gives way and a long project title is cut with an
#: ellipsis, so the page is no wider than an 800 px window. Label Studio's own task counter is hidden: in 1.23.2 it
#: counts the tasks the stream has served the annotator (``1 of 1`` on the first of 142), and its corrected form
#: (a server feature flag) counts the queue of the project's creator, not the annotator's; the view shows the
#: task's :data:`PROGRESS_FIELD` instead (docs/labelstudio.md). Label Studio escapes ``<``, ``>`` and ``&`` in a
#: ``Style`` (it sanitises it as HTML text), so none is used; the rules name only Label Studio's ``lsf-`` classes.
VIEW_STYLE = """
.lsf-sidepanels { padding-left: 0 !important; padding-right: 0 !important; }
.lsf-sidepanels__wrapper, .lsf-tabs-panel { display: none !important; }
.lsf-current-task__task-count { display: none; }
.evalset-progress { color: var(--color-neutral-content-subtler, #6b6b6b); }
@media (max-width: 1100px) {
  .lsf-menu-header__trigger { min-width: 0 !important; padding: 0 12px; }
  .lsf-menu-header__logo { display: none; }
  .lsf-menu-header__context { min-width: 0; padding-left: 12px; }
  .lsf-menu-header__context-item_left, .lsf-breadcrumbs, .lsf-breadcrumbs__list { min-width: 0; }
  .lsf-breadcrumbs__item:nth-child(2), .lsf-breadcrumbs__item:nth-child(2) a { min-width: 0; overflow: hidden; }
  .lsf-breadcrumbs__item:nth-child(2) .lsf-breadcrumbs__label { display: block; white-space: nowrap;
    overflow: hidden; text-overflow: ellipsis; }
}
"""


def labeling_config(guideline: Guideline) -> str:
    """The Label Studio labeling config (XML) for a guideline's scale.

    One ``Choice`` per grade, highest first: value ``"<grade> <name>"``, alias and hotkey the grade (hotkeys
    only when every grade is a single digit), shown as the grade's name in bold followed by its definition
    (``html``, built from escaped text), so the definitions are read beside the buttons, not on hover; a
    required single choice whose warning (``requiredMessage``) says what to do; a ``TextArea`` for the comment;
    query and document as ``Text`` (escaped text, never HTML from the task); above them the task's place in its
    project (:data:`PROGRESS_FIELD`, empty on a task pushed without it); the view's CSS (:data:`VIEW_STYLE`) in a
    ``Style`` tag.
    """
    digits = all(0 <= grade.value <= 9 for grade in guideline.scale)
    choices = []
    for grade in sorted(guideline.scale, key=lambda g: -g.value):
        hotkey = f" hotkey={quoteattr(str(grade.value))}" if digits else ""
        choices.append(f"      <Choice value={quoteattr(f'{grade.value} {grade.name}')} "
                       f"alias={quoteattr(str(grade.value))}{hotkey} html={quoteattr(choice_html(grade))}/>")
    keys = f" (keys {', '.join(str(g.value) for g in sorted(guideline.scale, key=lambda g: -g.value))})" \
        if digits else ""
    return "\n".join([
        "<View>",
        f"  <Style>{VIEW_STYLE}  </Style>",
        f'  <View className="{PROGRESS_CLASS}"><Header value="${PROGRESS_FIELD}" size="5"/></View>',
        '  <Header value="Query"/>',
        '  <Text name="query" value="$query" valueType="text"/>',
        '  <Header value="Document"/>',
        '  <Text name="text" value="$text" valueType="text"/>',
        f'  <Header value={quoteattr(f"Grade ({guideline.name} v{guideline.version})")}/>',
        f'  <Choices name="{GRADE_CONTROL}" toName="text" choice="single-radio" required="true" showInline="false"'
        f' requiredMessage={quoteattr(f"Choose a grade{keys} before you submit.")}>',
        *choices,
        "  </Choices>",
        f'  <TextArea name="{COMMENT_CONTROL}" toName="text" placeholder="Comment (optional): why this grade, '
        'what was hard" rows="2" maxSubmissions="1" editable="true" showSubmitButton="false"/>',
        "</View>",
    ]) + "\n"


def progress_text(number: int, total: int) -> str:
    """What a task shows of its place in the project: ``Pair 4 of 8`` (the 4th of the 8 tasks the project held
    when the push that added it ended; tasks are served in this order)."""
    return f"Pair {number} of {total}"


def choice_html(grade: Grade) -> str:
    """What a grade's button shows: ``<strong>3 Perfectly relevant</strong>: its definition`` (escaped text)."""
    label = f"<strong>{html.escape(f'{grade.value} {grade.name}', quote=False)}</strong>"
    return f"{label}: {html.escape(grade.definition, quote=False)}" if grade.definition else label


def project_description(guideline: Guideline, tasks: int) -> str:
    """The project's description: a sentence for annotators (shown on the project's card: what to do, how many
    pairs, the guideline's name and version), then, last, the record of the guideline the project was made from
    (:data:`DESCRIPTION_PATTERN`: its name, version and sha256) that push reads to refuse another guideline."""
    low, high = min(guideline.grades), max(guideline.grades)
    return (f"{counted(tasks, 'pair')} to grade, by the {guideline.name} guideline v{guideline.version} (see "
            f"Instructions): read the query and the passage, choose a grade from {low} to {high}, press Submit."
            f"\n\n{description_record(guideline)}")


def description_record(guideline: Guideline) -> str:
    """The machine record of the guideline in a project's description (all a description held before evalset
    wrote a sentence for annotators in front of it)."""
    return f"evalset guideline {guideline.name} v{guideline.version} sha256 {guideline.sha256}"


def description_matches(stored: str | None, guideline: Guideline) -> bool:
    """Whether a project's description is one push writes from ``guideline``: :func:`project_description` for
    the number of pairs it states, or the record alone (a project made by an earlier evalset)."""
    stored = (stored or "").strip()
    if stored == description_record(guideline):
        return True
    stated = DESCRIPTION_COUNT.match(stored)
    return stated is not None and stored == project_description(guideline, int(stated[1])).strip()


def refresh_interface(client: LabelStudio, project: Any, guideline: Guideline) -> str | None:
    """Bring an evalset-made project's labeling config and instructions up to what this evalset generates.

    Called on a project already checked to be made from ``guideline`` (same sha256). The grades' values,
    aliases and the control names never change with the interface, so annotations made before stay valid; Label
    Studio checks this itself and refuses a config that would orphan them. Returns a remark saying what
    changed (None when nothing did); a refusal is a remark too, the push goes on with the old interface.
    """
    config, instructions = labeling_config(guideline), instructions_html(guideline)
    changed = {name: value for name, value, old in (("label_config", config, project.label_config),
                                                     ("expert_instruction", instructions, project.expert_instruction))
               if (old or "").strip() != value.strip()}
    if not changed:
        return None
    what = " and ".join({"label_config": "labeling interface", "expert_instruction": "instructions"}[n]
                        for n in changed)
    try:
        call(lambda: client.projects.update(project.id, **changed), f"update the {what}")
    except LabelStudioError as exc:
        return f"the {what} of this project were left as they were: {exc}"
    return f"{what} updated to this evalset's (same guideline, same grades)"


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
    url = server_url(url)
    if not api_key_variable.strip():
        raise LabelStudioError(f"--api-key-env {api_key_variable!r} names no environment variable: give the name of "
                               f"the one holding the key ({API_KEY_VARIABLE} by default)")
    api_key = os.environ.get(api_key_variable)
    if not api_key:
        raise LabelStudioError(f"no API key: set {api_key_variable} (scripts/label-studio.sh start prints it)")
    client = LabelStudio(base_url=url.rstrip("/"), api_key=api_key, timeout=timeout)
    call(lambda: client.users.whoami(), f"connect to Label Studio at {url}", url=url, key=api_key_variable)
    return client


def server_url(url: str | None = None) -> str:
    """``url``, else ``$LABEL_STUDIO_URL``; neither is refused, and so is one that is not ``http(s)://host...``."""
    origin = "--url" if url else URL_VARIABLE
    url = url or os.environ.get(URL_VARIABLE)
    if not url:
        raise LabelStudioError(f"no Label Studio URL: pass --url or set {URL_VARIABLE}")
    if not is_http_url(url):
        raise LabelStudioError(f"{origin} {url!r} is not an http(s) URL with a host (for example "
                               "http://localhost:8080)")
    return url.strip()


def call(request, what: str, url: str | None = None, key: str = API_KEY_VARIABLE):
    """Run one SDK request; turn transport and HTTP failures into one-line :class:`LabelStudioError`."""
    try:
        return request()
    except httpx.TransportError as exc:
        where = f" at {url}" if url else ""
        raise LabelStudioError(f"cannot {what}: Label Studio{where} is not answering ({type(exc).__name__})") from None
    except ApiError as exc:
        if exc.status_code in (401, 403):  # it answered: the connection is not what failed
            raise LabelStudioError(f"cannot {what.replace('connect to', 'log in to', 1)}: Label Studio answered and "
                                   f"refused the API key in {key} (HTTP {exc.status_code})") from None
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
    """Every task of the project with its annotations and its drafts (each in full: ``drafts`` expanded), from one
    export snapshot (deleted after download)."""
    snapshot = call(lambda: client.projects.exports.create(project_id, title="evalset",
                                                           serialization_options={"drafts": {"only_id": False}}),
                    "create an export snapshot")
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
