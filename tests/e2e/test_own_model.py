"""Your own model in a real browser (issue 28): a download that stalls on the loopback hub shows its progress bar
and a Cancel button in one tab, while another tab of the same server opens a lesson and draws it in full; Cancel
then ends the download with its sentence, and the page runs on the catalogue's model. A third tab asking for another
model meanwhile waits in line (one download per server), told what runs, and its download starts once Cancel ends
the first."""

from __future__ import annotations

import time

import pytest

from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app
from tests.hubserver import HubServer
from tests.models.conftest import own_repos  # noqa: F401  (the fixture: the loopback repos, built once)

pytestmark = pytest.mark.e2e
STALL = "evil/stall"
OTHER = "google-bert/bert-base-multilingual-cased"


def test_a_stalled_download_leaves_other_tabs_responsive_and_cancel_stops_it(own_repos, tmp_path):  # noqa: F811
    with HubServer(own_repos) as hub:
        hub.trickle = 0.05  # the weights arrive a byte every 50 ms: a download that never ends in this test
        hub.trickle_paths = f"/{STALL}/resolve/{own_repos[STALL].commit}/model.safetensors"
        env = {
            "HF_HUB_OFFLINE": "0",
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(tmp_path / "hf"),
            "BVE_MODEL_LIMIT": "2GB",
            "BVE_WARM_START": "0",
        }
        with streamlit_server(env) as (base, _), browser() as (context, watcher):
            downloading = watcher.watch(context.new_page())
            downloading.goto(f"{base}/masking?model={STALL}")
            downloading.wait_for_selector('[data-testid="stProgress"]', timeout=120_000)
            bar = downloading.locator('[data-testid="stProgress"]').last
            downloading.wait_for_function(  # the weights' bar, with its size and speed
                """() => [...document.querySelectorAll('[data-testid="stProgress"]')]
                        .some(e => e.innerText.includes('model.safetensors') && e.innerText.includes('/s'))""",
                timeout=60_000,
                polling=200,
            )
            assert "of" in bar.inner_text()

            other = watcher.watch(context.new_page())
            started = time.perf_counter()
            other.goto(f"{base}/attention")
            wait_for_app(other, timeout_ms=120_000)
            responsive_s = time.perf_counter() - started
            assert exception_boxes(other) == []
            assert "Attention in every layer" in other.inner_text("h1")
            assert downloading.locator('[data-testid="stProgress"]').count() > 0  # still downloading meanwhile
            print(f"another tab drew the attention lesson in {responsive_s:.1f} s during the stalled download")

            queued = watcher.watch(context.new_page())
            queued.goto(f"{base}/masking?model={OTHER}")
            line = f"This server downloads one model at a time: {STALL} is downloading"
            queued.wait_for_function(
                f"() => document.body.innerText.includes('{line}') && "
                "document.body.innerText.includes('yours is next')",
                timeout=120_000,
                polling=200,
            )
            assert f"Waiting to download {OTHER}" in queued.inner_text("body")

            downloading.get_by_role("button", name="Cancel").click()
            downloading.wait_for_function(
                """() => document.body.innerText.includes('You cancelled the download of evil/stall')""",
                timeout=60_000,
                polling=200,
            )
            wait_for_app(downloading)
            assert exception_boxes(downloading) == []
            assert "BERT" in downloading.inner_text('[data-testid="stSidebar"]')
            assert downloading.locator('[data-testid="stProgress"]').count() == 0

            queued.wait_for_function(  # its turn came: downloaded, then the lesson ran on it
                f"() => document.body.innerText.includes('Downloaded {OTHER}')", timeout=120_000, polling=200
            )
            wait_for_app(queued, timeout_ms=120_000)
            assert exception_boxes(queued) == []
        assert watcher.console_errors == [] and watcher.page_errors == [] and watcher.blocked == []
