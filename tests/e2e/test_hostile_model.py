"""Brought models crafted to hurt a public server (issue 47), in a real browser against the app started as the README
does, with a loopback hub and ``BVE_MODEL_LIMIT=500MB``: a DeBERTa whose config adds ``conv_kernel_size=400001``
(1.6 B parameters over 1.3 MB of files) and a BERT whose tokenizer panics the tokenizers library. Each page ends
with one sentence and the catalogue's model — no exception box, no page that never finishes — and the server's
health check answers meanwhile."""

from __future__ import annotations

import threading
import time
import urllib.request

import pytest

from tests.e2e.browser import browser, exception_boxes, streamlit_server, wait_for_app
from tests.hubserver import HubServer
from tests.models.test_hardening import crafted  # noqa: F401  (the fixture: the crafted loopback repos)

pytestmark = pytest.mark.e2e


def _health(base: str, stop: threading.Event, seen: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        try:
            urllib.request.urlopen(f"{base}/_stcore/health", timeout=30).read()
            seen.append(time.perf_counter() - started)
        except OSError:
            seen.append(float("inf"))
        stop.wait(0.2)


@pytest.mark.parametrize(
    "hub_id, says",
    [
        ("evil/deberta-conv", "built from its config.json it has"),
        ("evil/panic-tokenizer", "failed in a separate process (PanicException"),
    ],
)
def test_a_crafted_model_ends_in_one_sentence_and_the_catalogue(crafted, tmp_path, hub_id, says):  # noqa: F811
    with HubServer(crafted) as hub:
        env = {
            "HF_HUB_OFFLINE": "0",
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(tmp_path / "hf"),
            "BVE_MODEL_LIMIT": "500MB",
            "BVE_WARM_START": "0",
        }
        with streamlit_server(env) as (base, _), browser() as (context, watcher):
            stop, seen = threading.Event(), []
            probe = threading.Thread(target=_health, args=(base, stop, seen), daemon=True)
            probe.start()
            page = watcher.watch(context.new_page())
            page.goto(f"{base}/masking?model={hub_id}")
            page.wait_for_function(f"() => document.body.innerText.includes({says!r})", timeout=180_000, polling=250)
            wait_for_app(page)
            stop.set()
            probe.join(35)
            assert exception_boxes(page) == []
            text = page.inner_text("body")
            assert "This page runs on the catalogue's model." in text
            assert "Masking lab" in page.inner_text("h1")
            assert seen and all(s != float("inf") for s in seen), seen
            print(f"{hub_id}: {len(seen)} health checks during the page, slowest {max(seen) * 1000:.0f} ms")
