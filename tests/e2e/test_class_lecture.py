"""Ask the class, a whole round in Debian's chromium (issue 50): a projector window (the masking lab in presenter mode)
presses Ask the class; three phone contexts open the join link the stage shows, answer; the projector's live count
reaches 3 with nothing of the answers shown and the model's figure held back; Reveal draws the hall's answers
beside the model's on the projector and on every phone; Next question clears both. Once with ``python -m app.serve``
(the routes patched in before the server starts) and once with plain ``streamlit run`` (as a Space starts it: the
routes attached to the running server when the room opens)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, ROOT, exception_boxes, streamlit_server, wait_for_app
from tests.e2e.test_class_phones import Phone

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("launcher", [True, False], ids=["app.serve", "streamlit-run"])
def test_a_round_of_ask_the_class_from_projector_to_phones_and_back(launcher):
    from playwright.sync_api import sync_playwright

    with streamlit_server(env={"BVE_WARM_START": "0"}, launcher=launcher) as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            projector = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            projector.goto(f"{base}/masking?presenter=1")
            wait_for_app(projector)
            projector.get_by_role("button", name="Ask the class").click()
            projector.wait_for_selector(".st-key-bve-class", timeout=60_000)
            wait_for_app(projector)
            stage = projector.locator(".st-key-bve-class").inner_text()
            code = re.search(r"room (\w{6})", stage)[1]
            link = re.search(r"(http\S+/class/\w{6})", stage)[1]
            assert link.endswith(f"/class/{code}")
            assert "comes back with Next question" in projector.inner_text("body")  # the figure is held

            phones = [Phone(browser, f"{base}/class/{code}", None) for _ in range(3)]
            for ph in phones:
                ph.wait_text("#prompt", "Which word goes in the blank?")
            labels = phones[0].page.locator("#answers button").all_inner_texts()
            for ph, label in zip(phones, (labels[0], labels[0], labels[1])):
                ph.tap(label)
                ph.wait_text("#msg", "Your answer")
            projector.wait_for_function(
                """() => [...document.querySelectorAll('.bve-class-count')].some(e => e.innerText.startsWith('3 '))""",
                timeout=30_000,
                polling=250,
            )
            assert "of you chose" not in projector.inner_text("body")  # nothing of the answers before the reveal

            projector.get_by_role("button", name="Reveal").click()
            projector.wait_for_function("() => document.body.innerText.includes('67% of you chose')", timeout=60_000)
            wait_for_app(projector)
            sentence = next(
                line for line in projector.inner_text(".st-key-bve-class").splitlines() if "67% of you chose" in line
            )
            assert sentence.startswith(f"67% of you chose {labels[0]}; the model put")
            for ph in phones:
                ph.wait_text("#reveal", "67% of you chose")
                assert ph.text("#sentence") == sentence
            assert exception_boxes(projector) == []

            projector.get_by_role("button", name="Next question").first.click()
            wait_for_app(projector)
            for ph in phones:
                ph.wait_text("#msg", "Waiting for the next question")
                ph.safe()
            assert projector.locator(".st-key-bve-class").count() == 0
        finally:
            browser.close()


def _next_slide(projector, n: int) -> None:
    """→ on slide ``n``. A key pressed while the page is still settling can be lost under a loaded CI machine (the
    URL then never leaves slide ``n``): once the page has finished its run and still shows slide ``n``, → again. A
    page that has moved on (to any slide) is left to the caller's check, so a slide is never skipped by a retry."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    slide = "() => new URLSearchParams(location.search).get('slide')"
    for _ in range(4):
        projector.locator(".bve-slide-headline").first.click()  # the arrow keys belong to the deck, not a button
        projector.keyboard.press("ArrowRight")
        try:
            projector.wait_for_function(f"() => ({slide})() !== '{n}'", timeout=30_000)
            return
        except PlaywrightTimeout:
            wait_for_app(projector)
            if projector.evaluate(slide) != str(n):
                return


def _keep_what_was_seen(projector, n: int, step: str, error: BaseException, phones=()) -> None:
    """The quarantined test's evidence, whichever step failed (xfail hides its output): on slide ``n``, during
    ``step``, the error, the projector's address, its text and a screenshot, each phone's text and the server's log,
    kept in ``.e2e-deck-failure/`` (git ignores it) for the next person to read after a fresh-clone run (the CI of
    2026-11-29 xfailed it without this folder: it failed elsewhere than in the wait for the next slide)."""
    import shutil

    def read(page, name: str) -> str:
        try:
            page.screenshot(path=str(out / f"{name}.png"))
            return f"{page.url}\n\n{page.evaluate('document.body.innerText')}"
        except Exception as e:  # noqa: BLE001 — a page that is gone is evidence too
            return f"(the page could not be read: {type(e).__name__})"

    out = ROOT / ".e2e-deck-failure"
    out.mkdir(exist_ok=True)
    seen = [
        f"slide {n}, {step}: {type(error).__name__}: {str(error)[:2000]}",
        "",
        "projector: " + read(projector, "projector"),
    ]
    seen += [f"phone {i}: " + read(ph.page, f"phone{i}") for i, ph in enumerate(phones or ())]
    (out / "seen.txt").write_text("\n\n".join(seen) + "\n")
    if (ROOT / ".e2e-server.log").exists():
        shutil.copy(ROOT / ".e2e-server.log", out / "server.log")


