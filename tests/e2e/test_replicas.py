"""Past one machine (docs/hosting.md): nginx + 2 app processes + redis-server started by ``app.deploy`` on free
loopback ports. Sessions open through nginx (each with its affinity cookie, spread over both processes), a class room
collects answers, then one app process is killed (SIGKILL, a crash): every session's next rerun is answered — the
sessions of the dead process reconnect through nginx and rerun on the survivor from their URL, their state intact —
the room lost no answer and takes new ones, and a real chromium tab on the dead process reconnects by itself.

nginx and redis-server are Debian's (scripts/test.sh installs both): without them the test skips locally and fails in
CI."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from urllib.parse import parse_qs

import pytest

from app.deploy import SERVED_BY, Deployment, binary, free_port
from tests.classroom_redis import redis_binary
from tests.e2e.balanced import BalancedSession, answered_by, first_visit

pytestmark = pytest.mark.e2e

SLUG = "masking"  # a lesson with a number input (its first: the masking rate) that the sessions step up
SESSIONS_PER_PROCESS = 3


def nginx_binary() -> str:
    path = binary("nginx")
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("nginx is missing in CI: scripts/test.sh installs Debian's nginx-light")
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    return path


@pytest.fixture(scope="module")
def deployment():
    nginx_binary()
    redis_binary()
    # the warm start off: the two processes compute only what the sessions ask (a shared 2-core machine)
    with Deployment(
        2,
        port=free_port(),
        host="127.0.0.1",
        restart=False,
        served_by=True,
        env={"BVE_WARM_START": "0", "HF_HUB_OFFLINE": "1"},
    ) as d:
        yield d


def _post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, json.loads(r.read())


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def _step(s: BalancedSession, label: str) -> float:
    """The number input's value one step up (a whole number for an int input)."""
    from streamlit.proto.NumberInput_pb2 import NumberInput

    _, value, kind = s.last.number_inputs[label]
    return value + (1 if kind == NumberInput.INT else 0.01)


def test_nginx_spreads_sessions_and_a_crash_loses_nothing(deployment):
    from app.classroom.question import Question
    from app.classroom.rooms import RedisRooms

    d = deployment
    app_addrs = [f"127.0.0.1:{p}" for p in d.app_ports]
    store = RedisRooms(d.redis_url)  # the presenter's side (any process: the room is in Redis)
    code, secret = store.create()
    question = Question("masking", "Which word goes in [MASK]?", "choice", ("ball", "stone", "toy"), answer=("ball",))
    assert store.ask(code, secret, question.to_dict())
    qid = question.to_dict()["id"]

    async def scenario():
        sessions: list[BalancedSession] = []
        try:
            # tabs open through nginx until each process holds SESSIONS_PER_PROCESS of them (the cookie spreads them)
            for _ in range(40):
                counts = {a: sum(s.served_by == a for s in sessions) for a in app_addrs}
                if min(counts.values()) >= SESSIONS_PER_PROCESS:
                    break
                cookie, _ = first_visit(d.url, f"/{SLUG}")
                s = BalancedSession(d.url, cookie)
                await s.__aenter__()
                if counts[s.served_by] >= SESSIONS_PER_PROCESS:
                    await s.ws.close()
                    continue
                sessions.append(s)
            assert {s.served_by for s in sessions} == set(app_addrs), "the cookie spread the tabs over both processes"
            opened = await asyncio.gather(*(s.open(SLUG, f"seed={i}", timeout=300) for i, s in enumerate(sessions)))
            assert all(not r.exceptions and r.number_inputs for r in opened), [r.exceptions for r in opened]
            label = next(iter(opened[0].number_inputs))
            before = []
            for s in sessions:  # one change each, answered by its own process
                run = await s.set_number(label, _step(s, label))
                assert not run.exceptions
                before.append(s.last.number_inputs[label][1])
            # the class answers, through nginx (each request to whichever process it hashes to)
            for i in range(6):
                status, got = _post(
                    f"{d.url}/class/{code}/answer",
                    {"qid": qid, "client": f"phone-{i:04d}-abcdef", "value": ("ball", "toy")[i % 2]},
                )
                assert status == 200 and got.get("ok"), got

            dead = sessions[0].served_by
            victim = app_addrs.index(dead)
            d.kill(victim)
            survivor = app_addrs[1 - victim]
            assert d.apps[victim].poll() is not None

            async def step(s: BalancedSession):
                return await s.set_number(label, _step(s, label), timeout=300)

            moved = {id(s) for s in sessions if s.served_by == dead}
            results = await asyncio.gather(*(s.rerun_or_reconnect(step) for s in sessions))
            for s, (reopened, run), value in zip(sessions, results, before, strict=True):
                assert not run.exceptions, run.exceptions
                assert s.served_by == survivor  # the survivor answered every session's next rerun
                if id(s) in moved:
                    assert s.reconnects == 1 and reopened is not None and not reopened.exceptions
                    # the state came back from the URL: the reopened page showed the value the session had set
                    assert reopened.number_inputs[label][1] == pytest.approx(value)
                else:
                    assert s.reconnects == 0 and reopened is None
                assert run.number_inputs[label][1] > value  # and took the next change
                assert parse_qs(s.query), "the page wrote its state to the URL"
            assert len(moved) == SESSIONS_PER_PROCESS
        finally:
            for s in sessions:
                try:
                    await s.ws.close()
                except Exception:  # noqa: BLE001 — closing what the dead process left
                    pass

    asyncio.run(scenario())

    # the room: every answer is still counted, and the class goes on through nginx on the survivor
    assert store.tally(code, secret) == {"ball": 3, "toy": 3}
    status, got = _post(f"{d.url}/class/{code}/answer", {"qid": qid, "client": "phone-9999-abcdef", "value": "stone"})
    assert status == 200 and got.get("ok")
    assert _get(f"{d.url}/class/{code}/state")["count"] == 7
    assert store.tally(code, secret) == {"ball": 3, "toy": 3, "stone": 1}
    alive = [f"127.0.0.1:{port}" for port, p in zip(d.app_ports, d.apps, strict=True) if p.poll() is None]
    with urllib.request.urlopen(d.url + "/_stcore/health", timeout=10) as r:
        assert len(alive) == 1 and r.status == 200 and answered_by(r.headers.get(SERVED_BY)) == alive[0]


