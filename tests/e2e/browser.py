"""Run the real app and drive Debian's chromium at it (Playwright, never a downloaded browser).

Used by the end-to-end tests and by scripts/benchmark.py and scripts/screenshots.py.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from app.lecture.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: F401  (the system's chromium and its flags)

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}
SERVER_PIDS: dict[str, int] = {}  # base url -> pid of the streamlit process serving it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(env: dict | None = None, timeout: float = 120, launcher: bool = True):
    """Start the app as the README does (``python -m app.serve``: ``streamlit run streamlit_app.py`` with the
    heavy imports begun once the server is up; ``launcher=False``: plain ``streamlit run streamlit_app.py``, as
    Hugging Face Spaces runs it) on 127.0.0.1; yield (base url, seconds until healthy)."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        *(("app.serve",) if launcher else ("streamlit", "run", "streamlit_app.py")),
        "--server.headless=true",
        f"--server.port={port}",
        "--server.address=127.0.0.1",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
    ]
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "BVE_WARM_START": "1", **(env or {})}
    log = open(ROOT / ".e2e-server.log", "w")
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}; see .e2e-server.log")
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.perf_counter() - started > timeout:
                raise TimeoutError("streamlit did not become healthy")
            time.sleep(0.25)
        SERVER_PIDS[base] = proc.pid
        yield base, time.perf_counter() - started
    finally:
        SERVER_PIDS.pop(base, None)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


BASE_PATH_PROBE = re.compile(r"/[^/?#]+/_stcore/(health|host-config)$")
PROBE_CONSOLE = "Failed to load resource: the server responded with a status of 404"


class Watcher:
    """Blocks every non-loopback request and records console errors, page errors, failed responses and
    blocked URLs.

    On a deep link (``/electra``) Streamlit's frontend first probes ``/electra/_stcore/health`` and
    ``/electra/_stcore/host-config`` to find its base path, gets 404s and falls back to ``/``; the
    browser logs each as a console error. Those probes, and only those, are not counted."""

    def __init__(self, context):
        self._console: list[str] = []
        self.page_errors: list[str] = []
        self.blocked: list[str] = []
        self.failed: list[str] = []  # 4xx/5xx responses other than the base-path probes
        self._probes = 0
        context.route("**/*", self._route)

    @property
    def console_errors(self) -> list[str]:
        errors, allowed = [], self._probes
        for e in self._console:
            if PROBE_CONSOLE in e and allowed:
                allowed -= 1
                continue
            errors.append(e)
        return errors

    def _response(self, response):
        if response.status >= 400:
            if response.status == 404 and BASE_PATH_PROBE.search(urlparse(response.url).path):
                self._probes += 1
            else:
                self.failed.append(f"{response.status} {response.url}")

    def _route(self, route):
        url = route.request.url
        host = urlparse(url).hostname or ""
        if url.startswith(("data:", "blob:", "about:")) or host in LOOPBACK:
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def watch(self, page):
        page.on("response", self._response)
        page.on("console", lambda m: self._console.append(f"{page.url}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.page_errors.append(f"{page.url}: {e}"))
        return page


@contextmanager
def browser(viewport=(1280, 900)):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = b.new_context(viewport={"width": viewport[0], "height": viewport[1]}, accept_downloads=True)
        watcher = Watcher(context)
        try:
            yield context, watcher
        finally:
            context.close()
            b.close()


def wait_for_app(page, timeout_ms: int = 120_000) -> None:
    """Wait until Streamlit has rendered the page and its script has stopped running (twice, a beat
    apart, because a widget's first render can trigger one more run)."""
    done = """() => { const app = document.querySelector('[data-testid="stApp"]');
                      return app && app.getAttribute('data-test-script-state') === 'notRunning'
                             && document.querySelector('h1') !== null; }"""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    # polling every 100 ms, not on every animation frame (Playwright's default): waiting must not make
    # the page draw 60 frames a second, which on a CPU-only machine is most of what a tab costs
    page.wait_for_function(done, timeout=timeout_ms, polling=100)
    page.wait_for_timeout(400)
    page.wait_for_function(done, timeout=timeout_ms, polling=100)


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of a process (VmRSS now, VmHWM at its peak), in MiB, from /proc."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def exception_boxes(page) -> list[str]:
    return [e.inner_text()[:500] for e in page.query_selector_all('[data-testid="stException"]')]


def assert_no_injected_markup(page, host: str = "evil.invalid") -> str:
    """The page shows no exception box and nothing a payload aimed at ``host`` could make: no image or link to
    it, no bold or coloured "HACKED", no bidi override applied. Returns the main area's text (to check that the
    value is there, literally)."""
    main = page.locator('[data-testid="stMain"]')
    assert exception_boxes(page) == []
    assert main.locator(f'img[src*="{host}"]').count() == 0
    assert main.locator(f'a[href*="{host}"]').count() == 0
    assert "HACKED" not in " ".join(main.locator("strong, [style*='color']").all_inner_texts())
    shown = page.inner_text('[data-testid="stMain"]')
    assert "\u202e" not in shown  # an override is shown as ⟨U+202E⟩, never applied
    return shown


def settle(page, predicate: str, timeout_ms: int = 30_000) -> bool:
    """Wait until the JS ``predicate`` holds (polled every 100 ms), at most ``timeout_ms``, then a beat more; False on a
    timeout, when the caller measures the page as it is and its check says what is wrong. On 2 busy cores the page
    above a figure can still be drawing when the figure appears: a fresh-clone CI run (2026-11-29) measured NSP vs
    SOP's stage figure 55 px lower than it is drawn, and the deck test failed once where it passed alone."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(predicate, timeout=timeout_ms, polling=100)
        held = True
    except PlaywrightTimeout:
        held = False
    page.wait_for_timeout(300)
    return held
