"""A class at once, on a fresh server: many sessions open every lesson in the same second, then change a
widget together. Before app/core/preload.py this failed on most runs with ImportError ('cannot import name
BertForMaskedLM') and "partially initialized module 'pandas'" — first-time imports racing between
page threads. The sessions speak Streamlit's own websocket protocol (tests/e2e/stclient.py), so the
server is loaded without a renderer per session; the last test does the same with real browser tabs.
"""

from __future__ import annotations

import asyncio
import pytest

from app.lessons import LESSONS
from tests.e2e.browser import SERVER_PIDS, browser, exception_boxes, rss_mib, streamlit_server, wait_for_app
from tests.e2e.stclient import Session

pytestmark = pytest.mark.e2e
PER_LESSON = 2


async def _student(base: str, slug: str, seed: int) -> dict:
    async with Session(base) as s:
        opened = await s.open(slug, f"seed={seed}")
        out = {"slug": slug, "opened": opened, "stepped": None}
        if opened.exceptions or not opened.number_inputs:
            return out
        label, (_, value, _) = next(iter(opened.number_inputs.items()))
        out["label"], out["value"] = label, value
        out["stepped"] = await s.set_number(label, value + 1)
        return out


def test_a_class_opens_every_lesson_at_once_on_a_fresh_server():
    with streamlit_server() as (base, _):

        async def wave(offset):
            return await asyncio.gather(
                *(_student(base, lesson.slug, offset + i) for i in range(PER_LESSON) for lesson in LESSONS)
            )

        results = asyncio.run(wave(100))
        after_first = rss_mib(SERVER_PIDS[base])
        results += asyncio.run(wave(200))
        after_second = rss_mib(SERVER_PIDS[base])
    print(f"server memory after one class: {after_first:.0f} MiB, after a second: {after_second:.0f} MiB")
    # the models are loaded once per server (st.cache_resource) and shared: a second class of the same
    # size does not load them again (the bundled seven are ~30 MiB on disk; per session they would add
    # that for every student)
    assert after_second - after_first < 48, (after_first, after_second)
    assert len(results) == 2 * PER_LESSON * len(LESSONS)
    for r in results:
        assert r["opened"].exceptions == [], (r["slug"], r["opened"].exceptions)
        assert r["opened"].messages > 10, r["slug"]  # the page drew itself
        if r["stepped"] is not None:
            assert r["stepped"].exceptions == [], (r["slug"], r["label"], r["stepped"].exceptions)
    stepped = [r for r in results if r["stepped"] is not None]
    assert stepped, "no lesson has a number input to change"
    # each session kept its own state: the seed a session stepped is the one its own URL now carries
    seeds = [r for r in stepped if r["label"].startswith("Seed")]
    assert seeds
    for r in seeds:
        assert f"seed={int(r['value']) + 1}" in (r["stepped"].query or ""), (r["slug"], r["stepped"].query)


def test_browser_tabs_open_lessons_at_once_on_a_fresh_server():
    slugs = [lesson.slug for lesson in LESSONS][:4]
    with streamlit_server() as (base, _), browser() as (context, watcher):
        pages = [watcher.watch(context.new_page()) for _ in slugs]
        for page, slug in zip(pages, slugs):  # start every navigation before waiting for any
            page.goto(f"{base}/{slug}", wait_until="commit")
        for page in pages:
            wait_for_app(page)
        for page, slug in zip(pages, slugs):
            assert exception_boxes(page) == [], slug
            assert page.url.split("?")[0].endswith("/" + slug)
        assert watcher.console_errors == [] and watcher.page_errors == [] and watcher.blocked == []
