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
import inspect
import re
from dataclasses import MISSING, dataclass, fields, is_dataclass
from functools import lru_cache
from pathlib import Path

from app.core.state import FIGURE, Spec

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
        """ "module:function" building its key figure from run's Result ("" when it has none)."""
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
            head = _assignments(ast.parse(source[: cut.start()]))
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
        lessons.append(
            Lesson(
                slug,
                meta["TITLE"],
                meta["ICON"],
                meta["LINE"],
                meta["ORDER"],
                _defines(root / "app" / "figures" / f"{slug}.py", "key_figure"),
            )
        )
    return tuple(sorted(lessons, key=lambda lesson: (lesson.order, lesson.slug)))


LESSONS: tuple[Lesson, ...] = find_lessons()

TOOLS: tuple[Tool, ...] = (
    Tool(
        'pages/lecture.py',
        'lecture',
        'Lecture mode',
        ':material/slideshow:',
        'A deck of prepared views to present one per screen, a QR code for the class, and a handout.',
    ),
    Tool(
        'pages/console.py',
        'console',
        'Presenter console',
        ':material/co_present:',
        "The lecturer's own screen beside the projector: the note, the next slide, the time; it drives the deck.",
        hidden=True,
    ),
)


_CONTRACT_TYPES = {"ORDER": int, "TITLE": str, "ICON": str, "LINE": str, "TAKEAWAY": str}


def contract_problems(module) -> list[str]:
    """What keeps ``module`` from being a lesson library (:class:`LessonModule`), each problem in one sentence
    naming the module and the name at fault; ``[]`` when it is one."""
    name = getattr(module, "__name__", repr(module))
    chosen = isinstance(getattr(module, "SPEC", None), Spec) and any(p.name == "variant" for p in module.SPEC)
    needed = [a for a in (*_CONTRACT_TYPES, "SPEC", "MODELS", "Inputs", "Result", "run") if a != "MODELS" or not chosen]
    missing = [a for a in needed if not hasattr(module, a)]
    if missing:
        return [f"{name} does not state {', '.join(missing)} (app.core.lesson.LessonModule lists what a lesson states)"]
    problems = [
        f"{name}.{a} is a {type(getattr(module, a)).__name__}, not a {t.__name__}"
        for a, t in _CONTRACT_TYPES.items()
        if not isinstance(getattr(module, a), t)
    ]
    if not isinstance(module.SPEC, Spec):
        problems.append(f"{name}.SPEC is not an app.core.state.Spec: state each URL parameter once, with Param")
    if hasattr(module, "MODELS") and not (
        isinstance(module.MODELS, tuple) and all(isinstance(k, str) for k in module.MODELS)
    ):
        problems.append(f"{name}.MODELS is not a tuple of catalogue keys")
    for cls in ("Inputs", "Result"):
        kind = getattr(module, cls)
        if not (is_dataclass(kind) and kind.__dataclass_params__.frozen):
            problems.append(f"{name}.{cls} is not a frozen dataclass (@dataclass(frozen=True)): a page's cache keys it")
    if not callable(getattr(module.Inputs, "from_values", None)):
        problems.append(f"{name}.Inputs has no from_values: make it from the SPEC, `@inputs_from(SPEC) class Inputs`")
    elif isinstance(module.SPEC, Spec) and is_dataclass(module.Inputs):
        names = {p.name for p in module.SPEC}
        have = {f.name for f in fields(module.Inputs)}
        problems += [
            f"{name}.SPEC's {p.name!r} is no field of {name}.Inputs: make Inputs from the SPEC "
            "(`@inputs_from(SPEC) class Inputs`, app.core.lesson), one declaration of each parameter"
            for p in module.SPEC
            if p.name not in have and p.name != FIGURE
        ]
        problems += [
            f"{name}.Inputs.{f.name} is in no SPEC parameter and has no default: from_values cannot fill it"
            for f in fields(module.Inputs)
            if f.init and f.name not in names and f.default is MISSING and f.default_factory is MISSING
        ]
    try:
        params = list(inspect.signature(module.run).parameters)
    except (TypeError, ValueError):
        params = []
    if params[:3] != ["models", "inputs", "cache"]:
        problems.append(f"{name}.run takes ({', '.join(params)}), not (models, inputs, cache=direct)")
    return problems
