"""The deployment's locks: "one at a time" for the few things that must be one at a time across every app process
of a deployment, not only within one (a hub download, the live run). Pure Python: no streamlit, no torch.

- ``BVE_REDIS_URL`` unset (the default: one app process, nothing to install): a lock is a ``threading.Lock``.
- ``BVE_REDIS_URL`` set (several app processes behind a load balancer, docs/hosting.md): a lock is redis-py's own
  ``redis.lock.Lock`` on the key ``bve:lock:NAME`` (SET NX with a random token, released and extended by the
  client's Lua scripts, so only its holder can release it). It is taken with a *lease* (:data:`LEASE_S`) that a
  daemon thread renews while the lock is held: a process that dies holding it (killed, out of memory, its machine
  gone) frees it within the lease, never for good. Beside it, ``bve:lock:NAME:about`` holds what the holder said
  it is doing (``acquire(about=...)``), for whoever waits to show.

:func:`lock` returns the process's one lock of a name. Both kinds answer ``acquire(blocking=True, timeout=-1,
about="")``, ``release()``, ``locked()`` (held by anyone: this process or another), ``about()`` and ``with``.
A Redis that cannot be reached raises :class:`Unreachable` (a RuntimeError) with one sentence; callers say it.
"""

from __future__ import annotations

import os
import threading
import time

LEASE_S = 30.0  # a dead holder's lock frees itself this long after its last renewal (renewed every LEASE_S / 3)
PREFIX = "bve:lock:"


class Unreachable(RuntimeError):
    """The deployment's Redis (``BVE_REDIS_URL``) did not answer."""


class LocalLock:
    """One app process: a ``threading.Lock`` with what its holder is doing beside it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._about = ""

    def acquire(self, blocking: bool = True, timeout: float = -1, about: str = "") -> bool:
        got = self._lock.acquire(blocking, timeout) if blocking else self._lock.acquire(False)
        if got:
            self._about = about
        return got

    def release(self) -> None:
        self._about = ""
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def about(self) -> str | None:
        """What the holder said it is doing ('' when it said nothing), or None when nobody holds the lock."""
        return self._about if self._lock.locked() else None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class RedisLock:
    """Several app processes: redis-py's ``Lock`` on ``bve:lock:NAME`` with a lease renewed while held.

    Within the process, a ``threading.Lock`` is taken first, so the process's own threads queue in memory (as with
    :class:`LocalLock`) and only one of them at a time polls Redis."""

    def __init__(
        self, name: str, url: str | None = None, client=None, lease_s: float = LEASE_S, poll_s: float = 0.1
    ) -> None:
        if client is None:
            import redis  # only when BVE_REDIS_URL is set: the default needs nothing installed

            client = redis.Redis.from_url(
                url or os.environ["BVE_REDIS_URL"], socket_timeout=5, socket_connect_timeout=5, health_check_interval=30
            )
        self.name, self.r, self.lease_s, self.poll_s = name, client, lease_s, poll_s
        self.key, self.about_key = PREFIX + name, PREFIX + name + ":about"
        # thread_local=False: the token is the object's (one holder per process at a time: the local lock below)
        self._redis_lock = client.lock(self.key, timeout=lease_s, sleep=poll_s, thread_local=False)
        self._local = threading.Lock()
        self._stop: threading.Event | None = None

    def _call(self, what, *args, **kwargs):
        from redis.exceptions import ConnectionError as RedisConnectionError, TimeoutError as RedisTimeoutError

        try:
            return what(*args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError) as e:
            raise Unreachable(f"the deployment's Redis (BVE_REDIS_URL) cannot be reached ({type(e).__name__})") from e

    def acquire(self, blocking: bool = True, timeout: float = -1, about: str = "") -> bool:
        start = time.monotonic()
        if not (self._local.acquire(blocking, timeout) if blocking else self._local.acquire(False)):
            return False
        try:
            left = None if timeout is None or timeout < 0 else max(0.0, timeout - (time.monotonic() - start))
            got = self._call(
                self._redis_lock.acquire, blocking=blocking and left != 0.0, blocking_timeout=left if blocking else None
            )
            if got:
                self._call(self.r.set, self.about_key, about, px=int(self.lease_s * 1000))
        except BaseException:
            self._local.release()
            raise
        if not got:
            self._local.release()
            return False
        self._stop = threading.Event()
        threading.Thread(target=self._renew, args=(self._stop,), daemon=True, name=f"bve-lock-{self.name}").start()
        return True

    def _renew(self, stop: threading.Event) -> None:
        """While held: push the lease back every third of it (redis-py's ``reacquire``: the lease is whole again)."""
        from redis.exceptions import LockError, RedisError

        while not stop.wait(self.lease_s / 3):
            try:
                if not self._redis_lock.reacquire():
                    return
                self.r.pexpire(self.about_key, int(self.lease_s * 1000))
            except LockError:  # the lease ran out (Redis was away longer than it): another may hold it now
                return
            except RedisError:  # Redis away for a moment: try again at the next tick, while the lease lasts
                continue

    def release(self) -> None:
        from redis.exceptions import LockError

        if self._stop is not None:
            self._stop.set()
        try:
            self._call(self.r.delete, self.about_key)
            self._call(self._redis_lock.release)
        except LockError:  # the lease had run out: nothing of ours to release
            pass
        finally:
            self._local.release()

    def locked(self) -> bool:
        return bool(self._call(self.r.exists, self.key))

    def about(self) -> str | None:
        """What the holder (in any process) said it is doing, or None when nobody holds the lock."""
        if not self.locked():
            return None
        said = self._call(self.r.get, self.about_key)
        return said.decode() if isinstance(said, bytes) else (said or "")

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


_LOCKS: dict[str, LocalLock | RedisLock] = {}
_LOCKS_LOCK = threading.Lock()


def lock(name: str) -> LocalLock | RedisLock:
    """The process's one lock called ``name``: in Redis when ``BVE_REDIS_URL`` is set, in memory otherwise."""
    with _LOCKS_LOCK:
        if name not in _LOCKS:
            url = os.environ.get("BVE_REDIS_URL", "").strip()
            _LOCKS[name] = RedisLock(name, url) if url else LocalLock(name)
        return _LOCKS[name]
