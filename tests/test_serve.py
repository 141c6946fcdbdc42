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


def test_the_first_pages_imports_are_done_early_and_hold_neither_torch_nor_pandas():
    """warm_first_page imports, while the browser loads the app, every app module the router imports (so the first
    visitor's run finds them imported) and nothing heavy: the home page's path stays free of torch and pandas."""
    import ast
    import json
    import importlib.util
    import subprocess
    import sys

    def module_of(package: str, name: str) -> str:  # `from package import name`: a submodule, or a name in package
        try:
            return f"{package}.{name}" if importlib.util.find_spec(f"{package}.{name}") else package
        except ModuleNotFoundError:
            return package

    router = ast.parse((ROOT / "streamlit_app.py").read_text(encoding="utf-8"))
    router_modules = {module_of(node.module, a.name) for node in ast.walk(router)
                      if isinstance(node, ast.ImportFrom) and node.module.split(".")[0] == "app" for a in node.names}
    assert {"app.ui", "app.lessons", "app.core.prefetch"} <= router_modules
    probe = ("import json, sys\nfrom app import serve\n"
             "from app.core import prefetch, preload, visitors\n"  # what serve._preload imported before it
             "serve.warm_first_page()\n"
             "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert router_modules <= loaded, router_modules - loaded
    assert set(serve.FIRST_PAGE_MODULES) <= loaded
    assert not {"torch", "transformers", "pandas"} & loaded  # (Streamlit itself imports plotly's top package)


def test_streamlits_repl_check_is_skipped(monkeypatch):
    from streamlit import delta_generator

    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", False)  # restored afterwards
    assert serve.skip_use_warning() is True
    assert delta_generator._use_warning_has_been_displayed is True
    monkeypatch.delattr(delta_generator, "_use_warning_has_been_displayed")
    assert serve.skip_use_warning() is False  # a Streamlit without the flag is left as it is
