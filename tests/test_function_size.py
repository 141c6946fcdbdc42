"""No function in app/, pages/ or scripts/ is longer than 100 lines (from its ``def`` to its last line, nested
functions included in the one that holds them): a longer one is a sequence of steps that wants names. Each offender is
named as file:line:name:length, so the message says what to split."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("app", "pages", "scripts")
LIMIT = 100


def long_functions(root: Path = ROOT, limit: int = LIMIT) -> list[str]:
    found = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = node.end_lineno - node.lineno + 1
                    if length > limit:
                        found.append(f"{path.relative_to(root)}:{node.lineno}:{node.name}:{length}")
    return found


def test_no_function_is_longer_than_100_lines():
    offenders = long_functions()
    assert not offenders, f"functions over {LIMIT} lines (split them into named steps):\n" + "\n".join(offenders)


def test_the_count_sees_a_long_function(tmp_path):
    """The walk finds a function over the limit, nested ones too, and names it by file, line and length."""
    (tmp_path / "app").mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "app" / "long.py").write_text(
        f"def short():\n    return 1\n\n\ndef outer():\n{body}\n", encoding="utf-8"
    )
    nested = "\n".join(f"        y{i} = {i}" for i in range(LIMIT))
    (tmp_path / "app" / "nested.py").write_text(f"class K:\n    def method(self):\n{nested}\n", encoding="utf-8")
    assert long_functions(tmp_path) == ["app/long.py:5:outer:101", "app/nested.py:2:method:101"]
