"""The class routes on Streamlit's own port, in real servers: ``python -m app.serve`` (app/classroom/mount.patch,
before the server starts), plain ``streamlit run`` (mount.attach, from a page script, once the server runs), and two
app processes on two ports sharing one room through a real redis-server (an answer posted to one is counted by the
other; a restart loses nothing)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.classroom import rooms as R
from app.classroom.question import Question
from tests.classroom_redis import free_port, redis_server
from tests.e2e.browser import streamlit_server

ROOT = Path(__file__).resolve().parents[1]
Q = Question("sentence-order", "Is B the next sentence?", "choice", ("yes", "no"), answer=("yes",))
NO_WARM = {"BVE_WARM_START": "0"}


def http(method: str, url: str, body: dict | None = None) -> tuple[int, bytes, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"} if data else {}
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def test_app_serve_serves_the_class_page_beside_streamlit():
    with streamlit_server(env=NO_WARM) as (base, _):
        status, body, headers = http("GET", f"{base}/class")
        assert status == 200 and b'id="join"' in body and "content-security-policy" in {k.lower() for k in headers}
        assert http("GET", f"{base}/class/")[1] == body  # with a trailing slash: ours, not Streamlit's front end
        status, body, _ = http("GET", f"{base}/class/ZZZZZZ/state")
        assert status == 404 and json.loads(body) == {"error": "unknown"}
        assert http("GET", f"{base}/class/ZZZZZZ")[0] == 404
        status, body, _ = http("POST", f"{base}/class/ZZZZZZ/answer", {"qid": "q", "client": "c" * 16, "value": "x"})
        assert status == 404 and json.loads(body)["error"] == "unknown"
        status, body, _ = http("GET", f"{base}/")  # Streamlit's own front end and health check are untouched
        assert status == 200 and b"<noscript>" in body.lower()
        assert http("GET", f"{base}/_stcore/health")[0] == 200


SCRIPT = """
import json, os
from app.classroom import mount, rooms
out = os.environ["BVE_TEST_OUT"]
runs = json.load(open(out)) if os.path.exists(out) else []
inserted = []
if runs:  # attached by the first run: a second attach must not go to the server's loop again
    mount._insert = lambda loop: inserted.append(True) or True
ok = mount.attach()
if not runs:
    code, secret = rooms.rooms().create()
    rooms.rooms().ask(code, secret, json.loads(os.environ["BVE_TEST_QUESTION"]))
else:
    code, secret = runs[0]["code"], runs[0]["secret"]
runs.append({"ok": ok, "inserted": bool(inserted), "code": code, "secret": secret, "attached": mount.attached()})
json.dump(runs, open(out, "w"))
"""


@contextmanager
def plain_streamlit_run(script: Path, env: dict):
    """``streamlit run script`` (no app.serve, so no mount.patch), as Hugging Face Spaces starts the app."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.headless=true",
        f"--server.port={port}",
        "--server.address=127.0.0.1",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while http_ok(f"{base}/_stcore/health") is False:
            assert proc.poll() is None and time.monotonic() < deadline, "streamlit did not start"
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def http_ok(url: str) -> bool:
    try:
        return http("GET", url)[0] == 200
    except OSError:
        return False


def test_attach_serves_the_class_page_on_a_server_already_running(tmp_path):
    from tests.e2e.stclient import Session

    script = tmp_path / "presenter.py"
    script.write_text(SCRIPT)
    out = tmp_path / "runs.json"
    env = {"BVE_TEST_OUT": str(out), "BVE_TEST_QUESTION": json.dumps(Q.to_dict()), "PYTHONPATH": str(ROOT)}
    with plain_streamlit_run(script, env) as base:
        status, body, _ = http("GET", f"{base}/class")
        assert b'id="join"' not in body  # before attach: Streamlit's front end answers every path

        async def open_twice():
            for _ in range(2):
                async with Session(base) as s:
                    run = await s.open("")
                    assert not run.exceptions, run.exceptions

        asyncio.run(open_twice())
        runs = json.loads(out.read_text())
        assert [r["ok"] for r in runs] == [True, True] and all(r["attached"] for r in runs)
        assert not runs[1]["inserted"]  # the second call only checks a flag
        code = runs[0]["code"]
        status, body, _ = http("GET", f"{base}/class/{code}")
        assert status == 200 and b'id="join"' in body
        view = json.loads(http("GET", f"{base}/class/{code}/state")[1])
        assert view["status"] == "open" and view["question"]["id"] == Q.id
        status, body, _ = http(
            "POST", f"{base}/class/{code}/answer", {"qid": Q.id, "client": "phone-attach-01", "value": "yes"}
        )
        assert (status, json.loads(body)) == (200, {"ok": True})
        assert json.loads(http("GET", f"{base}/class/{code}/state")[1])["count"] == 1
        assert http("GET", f"{base}/_stcore/health")[0] == 200
        assert http("GET", f"{base}/")[0] == 200


def test_attach_without_a_server_says_so():
    from app.classroom import mount

    assert mount.attach() is False or mount.attached()


