"""Open a page in a real headless Chromium and ask it what a person would see: a small
DevTools-protocol client over ``--remote-debugging-pipe`` (JSON messages separated by
NUL bytes on file descriptors 3 and 4 of the browser), with no dependency beyond the
standard library and Debian's ``chromium``.

``inspect(path)`` loads ``file://path``, waits for the load event and for every image
to decode, and returns what the page shows (images with their natural sizes, tables
with their rows), every console message, uncaught exception and log entry, every URL
the page asked for, and a screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("GANG_CHROMIUM", "/usr/bin/chromium")

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
    "--enable-logging=stderr", "--v=0", "--remote-debugging-pipe", "--window-size=1280,2400",
]

# Runs in the page once loaded: waits for every image, then describes the page.
DESCRIBE = """
(async () => {
  const imgs = [...document.images];
  await Promise.all(imgs.map(i => i.decode().then(() => true, () => false)));
  return {
    title: document.title,
    images: imgs.map(i => ({alt: i.alt, complete: i.complete, naturalWidth: i.naturalWidth,
                            naturalHeight: i.naturalHeight, src: i.src.slice(0, 30),
                            figure: i.closest('figure') ? i.closest('figure').id : null})),
    tables: [...document.querySelectorAll('table')].map(t => ({
      cls: t.className,
      head: [...t.querySelectorAll('thead th')].map(c => c.textContent.trim()),
      rows: [...t.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim())),
    })),
    scripts: document.scripts.length,
    text: document.body ? document.body.innerText.slice(0, 2000) : '',
    layout: {
      innerWidth: window.innerWidth,
      scrollWidth: document.documentElement.scrollWidth,
      // Each table fits its box, or its box scrolls sideways (every column reachable).
      tables: [...document.querySelectorAll('table')].map(t => {
        const box = t.closest('.scroll');
        return {cls: t.className, fits: !!box && (box.scrollWidth <= box.clientWidth + 1
                || ['auto', 'scroll'].includes(getComputedStyle(box).overflowX)),
                right: Math.round((box || t).getBoundingClientRect().right),
                scrolls: !!box && box.scrollWidth > box.clientWidth + 1};
      }),
      images: imgs.map(i => Math.round(i.getBoundingClientRect().right)),
    },
    glossary: [...document.querySelectorAll('dl.glossary dt')].map(d => d.textContent.trim()),
  };
})()
"""


class BrowserError(RuntimeError):
    pass


@dataclass
class Page:
    """What the browser saw."""
    title: str
    images: list[dict[str, Any]]
    tables: list[dict[str, Any]]
    scripts: int
    text: str
    layout: dict[str, Any] = field(default_factory=dict)
    glossary: list[str] = field(default_factory=list)
    console: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    stderr: str = ""
    screenshot: bytes = b""

    def errors(self) -> list[str]:
        """Every sign of trouble: console errors and warnings, uncaught exceptions,
        error log entries, failed loads, and console lines in Chromium's own log."""
        out = [f"console.{m['type']}: {m['text']}" for m in self.console if m["type"] in ("error", "warning", "assert")]
        out += [f"uncaught: {e}" for e in self.exceptions]
        out += [f"log {e['level']}: {e['text']}" for e in self.log if e["level"] in ("error", "warning")]
        out += [f"failed load: {u}" for u in self.failed_requests]
        out += [f"chromium: {line}" for line in self.stderr.splitlines()
                if "CONSOLE" in line or "Uncaught" in line]
        return out


class _Pipe:
    def __init__(self, proc: subprocess.Popen[bytes], write_fd: int, read_fd: int) -> None:
        self.proc, self.w, self.r = proc, write_fd, read_fd
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("timed out waiting for the browser")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise BrowserError(f"the browser closed the pipe (exit {self.proc.poll()})")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 60.0) -> dict[str, Any]:
        i = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(deadline)
            if msg.get("id") == i:
                if "error" in msg:
                    raise BrowserError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str, timeout: float = 60.0) -> dict[str, Any]:
        for e in self.events:
            if e.get("method") == method:
                return e
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(deadline)
            self.events.append(msg)
            if msg.get("method") == method:
                return msg

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read(deadline))
        except BrowserError:
            pass


def _high(fd: int) -> int:
    """The same pipe end at a descriptor number above 100 (clear of 3 and 4), closed on
    exec: the browser gets only the copies made at 3 and 4."""
    hi = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)
    os.close(fd)
    return hi


def inspect(path: Path, *, timeout: float = 90.0, width: int | None = None) -> Page:
    """Loads ``path`` in headless Chromium and describes it (see the module docs);
    ``width``: the viewport's width in CSS pixels (a phone's 390, a laptop's 1400)."""
    if not os.path.exists(CHROMIUM):
        raise BrowserError(f"{CHROMIUM} not found: gang-py/test.sh installs Debian's chromium")
    profile = tempfile.mkdtemp(prefix="pysim-chromium-")
    cmd_r, cmd_w = (_high(fd) for fd in os.pipe())
    res_r, res_w = (_high(fd) for fd in os.pipe())

    def child() -> None:  # runs in the browser's process, before exec
        os.dup2(cmd_r, 3)
        os.dup2(res_w, 4)

    stderr = tempfile.TemporaryFile()
    proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                            preexec_fn=child, close_fds=False)
    os.close(cmd_r)
    os.close(res_w)
    pipe = _Pipe(proc, cmd_w, res_r)
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"}, timeout=timeout)["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            pipe.call(f"{domain}.enable", session=session)
        if width is not None:
            pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900,
                                                             "deviceScaleFactor": 1, "mobile": width < 600},
                      session=session)
        pipe.call("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        pipe.wait_event("Page.loadEventFired", timeout=timeout)
        desc = pipe.call("Runtime.evaluate", {"expression": DESCRIBE, "awaitPromise": True,
                                              "returnByValue": True}, session=session, timeout=timeout)
        if "exceptionDetails" in desc:
            raise BrowserError(f"describing the page failed: {desc['exceptionDetails']}")
        shot = pipe.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                         session=session, timeout=timeout)
        pipe.drain(0.5)  # late console messages
        page = Page(**desc["result"]["value"], screenshot=base64.b64decode(shot["data"]))
        for e in pipe.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                page.console.append({"type": p.get("type"), "text": text})
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                page.exceptions.append(d.get("exception", {}).get("description") or d.get("text", ""))
            elif m == "Log.entryAdded":
                page.log.append({"level": p["entry"].get("level"), "text": p["entry"].get("text", "")})
            elif m == "Network.requestWillBeSent":
                page.requests.append(p["request"]["url"])
            elif m == "Network.loadingFailed":
                page.failed_requests.append(f"{p.get('errorText')} ({p.get('requestId')})")
        try:
            pipe.call("Browser.close", timeout=10)
        except BrowserError:
            pass
        return page
    finally:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(cmd_w)
        os.close(res_r)
        stderr.seek(0)
        log = stderr.read().decode("utf-8", "replace")
        stderr.close()
        shutil.rmtree(profile, ignore_errors=True)
        if "page" in locals():
            page.stderr = log
