"""The three layers stay visible: app/ is a pure library (only app/ui.py imports streamlit), pages are
thin, and the home page does not pay for importing torch."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_app_never_imports_streamlit_except_ui():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "app").rglob("*.py")
                 if p.name != "ui.py" and "streamlit" in imported_modules(p)]
    assert offenders == []


def test_entry_file_only_routes():
    source = (ROOT / "streamlit_app.py").read_text()
    tree = ast.parse(source)
    assert "st.navigation" in source
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def test_every_lesson_page_exists_and_is_registered():
    from app.lessons import LESSONS

    registered = {lesson.path for lesson in LESSONS}
    for lesson in LESSONS:
        assert (ROOT / lesson.path).exists(), lesson.path
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")} - {"pages/home.py"}
    assert on_disk == registered, "every page in pages/ is routed, and nothing routed is missing"


def test_home_page_imports_do_not_pull_torch():
    code = ("import sys; import app.ui, app.lessons, app.state, app.models.catalogue, app.models.device; "
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_every_lesson_url_is_its_file_name():
    """Streamlit's legacy pages-folder mode serves the first request of a fresh server. It knows pages by
    file name only: a deep link whose path is the file name runs that file, which reroutes through the
    router; any other path shows a "Page not found" dialog first."""
    from app.lessons import LESSONS

    assert all(lesson.slug == Path(lesson.path).stem for lesson in LESSONS)
