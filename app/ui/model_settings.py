"""The sidebar's model settings, resolved: (source, device, dtype) for this run's page. The one place the app turns
a device choice into a device (``app.models.device.resolve``), once per run: every later ask in the run (the models,
a brought model, the badge, the sidebar) gets the same answer, and the loaders below take it as it is
(``app.models.loading.load`` resolves nothing). Below both ``app.ui.loading`` (the catalogue's models) and
``app.ui.own`` (a brought model), which each ask it, so neither imports the other for it."""

from __future__ import annotations

import streamlit as st

from app.models import device as devices
from app.ui import url

CPU_PAGES = "_cpu_after_oom"  # session state: {page: (device, dtype) under which it ran out of GPU memory}
RESOLVED = "_settings_resolved"  # session state: (the sidebar's choice, resolved) for this run (forget: a new run)


def _resolved(source: str, device: str, dtype: str) -> tuple[str, str, str]:
    device, dtype, _ = devices.resolve(device, dtype)
    return source, device, dtype


def forget() -> None:
    """A new run (the router's ``start_page``): the next :func:`settings` resolves the choice again."""
    st.session_state.pop(RESOLVED, None)


def _this_run(source: str, device: str, dtype: str) -> tuple[str, str, str]:
    """The choice resolved, once per run: kept for the run under the choice it was made from."""
    chosen = (source, device, dtype)
    kept = st.session_state.get(RESOLVED)
    if kept is None or kept[0] != chosen:
        kept = (chosen, _resolved(*chosen))
        st.session_state[RESOLVED] = kept
    return kept[1]


def settings() -> tuple[str, str, str]:
    """(source, device, dtype) chosen in the sidebar, resolved: "auto" is CUDA only when torch says it is
    available, and CPU runs in float32. A page that ran out of GPU memory under these settings runs on the
    CPU in float32 for the rest of the session (``app.ui.loading.reload_on_cpu``); other settings try the GPU
    again."""
    source, device, dtype = _this_run(url.setting("source"), url.setting("device"), url.setting("dtype"))
    if st.session_state.get(CPU_PAGES, {}).get(url.page()) == (device, dtype):
        return source, "cpu", "float32"
    return source, device, dtype


def default_settings() -> tuple[str, str, str]:
    """What :func:`settings` gives a visitor who changed nothing (``url.GLOBAL_SPEC``'s defaults, resolved)."""
    g = url.GLOBAL_SPEC
    return _resolved(g.source.default, g.device.default, g.dtype.default)
