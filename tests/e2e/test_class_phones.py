"""Ask the class, the phones' side, in Debian's chromium: three phone contexts (390 px, touch; one on a throttled
3G profile) open the light page of one room on the real app (``python -m app.serve`` with a real redis-server, so
this test can be the presenter through :class:`RedisRooms`, holding the secret), and answer a choice, a free word
and a multi-token question; a re-answer replaces; the question closes and the reveal arrives. Labels, the prompt
and the reveal carry injection strings: they show as text and run nothing. The bytes each phone downloads to join
and answer are counted (goal: ≤ 300 KB)."""

from __future__ import annotations

import pytest

from app.classroom import rooms as R
from app.classroom.question import Question
from tests.classroom_redis import redis_server
from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_server

pytestmark = pytest.mark.e2e

EVIL = "<img src=x onerror=window.__pwned=1>"
CHOICE = Question("masking", f"Which word goes in [MASK]? {EVIL}", "choice", ("ball", "toy", EVIL), answer=("ball",))
WORD = Question("masking", "Type the word that goes in [MASK]", "word", answer=("ball",))
MULTI = Question("xlnet", "Which tokens may position 3 see?", "multi", ("the", "cat", "sat", "down"))
FAST_3G = {"offline": False, "latency": 563, "downloadThroughput": 1.6e6 / 8 * 0.9, "uploadThroughput": 7.5e5 / 8 * 0.9}
SLOW_3G = {"offline": False, "latency": 2000, "downloadThroughput": 4e5 / 8 * 0.8, "uploadThroughput": 4e5 / 8 * 0.8}


class Phone:
    def __init__(self, browser, url: str, network: dict | None):
        self.context = browser.new_context(
            viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=2
        )
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.bytes = 0
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("dialog", lambda d: (self.errors.append(f"dialog {d.message}"), d.dismiss()))
        cdp = self.context.new_cdp_session(self.page)
        cdp.send("Network.enable")
        if network:
            cdp.send("Network.emulateNetworkConditions", network)
        cdp.on("Network.loadingFinished", lambda e: setattr(self, "bytes", self.bytes + e["encodedDataLength"]))
        cdp.on("Network.webSocketFrameReceived", lambda e: self.errors.append("a websocket on the light page"))
        self.page.goto(url)

    def text(self, selector: str) -> str:
        return self.page.locator(selector).inner_text()

    def wait_text(self, selector: str, part: str, timeout: float = 30_000) -> None:
        self.page.wait_for_function(
            "([s, p]) => (document.querySelector(s) || {}).textContent.includes(p)",
            arg=[selector, part],
            timeout=timeout,
            polling=200,
        )

    def tap(self, label: str) -> None:
        self.page.locator("#answers button", has_text=label).first.tap()

    def safe(self) -> None:
        assert self.page.evaluate("window.__pwned") is None
        assert self.page.locator("img").count() == 0 and self.page.locator("script").count() == 1
        assert self.page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scrolling
        assert self.errors == []


def test_three_phones_answer_change_and_see_the_reveal():
    from playwright.sync_api import sync_playwright

    with redis_server() as url, streamlit_server(env={"BVE_REDIS_URL": url, "BVE_WARM_START": "0"}) as (base, _):
        presenter = R.RedisRooms(url)
        code, secret = presenter.create()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            try:
                phones = [Phone(browser, f"{base}/class/{code}", net) for net in (None, FAST_3G, SLOW_3G)]
                for ph in phones:
                    ph.wait_text("#msg", "Waiting for the next question")
                    assert ph.text("#room") == f"ROOM {code}"
                joined = [ph.bytes for ph in phones]

                assert presenter.ask(code, secret, CHOICE.to_dict())
                for ph in phones:
                    ph.wait_text("#prompt", "[MASK]")
                    assert ph.text("#prompt").endswith(EVIL)  # the injection string, as text
                    buttons = ph.page.locator("#answers button")
                    assert buttons.all_inner_texts() == list(CHOICE.choices)
                    assert min(b["height"] for b in (buttons.nth(i).bounding_box() for i in range(3))) >= 48
                phones[0].tap("ball")
                phones[1].tap(EVIL)
                phones[2].tap("toy")
                for ph in phones:
                    ph.wait_text("#msg", "Your answer")
                phones[2].tap("ball")  # a change of mind replaces the first answer
                phones[2].wait_text("#msg", "Your answer: ball")
                assert presenter.tally(code, secret) == {"ball": 2, EVIL: 1}
                assert presenter.view(code)["count"] == 3
                answered = [ph.bytes for ph in phones]

                assert presenter.close(code, secret)
                for ph in phones:
                    ph.wait_text("#msg", "Closed")
                    assert ph.page.locator("#answers button").count() == 0
                payload = {
                    "rows": [
                        {"label": "ball", "count": 2, "share": 2 / 3, "model": 0.44, "answer": True},
                        {"label": EVIL, "count": 1, "share": 1 / 3, "model": 0.01},
                    ],
                    "sentence": f"67% of you chose ball; the model put 44% on ball. {EVIL}",
                }
                assert presenter.reveal(code, secret, payload)
                for ph in phones:
                    ph.wait_text("#reveal", "67% of you chose ball")
                    assert ph.text("#sentence") == payload["sentence"]
                    assert EVIL in ph.text("#reveal") and "model 44%" in ph.text("#reveal")

                assert presenter.ask(code, secret, WORD.to_dict())
                phones[0].wait_text("#prompt", "Type the word")
                phones[0].page.fill("#word", "  BALL ")
                phones[0].page.locator("#answers button.send").tap()
                phones[0].wait_text("#msg", "Your answer: ball")
                assert presenter.tally(code, secret) == {"ball": 1}

                assert presenter.ask(code, secret, MULTI.to_dict())
                phones[1].wait_text("#prompt", "Which tokens")
                phones[1].tap("sat")
                phones[1].tap("the")
                phones[1].page.locator("#answers button.send").tap()
                phones[1].wait_text("#msg", "Your answer")
                assert presenter.tally(code, secret) == {"the|sat": 1}

                assert presenter.clear(code, secret)
                for ph in phones:
                    ph.wait_text("#msg", "Waiting for the next question")
                    ph.safe()
                print(f"\nbytes per phone: joined {joined}, answered {answered}")
                for j, a in zip(joined, answered):
                    assert j <= 20_000 and a <= 300_000
            finally:
                browser.close()


def test_a_link_to_another_room_or_none_shows_no_question():
    from playwright.sync_api import sync_playwright

    with streamlit_server(env={"BVE_WARM_START": "0"}) as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
            assert page.goto(f"{base}/class/ZZZZZZ").status == 404
            page.goto(f"{base}/class")
            page.fill("#code", "zz zzzz")
            page.locator("#join button").click()
            page.wait_for_url(f"{base}/class/ZZZZZZ")
        finally:
            browser.close()
