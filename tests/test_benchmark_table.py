"""scripts/benchmark.py's table merge: a partial run updates its own rows and keeps every other (no timing here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "benchmark", Path(__file__).resolve().parents[1] / "scripts" / "benchmark.py"
)
benchmark = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(benchmark)
PEAK = benchmark.PEAK


def test_a_partial_run_replaces_its_rows_keeps_the_others_and_only_a_larger_peak():
    old = [
        ("Page X [bundled]: first run / rerun p50 · p95", "50 ms", "a"),
        ("Variant BERT: load", "40 ms", "b"),
        (PEAK, "3967 MiB", "ru_maxrss of `python scripts/benchmark.py --only pages-base`"),
    ]
    lighter = [
        ("Page X [bundled]: first run / rerun p50 · p95", "60 ms", "new"),
        (PEAK, "602 MiB", "ru_maxrss of `light`"),
    ]
    out = benchmark.merge(old, lighter, ["pages"])
    assert out[0] == lighter[0] and out[1] == old[1]
    assert out[2] == old[2]  # the heavier run's peak, and its command, stay
    heavier = [(PEAK, "5000 MiB", "ru_maxrss of `heavy`")]
    assert benchmark.merge(old, heavier, ["pages-base"])[2] == heavier[0]
    assert benchmark.merge([r for r in old if r[0] != PEAK], lighter, ["pages"])[-1] == lighter[1]  # no peak before


def test_the_start_up_breakdown_reads_the_servers_marks_and_the_browsers_times():
    t0 = 1000.0
    ev = lambda t, what, thread="ScriptRunner.scriptThread", **k: {"t": t0 + t, "what": what, "thread": thread, **k}  # noqa: E731
    events = [
        ev(0.1, "process start", "MainThread"),
        ev(1.0, "preload start", "bve-preload"),
        ev(1.6, "router start"),
        ev(2.0, "page start", page="home"),
        ev(2.4, "page end", page="home"),
        ev(3.2, "router start"),
        ev(3.3, "page start", page="masking"),
        ev(4.5, "preload end", "bve-preload"),
        ev(4.6, "load start", key="bert"),
        ev(4.7, "load end", key="bert"),
        ev(4.8, "load start", "bve-warm-start", key="albert"),
        ev(4.9, "load end", "bve-warm-start", key="albert"),
        ev(4.9, "lesson run start", page="masking"),
        ev(5.3, "lesson run end", page="masking"),
        ev(5.6, "page end", page="masking"),
    ]
    steps = benchmark.breakdown(events, t0, healthy_s=0.9, home_s=2.7, first="masking", lesson_nav_s=2.7, lesson_s=5.9)
    want = {
        "interpreter, imports, server up": 0.9,
        "browser loads the frontend, opens a session": 0.7,
        "first script run: the router's imports": 0.4,
        "home page run": 0.4,
        "home page drawn in the browser": 0.3,
        "heavy imports (preload), in the background": 3.5,
        "heavy imports done, after server start": 4.5,
        "first lesson: browser to its script run": 0.6,
        "first lesson: waiting for the heavy imports": 1.2,
        "first lesson: its model loads": 0.1,  # the page's own loads, not the warm start's
        "first lesson: the lesson's computation (forward passes)": 0.4,
        "first lesson: figures and the rest of the page": 0.3,
        "first lesson: drawn in the browser": 0.3,
    }
    assert steps.keys() == want.keys()
    assert all(abs(steps[k] - v) < 1e-9 for k, v in want.items()), steps
    assert benchmark.breakdown([], t0, 0.9, 2.7, "masking", 2.7, 5.9) == {"interpreter, imports, server up": 0.9}


def test_the_start_up_rows_name_what_this_environment_imports_beyond_the_requirements():
    deps = {"transformers": ["numpy", "huggingface-hub"], "huggingface_hub": ["httpx"], "numpy": []}
    needed = benchmark.requirement_closure(["Transformers"], lambda name: deps.get(name.replace("-", "_"), []))
    assert needed == {"transformers", "numpy", "huggingface-hub", "httpx"}
    dists_of = {
        "transformers": ["transformers"],
        "scipy": ["scipy"],
        "huggingface_hub": ["huggingface_hub"],
        "yaml": ["PyYAML"],
        "json": [],
    }
    # scipy: installed here, imported by transformers when present, needed by nothing in the requirements
    assert benchmark.outside_requirements(
        {"transformers", "scipy", "huggingface_hub", "json", "sys"}, needed, dists_of
    ) == ["scipy"]
    assert benchmark.outside_requirements({"yaml"}, needed | {"pyyaml"}, dists_of) == []


def test_a_browsers_cpu_seconds_are_read_from_proc_by_process_name(tmp_path):
    import os

    tick = os.sysconf("SC_CLK_TCK")

    def proc(pid, name, utime, stime):
        (tmp_path / pid).mkdir()
        (tmp_path / pid / "stat").write_text(
            f"{pid} ({name}) S 1 1 1 0 -1 4194560 10 0 0 0 {utime} {stime} 0 0 20 0 9 0\n"
        )

    proc("101", "chromium", 3 * tick, tick)
    proc("102", "chrome (gpu) x", 2 * tick, 0)  # a name may hold spaces and parentheses
    proc("103", "python3", 50 * tick, 0)
    (tmp_path / "104").mkdir()  # a process that ended while /proc was read
    (tmp_path / "self").mkdir()
    assert benchmark.cpu_seconds("chrom", tmp_path) == 6.0
    assert benchmark.cpu_seconds("python", tmp_path) == 50.0
    assert benchmark.cpu_seconds("firefox", tmp_path) == 0.0
    assert benchmark.cpu_seconds("chrom", tmp_path / "absent") is None


def test_the_class_sizes_rows_take_the_place_of_the_old_class_server_rows():
    """class-server's rows once named no class size ("A class at once, server only, …"); now one block per size
    ("A class of 20 at once, server only, …") replaces them where they stood, and a rerun of one size replaces its
    own rows only."""
    old = [
        ("Variant BERT: load", "40 ms", "a"),
        ("A class at once, server only, a change every 5 s: rerun p50 · p95", "190 ms · 516 ms", "old"),
        ("Variant DeBERTa: load", "51 ms", "b"),
        (PEAK, "3967 MiB", "peak"),
    ]
    new = [
        ("A class of 20 at once, server only, a change every 5 s: rerun p50 · p95", "287 ms · 1176 ms", "20"),
        ("A class of 30 at once, server only, a change every 5 s: rerun p50 · p95", "365 ms · 1263 ms", "30"),
    ]
    out = benchmark.merge(old, new, ["class-server"])
    assert [w for w, _, _ in out] == ["Variant BERT: load", new[0][0], new[1][0], "Variant DeBERTa: load", PEAK]
    again = [(new[1][0], "300 ms · 900 ms", "30 again")]
    assert benchmark.merge(out, again, ["class-server"])[2] == again[0]
    assert benchmark.merge(out, again, ["class-server"])[1] == new[0]
