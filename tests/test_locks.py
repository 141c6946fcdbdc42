"""The deployment's locks (app/core/locks.py): in memory by default, in a real redis-server with BVE_REDIS_URL, where
two app processes (here: two clients, and a child process) exclude each other, a dead holder's lease runs out, and the
download slot and the live run use them."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest

from app.core import locks
from tests.classroom_redis import redis_server


@pytest.fixture(scope="module")
def url():
    with redis_server() as u:
        yield u


def test_without_redis_a_lock_is_the_processes_own(monkeypatch):
    monkeypatch.delenv("BVE_REDIS_URL", raising=False)
    monkeypatch.setattr(locks, "_LOCKS", {})
    a = locks.lock("x")
    assert isinstance(a, locks.LocalLock) and locks.lock("x") is a
    assert a.about() is None and a.acquire(about="masking") and a.locked() and a.about() == "masking"
    assert not a.acquire(blocking=False) and not a.acquire(timeout=0.05)
    a.release()
    assert not a.locked() and a.about() is None


def test_two_processes_exclude_each_other_and_see_what_the_holder_does(url):
    one, two = locks.RedisLock("t-two", url), locks.RedisLock("t-two", url)  # two processes' locks of one name
    assert one.acquire(about="google/electra-small-discriminator")
    assert two.locked() and two.about() == "google/electra-small-discriminator"
    assert not two.acquire(blocking=False) and not two.acquire(timeout=0.3)
    got = []
    waiter = threading.Thread(target=lambda: got.append(two.acquire(timeout=10, about="b")))
    waiter.start()
    time.sleep(0.3)
    assert not got  # still waiting for the other process
    one.release()
    waiter.join(10)
    assert got == [True] and one.about() == "b"
    two.release()
    assert not one.locked() and one.about() is None


def test_threads_of_one_process_queue_in_memory(url):
    lock, held, order = locks.RedisLock("t-threads", url), threading.Event(), []

    def worker(i):
        with lock:
            order.append(("in", i))
            held.wait(0.05)
            order.append(("out", i))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert len(order) == 8 and all(order[k][0] == "in" and order[k + 1] == ("out", order[k][1]) for k in range(0, 8, 2))
    assert not lock.locked()


def test_a_held_lock_outlives_its_lease_while_its_holder_lives(url):
    a, b = locks.RedisLock("t-renew", url, lease_s=1.5), locks.RedisLock("t-renew", url, lease_s=1.5)
    assert a.acquire()
    time.sleep(3.5)  # more than twice the lease: the holder's thread renewed it
    assert b.locked() and not b.acquire(blocking=False)
    a.release()
    assert b.acquire(blocking=False)
    b.release()


def test_a_dead_holders_lock_frees_itself_after_the_lease(url):
    """A process killed while holding the lock (no release) blocks the others for one lease, not for good."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from app.core.locks import RedisLock; "
                f"l = RedisLock('t-dead', {url!r}, lease_s=1.0); assert l.acquire(about='child'); "
                "print('held', flush=True); "
                "time.sleep(60)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "held"
        mine = locks.RedisLock("t-dead", url, lease_s=1.0)
        assert mine.about() == "child" and not mine.acquire(blocking=False)
        child.kill()
        child.wait(10)
        assert mine.acquire(timeout=10)  # within the lease (1 s) of the last renewal
        mine.release()
    finally:
        child.kill()


def test_an_unreachable_redis_is_one_sentence():
    from tests.classroom_redis import free_port

    lock = locks.RedisLock("t-gone", f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(locks.Unreachable, match="BVE_REDIS_URL"):
        lock.acquire(blocking=False)
    assert not lock._local.locked()  # nothing left held in the process
    with pytest.raises(locks.Unreachable):
        lock.about()


def test_the_live_run_is_one_at_a_time_in_the_deployment(url, monkeypatch, tmp_path):
    """Another app process's live run (its lock in Redis) makes this process's live run and Background say Busy."""
    from app.experiments import live

    monkeypatch.setattr(live, "LOCK", locks.RedisLock("live-run", url))
    other = locks.RedisLock("live-run", url)
    assert other.acquire(about="masking")
    try:
        with pytest.raises(live.Busy):
            live.live_run("masking", seconds=1, corpus=tmp_path / "missing", work=tmp_path)
        with pytest.raises(live.Busy, match=r"A live run \(masking\) is already in progress"):
            live.Background().start("masking", seed=0, seconds=5, owner="me")
    finally:
        other.release()
    with pytest.raises(live.Unavailable, match="corpus"):  # free again: it gets as far as looking for its data
        live.live_run("masking", seconds=1, corpus=tmp_path / "missing", work=tmp_path)
    assert not other.locked()


def test_the_download_slot_is_the_deployments(url, monkeypatch):
    """While another app process downloads (holds the slot in Redis), a request here waits in line, hears which
    model runs, and its cancel ends the wait with nothing downloaded."""
    from app.models import own

    monkeypatch.setattr(locks, "_LOCKS", {"download": locks.RedisLock("download", url)})
    other = locks.RedisLock("download", url)
    assert other.acquire(about="google/electra-small-discriminator")
    heard, cancel = [], threading.Event()
    flight = own._Flight(spec=SimpleNamespace(source="me/my-bert"))

    def on_wait(w):
        heard.append(w)
        if len(heard) >= 2:
            cancel.set()

    try:
        assert own._take_slot(flight, on_wait, cancel) is False
    finally:
        other.release()
    assert heard and heard[0].running == "google/electra-small-discriminator" and heard[0].place == 1
    assert own._take_slot(flight, None, None) is True  # free now: this process takes the deployment's slot
    assert other.locked() and other.about() == "me/my-bert"
    locks.lock("download").release()
    assert not other.locked()
