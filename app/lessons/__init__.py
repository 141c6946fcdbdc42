"""The lessons, found by convention: what the router, the home page's map and lecture mode list. Pure data.

A lesson is three files with one slug: ``pages/<slug>.py`` (its widgets; the file name is its URL),
``app/lessons/<slug>.py`` (its library: SPEC, Inputs, run, TAKEAWAY) and ``app/figures/<slug>.py``
(its figures; ``key_figure(result)``, where there is one, is what the stage and the handout show).
Each lesson library states, as plain literals after its imports,

    ORDER = 50                          # its place in teaching order
    TITLE = "ELECTRA: spot the fake"    # in the navigation and on the home page
    ICON = ":material/policy:"
    LINE = "A generator swaps words..." # what a student sees there, in one line

They are read from the source without importing it, so the router and the home page stay free of torch.
Add a lesson only when its page works (no placeholders). Lecture mode's page is a tool, not a lesson:
it serves the lessons and has no library.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("ORDER", "TITLE", "ICON", "LINE")


@dataclass(frozen=True)
class Lesson:
    slug: str  # its URL path and the name of its three files
    title: str
    icon: str
    line: str  # what a student sees there, in one line
    order: int = 0
    has_key_figure: bool = False  # app/figures/<slug>.py defines key_figure(result)

    @property
    def path(self) -> str:  # relative to the repository root (see ui.routed_by_navigation for why)
        return f"pages/{self.slug}.py"

    @property
    def library(self) -> str:
        return f"app.lessons.{self.slug}"

    @property
    def figure(self) -> str:
        """"module:function" building its key figure from run's Result ("" when it has none)."""
        return f"app.figures.{self.slug}:key_figure" if self.has_key_figure else ""


@dataclass(frozen=True)
class Tool:
    """A page that is not a lesson (no library of its own): listed after the lessons."""

    path: str
    slug: str
    title: str
    icon: str
    line: str
    hidden: bool = False  # not in the navigation: reached by its link only (the presenter console)


_FIRST_DEFINITION = re.compile(r"^(def|class|async def|@)", re.M)


def _literals(path: Path) -> dict:
    """The module-level ``NAME = <literal>`` assignments of a source file, by name: those before its first
    function or class (where a lesson states them; parsing only that part keeps the router's first run short),
    or, when the fields are not all there, the whole file's."""
    source = path.read_text(encoding="utf-8")
    cut = _FIRST_DEFINITION.search(source)
    if cut:
        try:
            head = _assignments(ast.parse(source[:cut.start()]))
        except SyntaxError:  # a definition cut mid-statement: read the whole file
            head = {}
        if all(f in head for f in FIELDS):
            return head
    return _assignments(ast.parse(source))


def _assignments(tree: ast.Module) -> dict:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return found


def _defines(path: Path, name: str) -> bool:
    """Whether a source file defines the function ``name`` at module level (a ``def`` at the line's start)."""
    return path.exists() and re.search(rf"^def {re.escape(name)}\(", path.read_text(encoding="utf-8"), re.M) is not None


@lru_cache(maxsize=1)
def find_lessons(root: Path = ROOT) -> tuple[Lesson, ...]:
    """Every ``app/lessons/<slug>.py`` that states ORDER, TITLE, ICON and LINE, in teaching order."""
    lessons = []
    for library in sorted((root / "app" / "lessons").glob("*.py")):
        if library.name.startswith("_"):
            continue
        meta = _literals(library)
        missing = [f for f in FIELDS if f not in meta]
        if missing:
            raise ValueError(f"{library.relative_to(root)} is a lesson library without {', '.join(missing)}")
        slug = library.stem
        lessons.append(Lesson(slug, meta["TITLE"], meta["ICON"], meta["LINE"], meta["ORDER"],
                              _defines(root / "app" / "figures" / f"{slug}.py", "key_figure")))
    return tuple(sorted(lessons, key=lambda lesson: (lesson.order, lesson.slug)))


LESSONS: tuple[Lesson, ...] = find_lessons()

TOOLS: tuple[Tool, ...] = (
    Tool('pages/lecture.py', 'lecture', 'Lecture mode', ':material/slideshow:',
         'A deck of prepared views to present one per screen, a QR code for the class, and a handout.'),
    Tool('pages/console.py', 'console', 'Presenter console', ':material/co_present:',
         "The lecturer's own screen beside the projector: the note, the next slide, the time; it drives the deck.",
         hidden=True),
)
