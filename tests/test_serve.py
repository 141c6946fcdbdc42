"""app/serve.py: what it changes in Streamlit's start (the browser tests, tests/e2e/test_startup.py, start it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import serve

ROOT = Path(__file__).resolve().parents[1]


def test_the_v2_component_scan_is_skipped_and_the_app_uses_no_v2_component(monkeypatch):
    from streamlit.components.v2 import manifest_scanner
    from streamlit.components.v2.component_manager import BidiComponentManager

    name = "discover_and_register_components"
    monkeypatch.setattr(BidiComponentManager, name, getattr(BidiComponentManager, name))  # restored afterwards
    scans = []
    monkeypatch.setattr(manifest_scanner, "scan_component_manifests", lambda *a, **k: scans.append(1) or [])
    BidiComponentManager().discover_and_register_components(start_file_watching=False)
    assert scans == [1]  # what Streamlit does unpatched
    assert serve.skip_component_scan() is True
    BidiComponentManager().discover_and_register_components()
    assert scans == [1]
    sources = [p for d in ("app", "pages") for p in (ROOT / d).rglob("*.py")] + [ROOT / "streamlit_app.py"]
    uses = [
        p
        for p in sources
        if p.name != "serve.py" and ("components.v2" in p.read_text() or "st.components" in p.read_text())
    ]
    # the v2 components, the window's width sensor and the browser's keep (localStorage: an own deck, the students'
    # address), are defined inline (their JS in the call): they need no installed manifest, which is all the
    # skipped scan looks for
    assert sorted(uses) == [ROOT / "app" / "ui" / "keep.py", ROOT / "app" / "ui" / "layout.py"]
    sensor, keep = (ROOT / "app" / "ui" / "layout.py").read_text(), (ROOT / "app" / "ui" / "keep.py").read_text()
    assert 'st.components.v2.component("bve_width", js=_SENSOR_JS)' in sensor and "path=" not in sensor
    assert 'st.components.v2.component("bve_keep", js=_KEEP_JS)' in keep and "path=" not in keep


def test_the_first_pages_imports_are_done_early_and_hold_neither_torch_nor_pandas():
    """warm_first_page imports, while the browser loads the app, every app module the router imports (so the first
    visitor's run finds them imported) and nothing heavy: the home page's path stays free of torch and pandas."""
    import ast
    import json
    import importlib.util
    import subprocess
    import sys

    def module_of(package: str, name: str) -> str:  # `from package import name`: a submodule, or a name in package
        try:
            return f"{package}.{name}" if importlib.util.find_spec(f"{package}.{name}") else package
        except ModuleNotFoundError:
            return package

    router = ast.parse((ROOT / "streamlit_app.py").read_text(encoding="utf-8"))
    router_modules = {
        module_of(node.module, a.name)
        for node in ast.walk(router)
        if isinstance(node, ast.ImportFrom) and node.module.split(".")[0] == "app"
        for a in node.names
    }
    assert {"app.ui", "app.lessons", "app.core.prefetch"} <= router_modules
    probe = (
        "import json, sys\nfrom app import serve\n"
        "from app.core import prefetch, preload, visitors\n"  # what serve._preload imported before it
        "serve.warm_first_page()\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert router_modules <= loaded, router_modules - loaded
    assert set(serve.FIRST_PAGE_MODULES) <= loaded
    assert not {"torch", "transformers", "pandas"} & loaded  # (Streamlit itself imports plotly's top package)


def test_streamlits_repl_check_is_skipped(monkeypatch):
    from streamlit import delta_generator

    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", False)  # restored afterwards
    assert serve.skip_use_warning() is True
    assert delta_generator._use_warning_has_been_displayed is True
    monkeypatch.delattr(delta_generator, "_use_warning_has_been_displayed")
    assert serve.skip_use_warning() is False  # a Streamlit without the flag is left as it is


# ----------------------------------------------------------------------------- a start and a stop, for real

#: Runs app.serve with an audit hook that writes down every name looked up and every address connected or sent
#: to from Python (sys.addaudithook: socket.getaddrinfo, socket.connect, ...), one JSON line each.
LAUNCHER = """
import json, os, runpy, sys
LOG = os.environ["BVE_NET_LOG"]
NAMED = {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"}
SENT = {"socket.connect", "socket.connect_ex", "socket.sendto", "socket.sendmsg"}
def heard(event, args):
    if event in NAMED or event in SENT:
        with open(LOG, "a") as f:
            f.write(json.dumps([event, repr(args[0] if event in NAMED else args[1])]) + "\\n")
sys.addaudithook(heard)
sys.path.insert(0, os.getcwd())
sys.argv = ["app.serve", *sys.argv[1:]]
runpy.run_module("app.serve", run_name="__main__", alter_sys=True)
"""
LOOPBACK = ("'localhost'", "'127.", "('127.", "'::1'", "('::1'", "'0.0.0.0'", "'::'", "None", "''")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _only_loopback() -> list[str]:
    """A command prefix that runs in a network namespace of its own with only the loopback interface up
    (``unshare -rn``), or [] where this machine does not allow one (the audit hook still hears every attempt)."""
    import shutil
    import subprocess

    if not shutil.which("unshare") or subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode:
        return []
    up = "ip link set lo up 2>/dev/null || true; " if shutil.which("ip") else ""
    return ["unshare", "-rn", "sh", "-c", up + 'exec "$@"', "sh"]


def _wait_for(what: str, log, after: str | None = None, bound_s: float = 300):
    """Poll the start-up log until ``what`` is in it (after the first ``after``, if given): a bound for a stuck
    server, not a timing."""
    import time

    from app.core import startup

    def seen() -> bool:
        marks = [e["what"] for e in startup.read(str(log))]
        return what in (marks[marks.index(after) + 1 :] if after in marks else [] if after else marks)

    end = time.monotonic() + bound_s
    while not seen():
        assert time.monotonic() < end, f"the server never wrote {what!r} to its start-up log"
        time.sleep(0.2)


def _stop(proc) -> tuple[int, str, str]:
    import signal

    proc.send_signal(signal.SIGTERM)  # what a host sends (a Procfile dyno, a Space restarting, Ctrl-C's sibling)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


@pytest.mark.slow  # a real server: its start and the heavy imports
def test_a_started_server_asks_nothing_off_the_machine(tmp_path):
    """The Procfile's start (headless, every interface), in a network namespace with only loopback where the
    machine allows it: no name is looked up and no address but loopback is connected or sent to, from the server's
    start through the heavy imports (Streamlit's headless banner asked checkip.amazonaws.com and "connected" a UDP
    socket to 8.8.8.8 before .streamlit/config.toml stated browser.serverAddress)."""
    import json
    import os
    import subprocess
    import sys

    net, log = tmp_path / "net.jsonl", tmp_path / "startup.log"
    env = {**os.environ, "BVE_NET_LOG": str(net), "BVE_STARTUP_LOG": str(log), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [
            *_only_loopback(),
            sys.executable,
            "-c",
            LAUNCHER,
            "--server.headless=true",
            "--server.address=0.0.0.0",
            f"--server.port={_free_port()}",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for("preload end", log)  # the server is up and the imports begun IDLE_START_S later are done
    finally:
        rc, out, err = _stop(proc)
    assert rc == 0, err
    assert "URL: http://localhost:" in out and "External URL" not in out and "Network URL" not in out, out
    assert "Did not auto detect external IP" not in err, err
    heard = [json.loads(line) for line in net.read_text().splitlines()] if net.exists() else []
    outside = [(event, where) for event, where in heard if not where.startswith(LOOPBACK)]
    assert outside == [], outside


@pytest.mark.slow  # a real server and its warm start: every catalogue model loaded
def test_a_server_stopped_after_its_warm_start_exits_cleanly(tmp_path):
    """Stopped while its warm start loads models (started by a visitor's lesson, whose own models are loaded and
    run), the server exits with status 0 and says nothing on the way out. It used to abort in the interpreter's
    teardown with "terminate called without an active exception" (SIGABRT, status -6) when a thread was inside
    torch then (a daemon thread is ended by unwinding its native frames): about one stop in two here, before
    app.serve.leave ended the process with os._exit once the server has stopped."""
    import asyncio
    import os
    import subprocess
    import sys
    import time
    import urllib.request

    from tests.e2e.stclient import Session

    port, log = _free_port(), tmp_path / "startup.log"
    env = {**os.environ, "BVE_STARTUP_LOG": str(log), "HF_HUB_OFFLINE": "1", "BVE_WARM_START": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.serve",
            "--server.headless=true",
            f"--server.port={port}",
            "--server.address=127.0.0.1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for("process start", log)
        end = time.monotonic() + 300
        while True:  # healthy: the runtime answers
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < end and proc.poll() is None, "the server never became healthy"
                time.sleep(0.2)

        async def visit():
            async with Session(base) as session:
                return await session.open("masking")

        assert asyncio.run(visit()).exceptions == []  # a lesson: its models loaded, its forward passes run
        _wait_for("warm start begin", log)  # which starts the warm start, loading the other models as it stops
    finally:
        rc, out, err = _stop(proc)
    assert "terminate called" not in err, err
    assert rc == 0, err


@pytest.mark.slow  # a real server, its imports and its warm start
def test_with_no_visitor_the_warm_start_begins_after_the_imports(tmp_path):
    """A lecturer starts the server before class and nobody opens it: once the heavy imports are done, the warm start
    begins on its own (app.serve._preload), so the class finds the models loaded and the lessons' default
    Results computed; no page ran before it."""
    import os
    import subprocess
    import sys

    from app.core import startup

    port, log = _free_port(), tmp_path / "startup.log"
    env = {**os.environ, "BVE_STARTUP_LOG": str(log), "HF_HUB_OFFLINE": "1", "BVE_WARM_START": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.serve",
            "--server.headless=true",
            f"--server.port={port}",
            "--server.address=127.0.0.1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for("warm start begin", log)
        _wait_for("precompute end", log, after="warm start begin")  # a lesson's default view computed, shared
    finally:
        rc, out, err = _stop(proc)
    marks = [e["what"] for e in startup.read(str(log))]
    assert "page start" not in marks, marks
    assert marks.index("preload end") < marks.index("warm start begin"), marks
    assert rc == 0, err


def test_no_page_relies_on_streamlit_magic_which_is_off():
    """.streamlit/config.toml turns Streamlit's magic off (a CPython 3.11 race in the AST constructor failed a page
    opened by a class at once); so no page may hold a bare expression that magic would have drawn (a docstring is
    not one: magic never drew a module's docstring)."""
    import ast
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["magicEnabled"] is False
    drawn = []
    for path in [ROOT / "streamlit_app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Call, ast.Await, ast.Yield)):
                if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                    drawn.append(f"{path.name}:{node.lineno}")
    assert drawn == [], drawn
