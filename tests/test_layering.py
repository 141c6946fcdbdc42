"""The three layers stay visible: app/ is a pure library (only the app/ui package imports streamlit), pages are
thin, and the home page does not pay for importing torch."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


#: the launcher (``python -m app.serve``) starts Streamlit's server: it is the command line, not library code
LAUNCHER = ROOT / "app" / "serve.py"
#: puts the class's light routes into Streamlit's web server (before it starts, or once it runs): server plumbing
#: like the launcher, never st.* calls
MOUNT = ROOT / "app" / "classroom" / "mount.py"


def test_app_never_imports_streamlit_except_ui():
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "app").rglob("*.py")
        if p.parent != ROOT / "app" / "ui" and p not in (LAUNCHER, MOUNT) and "streamlit" in imported_modules(p)
    ]
    assert offenders == []


def test_the_mount_uses_only_streamlits_server():
    """app/classroom/mount.py reaches Streamlit's config, runtime and Starlette app, never its page API."""
    tree = ast.parse(MOUNT.read_text(encoding="utf-8"))
    used = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in used if m.startswith("streamlit")} <= {
        "streamlit",
        "streamlit.runtime",
        "streamlit.web.server.starlette",
    }
    assert "import streamlit as st" not in MOUNT.read_text(encoding="utf-8")


def test_the_launcher_only_launches():
    """app/serve.py starts the server and the early imports, nothing else: no page, figure or model code."""
    tree = ast.parse(LAUNCHER.read_text(encoding="utf-8"))
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert functions <= {
        "server_up",
        "_preload",
        "main",
        "skip_component_scan",
        "skip_use_warning",
        "warm_first_page",
        "leave",
    }
    assert imported_modules(LAUNCHER) <= {
        "__future__",
        "sys",
        "threading",
        "pathlib",
        "time",
        "importlib",
        "app",
        "streamlit",
        "typing",
        "os",
        "atexit",
    }


def test_entry_file_only_routes():
    source = (ROOT / "streamlit_app.py").read_text()
    tree = ast.parse(source)
    assert "st.navigation" in source
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def test_every_lesson_page_exists_and_is_registered():
    """Every page in pages/ but home is a lesson (app.lessons.LESSONS: a library of its own, the one shape) or a
    tool that serves the lessons (app.lessons.TOOLS: lecture mode), and is routed."""
    from app.lessons import LESSONS, TOOLS

    registered = {page.path for page in (*LESSONS, *TOOLS)}
    assert not {lesson.path for lesson in LESSONS} & {tool.path for tool in TOOLS}
    for page in (*LESSONS, *TOOLS):
        assert (ROOT / page.path).exists(), page.path
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")} - {"pages/home.py"}
    assert on_disk == registered, "every page in pages/ is routed, and nothing routed is missing"


