"""Results shared across visitors: a lesson's Result for the same inputs on the same models is computed once per
process and handed to every session that asks for it. Pure: no streamlit, no torch.

A class opening one slide's link sends the same inputs twenty times; before this, every session ran the lesson's
``run`` itself (its expensive steps were cached, but each session still hashed every step's arguments and unpickled
every step's result, 5–15 ms a rerun on 2 cores). :class:`SharedResults` keeps whole Results, least recently used
dropped first, bounded by a count (:data:`KEPT_RESULTS`). Two sessions asking at once for a Result nobody has yet:
the first computes it, the second waits for that one computation instead of repeating it.

The key is exact, built by the caller (``app.ui.run``): the lesson's ``run`` (module and name), its ``Inputs`` (a
frozen dataclass: the text a visitor typed is in it), and each model by its identity (catalogue key, source,
location, device, dtype) *and* the very object that was loaded. A model a visitor brought (``app.models.own``)
therefore keys only its own entries: another visitor hits one only with the same loaded object, i.e. the same model
brought (same id or folder, same revision, as the shared loader keeps it); a reloaded model is a new key. The entry
holds the model weakly (:func:`model_token`): a Result is never handed out for a model that has been dropped and
whose memory address a new one reuses.

A Result is shared, not copied: lessons' Results are frozen dataclasses that figures only read (docs/architecture.md).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Hashable

KEPT_RESULTS = 48  # whole Results kept per process (most are tens to hundreds of kB; base-size attention a few MB)


@dataclass
class _Pending:
    """A computation under way: the others who ask wait on ``done``."""

    done: threading.Event = field(default_factory=threading.Event)
    value: object = None
    failed: bool = False


@dataclass
class _Entry:
    value: object
    alive: Callable[[], bool]  # whether every model the value was computed on is still the one that was loaded


def model_token(obj) -> tuple[tuple, Callable[[], bool]]:
    """(what keys ``obj`` — its ``id`` — and a check that the object at that id is still ``obj``). The key holds
    no strong reference: a dropped model is freed as before, and its Results are not handed out again."""
    try:
        ref = weakref.ref(obj)
        return (id(obj),), lambda: ref() is not None  # alive: then no other object has its id (no strong reference
        # here: the check must not keep the model alive)
    except TypeError:  # not weak-referenceable (a plain value): the key itself holds it
        return (id(obj), obj), lambda: True


class SharedResults:
    """A thread-safe, bounded map from an exact key to a computed value, computing each missing key once even when
    several threads ask for it at the same time."""

    def __init__(self, max_entries: int = KEPT_RESULTS):
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._pending: dict[Hashable, _Pending] = {}
        self.counts = {"computed": 0, "shared": 0, "waited": 0, "put": 0}

    def __len__(self) -> int:
        with self._lock:
            return len(self._kept)

    def _hit(self, key):
        entry = self._kept.get(key)
        if entry is None:
            return None
        if not entry.alive():
            del self._kept[key]
            return None
        self._kept.move_to_end(key)
        return entry

    def _keep(self, key, value, alive) -> None:
        self._kept[key] = _Entry(value, alive)
        self._kept.move_to_end(key)
        while len(self._kept) > self.max_entries:
            self._kept.popitem(last=False)

    def get(self, key: Hashable, compute: Callable[[], object], alive: Callable[[], bool] = lambda: True):
        """The value kept under ``key``, else ``compute()``'s, kept. While one thread computes a key, the others
        asking for it wait and get its value; if it raises, each of them computes for itself (its exception — a
        lesson's Stop — is theirs too, and nothing is kept)."""
        with self._lock:
            entry = self._hit(key)
            if entry is not None:
                self.counts["shared"] += 1
                return entry.value
            pending = self._pending.get(key)
            mine = pending is None
            if mine:
                pending = self._pending[key] = _Pending()
        if not mine:
            pending.done.wait()
            if not pending.failed:
                with self._lock:
                    self.counts["waited"] += 1
                return pending.value
            return compute()
        try:
            value = compute()
        except BaseException:
            pending.failed = True
            with self._lock:
                self._pending.pop(key, None)
            pending.done.set()
            raise
        with self._lock:
            self._keep(key, value, alive)
            self._pending.pop(key, None)
            self.counts["computed"] += 1
        pending.value = value
        pending.done.set()
        return value

    def put(self, key: Hashable, value, alive: Callable[[], bool] = lambda: True) -> None:
        """Keep ``value`` under ``key`` if nothing is kept there yet (the warm start, which computes a lesson's
        default view ahead of visitors without holding up one who asks for it meanwhile)."""
        with self._lock:
            if self._hit(key) is None:
                self._keep(key, value, alive)
                self.counts["put"] += 1

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
