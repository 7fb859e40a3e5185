#!/usr/bin/env python3
"""Open an HTML file in headless Chromium, report every console error, and save a full-page screenshot.

Chromium is driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``: JSON messages,
each ended by a NUL byte, Chromium reads fd 3 and writes fd 4), so no port, no websocket library and no
network are involved. Collected as errors: ``console.error``/``console.assert`` calls, uncaught exceptions,
log entries of level ``error`` (failed resource loads, CSP and security errors), and any request for a URL
that is not ``file:`` or ``data:`` (a self-contained page makes none).

Usage: ``check_html_in_chromium.py PAGE.html [--screenshot SHOT.png] [--width 1280] [--chromium PATH]``;
exit 0 when the page loaded without error, 1 otherwise (each error printed on a line), 2 when Chromium is
missing or failed.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars")


def find_chromium() -> str | None:
    """The Chromium executable: ``$CHROMIUM`` if set, else the first of the usual names on PATH."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    return next((path for path in map(shutil.which, CHROMIUM_NAMES) if path), None)


@dataclass
class PageCheck:
    """What loading the page showed: the errors, the non-local requests, the page size and the screenshot."""

    errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    title: str = ""
    width: int = 0
    height: int = 0
    screenshot: bytes = b""
    version: str = ""


class _Pipe:
    """A DevTools session over Chromium's pipe: send a command, wait for its answer, keep the events."""

    def __init__(self, process: subprocess.Popen, to_browser: int, from_browser: int, timeout: float):
        self.process, self.to_browser, self.from_browser = process, to_browser, from_browser
        self.deadline = time.monotonic() + timeout
        self.buffer = b""
        self.events: list[dict] = []
        self.next_id = 0

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._read())

    def _read(self) -> dict:
        while b"\0" not in self.buffer:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.from_browser], [], [], remaining)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium closed the pipe (exit {self.process.poll()})")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)


def check_page(page: str | os.PathLike, chromium: str | None = None, width: int = 1280,
               timeout: float = 60.0, settle: float = 0.5) -> PageCheck:
    """Load ``page`` (a file) in headless Chromium and return what it showed, with a full-page PNG."""
    chromium = chromium or find_chromium()
    if not chromium:
        raise FileNotFoundError("no Chromium found (install it with scripts/install-chromium.sh)")
    url = Path(page).resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="evalset-chromium-") as profile:
        to_read, to_browser = os.pipe()  # Chromium reads commands on fd 3
        from_browser, to_write = os.pipe()  # and writes answers on fd 4
        command = [chromium, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
                   f"--window-size={width},1000", "about:blank"]

        def onto_3_and_4() -> None:  # copy first: a pipe end may itself sit on fd 3 or 4
            read_end, write_end = os.dup(to_read), os.dup(to_write)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, pass_fds=(3, 4), preexec_fn=onto_3_and_4)
        os.close(to_read)
        os.close(to_write)
        try:
            return _drive(_Pipe(process, to_browser, from_browser, timeout), url, width, settle)
        finally:
            try:
                os.write(to_browser, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
                process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
            os.close(to_browser)
            os.close(from_browser)


def _drive(pipe: _Pipe, url: str, width: int, settle: float) -> PageCheck:
    check = PageCheck(version=pipe.send("Browser.getVersion").get("product", ""))
    target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        pipe.send(f"{domain}.enable", session=session)
    pipe.events.clear()
    pipe.send("Page.navigate", {"url": url}, session=session)
    pipe.wait_for("Page.loadEventFired")
    end = time.monotonic() + settle  # late console messages
    while time.monotonic() < end:
        pipe.send("Runtime.evaluate", {"expression": "1"}, session=session)
        time.sleep(0.05)
    for event in pipe.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            check.errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            check.errors.append("uncaught: " + details.get("exception", {}).get("description", details.get("text", "")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            check.errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".strip())
        elif method == "Network.loadingFailed":
            check.errors.append(f"load failed: {params.get('errorText')}")
        elif method == "Network.requestWillBeSent":
            requested = params.get("request", {}).get("url", "")
            if not requested.startswith(("file:", "data:")):
                check.external_requests.append(requested)
    check.title = pipe.send("Runtime.evaluate", {"expression": "document.title", "returnByValue": True},
                            session=session)["result"].get("value", "")
    content = pipe.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
    check.width, check.height = int(content["width"]), int(content["height"])
    shot = pipe.send("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": max(width, check.width), "height": check.height, "scale": 1}},
        session=session)
    check.screenshot = base64.b64decode(shot["data"])
    return check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page")
    parser.add_argument("--screenshot", help="Write a full-page PNG here.")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--chromium", help="Chromium executable [default: $CHROMIUM or chromium on PATH].")
    args = parser.parse_args()
    try:
        check = check_page(args.page, args.chromium, args.width)
    except (FileNotFoundError, RuntimeError, TimeoutError) as exc:
        print(f"check_html_in_chromium: {exc}", file=sys.stderr)
        return 2
    if args.screenshot:
        Path(args.screenshot).write_bytes(check.screenshot)
    print(f"{check.version}: loaded {args.page!r} ({check.title!r}), page {check.width}x{check.height} px, "
          f"{len(check.errors)} errors, {len(check.external_requests)} external requests"
          + (f"; screenshot {args.screenshot}" if args.screenshot else ""))
    for line in [*check.errors, *(f"external request: {u}" for u in check.external_requests)]:
        print(line)
    return 1 if check.errors or check.external_requests else 0


if __name__ == "__main__":
    sys.exit(main())
