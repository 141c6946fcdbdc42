"""``python -m app.lessons new <slug>`` (app/lessons/__main__.py): the scaffold refuses what would break the house
and writes a lesson that passes its own tests and the per-lesson ones (slow: in a copy of the tree)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.lessons.__main__ import FILES, Refused, main, plan

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "slug, said",
    [
        ("Token-counts", "is not a slug"),
        ("1st", "is not a slug"),
        ("masking", "'masking' is taken: app/lessons/masking.py, app/figures/masking.py, pages/masking.py"),
    ],
)
def test_a_bad_or_taken_slug_is_refused_naming_why(slug, said):
    with pytest.raises(Refused, match=said.replace(".", r"\.")):
        plan(slug, "Token counts", 95)


def test_nothing_is_written_when_refused(tmp_path, capsys):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "token_counts.py").write_text("# someone's page\n")
    assert main(["new", "token_counts"], root=tmp_path) == 2
    assert "Nothing written: 'token_counts' is taken: pages/token_counts.py exists already." in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["token_counts.py"]


def test_the_four_files_are_python_with_the_lessons_literals(tmp_path):
    files = plan("token_counts", 'Token "counts"', 15, root=tmp_path)
    assert sorted(str(p.relative_to(tmp_path)) for p in files) == sorted(
        n.format(slug="token_counts") for n in FILES.values()
    )
    for path, text in files.items():
        compile(text, str(path), "exec")  # a title with quotes stays one literal
    lesson = files[tmp_path / "app/lessons/token_counts.py"]
    assert "\nORDER = 15  #" in lesson and "TITLE = 'Token \"counts\"'\n" in lesson
    assert "from app.lessons import token_counts as lesson" in files[tmp_path / "pages/token_counts.py"]


@pytest.mark.slow
def test_a_scaffolded_lesson_passes_its_tests_and_the_per_lesson_ones(tmp_path):
    """The README's promise: a newcomer's new lesson is green from the start. In a copy of the tree (the
    checkpoints linked, not copied), so the real one never holds a half-made lesson."""
    for name in ("app", "pages", "tests", "streamlit_app.py", "pyproject.toml", "pytest.ini", ".streamlit"):
        src = ROOT / name
        copy = shutil.copytree if src.is_dir() else shutil.copy2
        copy(src, tmp_path / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if src.is_dir() else {}))
    (tmp_path / "assets").symlink_to(ROOT / "assets")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    made = subprocess.run(
        [sys.executable, "-m", "app.lessons", "new", "token_counts", "--title", "Token counts"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "pages/token_counts.py").exists() and not (ROOT / "pages/token_counts.py").exists()
    tests = ["tests/test_token_counts.py", "tests/test_layering.py", "tests/test_figure_injection.py", "tests/pages"]
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "token_counts or one_shape or registered or no_cycle",
            *tests,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert " passed" in ran.stdout and " failed" not in ran.stdout