def test_home_page_imports_do_not_pull_torch():
    code = (
        "import sys; import app.ui, app.lessons, app.core.state, app.core.text, app.core.lesson, app.core.preload, "
        "app.lecture.examples, "
        "app.lecture.deck, app.lecture.qr, app.models.catalogue, app.models.device; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_home_page_runs_through_the_router_without_importing_torch():
    """The whole first run of the app (router, sidebar, home page) on a CPU machine: no torch, and no pandas
    either (~0.3 s of the first page a server shows)."""
    code = (
        "import sys; from streamlit.testing.v1 import AppTest; "
        "at = AppTest.from_file('streamlit_app.py', default_timeout=60); at.run(); "
        "print(bool(at.exception), 'torch' in sys.modules, 'pandas' in sys.modules)"
    )
    env = {**__import__("os").environ, "BVE_WARM_START": "0", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split()[-3:] == ["False", "False", "False"], out.stdout + out.stderr  # nor pandas (issue 30)


def test_pages_are_thin_they_neither_cache_nor_stop_by_hand_nor_import_torch():
    """Caching is one generic mechanism (ui.cache / ui.run), a page stops through ui.stop (which draws the
    badge first), and computation lives in the lesson library."""
    for page in sorted((ROOT / "pages").glob("*.py")):
        source = page.read_text(encoding="utf-8")
        assert "st.cache_data" not in source and "st.cache_resource" not in source, page.name
        assert "st.stop(" not in source, page.name
        assert not {"torch", "transformers", "numpy"} & imported_modules(page), page.name


def test_no_lesson_library_imports_the_training_package():
    offenders = []
    for p in (ROOT / "app").rglob("*.py"):
        rel = p.relative_to(ROOT)
        if rel.parts[1] in ("training", "experiments"):  # experiments run the training recipes by design
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app.training"):
                offenders.append(str(rel))
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "app"
                and any(a.name == "training" for a in node.names)
            ):
                offenders.append(str(rel))
    assert offenders == []


def lessons_imported(path: Path) -> set[str]:
    """The lesson modules (app/lessons/<slug>.py) a file imports, by slug: ``from app.lessons import x``,
    ``from app.lessons.x import y``, ``import app.lessons.x`` and the relative forms inside app/lessons."""
    slugs = {p.stem for p in (ROOT / "app" / "lessons").glob("*.py")} - {"__init__"}
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "app.lessons" + ("." + node.module if node.module else "") if node.level == 1 else node.module or ""
            modules = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        found |= {m.split(".")[2] for m in modules if m.startswith("app.lessons.") and m.split(".")[2] in slugs}
    return found


def test_no_lesson_imports_another_lesson():
    """A lesson does one thing: what two lessons share (measuring a model, choosing the word to mask) lives in
    a concept module beside app/mlm.py or in app/core, so changing one lesson never breaks another."""
    offenders = {
        p.stem: sorted(lessons_imported(p) - {p.stem})
        for p in sorted((ROOT / "app" / "lessons").glob("*.py"))
        if p.name != "__init__.py"
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_lesson_import_check_sees_every_form(tmp_path):
    for line in (
        "from app.lessons import compare",
        "from app.lessons.compare import latencies",
        "import app.lessons.compare",
        "import app.lessons.compare as c",
        "from . import compare",
        "from .compare import latencies",
    ):
        (tmp_path / "lesson.py").write_text(line + "\n")
        assert lessons_imported(tmp_path / "lesson.py") == {"compare"}, line
    (tmp_path / "lesson.py").write_text(
        "from app import measure, mlm\nfrom app.core import text\nfrom app.lessons import LESSONS\n"
    )
    assert lessons_imported(tmp_path / "lesson.py") == set()


def test_every_lesson_library_has_the_one_shape():
    """The lesson contract as a type (app.core.lesson.LessonModule): ORDER, TITLE, ICON, LINE, SPEC (URL parameters
    stated once), MODELS, frozen Inputs with from_values, a frozen Result, TAKEAWAY, run(models, inputs, cache)."""
    import importlib

    from app.core.lesson import LessonModule
    from app.lessons import LESSONS, contract_problems

    for lesson in LESSONS:
        lib = importlib.import_module(lesson.library)
        assert contract_problems(lib) == [], contract_problems(lib)
        chosen = any(p.name == "variant" for p in lib.SPEC)  # its model is the visitor's choice: it states no MODELS
        assert isinstance(lib, LessonModule) or (chosen and not hasattr(lib, "MODELS")), lesson.library
        page = (ROOT / lesson.path).read_text(encoding="utf-8")
        assert "ui.bind(" in page and "ui.widget(" in page, lesson.path


def test_the_contract_names_what_a_lesson_library_gets_wrong():
    import types
    from dataclasses import dataclass

    from app.core import lesson as contract
    from app.lessons import contract_problems
    from app.core.state import Spec, text_param

    @dataclass
    class Inputs:  # not frozen, and a field no parameter fills
        text: str
        window: int
        from_values = classmethod(contract.from_values)

    @dataclass(frozen=True)
    class Result:
        n: int

    lib = types.ModuleType("app.lessons.token_counts")
    assert contract_problems(lib) == [
        "app.lessons.token_counts does not state ORDER, TITLE, ICON, LINE, TAKEAWAY, "
        "SPEC, MODELS, Inputs, Result, run (app.core.lesson.LessonModule lists what a "
        "lesson states)"
    ]
    lib.__dict__.update(
        ORDER="15",
        TITLE="Token counts",
        ICON=":material/abc:",
        LINE="Pieces per word.",
        TAKEAWAY="",
        SPEC=Spec(text_param("A sentence.")),
        MODELS=["bert"],
        Inputs=Inputs,
        Result=Result,
        run=lambda models, inputs: Result(0),
    )
    said = contract_problems(lib)
    assert "app.lessons.token_counts.ORDER is a str, not a int" in said
    assert "app.lessons.token_counts.MODELS is not a tuple of catalogue keys" in said
    assert any(p.startswith("app.lessons.token_counts.Inputs is not a frozen dataclass") for p in said)
    assert (
        "app.lessons.token_counts.Inputs.window is in no SPEC parameter and has no default: from_values cannot "
        "fill it" in said
    )
    assert "app.lessons.token_counts.run takes (models, inputs), not (models, inputs, cache=direct)" in said
    assert len(said) == 5, said


def test_inputs_are_made_from_the_spec_one_declaration_of_each_parameter():
    """@inputs_from(SPEC) makes a lesson's Inputs: a frozen, hashable dataclass with a field per parameter (its type by
    kind, its default), the stage figure left out, the class's own fields after; a parameter declared again is an
    error, and a hand-made Inputs that misses a parameter is named by the contract."""
    import dataclasses
    import types
    import typing

    from app.core import lesson as contract
    from app.core.lesson import inputs_from
    from app.core.state import Param, Spec, figure_param, text_param
    from app.lessons import contract_problems

    spec = Spec(
        text_param("A sentence."),
        Param("k", "int", 3, lo=1, hi=9),
        Param("t", "float", 0.5, lo=0.0, hi=1.0),
        Param("on", "bool", True),
        Param("how", "choice", "a", choices=("a", "b")),
        figure_param((("one", "One"), ("two", "Two"))),
    )

    @inputs_from(spec)
    class Inputs:
        new_text: bool = False

    assert [(f.name, f.default) for f in dataclasses.fields(Inputs)] == [
        ("text", "A sentence."),
        ("k", 3),
        ("t", 0.5),
        ("on", True),
        ("how", "a"),
        ("new_text", False),
    ]
    hints = typing.get_type_hints(Inputs)
    assert [hints[n] for n in ("text", "k", "t", "on", "how", "new_text")] == [str, int, float, bool, str, bool]
    assert Inputs.__dataclass_params__.frozen and hash(Inputs()) == hash(Inputs())
    assert Inputs.from_values({"k": 7, "figure": "two", "other": 1}) == Inputs(k=7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Inputs().k = 4
    with pytest.raises(TypeError, match="declare it once"):

        @inputs_from(spec)
        class Twice:
            k: int = 3

    @dataclasses.dataclass(frozen=True)
    class ByHand:  # the old way: each parameter again, and one forgotten
        text: str = "A sentence."
        from_values = classmethod(contract.from_values)

    lib = types.ModuleType("app.lessons.by_hand")
    lib.__dict__.update(
        ORDER=15, TITLE="T", ICON=":material/abc:", LINE="l", TAKEAWAY="", SPEC=spec, MODELS=("bert",),
        Inputs=ByHand, Result=ByHand, run=lambda models, inputs, cache=None: None,
    )  # fmt: skip
    said = contract_problems(lib)
    assert [p.split(":")[0] for p in said] == [
        f"app.lessons.by_hand.SPEC's {n!r} is no field of app.lessons.by_hand.Inputs" for n in ("k", "t", "on", "how")
    ], said


def test_every_lesson_url_is_its_file_name():
    """Streamlit's legacy pages-folder mode serves the first request of a fresh server. It knows pages by
    file name only: a deep link whose path is the file name runs that file, which reroutes through the
    router; any other path shows a "Page not found" dialog first."""
    from app.lessons import LESSONS, TOOLS

    assert all(page.slug == Path(page.path).stem for page in (*LESSONS, *TOOLS))


HEAVY = {"torch", "transformers", "plotly", "pandas", "numpy"}
LIGHT = {
    "app/ui/__init__.py",
    "app/core/preload.py",
    "app/core/state.py",
    "app/lessons/__init__.py",
    "app/core/__init__.py",
    "app/lecture/__init__.py",
    "app/lecture/examples.py",
    "app/__init__.py",
    "app/lecture/deck.py",
    "app/lecture/console.py",
    "app/core/startup.py",
    "app/core/visitors.py",
    "app/serve.py",  # the launcher: it runs the preload itself, in a thread, once the server is up
    "app/models/__init__.py",
    "app/models/catalogue.py",
    "app/models/device.py",
    "app/core/lesson.py",
}  # names transformers' tokenizer class to recognise it (MODEL_PARTS); imports nothing


def test_every_library_module_that_pages_run_imports_preload_first():
    """A class opening the app at once runs page scripts in parallel threads; first-time imports of
    transformers' lazy classes and of pandas (looked up by plotly) raced there (app/core/preload.py). Every
    module a page runs that needs a heavy library imports app.core.preload before using it."""
    missing = []
    for p in sorted((ROOT / "app").rglob("*.py")):
        rel = str(p.relative_to(ROOT))
        if rel in LIGHT or rel.startswith("app/training/"):
            continue
        package = p.parent / "__init__.py"
        if p.name != "__init__.py" and package != ROOT / "app/__init__.py" and "import preload" in package.read_text():
            continue  # its package imports preload before any of its modules runs
        tree = ast.parse(p.read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        mods = [(n.module or "") if isinstance(n, ast.ImportFrom) else n.names[0].name for n in top]
        heavy_at = [i for i, m in enumerate(mods) if m.split(".")[0] in HEAVY or m.startswith("app.")]
        pre_at = [
            i
            for i, n in enumerate(top)
            if isinstance(n, ast.ImportFrom) and n.module == "app.core" and any(a.name == "preload" for a in n.names)
        ]
        needs = heavy_at or "transformers" in p.read_text(encoding="utf-8")
        if needs and (not pre_at or (heavy_at and min(heavy_at) < pre_at[0])):
            missing.append(rel)
    assert missing == []


def _top_imports(tree) -> list[tuple[int, str]]:
    """(statement index, module) for every top-level import of a module's body."""
    out = []
    for i, n in enumerate(tree.body):
        if isinstance(n, ast.Import):
            out += [(i, a.name) for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            out += [(i, f"{n.module}.{a.name}" if n.module == "app" else n.module or "") for a in n.names]
    return out


def test_every_module_that_imports_a_heavy_library_has_the_preload_do_it_first():
    """Importing preload is not enough: preload.load() must have run before a module's own ``import torch``.
    A fresh server's first requests run pages outside the router (Streamlit's pages-folder mode), so the
    router's preload.load() has not run; a page importing app.measure (torch) there raced the thread doing the
    preload (CI: "cannot import name 'is_tokenizers_available' from partially initialized module
    'transformers.utils'" on a fresh server; an import audit showed pages importing torch and pandas outside
    the preload)."""
    late = []
    for p in sorted((ROOT / "app").rglob("*.py")):
        rel = str(p.relative_to(ROOT))
        if rel.startswith(("app/training/", "app/experiments/")):  # command-line code: one thread
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        heavy = [i for i, m in _top_imports(tree) if m.split(".")[0] in {"torch", "transformers", "pandas"}]
        loads = [
            i
            for i, n in enumerate(tree.body)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and ast.unparse(n.value.func) == "preload.load"
        ]
        if heavy and (not loads or loads[0] > heavy[0]):
            late.append(rel)
    assert late == []


def test_lesson_pages_import_their_library_before_anything_heavy():
    """A page's first heavy import is its lesson library (which runs preload.load() first): before it, only
    the standard library, streamlit, app.ui and app.core's light modules."""
    import sys

    from app.lessons import LESSONS

    allowed = {"streamlit", "app.ui", "app.core.text", "app.core.state"}
    wrong = []
    for lesson in LESSONS:
        tree = ast.parse((ROOT / lesson.path).read_text(encoding="utf-8"))
        imports = _top_imports(tree)
        first = next((i for i, m in imports if m.startswith("app.lessons")), None)
        assert first is not None, lesson.path
        before = [m for i, m in imports if i < first]
        bad = [m for m in before if m not in allowed and m.split(".")[0] not in sys.stdlib_module_names]
        if bad:
            wrong.append((lesson.path, bad))
    assert wrong == []


def test_preload_names_every_transformers_class_the_app_imports():
    from app.core.preload import TRANSFORMERS_NAMES

    used = set()
    for p in (ROOT / "app").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "transformers":
                used |= {a.name for a in node.names}
    assert used and used <= set(TRANSFORMERS_NAMES), used - set(TRANSFORMERS_NAMES)
    from app.models.catalogue import CATALOGUE  # app.core may not import it: the list is written out

    classes = {v.model_class for v in CATALOGUE.values()}
    assert classes <= set(TRANSFORMERS_NAMES), (
        f"add to app.core.preload.TRANSFORMERS_NAMES: {classes - set(TRANSFORMERS_NAMES)}"
    )


@pytest.mark.slow  # a fresh interpreter imports torch
def test_preload_keeps_the_libraries_out_of_every_reruns_garbage_collection():
    """Streamlit collects garbage after every script run; preload freezes what the libraries allocated,
    so a collection walks the few objects made since, not the ~470,000 of torch, transformers and co."""
    code = "import gc, app.core.preload; app.core.preload.load(); print(gc.get_freeze_count(), len(gc.get_objects()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    frozen, tracked = map(int, out.stdout.split())
    assert frozen > 100_000 and tracked < frozen / 20, (frozen, tracked)


def test_lessons_are_found_by_their_files_in_teaching_order(tmp_path):
    """A lesson is app/lessons/<slug>.py stating ORDER, TITLE, ICON and LINE; its page and figures share
    the slug. The table is read from the sources (no import), and a library missing a field is an error
    that names the file, not a lesson that silently vanishes from the navigation."""
    from app.lessons import LESSONS, find_lessons

    assert [lesson.order for lesson in LESSONS] == sorted(lesson.order for lesson in LESSONS)
    for lesson in LESSONS:
        assert (ROOT / "app" / "lessons" / f"{lesson.slug}.py").exists()
        assert lesson.library == f"app.lessons.{lesson.slug}" and lesson.path == f"pages/{lesson.slug}.py"
        if lesson.figure:
            assert lesson.figure == f"app.figures.{lesson.slug}:key_figure"
    lessons = tmp_path / "app" / "lessons"
    (tmp_path / "app" / "figures").mkdir(parents=True)
    lessons.mkdir()
    (lessons / "second.py").write_text("ORDER = 20\nTITLE = 'B'\nICON = ':material/b:'\nLINE = 'b'\n")
    (lessons / "first.py").write_text("import os\nORDER = 10\nTITLE = 'A'\nICON = ':material/a:'\nLINE = 'a'\n")
    (tmp_path / "app" / "figures" / "first.py").write_text("def key_figure(r):\n    return None\n")
    found = find_lessons(tmp_path)
    assert [(x.slug, x.title, x.figure) for x in found] == [
        ("first", "A", "app.figures.first:key_figure"),
        ("second", "B", ""),
    ]
    (lessons / "third.py").write_text("ORDER = 30\nTITLE = 'C'\n")
    with pytest.raises(ValueError, match="third.py.*ICON, LINE"):
        find_lessons.__wrapped__(tmp_path)


def test_a_gpu_hosts_home_page_asks_for_cuda_without_importing_torch():
    """With a driver and a CUDA build of torch, "is CUDA usable" is asked in a child process: the page
    process stays torch-free (simulated here: the driver and the build are said to be present)."""
    code = (
        "import sys; from app.models import device as d; "
        "d.nvidia_driver_present = lambda: True; d.torch_built_with_cuda = lambda: True; "
        "print(d.cuda_available(), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    import torch

    assert out.stdout.split() == [str(torch.cuda.is_available()), "False"], out.stdout + out.stderr


# ----------------------------------------------------------------------------- imports point down


def app_modules() -> dict[str, Path]:
    """Every module of the app package by its dotted name (a package by its own name)."""
    out = {}
    for p in (ROOT / "app").rglob("*.py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def app_imports(path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported app module, line) for every import of an app module in ``path``, at the top or inside a function
    (an import run later still ties the layers): ``from app.x import y`` is app.x.y when that is a module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "app"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "app":
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.append((sub if sub in modules else node.module, node.lineno))
    return out


def layer(module: str) -> str:
    """app.figures.masking -> figures; app.masking (a concept module) -> app."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (ROOT / "app" / parts[1]).is_dir()) else "app"


def upward(rule, allowed: dict[str, str] | None = None) -> list[str]:
    """The imports ``rule(importer layer, imported layer)`` forbids, one line each naming the file, line and module;
    ``allowed`` maps a file to why it may (each entry must still be needed)."""
    modules, found, used = app_modules(), [], set()
    for name, path in sorted(modules.items()):
        rel = str(path.relative_to(ROOT))
        for target, line in app_imports(path, modules):
            if rule(layer(name), layer(target)):
                if rel in (allowed or {}):
                    used.add(rel)
                    continue
                found.append(f"{rel}:{line} imports {target}")
    stale = set(allowed or {}) - used
    assert not stale, f"no longer needed, drop from the allowed list: {sorted(stale)}"
    return found


def test_figures_take_labels_from_the_result_not_from_their_lesson():
    """A figure draws a Result: what it labels comes in the Result or from a module below the lessons (a concept
    module such as app/masking.py, app/permutation.py, app/sentence_pairs.py; app/core/text.py)."""
    found = upward(lambda a, b: a == "figures" and b in ("lessons", "ui"))
    assert found == [], (
        "figures import up a layer (move the name below the lessons, or into the Result):\n" + "\n".join(found)
    )


def test_lessons_import_no_figures_and_no_ui():
    """A lesson computes; its figures draw its Result (bertviz's document too: app/figures/attention.py)."""
    found = upward(lambda a, b: a == "lessons" and b in ("figures", "ui"))
    assert found == [], "a lesson imports up a layer:\n" + "\n".join(found)


def test_training_imports_no_lesson():
    """The recipes sit below the lessons: a rule they share lives in a concept module (app/sentence_pairs.py; the
    heads scored as the NSP vs SOP page scores them, app/sentence_heads.py; ELECTRA's live rounds, app/detection.py)."""
    found = upward(lambda a, b: a == "training" and b in ("lessons", "figures", "ui"))
    assert found == [], "training imports a lesson:\n" + "\n".join(found)


def test_core_imports_nothing_above_it():
    """app/core is what every layer speaks; it imports only itself (the model classes preload imports are named in
    app.core.preload.TRANSFORMERS_NAMES, which test_preload_names_every_transformers_class_the_app_imports checks)."""
    found = upward(lambda a, b: a == "core" and b != "core")
    assert found == [], "app/core imports from above it:\n" + "\n".join(found)


def import_cycles() -> list[str]:
    """Every cycle of the app's import graph (counting imports inside functions), each as ``a -> b -> a``."""
    modules = app_modules()
    edges = {
        name: sorted(
            {t for t, _ in app_imports(path, modules) if t in modules and t != name and not name.startswith(t + ".")}
        )  # a module's own package runs first: not a cycle
        for name, path in modules.items()
    }
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in edges[node]:
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    return cycles


def test_the_import_graph_has_no_cycle():
    """No module imports, directly or through others, a module that imports it (app/ui/loading.py and
    app/ui/own.py asked each other, inside functions, before app/ui/model_settings.py)."""
    cycles = import_cycles()
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def test_the_layer_checks_name_the_offending_import_and_the_cycle(tmp_path, monkeypatch):
    """Each rule's message names the file, the line and the module imported; a cycle is named module by module."""
    fake = tmp_path / "app"
    (fake / "figures").mkdir(parents=True)
    (fake / "lessons").mkdir()
    (fake / "figures" / "toy.py").write_text("import json\nfrom app.lessons.toy import LABELS\n")
    (fake / "lessons" / "toy.py").write_text("LABELS = {}\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert upward(lambda a, b: a == "figures" and b == "lessons") == ["app/figures/toy.py:2 imports app.lessons.toy"]
    (fake / "ui").mkdir()
    (fake / "ui" / "a.py").write_text("def f():\n    from app.ui import b\n")
    (fake / "ui" / "b.py").write_text("from app.ui.a import f\n")
    assert import_cycles() == ["app.ui.a -> app.ui.b -> app.ui.a"]
