"""The sidebar's model settings, resolved: (source, device, dtype) for this run's page. The one place the app turns
a device choice into a device. Below both ``app.ui.loading`` (the catalogue's models) and ``app.ui.own`` (a brought
model), which each ask it, so neither imports the other for it."""

from __future__ import annotations

import streamlit as st

from app.models import device as devices
from app.ui import url

CPU_PAGES = "_cpu_after_oom"  # session state: {page: (device, dtype) under which it ran out of GPU memory}


def _resolved(source: str, device: str, dtype: str) -> tuple[str, str, str]:
    device, dtype, _ = devices.resolve(device, dtype)
    return source, device, dtype


def settings() -> tuple[str, str, str]:
    """(source, device, dtype) chosen in the sidebar, resolved: "auto" is CUDA only when torch says it is
    available, and CPU runs in float32. A page that ran out of GPU memory under these settings runs on the
    CPU in float32 for the rest of the session (``app.ui.loading.reload_on_cpu``); other settings try the GPU
    again."""
    source, device, dtype = _resolved(url.setting("source"), url.setting("device"), url.setting("dtype"))
    if st.session_state.get(CPU_PAGES, {}).get(url.page()) == (device, dtype):
        return source, "cpu", "float32"
    return source, device, dtype


def default_settings() -> tuple[str, str, str]:
    """What :func:`settings` gives a visitor who changed nothing (``url.GLOBAL_SPEC``'s defaults, resolved)."""
    g = url.GLOBAL_SPEC
    return _resolved(g.source.default, g.device.default, g.dtype.default)
