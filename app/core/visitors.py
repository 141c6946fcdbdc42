"""Whether a visitor's page is being served right now, so that background work (the warm start, the heavy
imports begun at process start) can step aside for it. Pure: no streamlit, no torch.

The router calls :func:`page_started` and :func:`page_finished` around every page run (``app.ui``); a
background thread calls :func:`yield_to_visitors` between two of its steps. A run that never reports its end
(one that raised before the router's last step) counts for ``STALE_RUN_S`` at most.

Openings first: the router also says which runs are *openings* (:func:`page_opening`: a visitor's first run of a
page, who has nothing of it on screen yet; presenter mode's runs neither wait nor are waited for). A rerun (a visitor
who has the page and changed a setting) that has a lesson to compute waits while other visitors' openings run, at
most ``OPENING_FIRST_S`` (:func:`openings_first`): a class opening a link at once on a fresh server otherwise had its
slowest openings held back by the first students' changes, computed beside them. Measured on 2 idle cores on
2026-11-29, 20 sessions opening a fresh server at once, each changing a setting 5 s after its page opened: open p95
10.3-12.3 s, against 8.6-9.2 s for the same sessions making no change, and 8.3-9.5 s with openings first (3 runs
each). With reading times drawn between 2.5 and 7.5 s (scripts/benchmark.py since), one run each way: 20 sessions
9.3 s against 9.5 s, 30 sessions 12.3 s against 14.0 s; the price is paid by reruns during a class's opening, whose
p95 over the 2 minutes was 557 and 812 ms against 513 and 636 ms.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

YIELD_MAX_S = 3.0  # the longest a background thread waits for visitors' page runs before its next step
STALE_RUN_S = 20.0
OPENING_FIRST_S = 2.0  # the longest a rerun waits for other visitors' openings before computing

_runs: dict[int, float] = {}  # thread id of a page run -> when it started
_openings: set[int] = set()  # the thread ids among them whose run is a visitor's first run of its page
_projectors: set[int] = set()  # ... and those whose run is in presenter mode (never waits, never waited for)
_lock = threading.Lock()
_finished = 0  # page runs that have ended in this process


def page_started() -> None:
    with _lock:
        _runs[threading.get_ident()] = time.monotonic()
        _openings.discard(threading.get_ident())
        _projectors.discard(threading.get_ident())


def page_opening(opening: bool = True, projector: bool = False) -> None:
    """Say what this thread's page run is: an opening (a visitor's first run of the page, which other visitors'
    reruns let go first) or a rerun (which lets other visitors' openings go first). ``projector`` (presenter mode):
    neither waits nor is waited for — a whole room reads it, and it should not hold the room's own pages back."""
    me = threading.get_ident()
    with _lock:
        _openings.discard(me)
        _projectors.discard(me)
        if projector:
            _projectors.add(me)
        elif opening:
            _openings.add(me)


def page_finished() -> None:
    global _finished
    with _lock:
        _openings.discard(threading.get_ident())
        _projectors.discard(threading.get_ident())
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


def is_rerun() -> bool:
    """Whether this thread runs a visitor's page that is neither an opening nor the projector's
    (:func:`page_opening`)."""
    me = threading.get_ident()
    with _lock:
        return me in _runs and me not in _openings and me not in _projectors


def openings(excluding_me: bool = True) -> int:
    """How many visitors' openings are under way (other than this thread's own run)."""
    running()  # forgets stale runs
    me = threading.get_ident()
    with _lock:
        return sum(1 for i in _openings if i in _runs and not (excluding_me and i == me))


def openings_first(max_wait: float = OPENING_FIRST_S) -> float:
    """In a rerun (:func:`is_rerun`), before its expensive work: wait while other visitors' openings run, at most
    ``max_wait`` s. Returns the seconds waited (0 at once in an opening, outside a page run, or with none)."""
    if not is_rerun():
        return 0.0
    t = time.monotonic()
    while openings() and time.monotonic() - t < max_wait:
        time.sleep(0.02)
    return time.monotonic() - t


def yield_to_visitors(max_wait: float = YIELD_MAX_S, unless: Callable[[], bool] = lambda: False) -> float:
    """Wait while a visitor's page is running, at most ``max_wait`` s, and not while ``unless()`` holds (e.g.
    a visitor waits for what this thread is doing). Returns the seconds waited."""
    t = time.monotonic()
    while running() and not unless() and time.monotonic() - t < max_wait:
        time.sleep(0.02)
    return time.monotonic() - t
