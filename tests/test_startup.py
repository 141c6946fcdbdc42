"""The start-up path's pieces that need no server: the timestamp log the benchmark's breakdown reads, the
bookkeeping that lets background work step aside for visitors, the heavy imports' pause points, and the warm
start's queue (a deck's next slide before the lessons' defaults, each view once)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.core import startup, visitors

ROOT = Path(__file__).resolve().parents[1]


def test_marks_are_written_only_when_a_log_is_asked_for(tmp_path, monkeypatch):
    log = tmp_path / "startup.log"
    monkeypatch.delenv("BVE_STARTUP_LOG", raising=False)
    startup.mark("nothing")
    assert not log.exists()
    monkeypatch.setenv("BVE_STARTUP_LOG", str(log))
    before = time.time()
    with startup.span("load", key="bert"):
        pass
    startup.mark("page end", page="home")
    events = startup.read(str(log))
    assert [e["what"] for e in events] == ["load start", "load end", "page end"]
    assert events[0]["key"] == "bert" and events[2]["page"] == "home"
    assert all(before <= e["t"] <= time.time() and e["thread"] == threading.current_thread().name for e in events)


def test_a_torn_last_line_is_left_out(tmp_path):
    log = tmp_path / "startup.log"
    log.write_text(json.dumps({"t": 1.0, "what": "router start", "thread": "x"}) + '\n{"t": 2.0, "wha')
    assert [e["what"] for e in startup.read(str(log))] == ["router start"]
    assert startup.read(str(tmp_path / "absent.log")) == []


class Clock:
    """A clock that moves only when slept on, so the visitors' waits are measured in its seconds, not in those of
    a loaded machine. ``at(when, what)``: call ``what()`` once the clock has reached ``when``."""

    def __init__(self):
        self.now, self.due = 0.0, []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        for when, what in [d for d in self.due if d[0] <= self.now]:
            self.due.remove((when, what))
            what()

    def at(self, when: float, what) -> None:
        self.due.append((when, what))


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(visitors, "time", SimpleNamespace(monotonic=c.monotonic, sleep=c.sleep))
    return c


STEP = 0.02  # yield_to_visitors looks again every 20 ms


def test_background_work_waits_while_a_page_runs_and_goes_on_when_it_ends(clock):
    visitors.page_started()
    clock.at(0.3, visitors.page_finished)  # the page ends 0.3 s after the background thread began to wait
    waited = visitors.yield_to_visitors(max_wait=5)
    assert 0.3 <= waited < 0.3 + 2 * STEP and visitors.running() == 0


def test_it_does_not_wait_when_a_page_waits_for_it_nor_past_its_bound(clock):
    visitors.page_started()  # this thread's page "runs" and never reports its end
    try:
        assert visitors.yield_to_visitors(max_wait=5, unless=lambda: True) == 0  # a page waits on this work
        assert clock.now == 0
        assert 0.25 <= visitors.yield_to_visitors(max_wait=0.25) < 0.25 + 2 * STEP  # at most max_wait
    finally:
        visitors.page_finished()


def test_a_run_that_never_reports_its_end_stops_counting(clock, monkeypatch):
    monkeypatch.setattr(visitors, "STALE_RUN_S", 0.05)
    visitors.page_started()
    assert visitors.running() == 1
    clock.sleep(0.1)
    assert visitors.running() == 0


def another_visitors_run(opening: bool):
    """A page run in another thread (an opening, or a rerun), under way until the returned ``end()`` is called."""
    started, stop = threading.Event(), threading.Event()

    def page():
        visitors.page_started()
        visitors.page_opening(opening)
        started.set()
        stop.wait(10)
        visitors.page_finished()

    t = threading.Thread(target=page)
    t.start()
    started.wait(10)

    def end():
        stop.set()
        t.join(10)

    return end


def test_a_rerun_lets_other_visitors_openings_go_first_until_they_end(clock):
    end = another_visitors_run(opening=True)
    visitors.page_started()
    visitors.page_opening(False)  # this visitor has the page: a rerun
    try:
        assert visitors.is_rerun() and visitors.openings() == 1
        clock.at(0.3, end)  # the other visitor's opening ends 0.3 s after this rerun began to wait
        waited = visitors.openings_first(max_wait=5)
        assert 0.3 <= waited < 0.3 + 2 * STEP and visitors.openings() == 0
    finally:
        end()
        visitors.page_finished()


def test_openings_never_wait_and_a_rerun_waits_at_most_its_bound(clock):
    end = another_visitors_run(opening=True)
    try:
        visitors.page_started()
        visitors.page_opening(True)  # an opening (or the projector's run) goes as it comes
        assert not visitors.is_rerun() and visitors.openings_first(max_wait=5) == 0 and clock.now == 0
        assert visitors.openings() == 1  # its own opening is not counted, the other visitor's is
        visitors.page_opening(False)
        assert 0.25 <= visitors.openings_first(max_wait=0.25) < 0.25 + 2 * STEP  # never past its bound
        visitors.page_finished()
        assert visitors.openings_first(max_wait=5) == 0 and not visitors.is_rerun()  # not a page run (a script)
    finally:
        end()


def test_the_projectors_runs_neither_wait_nor_are_waited_for(clock):
    end = another_visitors_run(opening=True)
    visitors.page_started()
    visitors.page_opening(False, projector=True)  # presenter mode: the slide a whole room reads
    try:
        assert not visitors.is_rerun() and visitors.openings_first(max_wait=5) == 0 and clock.now == 0
    finally:
        visitors.page_finished()
        end()
    visitors.page_started()
    visitors.page_opening(False)  # a student's rerun while only the projector's run is under way: no wait
    projector_started, stop = threading.Event(), threading.Event()

    def projector():
        visitors.page_started()
        visitors.page_opening(True, projector=True)
        projector_started.set()
        stop.wait(10)
        visitors.page_finished()

    t = threading.Thread(target=projector)
    t.start()
    try:
        projector_started.wait(10)
        assert visitors.running() == 2 and visitors.openings() == 0 and visitors.openings_first(max_wait=5) == 0
    finally:
        stop.set()
        t.join(10)
        visitors.page_finished()


def test_a_rerun_does_not_wait_for_other_reruns(clock):
    end = another_visitors_run(opening=False)
    visitors.page_started()
    try:
        assert visitors.running() == 2 and visitors.openings() == 0
        assert visitors.openings_first(max_wait=5) == 0 and clock.now == 0
    finally:
        end()
        visitors.page_finished()


@pytest.mark.slow  # a fresh interpreter imports torch
def test_the_heavy_imports_pause_between_steps_and_say_when_a_page_waits_for_them():
    """In a fresh interpreter (this one has imported them): ``pause`` runs before each module and each class,
    and a second thread calling load() meanwhile is seen waiting (``waited_for``), then finds them done. The
    garbage collector is off during the imports and on after; the imports are frozen without a full collection
    (the first lesson waits for them), and the warm start's first freeze_long_lived() collects what they left."""
    code = """
import gc, threading, time
from app.core import preload
calls, seen, collecting = [], [], set()
full = gc.get_stats()[2]["collections"]
def pause():
    calls.append(1)
    collecting.add(gc.isenabled())
    if len(calls) == 3:
        t = threading.Thread(target=preload.load); t.start()
        for _ in range(200):
            if preload.waited_for(): break
            time.sleep(0.01)
        seen.append(preload.waited_for())
preload.load(pause=pause)
import sys
print(sorted(collecting), gc.isenabled(), gc.get_stats()[2]["collections"] - full)
print(len(calls), seen, preload.done(), "torch" in sys.modules)
frozen = gc.get_freeze_count()
busy = preload.freeze_long_lived(busy=lambda: True)
after_busy = gc.get_freeze_count()
found = preload.freeze_long_lived()
print(frozen, busy, after_busy - frozen, found, gc.get_freeze_count() < after_busy, preload.freeze_long_lived())
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    gc_line, rest, reclaim = out.stdout.strip().split("\n")
    n, seen, done, torch = rest.split(maxsplit=3)
    assert gc_line.split() == ["[False]", "True", "0"]  # off at every step, on after, no full collection
    frozen, busy, change, found, fewer, found_again = reclaim.split()
    # while visitors' pages run, only the freeze (no walk: nothing collected, nothing unfrozen); the imports' garbage
    # (~11,000 objects) is collected by the next freeze_long_lived() on a quiet server, then nothing is left
    assert busy == "0" and int(change) > -1000, reclaim  # a collection would have freed ~11,000 (objects that die
    # by their reference count leave the permanent generation too: a few)
    assert int(frozen) > 100_000 and int(found) > 1000 and fewer == "True" and int(found_again) < 100, reclaim
    from app.core import preload

    assert int(n) >= len(preload.MODULES) + len(preload.TRANSFORMERS_NAMES)
    assert seen == "[True]" and done == "True" and torch.strip() == "True"


@pytest.mark.slow  # a fresh interpreter imports torch
def test_background_work_computes_on_one_thread_and_pages_and_timings_on_torchs_default():
    """In a fresh interpreter with torch's default at 2 threads: the warm start's thread takes
    ``BACKGROUND_THREADS`` for itself; a page thread started after it begins with that (torch hands the last
    setting to new threads) and takes the default back (``use_page_threads``, the router's step), or one thread
    while other pages run (``crowded``); a timing in
    the background thread runs at the default and leaves that thread's own setting as it was."""
    code = """
import json, threading, torch
from app.core import preload
from app.models import device as devices
preload.load()
seen = {"default": preload.torch_threads()}
def background():
    devices.use_threads(devices.BACKGROUND_THREADS)
    seen["background"] = torch.get_num_threads()
    with devices.timing():
        seen["timing"] = torch.get_num_threads()
    seen["after timing"] = torch.get_num_threads()
def page():
    seen["page before"] = torch.get_num_threads()
    devices.use_page_threads()
    seen["page"] = torch.get_num_threads()
def crowded_page():
    devices.use_page_threads(crowded=True)
    seen["crowded page"] = torch.get_num_threads()
    devices.use_page_threads()
    seen["page alone again"] = torch.get_num_threads()
for work in (background, page, crowded_page):
    t = threading.Thread(target=work); t.start(); t.join()
print(json.dumps(seen))
"""
    env = {**__import__("os").environ, "OMP_NUM_THREADS": "2"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    from app.models import device as devices

    assert devices.BACKGROUND_THREADS == 1
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "default": 2,
        "background": 1,
        "timing": 2,
        "after timing": 1,
        "page before": 1,
        "page": 2,
        "crowded page": 1,
        "page alone again": 2,
    }


def test_the_warm_queue_takes_a_decks_next_slide_first_and_each_view_once(monkeypatch):
    from app.lecture import deck
    from app.ui.warm import QUEUE_LIMIT, Warm

    monkeypatch.setattr(sys, "setswitchinterval", lambda s: None)  # queueing sets the busy interval: not here
    w = Warm()
    cpu = ("bundled", "cpu", "float32")
    assert w.put(deck.view("masking"), cpu) and w.put(deck.view("xlnet"), cpu)
    assert not w.put(deck.view("masking"), cpu)  # already queued
    assert w.put(deck.view("masking"), ("bundled", "cuda", "float16"))  # other settings: another view
    assert w.put(deck.view("electra", {"seed": "3"}), cpu, urgent=True)
    assert [w.take()[0].page for _ in range(4)] == ["electra", "masking", "xlnet", "masking"]
    assert w.idle()
    for i in range(QUEUE_LIMIT):
        assert w.put(deck.view("masking", {"seed": str(i)}), cpu)
    assert not w.put(deck.view("masking", {"seed": "full"}), cpu)  # bounded: a flood of views is dropped


def test_finished_pages_are_counted_once_and_only_when_they_started():
    before = visitors.pages_finished()
    visitors.page_finished()  # a run the router never saw start (a page run outside the router)
    assert visitors.pages_finished() == before
    visitors.page_started()
    visitors.page_finished()
    visitors.page_finished()
    assert visitors.pages_finished() == before + 1
