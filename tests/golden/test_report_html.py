"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``,
installed by ``.ci/run``) opens the file from disk with the network unused and
must show every chart, log no console error or exception, and request nothing
but the file itself and its inline ``data:`` images.

Chromium is driven over the DevTools protocol through ``--remote-debugging-pipe``
(NUL-separated JSON on file descriptors 3 and 4), so no websocket library or
browser-automation package is needed.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pysysbench.report import compare as cmp
from pysysbench.report import document, html
from pysysbench.report.model import load_runs

DATA = Path(__file__).parent / "data"
RESULTS = DATA / "campaign-results"
TIMEOUT_S = 30
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--remote-debugging-pipe",
)


class Chromium:
    """A headless Chromium and one DevTools session over the pipe transport."""

    def __init__(self, binary: str, profile: Path):
        cmd_r, self.cmd_w = os.pipe()
        self.resp_r, resp_w = os.pipe()
        # Chromium expects the pipe on fds 3 (commands) and 4 (responses): move ours out
        # of the way first so the dup2 calls in the child cannot clobber each other.
        hi_r, hi_w = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(resp_w, fcntl.F_DUPFD, 10)

        def child() -> None:
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=child,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for fd in (cmd_r, resp_w, hi_r, hi_w):
            os.close(fd)
        self.buf = b""
        self.last_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.last_id += 1
        msg = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self.last_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})

    def wait_for(self, method: str, session: str, since: int) -> dict:
        """The first ``method`` event of ``session`` received after ``self.events[since]``."""
        for event in self.events[since:]:
            if event["method"] == method and event.get("sessionId") == session:
                return event
        while True:
            msg = self._receive()
            if msg.get("method") == method and msg.get("sessionId") == session:
                return msg

    def _receive(self) -> dict:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.resp_r], [], [], max(left, 0))
            assert ready, f"no answer from Chromium within {TIMEOUT_S} s"
            chunk = os.read(self.resp_r, 1 << 16)
            assert chunk, "Chromium closed the DevTools pipe (crashed?)"
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        msg = json.loads(raw)
        if "method" in msg:
            self.events.append(msg)
        return msg

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.proc.wait(TIMEOUT_S)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self.cmd_w)
            os.close(self.resp_r)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("headless Chromium is required: apt-get install -y chromium (.ci/run installs it)")
    b = Chromium(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


PAGE_FACTS = """JSON.stringify({
  title: document.title,
  images: Array.from(document.images).map(i => ({ok: i.complete && i.naturalWidth > 0, w: i.naturalWidth,
                                                  h: i.naturalHeight, shown: i.getBoundingClientRect().width})),
  tables: document.querySelectorAll('table').length,
  headings: Array.from(document.querySelectorAll('h2')).map(h => h.textContent),
  scripts: document.scripts.length,
})"""


def open_page(browser: Chromium, path: Path, screenshot: Path) -> tuple[dict, list[dict]]:
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Page", "Network"):
        browser.send(f"{domain}.enable", session=session)
    start = len(browser.events)
    browser.send("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
    browser.wait_for("Page.loadEventFired", session, start)
    facts = browser.send("Runtime.evaluate", {"expression": PAGE_FACTS, "returnByValue": True}, session=session)
    shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    events = [e for e in browser.events[start:] if e.get("sessionId") == session]
    browser.send("Target.closeTarget", {"targetId": target})
    return json.loads(facts["result"]["value"]), events


def problems(events: list[dict]) -> list[str]:
    out = []
    for e in events:
        p = e["params"]
        if e["method"] == "Runtime.exceptionThrown":
            out.append(f"exception: {p['exceptionDetails'].get('text')}")
        elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            out.append(f"console.{p['type']}: {p.get('args')}")
        elif e["method"] == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
            out.append(f"log {p['entry']['level']}: {p['entry'].get('text')}")
        elif e["method"] == "Network.requestWillBeSent":
            url = p["request"]["url"]
            if not url.startswith(("data:", "file:")):
                out.append(f"network request: {url}")
        elif e["method"] == "Network.loadingFailed":
            out.append(f"loading failed: {p.get('errorText')}")
    return out


def test_report_html_loads_cleanly_and_shows_its_charts(browser, tmp_path):
    rep = document.build(load_runs([str(RESULTS)]))
    page = tmp_path / "report.html"
    page.write_text(html.render(rep))
    facts, events = open_page(browser, page, tmp_path / "report.png")
    assert problems(events) == []
    assert facts["title"] == "Benchmark report: fixture" and facts["scripts"] == 0
    charts = [c for s in rep.sections for c in s.charts]
    assert len(facts["images"]) == len(charts) == 8  # scaling, qps, timeseries, percentiles x 2
    assert all(i["ok"] and i["w"] >= 600 and i["h"] >= 200 and i["shown"] > 300 for i in facts["images"]), facts
    assert facts["headings"] == ["Summary", "oltp_point_select", "rw", "Environment", "Commands to reproduce"]
    assert facts["tables"] == 6  # summary, per workload: cells + runs, environment
    requests = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
    assert requests[0] == page.resolve().as_uri() and sum(u.startswith("data:image/png") for u in requests) == 8
    assert (tmp_path / "report.png").read_bytes().startswith(b"\x89PNG")


def test_comparison_html_loads_cleanly(browser, tmp_path):
    groups = cmp.make_groups([str(RESULTS / "a"), str(RESULTS / "b")])
    comparisons = [cmp.compare(groups, m) for m in ("tps", "p95")]
    page = tmp_path / "compare.html"
    page.write_text(html.render_comparison("Comparison", groups, comparisons))
    facts, events = open_page(browser, page, tmp_path / "compare.png")
    assert problems(events) == []
    assert facts["tables"] == 1 + 2 * 2 and facts["images"] == []
    assert facts["headings"] == [
        "oltp_point_select: TPS",
        "rw: TPS",
        "oltp_point_select: 95% latency (ms)",
        "rw: 95% latency (ms)",
    ]
