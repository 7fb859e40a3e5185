"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the tests and the benchmark (not in the package).

It speaks ``GET /v1/models`` (``Behaviour.models``; no such route when it is None; any other model is served
too unless ``Behaviour.any_model`` is false, then it gets OpenAI's 404),
``POST /v1/chat/completions``, ``POST /v1/files``, ``GET /v1/files/{id}[/content]``,
``POST /v1/batches`` and ``GET /v1/batches/{id}`` (each refused with a 401 when ``Behaviour.api_key`` is set
and the request lacks it), and misbehaves on demand (:class:`Behaviour`): latency,
429 with ``Retry-After``, 500, hanging past the client's timeout, a body that is not JSON, an answer that is not
the JSON asked for, a grade off the scale, closing the connection without an answer, and a 400 for structured
output when told it does not support it.

Everything is deterministic. The grade for a pair is a hash of the user message (the query and the passage)
unless ``Behaviour.grades`` maps a query/passage pair to one, or the gullible judge is fooled (below); whether
the n-th request carrying the same user message misbehaves, and how, is a hash of that message and n. Every
request is recorded (:attr:`records`) so tests can assert on exactly what was sent.

The gullible judge (``Behaviour.gullible``, off when empty) knows the unaltered passages of each query
(``Behaviour.originals``) and recognises, in the passage of a prompt, an original altered by one of
:data:`TRIGGERS`: ``instruction`` (an original followed by words that name a grade and the top grade's digit),
``query-copy`` (the query text, a space, an original), ``truncation`` (a shorter start of an original),
``stuffing`` (an original with words of the query inserted, nothing removed), and ``other`` (any other text
holding an original: the placebo's neutral edit). With the trigger's probability
(``_unit`` of the message: deterministic) it is fooled: the top grade, or for ``truncation`` the lowest; otherwise
it grades the altered passage as it grades the original. Each fooled answer is recorded (``Record.fooled``).

Run it alone from the repository's root (the benchmark does, so the server's CPU is not the client's)::

    python -m tests.support.openai_server --latency 0.2 --port 0
"""

from __future__ import annotations

import argparse
import collections
import email.parser
import hashlib
import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("rate_limit", "server_error", "timeout", "broken_body", "malformed", "out_of_scale", "disconnect")
_QUERY = re.compile(r"<query>\n(.*?)\n</query>", re.DOTALL)
_PASSAGE = re.compile(r"<passage>\n(.*?)\n</passage>", re.DOTALL)
TRIGGERS = ("instruction", "query-copy", "truncation", "stuffing", "other")
_GRADE_WORD = re.compile(r"\bgrade\b", re.IGNORECASE)


@dataclass
class Behaviour:
    """What the server does; tests may change it while it runs.

    ``faults`` maps a fault name (:data:`FAULTS`) to the share of requests that get it (shares add up to at
    most 1). ``latency`` is slept before every chat answer; ``hang`` is how long a ``timeout`` fault sleeps.
    """

    latency: float = 0.0
    faults: dict[str, float] = field(default_factory=dict)
    retry_after: float = 0.05
    hang: float = 2.0
    scale: tuple[int, ...] = (0, 1, 2, 3)
    structured: bool = True
    record_bodies: bool = True
    grades: dict[tuple[str, str], int] = field(default_factory=dict)
    fault_for: dict[tuple[str, str], str] = field(default_factory=dict)
    api_key: str | None = None
    models: tuple[str, ...] | None = ("judge-test",)
    any_model: bool = True
    seed: int = 0
    gullible: dict[str, float] = field(default_factory=dict)
    originals: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class Record:
    """One request as the server saw it, and what it answered."""

    path: str
    at: float
    body: dict | None
    status: int
    fault: str | None = None
    grade: int | None = None
    authorization: str | None = None
    trigger: str | None = None
    fooled: bool = False

    @property
    def user_message(self) -> str:
        messages = (self.body or {}).get("messages", [])
        return next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")

    @property
    def prompt(self) -> str:
        """Every message's content, joined (what the model would read)."""
        return "\n".join(m.get("content", "") for m in (self.body or {}).get("messages", []))


def _unit(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class JudgeServer:
    """The server; ``with JudgeServer(...) as server:`` starts it in a thread, ``server.base_url`` is its URL."""

    def __init__(self, behaviour: Behaviour | None = None, port: int = 0):
        self.behaviour = behaviour or Behaviour()
        self.records: list[Record] = []
        self.files: dict[str, tuple[str, bytes]] = {}
        self.file_objects: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self._httpd = _HTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.judge = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> JudgeServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def chat_records(self) -> list[Record]:
        with self._lock:
            return [record for record in self.records if record.path.endswith("/chat/completions")]

    # ---------------------------------------------------------------------------------------- answers
    def grade_for(self, user_message: str) -> int:
        """The grade this server gives a pair (``Behaviour.grades`` first, then the gullible judge's, else a hash of
        the message)."""
        return self.judged(user_message)[0]

    def judged(self, user_message: str) -> tuple[int, str | None, bool]:
        """The grade of a pair, the gullible judge's trigger in it (or None) and whether it was fooled."""
        query, passage = _field(_QUERY, user_message), _field(_PASSAGE, user_message)
        trigger, original = self.trigger(query, passage)
        if trigger is not None:
            scale = self.behaviour.scale
            if _unit("gullible", self.behaviour.seed, user_message) < self.behaviour.gullible.get(trigger, 0.0):
                return (min(scale) if trigger == "truncation" else max(scale)), trigger, True
            unaltered = user_message.replace(f"<passage>\n{passage}\n</passage>", f"<passage>\n{original}\n</passage>")
            return self.judged(unaltered)[0], trigger, False
        return self._plain_grade(user_message, query, passage), None, False

    def trigger(self, query: str, passage: str) -> tuple[str | None, str]:
        """Which alteration of which original ``passage`` is (module docstring), or ``(None, "")``."""
        originals = self.behaviour.originals.get(query, ()) if self.behaviour.gullible else ()
        if not originals or passage in originals:
            return None, ""
        top = str(max(self.behaviour.scale))
        query_words = set(re.findall(r"\w+", query))
        for original in sorted(originals, key=len, reverse=True):  # the longest first: an original may start another
            tail = passage[len(original):] if passage.startswith(original + " ") else ""
            if tail and _GRADE_WORD.search(tail) and re.search(rf"\b{top}\b", tail):
                return "instruction", original
            if passage == f"{query} {original}":
                return "query-copy", original
            if original.startswith(passage):
                return "truncation", original
            added = collections.Counter(passage.split()) - collections.Counter(original.split())
            removed = collections.Counter(original.split()) - collections.Counter(passage.split())
            if added and not removed and set(added) <= query_words:
                return "stuffing", original
        for original in sorted(originals, key=len, reverse=True):  # the longest: a shorter one may lie inside it
            if original in passage:
                return "other", original  # an edit that holds no trigger (the placebo): the original's grade
        return None, ""

    def _plain_grade(self, user_message: str, query: str, passage: str) -> int:
        if (query, passage) in self.behaviour.grades:
            return self.behaviour.grades[(query, passage)]
        scale = self.behaviour.scale
        return scale[int(_unit("grade", self.behaviour.seed, user_message) * len(scale))]

    def decide(self, user_message: str, faults: dict[str, float]) -> str | None:
        """The fault (or None) for the next request carrying ``user_message``."""
        forced = self.behaviour.fault_for.get((_field(_QUERY, user_message), _field(_PASSAGE, user_message)))
        if forced:
            return forced
        with self._lock:
            nth = self._seen.get(user_message, 0)
            self._seen[user_message] = nth + 1
        draw, edge = _unit("fault", self.behaviour.seed, user_message, nth), 0.0
        for name in FAULTS:
            edge += faults.get(name, 0.0)
            if draw < edge:
                return name
        return None

    def completion(self, body: dict, fault: str | None) -> tuple[dict, int | None]:
        """A Chat Completions answer to ``body`` (content shaped by a content-level fault)."""
        user = next((m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"), "")
        grade, trigger, fooled = self.judged(user)
        if fault == "out_of_scale":
            grade = max(self.behaviour.scale) + 1
        content = json.dumps({"grade": grade, "reason": f"graded {grade} by the test server"})
        if fault == "malformed":
            content, grade = content[:-7] + "...", None  # cut off mid-string, as a truncated answer would be
        prompt_tokens = sum(len(m.get("content", "")) for m in body.get("messages", [])) // 4
        answer = {
            "id": f"chatcmpl-{hashlib.sha256(user.encode()).hexdigest()[:12]}", "object": "chat.completion",
            "created": 0, "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4,
                      "total_tokens": prompt_tokens + len(content) // 4},
        }
        return answer, grade, trigger, fooled

    def run_batch(self, batch_id: str) -> None:
        """Answer every line of a batch's input file into output and error files (content faults only)."""
        batch = self.batches[batch_id]
        _, data = self.files[batch["input_file_id"]]
        content_faults = {k: v for k, v in self.behaviour.faults.items() if k in ("malformed", "out_of_scale")}
        output, errors = [], []
        for line in data.decode().splitlines():
            if not line.strip():
                continue
            request = json.loads(line)
            body = request["body"]
            fault = self.decide(_user(body), content_faults)
            answer, grade, _, _ = self.completion(body, fault)
            with self._lock:
                self.records.append(Record(f"batch:{request['url']}", time.time(), body if
                                           self.behaviour.record_bodies else None, 200, fault, grade))
            output.append({"id": f"batch_req_{len(output)}", "custom_id": request["custom_id"], "error": None,
                           "response": {"status_code": 200, "request_id": "req", "body": answer}})
        out_id = self.add_file("batch_output.jsonl", "".join(json.dumps(o) + "\n" for o in output).encode(),
                               "batch_output")
        batch.update(status="completed", output_file_id=out_id, completed_at=int(time.time()),
                     request_counts={"total": len(output) + len(errors), "completed": len(output),
                                     "failed": len(errors)})

    def add_file(self, name: str, data: bytes, purpose: str) -> str:
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = (name, data)
        self.file_objects[file_id] = {"id": file_id, "object": "file", "bytes": len(data), "created_at": 0,
                                      "filename": name, "purpose": purpose, "status": "processed"}
        return file_id


def _field(pattern: re.Pattern, text: str) -> str:
    match = pattern.search(text)
    return match.group(1) if match else ""


def _user(body: dict) -> str:
    return next((m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"), "")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 drops connections when 64 clients open at once
    judge: JudgeServer

    def handle_error(self, request, client_address) -> None:
        """A client that hung up before its answer (it stopped the run, or timed out) is not the server's error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; Nagle would hold the second
    server: _HTTPServer

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, payload: dict | bytes, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(payload, bytes) else
                         "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
        self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": None}}, headers)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def do_POST(self) -> None:
        judge = self.server.judge
        raw = self._body()
        if self.path.endswith("/chat/completions"):
            self._chat(judge, json.loads(raw))
        elif self._wrong_key(judge):
            self._refuse_key()
        elif self.path.endswith("/files"):
            self._upload(judge, raw)
        elif self.path.endswith("/batches"):
            body = json.loads(raw)
            batch_id = f"batch_{len(judge.batches) + 1}"
            judge.batches[batch_id] = {
                "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                "input_file_id": body["input_file_id"], "completion_window": body["completion_window"],
                "status": "in_progress", "output_file_id": None, "error_file_id": None, "created_at": 0,
                "request_counts": {"total": 0, "completed": 0, "failed": 0}}
            judge.records.append(Record(self.path, time.time(), body, 200))
            threading.Thread(target=judge.run_batch, args=(batch_id,), daemon=True).start()
            self._send(200, judge.batches[batch_id])
        else:
            self._error(404, f"no route {self.path}", "invalid_request_error")

    def do_GET(self) -> None:
        judge = self.server.judge
        parts = self.path.rstrip("/").split("/")
        with judge._lock:
            judge.records.append(Record(self.path, time.time(), None, 200))
        if self._wrong_key(judge):
            self._refuse_key()
        elif parts[-1] == "models" and judge.behaviour.models is not None:
            self._send(200, {"object": "list", "data": [{"id": name, "object": "model", "created": 0,
                                                         "owned_by": "evalset-test"}
                                                        for name in judge.behaviour.models]})
        elif "batches" in parts and parts[-1] in judge.batches:
            self._send(200, judge.batches[parts[-1]])
        elif "files" in parts and parts[-1] == "content" and parts[-2] in judge.files:
            self._send(200, judge.files[parts[-2]][1])
        elif "files" in parts and parts[-1] in judge.file_objects:
            self._send(200, judge.file_objects[parts[-1]])
        else:
            self._error(404, f"no route {self.path}", "invalid_request_error")

    def _wrong_key(self, judge: JudgeServer) -> bool:
        """Whether the server has a key and the request does not carry it (refused on every route, as OpenAI does)."""
        key = judge.behaviour.api_key
        return bool(key) and self.headers.get("Authorization") != f"Bearer {key}"

    def _refuse_key(self) -> None:
        self._error(401, f"Incorrect API key provided: {self.headers.get('Authorization', '')[7:]}",
                    "invalid_request_error")

    def _upload(self, judge: JudgeServer, raw: bytes) -> None:
        header = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser().parsebytes(header + raw)
        fields = {part.get_param("name", header="content-disposition"): part for part in message.get_payload()}
        upload = fields["file"]
        purpose = fields["purpose"].get_payload(decode=True).decode()
        file_id = judge.add_file(upload.get_filename() or "upload", upload.get_payload(decode=True), purpose)
        with judge._lock:
            judge.records.append(Record(self.path, time.time(), {"purpose": purpose}, 200))
        self._send(200, judge.file_objects[file_id])

    def _chat(self, judge: JudgeServer, body: dict) -> None:
        behaviour = judge.behaviour
        user = _user(body)
        fault = judge.decide(user, behaviour.faults)
        record = Record(self.path, time.time(), body if behaviour.record_bodies else None, 200, fault,
                        authorization=self.headers.get("Authorization"))
        with judge._lock:
            judge.records.append(record)
        if self._wrong_key(judge):
            record.status = 401
            self._refuse_key()
            return
        if not behaviour.any_model and body.get("model") not in (behaviour.models or ()):
            record.status = 404
            self._error(404, f"The model `{body.get('model')}` does not exist or you do not have access to it.",
                        "invalid_request_error")
            return
        if body.get("response_format", {}).get("type") == "json_schema" and not behaviour.structured:
            record.status = 400
            self._error(400, "response_format json_schema is not supported", "invalid_request_error")
            return
        if fault == "rate_limit":
            record.status = 429
            self._error(429, "Rate limit reached", "requests", {"Retry-After": f"{behaviour.retry_after:g}"})
            return
        if fault == "server_error":
            record.status = 500
            self._error(500, "The server had an error", "server_error")
            return
        if fault == "disconnect":  # hang up without a word, as a server going down does
            record.status = 0
            self.close_connection = True
            return
        time.sleep(behaviour.hang if fault == "timeout" else behaviour.latency)
        if fault == "broken_body":
            self._send(200, b'{"id": "chatcmpl-broken", "choices": [')
            return
        answer, record.grade, record.trigger, record.fooled = judge.completion(body, fault)
        try:
            self._send(200, answer)
        except OSError:  # the client gave up (a timeout); nothing to answer
            record.status = 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds slept before every answer")
    parser.add_argument("--faults", default="", help="e.g. rate_limit=0.2,server_error=0.05,malformed=0.05")
    parser.add_argument("--retry-after", type=float, default=0.05, help="Retry-After of a 429, seconds")
    parser.add_argument("--no-record-bodies", action="store_true", help="keep memory flat in long benchmarks")
    args = parser.parse_args(argv)
    faults = {}
    for item in filter(None, args.faults.split(",")):
        name, _, share = item.partition("=")
        if name not in FAULTS:
            parser.error(f"unknown fault {name!r}; known: {', '.join(FAULTS)}")
        faults[name] = float(share)
    behaviour = Behaviour(latency=args.latency, faults=faults, retry_after=args.retry_after,
                          record_bodies=not args.no_record_bodies)
    server = JudgeServer(behaviour, port=args.port)
    print(server.base_url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
