"""Whether a visitor's page is being served right now, so that background work (the warm start, the heavy
imports begun at process start) can step aside for it. Pure: no streamlit, no torch.

The router calls :func:`page_started` and :func:`page_finished` around every page run (``app.ui``); a
background thread calls :func:`yield_to_visitors` between two of its steps. A run that never reports its end
(one that raised before the router's last step) counts for ``STALE_RUN_S`` at most.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

YIELD_MAX_S = 3.0  # the longest a background thread waits for visitors' page runs before its next step
STALE_RUN_S = 20.0

_runs: dict[int, float] = {}  # thread id of a page run -> when it started
_lock = threading.Lock()
_finished = 0  # page runs that have ended in this process


def page_started() -> None:
    with _lock:
        _runs[threading.get_ident()] = time.monotonic()


def page_finished() -> None:
    global _finished
    with _lock:
        if _runs.pop(threading.get_ident(), None) is not None:
            _finished += 1


def pages_finished() -> int:
    """How many visitors' page runs have ended in this process."""
    return _finished


def running() -> int:
    """How many visitors' page runs are under way."""
    now = time.monotonic()
    with _lock:
        for ident in [i for i, t in _runs.items() if now - t > STALE_RUN_S]:
            del _runs[ident]
        return len(_runs)


def yield_to_visitors(max_wait: float = YIELD_MAX_S, unless: Callable[[], bool] = lambda: False) -> float:
    """Wait while a visitor's page is running, at most ``max_wait`` s, and not while ``unless()`` holds (e.g.
    a visitor waits for what this thread is doing). Returns the seconds waited."""
    t = time.monotonic()
    while running() and not unless() and time.monotonic() - t < max_wait:
        time.sleep(0.02)
    return time.monotonic() - t
