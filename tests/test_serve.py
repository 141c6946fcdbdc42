"""app/serve.py: what it changes in Streamlit's start (the browser tests, tests/e2e/test_startup.py, start it)."""

from __future__ import annotations

from pathlib import Path

from app import serve

ROOT = Path(__file__).resolve().parents[1]


def test_the_v2_component_scan_is_skipped_and_the_app_uses_no_v2_component(monkeypatch):
    from streamlit.components.v2 import manifest_scanner
    from streamlit.components.v2.component_manager import BidiComponentManager

    name = "discover_and_register_components"
    monkeypatch.setattr(BidiComponentManager, name, getattr(BidiComponentManager, name))  # restored afterwards
    scans = []
    monkeypatch.setattr(manifest_scanner, "scan_component_manifests", lambda *a, **k: scans.append(1) or [])
    BidiComponentManager().discover_and_register_components(start_file_watching=False)
    assert scans == [1]  # what Streamlit does unpatched
    assert serve.skip_component_scan() is True
    BidiComponentManager().discover_and_register_components()
    assert scans == [1]
    sources = [p for d in ("app", "pages") for p in (ROOT / d).rglob("*.py")] + [ROOT / "streamlit_app.py"]
    uses = [p for p in sources if p.name != "serve.py" and ("components.v2" in p.read_text()
                                                            or "st.components" in p.read_text())]
    assert uses == []
