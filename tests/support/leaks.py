"""What one annotator can read of another's work by typing URLs into Label Studio 1.23.2.

:func:`url_patterns` lists every URL pattern of the installed Label Studio (its Django URL configuration, read by
the server's own Python); :func:`probe_urls` turns each pattern that can name an object (a project, task,
annotation, draft, prediction, organization, user, export or import) into URLs with every guessed id 1..N, and each
list route into URLs filtered by project, task or annotation; :func:`find_leaks` requests them as one annotator,
by browser session and by API token, and returns each answer that shows the other annotator's work.

An answer shows annotator A's work when it is a 200 that holds one of A's markers (A's e-mail, the text of A's
comments and of A's draft) or that answers for one of A's objects on the server that holds them (A's project,
task, annotation or draft by its id in the path; a filter in the query counts by markers alone, since a list route
may ignore it). Markers find A's grades, drafts and e-mail
wherever they appear; ids find what carries no marker (a project's summary counts, the next task of A's stream).
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

LABEL_STUDIO_VENV = Path(os.environ.get("EVALSET_CACHE", Path.home() / ".cache" / "evalset")) / "label-studio-1.23.2"

_LIST_PATTERNS = """
import django
django.setup()
from django.urls import get_resolver
from django.urls.resolvers import URLResolver

def walk(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)

