"""The way from server start to the first lesson, in the order it must happen (issue 30), read from the server's
own start-up log (BVE_STARTUP_LOG, app/core/startup.py) — order, not timings (those are the benchmark's:
scripts/benchmark.py --only browser).

- The first page a visitor opens is drawn before the warm start takes a core: the warm start begins after it.
- The heavy imports begin after that first page too (``python -m app.serve`` begins them on its own only when no
  visitor has come ``IDLE_START_S`` after the server is up).
- A visitor who opens a lesson during the warm-up is served as soon as the imports and its own models are there,
  never queued behind the warm start's other models or its precomputed lessons.
- The warm start then computes every lesson's defaults, and a lesson opened afterwards finds them: its run
  takes none of the cached steps again (its "lesson run" is short next to the precompute's)."""

from __future__ import annotations

import pytest

from app.core import startup
from app.lessons import LESSONS
from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app

pytestmark = pytest.mark.e2e


def first(events, what, **k):
    return next(
        (i for i, e in enumerate(events) if e["what"] == what and all(e.get(a) == b for a, b in k.items())), None
    )


@pytest.mark.parametrize("launcher", [True, False], ids=["app.serve", "streamlit run"])
def test_the_first_visitors_come_before_the_warm_start(tmp_path, launcher):
    log = tmp_path / "startup.log"
    lesson = LESSONS[0].slug
    with (
        browser() as (context, watcher),
        streamlit_server(env={"BVE_STARTUP_LOG": str(log)}, launcher=launcher) as (base, _),
    ):
        # the browser is up before the server: its visitor comes at once (launched after, it took 1-2 s here, and
        # app.serve begins the imports IDLE_START_S after the server is up when nobody has come)
        page = watcher.watch(context.new_page())
        page.goto(base)
        wait_for_app(page)
        page.goto(f"{base}/{lesson}")
        wait_for_app(page)
        assert exception_boxes(page) == []
        events = startup.read(str(log))
        home_end = first(events, "page end", page="home")
        warm_begin = first(events, "warm start begin")
        lesson_end = first(events, "page end", page=lesson)
        pre_start, pre_end = first(events, "preload start"), first(events, "preload end")
        assert None not in (home_end, warm_begin, lesson_end, pre_start, pre_end), [e["what"] for e in events]
        assert home_end < warm_begin, "the warm start began before the first page was drawn"
        # a visitor who comes at once gets the first page first; then the imports begin (app.serve: in its own
        # thread; plain streamlit run: in the warm start's)
        assert home_end < pre_start, "the imports began before the first page was drawn"
        assert events[pre_start]["thread"] in (("bve-preload", "bve-warm-start") if launcher else ("bve-warm-start",))
        assert pre_end < lesson_end
        # the disk was asked for what those imports read (app.core.prefetch), or its cache held it already
        asked = next(
            (i for i in (first(events, "prefetch asked"), first(events, "prefetch skipped")) if i is not None), None
        )
        assert asked is not None and events[asked]["thread"] == "bve-prefetch", [e["what"] for e in events]
        assert events[asked]["what"] == "prefetch skipped" or events[asked]["files"] > 100
        warm_end, idle = first(events, "warm start end"), first(events, "precompute idle")
        assert idle is None or lesson_end < idle, "the lesson waited for the precomputed lessons"
        assert warm_end is None or lesson_end < warm_end, "the lesson waited for the warm start's other models"
        # then the warm start computes every lesson's defaults; a lesson opened afterwards finds them
        page.wait_for_timeout(500)
        for _ in range(240):
            if first(startup.read(str(log)), "precompute idle") is not None:
                break
            page.wait_for_timeout(500)
        events = startup.read(str(log))
        done = {e["page"] for e in events if e["what"] == "precompute end"}
        assert {f"/{x.slug}" for x in LESSONS} <= done, done
        other = LESSONS[-1].slug
        page.goto(f"{base}/{other}")
        wait_for_app(page)
        assert exception_boxes(page) == []
        events = startup.read(str(log))
        runs = [(e["what"], e["t"]) for e in events if e.get("page") == other and e["what"].startswith("lesson run")]
        pre = [
            (e["what"], e["t"]) for e in events if e.get("page") == f"/{other}" and e["what"].startswith("precompute")
        ]
        ran, computed = runs[-1][1] - runs[-2][1], pre[-1][1] - pre[0][1]
        assert ran < computed, (ran, computed)  # found its steps done
