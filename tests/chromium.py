"""A headless Chromium driven over the DevTools protocol on a pipe: open a page, see what it asked for.

No websocket, no driver package: Chromium started with ``--remote-debugging-pipe`` reads
protocol messages (JSON, each ending in a NUL byte) on its file descriptor 3 and writes its
replies and events on descriptor 4. :class:`Browser` opens pages one at a time, records
every request a page makes (``Network.requestWillBeSent``), evaluates JavaScript in it and
takes screenshots. Used by ``tests/test_docs.py``; ``python tests/chromium.py PAGE.html OUT.png``
takes a screenshot by hand.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find() -> str | None:
    """The path of a Chromium on PATH, or None."""
    return next((path for path in map(shutil.which, NAMES) if path), None)


class Browser:
    """One headless Chromium, closed on ``close()`` or at the end of a ``with`` block."""

    def __init__(self, executable: str, width: int = 1280, height: int = 900, timeout: float = 60.0):
        self.timeout = timeout
        self._next_id = 0
        self._buffer = b""
        self._events: list = []
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # out of the way of 3 and 4, which the child's dup2 below fills
        keep_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        keep_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._profile = tempfile.mkdtemp(prefix="lucid-chromium-")

        def pipes_on_3_and_4():
            os.dup2(keep_r, 3)
            os.dup2(keep_w, 4)

        self._process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-extensions",
             "--allow-file-access-from-files", f"--user-data-dir={self._profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=pipes_on_3_and_4, pass_fds=(3, 4),
        )
        os.close(keep_r)
        os.close(keep_w)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Network.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.resize(width, height)

    # --- the protocol -------------------------------------------------------------------------
    def _send(self, method: str, session: bool, params: dict) -> int:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: bool = False, **params) -> dict:
        """Send one command and return its result; events that come meanwhile are kept."""
        wanted = self._send(method, session, params)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._events.append(message)

    def _wait_for(self, event: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, message in enumerate(self._events):
                if message.get("method") == event:
                    return self._events.pop(i)
            self._events.append(self._receive(deadline))

    # --- what the tests use -------------------------------------------------------------------
    def open(self, url: str) -> list:
        """Load ``url`` and return the URL of every request the page made while loading."""
        self._events = []
        self.call("Page.navigate", session=True, url=url)
        self._wait_for("Page.loadEventFired")
        return self.requests()

    def requests(self) -> list:
        """The URLs the current page has requested so far."""
        self.evaluate("0")  # flush: events that arrived before this reply are now in _events
        return [m["params"]["request"]["url"] for m in self._events if m.get("method") == "Network.requestWillBeSent"]

    def resize(self, width: int, height: int) -> None:
        """Lay pages out in a window of ``width`` x ``height`` CSS pixels."""
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.call("Runtime.evaluate", session=True, expression=expression, awaitPromise=True,
                           returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} raised in the page: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: str, full_page: bool = False) -> None:
        """Write a PNG of the viewport (or of the whole page) to ``path``."""
        params = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": size["width"],
                                                            "height": min(size["height"], 6000), "scale": 1})
        data = self.call("Page.captureScreenshot", session=True, **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self) -> None:
        try:
            self._send("Browser.close", False, {})
            self._process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
        finally:
            os.close(self._to_chrome)
            os.close(self._from_chrome)
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


if __name__ == "__main__":
    page, out = sys.argv[1], sys.argv[2]
    with Browser(find()) as browser:
        browser.open("file://" + os.path.abspath(page))
        browser.evaluate("window.MathJax && MathJax.startup ? MathJax.startup.promise.then(() => 1) : 0")
        browser.screenshot(out, full_page="--full" in sys.argv)
