"""A lecture laptop whose GPU is shared with a browser and a video call: the lesson's forward runs out of GPU
memory. The page runs on the CPU instead, says so once (which model, why, how to get the GPU back), and stays
there on the next rerun — never a traceback. A GPU host is simulated: the settings resolve to CUDA, the models
report CUDA, and the lesson raises what torch raises when the card is full while any model is on it."""

from __future__ import annotations

import dataclasses

import torch

from app.lessons import xlnet
from app.ui import loading as ui_loading
from app.ui import model_settings as ui_settings


def test_out_of_memory_in_a_lesson_runs_it_on_the_cpu_and_says_so_once(app_page, monkeypatch):
    shared, asked = ui_loading.shared_model, []

    def shared_model(key, source, device, dtype, progress=None):  # what a GPU host would hand the page
        asked.append(device)
        loaded = shared(key, source, "cpu", "float32", progress)
        return dataclasses.replace(loaded, device="cuda") if device == "cuda" else loaded

    run = xlnet.run

    def full_gpu(models, inputs, cache):
        if any(m.device == "cuda" for m in models.values()):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 7.79 GiB total)")
        return run(models, inputs, cache)

    monkeypatch.setattr(ui_loading, "shared_model", shared_model)
    monkeypatch.setattr(ui_settings, "_resolved", lambda source, device, dtype: (source, "cuda", "float16"))
    monkeypatch.setattr(xlnet, "run", full_gpu)
    at = app_page("pages/xlnet.py")
    assert not at.exception
    warnings = [w.value for w in at.warning if "ran out of memory" in w.value]
    assert len(warnings) == 1 and "XLNet" in warnings[0] and "CPU in float32" in warnings[0]
    assert "Tried to allocate 64.00 MiB" in warnings[0] and "sidebar" in warnings[0]
    assert at.get("plotly_chart")  # the lesson's figures are there
    badge = " ".join(m.value for m in at.sidebar.markdown)
    assert "CPU" in badge and "float32" in badge
    asked.clear()
    at.run()  # the next rerun stays on the CPU: no second notice, no second try on the full card
    assert not at.exception and not [w for w in at.warning if "ran out of memory" in w.value]
    assert asked and set(asked) == {"cpu"}
