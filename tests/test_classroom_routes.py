"""app/classroom/routes.py through Starlette's TestClient: the light student page (its bytes, its escaping, no way to
inject a script) and the JSON endpoints (state, answer), with the process's rooms in memory; and the import path
a phone's requests take stays light (no torch, numpy, pandas, transformers or streamlit)."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from app.classroom import rooms as R
from app.classroom import routes
from app.classroom.question import Question

ROOT = Path(__file__).resolve().parents[1]
EVIL = "</script><script>alert(1)</script><img src=x onerror=alert(2)>&amp;"
Q = Question(
    "masking",
    f"Which word goes in [MASK]? {EVIL}",
    "choice",
    ("ball", EVIL, "toy"),
    answer=("ball",),
    model=(("ball", 0.44),),
    explain="held back",
)
CLIENT = "phone-0123456789"


@pytest.fixture
def store(monkeypatch):
    store = R.InProcessRooms()
    monkeypatch.setattr(R, "_ROOMS", store)
    return store


@pytest.fixture
def client(store):
    return TestClient(Starlette(routes=routes.routes()))


@pytest.fixture
def room(store):
    code, secret = store.create()
    store.ask(code, secret, Q.to_dict())
    return code, secret


def test_the_student_page_is_small_and_self_contained(client, room):
    r = client.get(f"/class/{room[0]}")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert len(r.content) <= 20_000 and len(gzip.compress(r.content)) <= 6_000
    html = r.text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched from elsewhere
    assert "<link" not in html and "<img" not in html and html.count("<script>") == 1
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp and "'unsafe-inline'" not in csp
    assert "unsafe-eval" not in csp and r.headers["x-content-type-options"] == "nosniff"
    assert 'name="viewport"' in html and "width=device-width" in html  # laid out for a phone (390 px)
    assert "innerHTML" not in html and "outerHTML" not in html and "insertAdjacentHTML" not in html
    assert "document.write" not in html and "eval(" not in html and "textContent" in html


def test_the_page_carries_nothing_of_the_room(client, room):
    """The same bytes for every room: no server string is put into the HTML (the page reads its code from the URL,
    and everything else arrives as JSON, set with textContent)."""
    code, secret = room
    a = client.get(f"/class/{code}").content
    assert secret.encode() not in a and b"alert(1)" not in a and code.encode() not in a
    code2, _ = R.rooms().create()
    assert client.get(f"/class/{code2}").content == a
    assert client.get(f"/class/{code.lower()}").status_code == 200


def test_the_page_is_cached_by_its_etag(client, room):
    r = client.get(f"/class/{room[0]}")
    again = client.get(f"/class/{room[0]}", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize("code", ["ZZZZZZ", "ABC", "ABCDEFG", "<script>", "..%2F..%2Fetc", "A" * 5000])
def test_unknown_rooms_are_404(client, room, code):
    r = client.get(f"/class/{code}")
    assert r.status_code == 404 and "<" not in r.text
    assert client.get(f"/class/{code}/state").status_code == 404
    r = client.post(f"/class/{code}/answer", json={"qid": Q.id, "client": CLIENT, "value": "ball"})
    assert r.status_code == 404  # the room's 404, or the router's for what cannot be a code at all
    assert "%2F" in code or r.json() == {"ok": False, "error": "unknown"}


def test_the_join_page(client, room):
    r = client.get("/class")
    assert r.status_code == 200 and 'id="join"' in r.text
    assert client.get("/class/").content == r.content  # a trailing slash is the same page, not Streamlit's
    assert client.get(f"/class/{room[0]}/").content == r.content


def test_state_is_the_public_view_as_json_with_html_escaped(client, room):
    code, secret = room
    r = client.get(f"/class/{code}/state")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.headers["cache-control"] == "no-store"
    assert "<" not in r.text and ">" not in r.text and "&" not in r.text  # \u003c…: JSON all the same
    view = r.json()
    assert view == json.loads(json.dumps(R.rooms().view(code)))
    assert view["question"]["prompt"].endswith(EVIL) and EVIL in view["question"]["choices"]
    assert "held back" not in r.text and "0.44" not in r.text and secret not in r.text


def test_state_is_short_while_nothing_changed(client, room):
    code, secret = room
    full = client.get(f"/class/{code}/state").json()
    short = client.get(f"/class/{code}/state", params={"v": full["version"]}).json()
    assert short == {"status": "open", "count": 0, "version": full["version"]}
    client.post(f"/class/{code}/answer", json={"qid": Q.id, "client": CLIENT, "value": "ball"})
    assert client.get(f"/class/{code}/state", params={"v": full["version"]}).json()["count"] == 1
    R.rooms().close(code, secret)
    changed = client.get(f"/class/{code}/state", params={"v": full["version"]}).json()
    assert changed["status"] == "closed" and "question" in changed


def test_answer_round_trip(client, room):
    code, secret = room
    url = f"/class/{code}/answer"
    assert client.post(url, json={"qid": Q.id, "client": CLIENT, "value": "ball"}).json() == {"ok": True}
    assert client.post(url, json={"qid": Q.id, "client": CLIENT, "value": EVIL}).json() == {"ok": True}
    assert R.rooms().tally(code, secret) == {EVIL: 1}  # a choice's label, counted; the page shows it as text
    r = client.post(url, json={"qid": "old", "client": CLIENT, "value": "ball"})
    assert r.status_code == 409 and r.json()["error"] == "stale"
    R.rooms().close(code, secret)
    r = client.post(url, json={"qid": Q.id, "client": "phone-other-0001", "value": "ball"})
    assert r.status_code == 409 and r.json()["error"] == "closed"


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"null",
        b"[]",
        b"\"ball\"",
        b"{",
        b"\xff\xfe",
        b'{"qid": 1}',
        b'{"qid": "x", "client": {}, "value": []}',
        json.dumps({"value": "x" * 1500}).encode(),
    ],
)
def test_malformed_answers_are_refused(client, room, body):
    r = client.post(f"/class/{room[0]}/answer", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code in (404, 409, 422) and r.json()["ok"] is False
    assert R.rooms().view(room[0])["count"] == 0


def test_oversize_bodies_are_refused_before_parsing(client, room, monkeypatch):
    parsed = []
    monkeypatch.setattr(routes.json, "loads", lambda *a, **k: parsed.append(1))
    big = json.dumps({"qid": Q.id, "client": CLIENT, "value": "b" * 5000})
    r = client.post(f"/class/{room[0]}/answer", content=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and parsed == []

    def chunks():  # no Content-Length: the body is read no further than MAX_BODY
        for _ in range(100):
            yield b"x" * 1024

    r = client.post(f"/class/{room[0]}/answer", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and parsed == []


def test_answers_must_be_json(client, room):
    r = client.post(f"/class/{room[0]}/answer", data={"qid": Q.id, "client": CLIENT, "value": "ball"})
    assert r.status_code == 415  # a cross-site form cannot post an answer without a CORS preflight
    r = client.post(
        f"/class/{room[0]}/answer",
        content=json.dumps({"qid": Q.id, "client": CLIENT, "value": "ball"}),
        headers={"Content-Type": "text/plain"},
    )
    assert r.status_code == 415 and R.rooms().view(room[0])["count"] == 0


def test_a_phone_is_rate_limited(client, room):
    url = f"/class/{room[0]}/answer"
    codes = [client.post(url, json={"qid": Q.id, "client": CLIENT, "value": "ball"}).status_code for _ in range(7)]
    assert codes[: R.RATE_ANSWERS] == [200] * R.RATE_ANSWERS and codes[R.RATE_ANSWERS :] == [429, 429]


def test_nothing_a_student_can_reach_steers_the_room(client, room):
    code, _ = room
    paths = {getattr(r, "path", "") for r in routes.routes()}
    assert paths == {
        "/class",
        "/class/",
        "/class/{code}",
        "/class/{code}/",
        "/class/{code}/state",
        "/class/{code}/answer",
    }
    for path in ("ask", "close", "reveal", "clear", "tally", "put"):
        for method in (client.get, client.post):
            assert method(f"/class/{code}/{path}").status_code in (404, 405)
    r = client.post(f"/class/{code}/state", json={"status": "revealed"})
    assert r.status_code == 405 and R.rooms().view(code)["status"] == "open"


def test_routes_under_a_base_url(store, room):
    c = TestClient(Starlette(routes=routes.routes("/lecture/")))
    assert c.get(f"/lecture/class/{room[0]}").status_code == 200
    assert c.get(f"/lecture/class/{room[0]}/state").json()["status"] == "open"


def test_the_student_path_imports_nothing_heavy():
    code = (
        "import app.classroom.routes, app.classroom.mount, app.classroom.rooms, sys; "
        "heavy = [m for m in ('torch', 'transformers', 'numpy', 'pandas', 'streamlit', 'plotly') if m in sys.modules];"
        "assert not heavy, heavy"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr


def test_a_store_that_fails_is_a_503_never_a_traceback(monkeypatch, room):
    class Down:
        blocking = True

        def __getattr__(self, name):
            def fail(*a):
                raise ConnectionError("redis://secret-host:6379 refused")

            return fail

    monkeypatch.setattr(R, "_ROOMS", Down())
    c = TestClient(Starlette(routes=routes.routes()), raise_server_exceptions=False)
    for r in (
        c.get(f"/class/{room[0]}"),
        c.get(f"/class/{room[0]}/state"),
        c.post(f"/class/{room[0]}/answer", json={"qid": Q.id, "client": CLIENT, "value": "ball"}),
    ):
        assert r.status_code == 503 and r.json() == {"ok": False, "error": "unavailable"}
        assert "secret-host" not in r.text


def test_a_flood_of_new_client_ids_is_bounded(monkeypatch):
    monkeypatch.setattr(R, "MAX_ANSWERS", 5)
    store = R.InProcessRooms()
    code, secret = store.create()
    store.ask(code, secret, Q.to_dict())
    results = [store.answer(code, Q.id, f"flood-{i:06d}", "nope") for i in range(100)]
    assert results[:20] == ["invalid"] * 20 and set(results[20:]) == {"limited"}
    assert len(store._rooms[code].rate) == 20 and store.tally(code, secret) == {}