@pytest.mark.xfail(
    reason="quarantined: in the full suite of a fresh clone on the 2-core dev machine it failed both times on "
    "2026-11-28 (the projector did not show the next slide within 120 s of →) and once in the sixteenth session; "
    "on 2026-11-29 it failed in the fresh-clone CI and twice alone on an idle machine, each time elsewhere: masking's "
    "slide (a fresh server's first page, routed, so drawn twice) was checked for its Ask button before its stage was "
    "drawn, so masking was never asked. The test now waits for the button on a slide whose lesson makes questions, "
    "and passed alone idle and beside training; lift the quarantine once it has passed in fresh-clone CI runs. A "
    "failure keeps what the projector and the phones showed, and the step, in .e2e-deck-failure/",
    strict=False,
)
def test_the_default_deck_with_the_class_answering_every_slide_that_asks():
    """The issue's lecture: the default deck presented slide by slide with the arrow keys; on every slide whose
    lesson makes a question the class of three phones answers before the reveal; the next slide clears it."""
    import contextlib
    from urllib.parse import urlparse

    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    from app.lecture.deck import default_deck
    from app.lessons import _defines

    deck = default_deck()
    asked = []
    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            projector = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            projector.goto(deck[0].link(base, presenter="1", slide="1"))
            phones, n, step = None, 1, "opening slide 1"
            try:
                for n, view in enumerate(deck, 1):
                    step = "waiting for the slide"
                    # a cold slide (no warm start here) on a loaded CI machine can take tens of seconds: generous
                    # waits, no timing asserted (BENCHMARKS.md measures the slide changes)
                    projector.wait_for_function(
                        f"() => new URLSearchParams(location.search).get('slide') === '{n}'", timeout=120_000
                    )
                    wait_for_app(projector)
                    assert urlparse(projector.url).path.endswith(f"/{view.page}")
                    ask = projector.get_by_role("button", name="Ask the class")
                    if _defines(ROOT / "app" / "lessons" / f"{view.page}.py", "question"):
                        # the first slide of a fresh server is routed, so drawn twice: the page can be idle before
                        # its stage (and this button) is drawn (2026-11-29, alone on an idle machine: masking was
                        # never asked, every time)
                        with contextlib.suppress(PlaywrightTimeout):
                            ask.first.wait_for(timeout=30_000)
                    if ask.count():
                        step = "asking the class"
                        ask.click()
                        projector.wait_for_selector(".st-key-bve-class", timeout=60_000)
                        wait_for_app(projector)
                        code = re.search(r"room (\w{6})", projector.locator(".st-key-bve-class").inner_text())[1]
                        if phones is None:  # the class joins once: the room stays for the lecture
                            phones = [Phone(browser, f"{base}/class/{code}", None) for _ in range(3)]
                        step = "the phones answering"
                        for i, ph in enumerate(phones):
                            ph.page.wait_for_selector("#answers button", timeout=30_000)
                            buttons = ph.page.locator("#answers button:not(.send)")
                            buttons.nth(i % buttons.count()).tap()
                            if ph.page.locator("#answers button.send").count():
                                ph.page.locator("#answers button.send").tap()
                            ph.wait_text("#msg", "Your answer", timeout=60_000)
                        step = "the projector's count reaching 3"
                        projector.wait_for_function(
                            "() => [...document.querySelectorAll('.bve-class-count')]"
                            ".some(e => e.innerText.startsWith('3 '))",
                            timeout=60_000,
                        )
                        step = "the reveal"
                        projector.get_by_role("button", name="Reveal").click()
                        projector.wait_for_function("() => document.body.innerText.includes('of you ')", timeout=60_000)
                        for ph in phones:
                            ph.wait_text("#reveal", "of you", timeout=60_000)
                        asked.append(view.page)
                        assert exception_boxes(projector) == [], (n, view.page)
                    if n < len(deck):
                        step = "pressing → to the next slide"
                        _next_slide(projector, n)
                        if phones is not None:
                            step = "the phones waiting for the next question"
                            for ph in phones:
                                ph.wait_text("#msg", "Waiting for the next question", timeout=120_000)
            except BaseException as e:
                _keep_what_was_seen(projector, n, step, e, phones)
                raise
            for ph in phones or ():
                ph.safe()
        finally:
            browser.close()
    assert {"masking", "albert_params", "distillation", "electra", "xlnet"} <= set(asked), asked
    print(f"\nthe class answered on {len(asked)} of {len(deck)} slides: {asked}")