print("\\n".join(walk(get_resolver().url_patterns)))
"""
#: routes never requested: static files, the API's own documentation, and those that change state on GET
_SKIPPED = re.compile(r"static|frontend|react-app|^dm/|swagger|docs/|schema|avatars|reset|rotate|blacklist|logout|"
                      r"trigger500|sw\.js|sw-fallback|favicon|samples/|/add/$|/delete/$|password")
#: the kind of object the id after each path word names
KINDS = {"projects": "project", "project": "project", "tasks": "task", "task": "task", "annotations": "annotation",
         "annotation": "annotation", "drafts": "draft", "predictions": "prediction", "organizations": "organization",
         "organization": "organization", "users": "user", "user": "user", "exports": "export", "imports": "import"}
_PARAMETER = re.compile(r"<(?:int|path|str|drf_format_suffix):?(\w*)>|<(\w+)>|\(\?P<(\w+)>[^)]*\)")
_FILTERS = ("project", "task", "annotation", "view")
_DATA_KINDS = {"project", "task", "annotation", "draft", "prediction", "user", "organization"}
_DATA_WORDS = {"tasks", "dm", "predictions", "projects", "labels", "label_links", "users", "organizations",
               "annotations", "drafts"}


def url_patterns(venv: Path = LABEL_STUDIO_VENV) -> list[str]:
    """Every URL pattern of the installed Label Studio, as Django resolves them (read by the server's Python)."""
    packages = next(venv.glob("lib/python3*/site-packages/label_studio"))
    with tempfile.TemporaryDirectory() as data:
        listed = subprocess.run([str(venv / "bin" / "python"), "-c", _LIST_PATTERNS], cwd=packages, text=True,
                                capture_output=True, timeout=300, check=True,
                                env={**os.environ, "DJANGO_SETTINGS_MODULE": "core.settings.label_studio",
                                     "LABEL_STUDIO_BASE_DATA_DIR": data, "LATEST_VERSION_CHECK": "false",
                                     "COLLECT_ANALYTICS": "false", "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": ""})
    return [line for line in listed.stdout.splitlines() if line.strip()]


@dataclass(frozen=True)
class Request:
    """One URL to ask for, and the objects it names (kind, id), from its path words and its query."""

    path: str
    names: tuple[tuple[str, int], ...]


def probe_urls(patterns: Iterable[str], ids: int) -> list[Request]:
    """The URLs of every pattern with its ids guessed: 1..``ids`` where the id names an object of a data kind (a
    project, task, annotation, draft, prediction, user or organization: the path word before it), 1..2 elsewhere (a
    storage, webhook or export, of which the servers hold none, answer 404 from the first id); every
    parameterless list route of those kinds with ``?project=``, ``?task=``, ``?annotation=``, ``?view=`` (and
    ``fields=all``) for each id. Format-suffix duplicates, static files and routes that change state are left out."""
    requests: dict[str, Request] = {}
    for pattern in patterns:
        path = pattern.replace("^", "").replace("$", "").replace("\\.", ".").replace("/?", "/")
        if _SKIPPED.search(path) or "format" in path or "action_id" in path:
            continue
        slots = list(_PARAMETER.finditer(path))
        if not slots:
            if path.split("/")[:2][-1] in _DATA_WORDS and path.startswith("api/"):
                for name, number in itertools.product(_FILTERS, range(1, ids + 1)):
                    url = f"/{path}?{name}={number}" + ("&fields=all" if name == "project" else "")
                    requests[url] = Request(url, ())  # a route may ignore a filter: only A's markers count
            requests[f"/{path}"] = Request(f"/{path}", ())
            continue
        words = [path[:slot.start()].rstrip("/").rsplit("/", 1)[-1] for slot in slots]
        choices = [("annotation", "task", "project") if "entity_name" in slot.group(0)
                   else range(1, (ids if KINDS.get(word) in _DATA_KINDS or "entity_name" in word else 2) + 1)
                   for slot, word in zip(slots, words, strict=True)]
        for values in itertools.product(*choices):
            url, names = "/" + path, []
            for slot, word, value in zip(reversed(slots), reversed(words), reversed(values), strict=True):
                url = url[:slot.start() + 1] + str(value) + url[slot.end() + 1:]
                if isinstance(value, int) and word in KINDS:
                    names.append((KINDS[word], value))
            if "entity_name" in path:  # fsm/entities/<kind>/<id>/...
                names = [(values[0], values[1])]
            requests[url] = Request(url, tuple(names))
    return list(requests.values())


@dataclass(frozen=True)
class Owner:
    """Annotator A's work on one server: the server's URL, A's objects there by (kind, id), and A's markers."""

    url: str
    objects: frozenset[tuple[str, int]]
    markers: tuple[str, ...]


@dataclass(frozen=True)
class Leak:
    """An answer that shows A's work: the server, the URL, how it was asked (session or token), and why."""

    server: str
    path: str
    asked_by: str
    why: str

    def __str__(self) -> str:
        return f"{self.asked_by} {self.server}{self.path}: {self.why}"


@dataclass
class Answers:
    """The status and body of every URL asked of one server one way."""

    server: str
    asked_by: str
    bodies: dict[str, tuple[int, str]] = field(default_factory=dict)


def leaks_in(answers: Answers, requests: list[Request], owner: Owner) -> list[Leak]:
    """The answers that show ``owner``'s work (see the module docstring)."""
    found = []
    for request in requests:
        status, body = answers.bodies[request.path]
        if status != 200:
            continue
        marker = next((marker for marker in owner.markers if marker in body), None)
        named = [name for name in request.names if name in owner.objects] if answers.server == owner.url else []
        if marker is not None:
            found.append(Leak(answers.server, request.path, answers.asked_by, f"holds {marker!r}"))
        elif named:
            found.append(Leak(answers.server, request.path, answers.asked_by,
                              f"answers for {', '.join(f'{kind} {number}' for kind, number in named)}"))
    return found


_FETCH_ALL = """async ([paths, parallel]) => {
  const answers = {};
  let next = 0;
  async function worker() {
    while (next < paths.length) {
      const path = paths[next++];
      try {
        const response = await fetch(path, {credentials: "same-origin", redirect: "follow"});
        const text = await response.text();
        answers[path] = [response.redirected ? 302 : response.status, text.slice(0, 200000)];
      } catch (error) {
        answers[path] = [0, String(error)];
      }
    }
  }
  await Promise.all(Array.from({length: parallel}, worker));
  return answers;
}"""


def ask_in_browser(page, server: str, requests: list[Request], asked_by: str, parallel: int = 4) -> Answers:
    """Every URL asked by the browser page's session (its cookies) of ``server``, from a page of that server (so
    the requests are same-origin, as a user typing them into the address bar). An answer reached through a redirect
    (to a login page) counts as the redirect, 302: it is not the page asked for.

    Servers on one host share the browser's cookies (a cookie is per host, not per port), and a server that does not
    verify a session cookie deletes it: ask another server with :func:`ask_with_headers` and the session's cookie,
    not with this page."""
    page.goto(f"{server.rstrip('/')}/health")
    bodies = page.evaluate(_FETCH_ALL, [[request.path for request in requests], parallel])
    return Answers(server, asked_by, {path: (int(status), text) for path, (status, text) in bodies.items()})


def ask_with_headers(server: str, headers: dict[str, str], requests: list[Request], asked_by: str,
                     parallel: int = 4) -> Answers:
    """Every URL asked of ``server`` with these headers (``Authorization: Token ...``, or ``Cookie: sessionid=...``
    to present one server's browser session to another), ``parallel`` at a time; redirects not followed."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    with httpx.Client(base_url=server.rstrip("/"), headers=headers, timeout=60, follow_redirects=False) as client, \
            ThreadPoolExecutor(parallel) as pool:
        answered = pool.map(lambda request: client.get(request.path), requests)
        return Answers(server, asked_by, {request.path: (response.status_code, response.text[:200000])
                                          for request, response in zip(requests, answered, strict=True)})
