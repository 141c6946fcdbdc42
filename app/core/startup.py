"""Timestamps of the server's way from process start to a lesson's figure, for the start-up breakdown that
``scripts/benchmark.py --only browser`` writes into BENCHMARKS.md. Off (one environment lookup, then nothing)
unless ``BVE_STARTUP_LOG`` names a file; then every :func:`mark` appends one JSON line to it:

    {"t": <seconds since the epoch>, "what": "preload end", "thread": "bve-warm-start", ...}

The benchmark starts the server itself, so it knows the epoch second it started the process and reads each
step as seconds after that. Pure: no streamlit, no torch.
"""

from __future__ import annotations

import json
import os
import threading
import time
from contextlib import contextmanager

_lock = threading.Lock()


def path() -> str | None:
    return os.environ.get("BVE_STARTUP_LOG") or None


def mark(what: str, **info) -> None:
    """Append ``what`` with the time and the thread to the start-up log, if one is asked for."""
    where = path()
    if not where:
        return
    line = json.dumps({"t": time.time(), "what": what, "thread": threading.current_thread().name, **info})
    with _lock, open(where, "a", encoding="utf-8") as f:
        f.write(line + "\n")


@contextmanager
def span(what: str, **info):
    """``mark(what + " start")`` … ``mark(what + " end")`` around a block."""
    mark(f"{what} start", **info)
    try:
        yield
    finally:
        mark(f"{what} end", **info)


def read(log: str) -> list[dict]:
    """The log's events, in the order they were written (a torn last line, written as the server stopped, is
    left out)."""
    events = []
    try:
        with open(log, encoding="utf-8") as f:
            for line in f:
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return events