def test_patch_puts_the_class_routes_first_once(monkeypatch):
    from starlette.routing import Route
    from streamlit.web.server.starlette import starlette_app

    from app.classroom import mount

    theirs = [Route("/_stcore/health", lambda r: None)]  # what Streamlit builds, stood in for by one route

    def create_streamlit_routes(runtime):
        return list(theirs)

    monkeypatch.setattr(starlette_app, "create_streamlit_routes", create_streamlit_routes)  # restored afterwards
    monkeypatch.setattr(mount, "_base_url", lambda: "")
    assert mount.patch() and mount.patch()  # twice: wrapped once
    patched = starlette_app.create_streamlit_routes
    assert patched.__wrapped__ is create_streamlit_routes
    got = patched(None)
    assert [r.path for r in got] == [
        "/class",
        "/class/",
        "/class/{code}",
        "/class/{code}/",
        "/class/{code}/state",
        "/class/{code}/answer",
        "/_stcore/health",
    ]


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url:
        yield url


def test_two_app_processes_share_one_room_through_redis(redis_url):
    """Process A takes an answer, process B counts it; the presenter (here: this test, a third process with the
    secret) reads the tally; after process A restarts, nothing is lost."""
    presenter = R.RedisRooms(redis_url)
    code, secret = presenter.create()
    assert presenter.ask(code, secret, Q.to_dict())
    env = {**NO_WARM, "BVE_REDIS_URL": redis_url}
    with streamlit_server(env=env) as (a, _), streamlit_server(env=env) as (b, _):
        assert a != b
        for i, (server, value) in enumerate([(a, "yes"), (b, "no"), (a, "no"), (b, "yes")]):
            status, body, _ = http(
                "POST", f"{server}/class/{code}/answer", {"qid": Q.id, "client": f"phone-redis-{i:03d}", "value": value}
            )
            assert (status, json.loads(body)) == (200, {"ok": True})
        # a re-answer through the other process replaces the first answer
        assert (
            http("POST", f"{b}/class/{code}/answer", {"qid": Q.id, "client": "phone-redis-000", "value": "no"})[0]
            == 200
        )
        for server in (a, b):
            view = json.loads(http("GET", f"{server}/class/{code}/state")[1])
            assert view["count"] == 4 and view["status"] == "open"
        assert presenter.tally(code, secret) == {"no": 3, "yes": 1}
        assert presenter.reveal(code, secret, {"rows": [{"label": "no", "count": 3}], "sentence": "75% said no."})
        view = json.loads(http("GET", f"{a}/class/{code}/state")[1])
        assert view["status"] == "revealed" and view["reveal"]["sentence"] == "75% said no."
        status, body, _ = http(
            "POST", f"{a}/class/{code}/answer", {"qid": Q.id, "client": "phone-late-01", "value": "no"}
        )
        assert status == 409 and json.loads(body)["error"] == "closed"
    with streamlit_server(env=env) as (c, _):  # both processes gone, a new one: the room is whole
        view = json.loads(http("GET", f"{c}/class/{code}/state")[1])
        assert view["count"] == 4 and view["status"] == "revealed"
        assert R.RedisRooms(redis_url).tally(code, secret) == {"no": 3, "yes": 1}


def test_attach_finds_the_app_from_the_server_task_and_inserts_once(monkeypatch):
    """mount._insert on a loop whose "uvicorn-server" task holds a UvicornServer-like object (as Streamlit's does):
    the class routes go first, once, whether or not patch() already put them there."""
    from types import SimpleNamespace

    from starlette.applications import Starlette
    from starlette.routing import Mount, Route

    from app.classroom import mount, routes

    monkeypatch.setattr(mount, "_base_url", lambda: "")
    monkeypatch.setattr(mount, "_attached_to", None)

    def streamlit_like(with_ours: bool) -> Starlette:
        theirs = [Route("/_stcore/health", lambda r: None), Mount("/", routes=[])]
        return Starlette(routes=[*(routes.routes() if with_ours else []), *theirs])

    async def serve(uvicorn_server, ready, done):  # what UvicornServer.start's task awaits, roughly
        self = uvicorn_server  # noqa: F841  (the frame's local the mount finds)
        ready.set()
        await done.wait()

    async def main(app):
        ready, done = asyncio.Event(), asyncio.Event()
        fake = SimpleNamespace(_server=SimpleNamespace(config=SimpleNamespace(app=app)))
        task = asyncio.create_task(serve(fake, ready, done), name="uvicorn-server")
        await ready.wait()
        loop = asyncio.get_running_loop()
        results = [mount._insert(loop), mount._insert(loop)]
        done.set()
        await task
        return results

    for with_ours in (False, True):
        app = streamlit_like(with_ours)
        before = list(app.router.routes)
        assert asyncio.run(main(app)) == [True, True]
        paths = [getattr(r, "path", "") for r in app.router.routes]
        assert paths[:6] == [
            "/class",
            "/class/",
            "/class/{code}",
            "/class/{code}/",
            "/class/{code}/state",
            "/class/{code}/answer",
        ]
        assert len(paths) == 8 and app.router.routes[6:] == before[-2:]
        assert mount.attached()
        monkeypatch.setattr(mount, "_attached_to", None)