def test_a_browser_tab_on_a_dead_process_reconnects_and_reruns_on_the_survivor():
    """Streamlit's own frontend in chromium: its app process is killed; it reconnects through nginx by itself (to the
    other process), and its next widget change is answered there and applied: the new session runs the page from the
    widget states the tab sends (widget ids are the same in every process), which win over the URL it shows."""
    from tests.e2e.browser import browser, exception_boxes, wait_for_app

    nginx_binary()
    redis_binary()
    with (
        Deployment(
            2,
            port=free_port(),
            host="127.0.0.1",
            restart=False,
            served_by=True,
            env={"BVE_WARM_START": "0", "HF_HUB_OFFLINE": "1"},
        ) as d,
        browser() as (context, watcher),
    ):
        page = watcher.watch(context.new_page())
        response = page.goto(f"{d.url}/{SLUG}?seed=7", timeout=180_000)
        wait_for_app(page, timeout_ms=180_000)
        mine = answered_by(response.headers.get(SERVED_BY.lower()))
        ports = [f"127.0.0.1:{p}" for p in d.app_ports]
        step_up = page.locator('[data-testid="stMain"] [data-testid="stNumberInputStepUp"]').first
        opened = page.url
        step_up.click()
        page.wait_for_function("u => location.href !== u", arg=opened, timeout=120_000, polling=100)
        wait_for_app(page, timeout_ms=120_000)
        url_before = page.url
        changed = {
            k for k, v in parse_qs(url_before.split("?", 1)[1]).items() if parse_qs(opened.split("?", 1)[1]).get(k) != v
        }
        assert len(changed) == 1  # the number input's parameter
        d.kill(ports.index(mine))  # the tab's process crashes
        # the frontend notices (its connection state leaves CONNECTED), pings the server through nginx, which now
        # answers from the other process, and opens its websocket there; the page stays drawn meanwhile
        state = "() => document.querySelector('[data-testid=\"stApp\"]').getAttribute('data-test-connection-state')"
        page.wait_for_function(f"() => ({state})() !== 'CONNECTED'", timeout=60_000, polling=50)
        page.wait_for_function(f"() => ({state})() === 'CONNECTED'", timeout=120_000, polling=100)
        assert page.url == url_before and exception_boxes(page) == []
        # the next change is answered by the survivor: the new session's first run carries the widget values the tab
        # sends (the change included), which win over the URL it still shows (the state before the change) ...
        step_up.click()
        page.wait_for_function("u => location.href !== u", arg=url_before, timeout=180_000, polling=100)
        wait_for_app(page, timeout_ms=180_000)
        url_reconnected = page.url
        assert exception_boxes(page) == []
        # ... and every change after it as before
        step_up.click()
        page.wait_for_function("u => location.href !== u", arg=url_reconnected, timeout=120_000, polling=100)
        wait_for_app(page, timeout_ms=120_000)
        assert exception_boxes(page) == [] and watcher.page_errors == [] and watcher.blocked == []
        query = lambda address: parse_qs(address.split("?", 1)[1])  # noqa: E731
        before, middle, after, key = query(url_before), query(url_reconnected), query(page.url), changed.pop()
        steps = [float(v[key][0]) for v in (before, middle, after)]
        assert steps[0] < steps[1] < steps[2]  # a step of that input each click, the first after the crash included
        assert all(
            {k: v for k, v in q.items() if k != key} == {k: v for k, v in before.items() if k != key}
            for q in (middle, after)
        )  # the rest of the state kept
