"""Measure the app and write the table to BENCHMARKS.md. Not a test: numbers, not verdicts.

    python scripts/benchmark.py                 # everything (about 35 minutes on 2 CPU cores)
    python scripts/benchmark.py --skip browser  # without the real-browser start-up timing
    python scripts/benchmark.py --only pages-base --pages masking electra   # two pages at base size

Sections: cold start in a real browser; each page's first run (models already loaded, as after the warm
start) and rerun after a widget change (AppTest, p50/p95), with the bundled stand-ins (``pages``) and with
checkpoints of the real models' sizes (``pages-base``: each hub id's published config with random weights,
built by tests/basesize.py into ``$BVE_BASESIZE_DIR``, default /tmp/bve-basesize, once); each variant's
load time, forward latency and memory on this device; what a user would otherwise run for the same work
(transformers' fill-mask pipeline) as a ratio; the base-size forward on a GPU (``cuda``, when there is
one); peak memory; and a class of 20 on one server: in chromium tabs at a lecture's pace (``class``, a
change every 5 s) and at a stress pace (``class-stress``, every 0.5 s), and without browsers at both
(``class-server``, classes of 20 and 30: ``--class-sizes``), and the same through nginx over 2 app processes
(``class-replicas``: ``python -m app.deploy``; ``--replica-sessions``, ``--replica-seconds``); and Ask the class
(``class-ask``): 200 simulated phones answer one question on the light
page (app/classroom), in process and through Redis with two app processes (rows "Class: …"); and the server's
own time for a rerun that changes nothing (``nochange``: masking, ELECTRA, attention; scripts/nochange_rerun.py).

A partial run (``--only``, ``--skip``, ``--pages``) replaces the rows it measured (by their "what") and keeps
every other row, the prose after the table and the sections other tools keep between their markers
(``python -m app.experiments time --write-benchmarks``). A page row's notes say whether the machine was
busy when it was measured.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import resource
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SENTENCE = "The little girl found a red ball in the park. She was very happy."


def pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def fmt_ms(x: float) -> str:
    return f"{x:.0f} ms" if x >= 10 else f"{x:.1f} ms"


# ----------------------------------------------------------------------------- sections


STARTS = 3  # fresh servers per way of starting (median and spread)
GOALS = {"home": 3.0, "lesson": 6.0, "walk": 1.0}  # issue 30: seconds after server start; each lesson in a row
# the browser's steps in breakdown(), which the server-alone start (_one_start_alone) waits as long as
FRONTEND_STEP = "browser loads the frontend, opens a session"
HOME_DRAWN_STEP = "home page drawn in the browser"
LESSON_DRAWN_STEP = "first lesson: drawn in the browser"


def _first_done(page, old_title: str | None = None, timeout_ms: int = 120_000) -> None:
    """Wait until the page's script has stopped with a title drawn (another title than ``old_title``: a page
    opened from the sidebar). Polls every 50 ms: the first moment it holds is the moment it is interactive."""
    page.wait_for_function(
        """(old) => { const app = document.querySelector('[data-testid="stApp"]');
                      const h1 = document.querySelector('h1');
                      return app && app.getAttribute('data-test-script-state') === 'notRunning' && h1 !== null
                             && (old === null || h1.innerText !== old); }""",
        arg=old_title,
        timeout=timeout_ms,
        polling=50,
    )


def breakdown(
    events: list[dict],
    started: float,
    healthy_s: float,
    home_s: float,
    first: str,
    lesson_nav_s: float,
    lesson_s: float,
) -> dict[str, float]:
    """The way from process start to the first lesson, as steps in seconds, from the server's start-up log
    (app/core/startup.py: epoch seconds) and the browser's timings (seconds after ``started``, the epoch second
    the server process was started). Steps a log lacks are left out."""
    at = lambda what, **k: next(  # noqa: E731
        (e["t"] - started for e in events if e["what"] == what and all(e.get(a) == b for a, b in k.items())),
        None,
    )
    out = {"interpreter, imports, server up": healthy_s}
    router, home_start, home_end = at("router start"), at("page start", page="home"), at("page end", page="home")
    if router is not None:
        out[FRONTEND_STEP] = router - healthy_s
    if router is not None and home_start is not None:
        out["first script run: the router's imports"] = home_start - router
    if home_start is not None and home_end is not None:
        out["home page run"] = home_end - home_start
        out[HOME_DRAWN_STEP] = home_s - home_end
    pre_start, pre_end = at("preload start"), at("preload end")
    if pre_start is not None and pre_end is not None:
        out["heavy imports (preload), in the background"] = pre_end - pre_start
        out["heavy imports done, after server start"] = pre_end
    l_start, l_end = at("page start", page=first), at("page end", page=first)
    run_start, run_end = at("lesson run start", page=first), at("lesson run end", page=first)
    if l_start is not None:
        out["first lesson: browser to its script run"] = l_start - lesson_nav_s
        waited = max(0.0, (pre_end or 0.0) - l_start)
        out["first lesson: waiting for the heavy imports"] = waited
        loads = [
            (e["what"], e["t"] - started)
            for e in events
            if e["what"] in ("load start", "load end")
            and e["thread"].startswith("ScriptRunner")
            and l_start <= e["t"] - started <= (l_end or 1e9)
        ]
        starts, ends = [t for w, t in loads if w == "load start"], [t for w, t in loads if w == "load end"]
        out["first lesson: its model loads"] = sum(e - s for s, e in zip(starts, ends))
        if run_start is not None and run_end is not None:
            out["first lesson: the lesson's computation (forward passes)"] = run_end - run_start
        if run_end is not None and l_end is not None:
            out["first lesson: figures and the rest of the page"] = l_end - run_end
        if l_end is not None:
            out[LESSON_DRAWN_STEP] = lesson_s - l_end
    return out


def _one_start(launcher: bool, walk: bool) -> dict:
    """One fresh server (``python -m app.serve``, or plain ``streamlit run`` with ``launcher=False``) and an open
    browser: home, then a click on the first lesson in the sidebar, then (``walk``) every other lesson there."""
    import tempfile

    from app.core import startup
    from app.lessons import LESSONS
    from tests.e2e.browser import browser, streamlit_server

    first = LESSONS[0]
    with tempfile.TemporaryDirectory() as tmp, browser() as (context, watcher):
        log = str(Path(tmp) / "startup.log")
        page = watcher.watch(context.new_page())
        page.goto("about:blank")
        cpu_before = cpu_seconds("chrom")  # the browser's processes, from here (it is started) to the lesson drawn
        started, t0 = time.time(), time.perf_counter()
        with streamlit_server(env={"BVE_STARTUP_LOG": log}, launcher=launcher) as (base, healthy_s):
            page.goto(base)
            _first_done(page)
            home_s = time.perf_counter() - t0
            nav_s = time.perf_counter() - t0
            old = page.inner_text("h1")  # the student's first click: the lesson's link in the sidebar
            page.click(f'[data-testid="stSidebarNav"] a[href$="/{first.slug}"]')
            _first_done(page, old)
            lesson_s = time.perf_counter() - t0
            browser_cpu = None if cpu_before is None else cpu_seconds("chrom") - cpu_before
            walked = []
            for lesson in LESSONS[1:] if walk else ():
                old = page.inner_text("h1")
                t = time.perf_counter()
                page.click(f'[data-testid="stSidebarNav"] a[href$="/{lesson.slug}"]')
                _first_done(page, old)
                walked.append(time.perf_counter() - t)
            events = startup.read(log)
        return {
            "home": home_s,
            "lesson": lesson_s,
            "walk": walked,
            "first": first,
            "browser_cpu": browser_cpu,
            "steps": breakdown(events, started, healthy_s, home_s, first.slug, nav_s, lesson_s),
            "blocked": len(watcher.blocked),
            "console": len(watcher.console_errors),
        }


def _one_start_alone(frontend_s: float, home_drawn_s: float) -> dict:
    """One fresh server (``python -m app.serve``) with no browser on this machine: a browserless client
    (tests/e2e/stclient.py, the app's own websocket protocol) opens the home page ``frontend_s`` after the server
    answers its health check and the first lesson ``home_drawn_s`` after the home page's run has ended — the pauses
    a browser took here to load the frontend and to draw the home page. What a host whose visitors' browsers run on
    their own machines (a Space, a class on their laptops) gets from the server; their drawing is not in it."""
    import asyncio

    from app.lessons import LESSONS
    from tests.e2e.browser import streamlit_server
    from tests.e2e.stclient import Session

    first = LESSONS[0]
    t0 = time.perf_counter()
    with streamlit_server() as (base, _):

        async def visit() -> tuple[float, float]:
            await asyncio.sleep(frontend_s)
            async with Session(base) as tab:
                home = await tab.open("")
                home_s = time.perf_counter() - t0
                await asyncio.sleep(home_drawn_s)
                lesson = await tab.open(first.slug)
                if home.exceptions or lesson.exceptions:
                    raise RuntimeError(f"a page raised: {home.exceptions + lesson.exceptions}")
                return home_s, time.perf_counter() - t0

        home_s, lesson_s = asyncio.run(visit())
    return {"home": home_s, "lesson": lesson_s}


def cpu_seconds(name_part: str, proc: Path = Path("/proc")) -> float | None:
    """CPU seconds (user and system) the live processes whose name holds ``name_part`` have used so far, from
    Linux's ``/proc`` (None where there is none): what a browser on the server's machine takes from its cores."""
    if not proc.is_dir():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:  # the process ended meanwhile
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if name_part in name:
            total += (int(rest[11]) + int(rest[12])) / tick  # utime, stime: fields 14 and 15 of proc(5)
    return total


def import_floor() -> float:
    """The heavy imports alone, in a fresh interpreter (warm disk cache): what no start-up can avoid."""
    import subprocess

    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from app.core import preload; preload.load()"],
        cwd=ROOT,
        check=True,
        env={**os.environ, "BVE_STARTUP_LOG": ""},
    )
    return time.perf_counter() - t


def _norm(name: str) -> str:
    """A distribution's name as PEP 503 compares it: lower case, runs of ``-_.`` as ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_closure(roots: list[str], requires) -> set[str]:
    """The distributions ``roots`` need, themselves included, following ``requires(name)`` (the names a
    distribution depends on, markers already applied; ``[]`` for one not installed), as :func:`_norm` gives them."""
    seen, todo = set(), [_norm(r) for r in roots]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_norm(d) for d in requires(name))
    return seen


def outside_requirements(modules: set[str], needed: set[str], dists_of: dict[str, list[str]]) -> list[str]:
    """The installed distributions behind top-level ``modules`` that ``needed`` (normalised names, e.g. from
    :func:`requirement_closure`) does not hold: what this environment imports that a host installing only
    requirements.txt would not have (transformers imports scipy, for one, whenever it is installed).
    ``dists_of``: module -> distributions (``importlib.metadata.packages_distributions()``)."""
    return sorted({d for m in modules for d in dists_of.get(m, ()) if _norm(d) not in needed})


def _installed_requires(name: str) -> list[str]:
    """What installed distribution ``name`` depends on in this environment (its markers evaluated without extras)."""
    from importlib import metadata

    from packaging.requirements import Requirement

    try:
        reqs = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return []
    out = []
    for line in reqs:
        r = Requirement(line)
        if r.marker is None or r.marker.evaluate({"extra": ""}):
            out.append(r.name)
    return out


def imports_outside_requirements() -> list[str]:
    """The distributions the heavy imports load here, in a fresh interpreter, that requirements.txt does not
    need: each makes this machine's start-up slower than a host's that installs only requirements.txt."""
    import json
    import subprocess
    from importlib import metadata

    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys\nfrom app.core import preload\npreload.load()\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "BVE_STARTUP_LOG": ""},
    )
    roots = [
        re.split(r"[<>=!~\[; ]", line.strip(), maxsplit=1)[0]
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "-"))
    ]
    modules = set(json.loads(out.stdout.strip().splitlines()[-1]))
    return outside_requirements(
        modules, requirement_closure(roots, _installed_requires), metadata.packages_distributions()
    )


DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def drop_disk_cache() -> bool:
    """Empty the kernel's page cache (root only), so the next start reads every file from the disk, as a machine
    that just booted or a Space that just woke does. False where this process may not."""
    import subprocess

    if not os.access(DROP_CACHES, os.W_OK):
        return False
    subprocess.run(["sync"], check=False)
    DROP_CACHES.write_text("3\n")
    return True


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f} s ({min(xs):.1f}–{max(xs):.1f})" if len(xs) > 1 else f"{xs[0]:.1f} s"


def _browser_cpu_rows(served: list[dict], floor: float) -> list[tuple]:
    """The browser's CPU on the server's cores until the first lesson is drawn (none where it was not read)."""
    rows = []
    cpu = [(r["browser_cpu"], r["lesson"]) for r in served if r.get("browser_cpu") is not None]
    if cpu:
        used, span = statistics.median(c for c, _ in cpu), statistics.median(t for _, t in cpu)
        rows.append(
            (
                "Start-up: the browser's CPU on the server's cores, until the first lesson is drawn",
                f"{used:.1f} core-s of {2 * span:.1f}",
                f"Debian chromium (headless, software rendering) on the same {os.cpu_count()} cores as the server, "
                f"median of {STARTS} starts, from server start to the first lesson drawn ({span:.1f} s): the "
                "server's Python runs on one core at a time (the GIL), so the heavy imports "
                f"({floor:.1f} s of one core) and the browser loading and drawing the app share the machine",
            )
        )
    return rows


def _cold_disk_rows() -> list[tuple]:
    """Again from a cold disk, ``STARTS`` times: the import floor, then a start (none where the page cache cannot be
    emptied)."""
    rows = []
    med = lambda runs, k: statistics.median(r[k] for r in runs)  # noqa: E731
    if drop_disk_cache():  # again from a cold disk, STARTS times: the import floor, then a start
        cold_floors, cold = [], []
        for _ in range(STARTS):
            drop_disk_cache()
            cold_floors.append(import_floor())
            drop_disk_cache()
            cold.append(_one_start(True, walk=False))
        above = med(cold, "lesson") - statistics.median(cold_floors)
        rows.append(
            (
                "Start-up, cold disk: server start → home / first lesson interactive",
                f"{_spread([r['home'] for r in cold])} / {_spread([r['lesson'] for r in cold])}",
                f"the kernel's page cache emptied before each, {STARTS} fresh servers; the heavy imports alone take "
                f"{_spread(cold_floors)} from a cold disk, so the first lesson is {above:.1f} s above that floor "
                f"(medians; goal ≤ 2 s: {'met' if above <= 2 else 'NOT MET'}); the server asks the disk to read "
                "ahead what those imports read, then the project's sources and bundled models, once it is up "
                "(app/core/prefetch.py)",
            )
        )
    return rows


def browser_start() -> list[tuple]:
    """Server start to the home page, to the first lesson, and every other lesson opened in a row from the sidebar,
    in Debian's chromium, on fresh servers (``STARTS`` each way), with the breakdown of the way there."""
    _settle()
    note = _load_note()
    floors = [import_floor() for _ in range(STARTS)]
    served = [_one_start(True, walk=True) for _ in range(STARTS)]
    plain = [_one_start(False, walk=False) for _ in range(STARTS)]
    first = served[0]["first"].title
    floor = statistics.median(floors)
    med = lambda runs, k: statistics.median(r[k] for r in runs)  # noqa: E731
    held = lambda x, goal: f"goal ≤ {goal:g} s: {'met' if x <= goal else 'NOT MET'}"  # noqa: E731
    walked = [t for r in served for t in r["walk"]]
    tenth = [r["walk"][8] for r in served if len(r["walk"]) > 8]  # lessons 2.. from the sidebar: the 10th is [8]
    extra = imports_outside_requirements()
    where = (
        "an environment with requirements.txt only (what a host installs)"
        if not extra
        else f"an environment that also holds {', '.join(extra)}, which requirements.txt does not need but the "
        "imports load when installed (a host with requirements.txt only skips them)"
    )
    rows = [
        (
            "Start-up: server start → home page interactive",
            _spread([r["home"] for r in served]),
            f"`python -m app.serve`, median (min–max) of {STARTS} fresh servers; "
            f"{held(med(served, 'home'), GOALS['home'])}; "
            f"{note}; {where}",
        ),
        (
            f"Start-up: server start → first lesson ({first}) interactive",
            _spread([r["lesson"] for r in served]),
            "home first, then a click on the lesson in the sidebar; "
            f"{held(med(served, 'lesson'), GOALS['lesson'])}; the heavy imports alone "
            f"take {floor:.1f} s (median of {STARTS} fresh interpreters, warm disk), "
            f"so {med(served, 'lesson') - floor:.1f} s "
            "above that floor",
        ),
        (
            "Start-up: each next lesson opened from the sidebar, in a row",
            f"p50 {statistics.median(walked):.2f} s · 10th {statistics.median(tenth):.2f} s · max {max(walked):.2f} s"
            if tenth
            else "—",
            f"lessons 2–{len(served[0]['walk']) + 1} right after the first, {STARTS} servers; "
            f"{held(max(tenth) if tenth else 99, GOALS['walk'])} for the 10th; the warm start computes each lesson's "
            "defaults in the background, on one torch thread, and steps aside while a page runs",
        ),
        (
            "Start-up [plain `streamlit run`, as Spaces]: home / first lesson interactive",
            f"{_spread([r['home'] for r in plain])} / {_spread([r['lesson'] for r in plain])}",
            "the heavy imports begin after the first page (app/ui/warm.py) instead of when the server is up",
        ),
    ]
    for step in served[0]["steps"]:
        xs = [r["steps"][step] for r in served if step in r["steps"]]
        rows.append(
            (f"Start-up breakdown: {step}", _spread(xs), "`python -m app.serve`, seconds; BVE_STARTUP_LOG marks")
        )
    step_med = lambda step: statistics.median(r["steps"].get(step, 0.0) for r in served)  # noqa: E731
    frontend_s, home_drawn_s = step_med(FRONTEND_STEP), step_med(HOME_DRAWN_STEP)
    lesson_drawn_s = step_med(LESSON_DRAWN_STEP)
    alone = [_one_start_alone(frontend_s, home_drawn_s) for _ in range(STARTS)]
    rows.append(
        (
            "Start-up, the server alone (no browser on its cores): server start → home / first lesson run ended",
            f"{_spread([r['home'] for r in alone])} / {_spread([r['lesson'] for r in alone])}",
            f"`python -m app.serve`, {STARTS} fresh servers; a browserless client (tests/e2e/stclient.py) opens the "
            f"home page {frontend_s:.1f} s after the health check and the lesson {home_drawn_s:.1f} s after the home "
            "page's run, as the browser above took to load the app and to draw the home page; what a host whose "
            "visitors' browsers run on their own machines (a Space, a class on laptops) gets from the server. "
            f"Their drawing of the lesson ({lesson_drawn_s:.1f} s in chromium here) comes on top: "
            f"{med(alone, 'lesson') + lesson_drawn_s:.1f} s against the {GOALS['lesson']:g} s goal",
        )
    )
    rows += _browser_cpu_rows(served, floor) + _cold_disk_rows()
    rows.append(
        (
            "Browser: blocked network requests / console errors",
            f"{sum(r['blocked'] for r in served + plain)} / {sum(r['console'] for r in served + plain)}",
            "",
        )
    )
    return rows


DECK_DWELL_S = 5.0  # a lecturer's shortest time on a slide, in the cold pass


def _slide_shown(page, n: int, total: int, figure: bool, timeout_ms: int = 120_000) -> None:
    """Wait until slide ``n`` is on the screen: the link says so, the deck bar shows "n / total", the script has
    stopped, and (``figure``) a figure stands on the stage."""
    page.wait_for_function(
        """([n, total, figure]) => {
             const app = document.querySelector('[data-testid="stApp"]');
             const bar = document.querySelector('.st-key-bve-deck-bar');
             return new URLSearchParams(location.search).get('slide') === String(n)
                    && app && app.getAttribute('data-test-script-state') === 'notRunning'
                    && bar && bar.innerText.includes(`${n} / ${total}`)
                    && (!figure
                        || document.querySelector('.st-key-bve-stage .js-plotly-plot, .st-key-bve-stage iframe'));
           }""",
        arg=[n, total, figure],
        timeout=timeout_ms,
        polling=50,
    )


def deck_changes() -> list[tuple]:
    """The default deck presented at 1280×720 in chromium, → from each slide to the next: cold (a fresh server,
    the first time through, ``DECK_DWELL_S`` on each slide while the next one is computed in the background),
    warm (the second time through, no pause), and warm with the lessons' other figures drawn under each stage
    ("Draw the lesson's other figures": a slide folds them by default, app/ui/stage.py)."""
    from app.lecture import deck
    from tests.e2e.browser import browser, streamlit_server

    _settle()
    note = _load_note()
    views = deck.default_deck()
    total = len(views)
    figure = {lesson.slug: lesson.has_key_figure for lesson in __import__("app.lessons", fromlist=["LESSONS"]).LESSONS}
    cold, warm, unfolded = [], [], []
    with streamlit_server() as (base, _), browser((1280, 720)) as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(views[0].link(base, presenter="1", slide="1"))
        _slide_shown(page, 1, total, figure.get(views[0].page, False))
        for times, dwell in ((cold, DECK_DWELL_S), (warm, 0.0), (unfolded, 0.0)):
            if times is unfolded:  # the lecturer asks every slide to draw its lesson's other figures too
                page.click(".st-key-bve-unfold button")
                page.wait_for_selector(".st-key-bve-fold button", timeout=120_000)
                _slide_shown(page, 1, total, figure.get(views[0].page, False))
            for n in range(2, total + 1):
                page.wait_for_timeout(dwell * 1000)
                t = time.perf_counter()
                page.keyboard.press("ArrowRight")
                _slide_shown(page, n, total, figure.get(views[n - 1].page, False))
                times.append(time.perf_counter() - t)
            for n in range(total - 1, 0, -1):  # back to the first slide (not timed)
                page.keyboard.press("ArrowLeft")
                _slide_shown(page, n, total, figure.get(views[n - 1].page, False))
        errors = len(watcher.console_errors) + len(watcher.page_errors)
    row = lambda xs: (  # noqa: E731
        f"p50 {fmt_ms(1000 * pct(xs, 0.5))} · p95 {fmt_ms(1000 * pct(xs, 0.95))} · max {fmt_ms(1000 * max(xs))}"
    )
    met = lambda xs: "met" if pct(xs, 0.95) <= 1.0 else "NOT MET"  # noqa: E731
    return [
        (
            f"Lecture: slide change → next slide shown, cold ({total} slides)",
            row(cold),
            f"a fresh server, first time through, {DECK_DWELL_S:g} s on each slide; goal p95 ≤ 1 s: {met(cold)}; "
            f"slowest: slide {cold.index(max(cold)) + 2}; {note}",
        ),
        (
            f"Lecture: slide change → next slide shown, warm ({total} slides)",
            row(warm),
            f"the second time through, no pause; goal p95 ≤ 1 s: {met(warm)}; console errors {errors}; "
            "a slide draws its "
            "stage figure and folds the lesson's other figures (a line names each) until the lecturer asks for them",
        ),
        (
            f"Lecture: slide change → next slide shown, warm, every figure drawn ({total} slides)",
            row(unfolded),
            "the third time through, no pause, after \"Draw the lesson's other figures\": each slide draws its whole "
            "lesson under the stage, as before folding",
        ),
    ]


def nudge(at, slug: str):
    """Change one widget of page ``slug`` the way a student would (its keys are "<slug>.<name>"): the seed if
    the page has one, else its first slider, its first number input, its first select box. Returns (at, what)."""
    mine = lambda ws: [w for w in ws if str(getattr(w, "key", "") or "").startswith(f"{slug}.")]  # noqa: E731
    seeds = [w for w in mine(at.number_input) if w.key == f"{slug}.seed"]
    if seeds:
        w = seeds[0]
        w.set_value(int(w.value) + 1 if w.max is None or int(w.value) + 1 <= w.max else int(w.value) - 1)
        return at, "seed + 1"
    for kind, ws in (("slider", mine(at.slider)), ("number", mine(at.number_input))):
        for w in ws:
            v, step = w.value, getattr(w, "step", None) or 1
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                up = w.max is None or v + step <= w.max
                w.set_value(type(v)(v + step if up else v - step))
                return at, f"{kind} {w.label!r}"
    for w in mine(at.selectbox):
        if len(w.options) > 1:
            i = w.index or 0
            w.select_index(i + 1 if i + 1 < len(w.options) else i - 1)
            return at, f"select {w.label!r}"
    return at, "rerun"


def _pages(only: list[str] | None) -> list[tuple[str, str, str]]:
    """(path, slug, title) of home and every lesson whose page is written (not a placeholder)."""
    from app.lessons import LESSONS

    found = [("pages/home.py", "home", "Home")] + [
        (lesson.path, lesson.slug, lesson.title)
        for lesson in LESSONS
        if (ROOT / lesson.path).exists()
        and "Placeholder while the lesson is written" not in (ROOT / lesson.path).read_text()
    ]
    return [p for p in found if not only or p[1] in only]


def page_models(slug: str) -> tuple[str, ...]:
    """The catalogue keys a page loads on its defaults: its library's MODELS, or its variant widget's default."""
    import importlib

    from app.lessons import LESSONS

    lesson = next((x for x in LESSONS if x.slug == slug), None)
    if lesson is None:
        return ()
    lib = importlib.import_module(lesson.library)
    names = {p.name: p for p in getattr(lib, "SPEC", ())}
    if getattr(lib, "MODELS", None):
        return tuple(lib.MODELS)
    return (names["variant"].default,) if "variant" in names else ()


def warm_models(keys, source: str = "bundled") -> float:
    """Load ``keys`` into the app's model cache (st.cache_resource: what the warm start does, on its device and
    dtype); seconds taken."""
    from app.ui import loading as ui_loading

    _, device, dtype = ui_loading.default_settings()
    t = time.perf_counter()
    for key in keys:
        ui_loading._load(key, source, device, dtype)
    return time.perf_counter() - t


PAGES_ONLY: list[str] | None = None  # --pages: the page slugs to measure (all when None)


def _settle(most_s: float = 90.0) -> None:
    """Wait (up to ``most_s``) for the 1-minute load average to fall below half the cores: the section before
    this one (this process's own work) keeps it up for a while after it ends, and only other work should mark a
    section as measured under load."""
    cores = os.cpu_count() or 1
    end = time.monotonic() + most_s
    while os.getloadavg()[0] > 0.5 * cores and time.monotonic() < end:
        time.sleep(2)


def cpu_name() -> str:
    """The CPU as rows name it: its model name and its widest vector extensions ("AMD EPYC, AVX2"), so that rows
    measured on different machines can share the table (bf16 on a CPU without AVX512-BF16/AMX is ~10x slower)."""
    from app.training.common import processor_name

    try:
        flags = next(
            (
                line.split(":", 1)[1].split()
                for line in open("/proc/cpuinfo", encoding="utf-8")
                if line.startswith("flags")
            ),
            [],
        )
    except OSError:
        flags = []
    isa = [
        name
        for flag, name in (
            ("avx2", "AVX2"),
            ("avx512f", "AVX-512"),
            ("avx512_bf16", "AVX512-BF16"),
            ("amx_bf16", "AMX"),
        )
        if flag in flags
    ]
    return ", ".join([processor_name()] + isa[-2:])


def _load_note() -> str:
    """Says how busy the machine was before a section started (1-minute load average, after :func:`_settle`)
    and torch's threads."""
    import torch

    _settle()
    load, cores, threads = os.getloadavg()[0], os.cpu_count() or 1, torch.get_num_threads()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{when}, {cpu_name()}, MEASURED UNDER LOAD (load average {load:.1f} on {cores} cores before the run, "
        f"torch {threads} thread{'s' if threads > 1 else ''}): provisional"
        if load > 0.5 * cores
        else f"{when}, {cpu_name()}, idle machine (load average {load:.1f}), torch {threads} "
        f"thread{'s' if threads > 1 else ''}"
    )


VARIANTS_AT_BASE_SIZE = {"masking": ("roberta",), "attention": ("modernbert",)}  # pages with a model select: the
# default (google/bert_uncased_L-4_H-256_A-4) is small at its real size too, so base size adds a run on a big one


def page_reruns(repeats: int, base_size: bool = False) -> list[tuple]:
    """Per page: the first run with its models already loaded (as after the warm start) and the rerun after a
    widget change, p50/p95 over ``repeats``, on the bundled source. ``base_size``: that source holds checkpoints
    of the real models' sizes (tests/basesize.py: the published configs with random weights) instead of the
    bundled stand-ins, and pages with a model select also run on a large variant."""
    from streamlit.testing.v1 import AppTest

    from app.ui import loading as ui_loading
    from app.core import preload

    os.environ["BVE_WARM_START"] = "0"
    before = os.environ.get("BVE_BUNDLED_DIR")
    which = "base size" if base_size else "bundled"
    if base_size:
        from tests import basesize

        t = time.perf_counter()
        os.environ["BVE_BUNDLED_DIR"] = str(basesize.build(BASESIZE_DIR))
        print(
            f"[benchmark] base-size checkpoints ready in {BASESIZE_DIR} ({time.perf_counter() - t:.0f} s)", flush=True
        )
    preload.load()
    load_note = _load_note()
    runs = []
    for path, slug, title in _pages(PAGES_ONLY):
        runs.append((path, slug, title, None))
        runs += [(path, slug, title, v) for v in (VARIANTS_AT_BASE_SIZE.get(slug, ()) if base_size else ())]
    rows = []
    try:
        ui_loading._load.clear()
        ui_loading._load_pair.clear()
        for path, slug, title, variant in runs:
            keys = (variant,) if variant else page_models(slug)
            label = f"{which}, {catalogue_label(variant)}" if variant else which
            try:
                load_s = warm_models(keys)
            except Exception as e:  # a checkpoint not built yet: say so, measure the other pages
                rows.append(
                    (
                        f"Page {title} [{label}]: first run / rerun p50 · p95",
                        "not measured",
                        f"{type(e).__name__}: {str(e)[:160]}",
                    )
                )
                continue
            query = {"source": "bundled", **({"variant": variant} if variant else {})}
            at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=600)
            for k, v in query.items():
                at.query_params[k] = v
            at.run()
            t, c = time.perf_counter(), time.process_time()
            at.switch_page(path)
            for k, v in query.items():
                at.query_params[k] = v
            at.run()
            first, first_cpu = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
            broken = bool(at.exception or at.error)
            samples, cpu, what = [], [], "rerun"
            for _ in range(repeats):
                at, what = nudge(at, slug)
                t, c = time.perf_counter(), time.process_time()
                at.run()
                samples.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
                broken = broken or bool(at.exception or at.error)
            err = " (exception or error box!)" if broken else ""
            loads = f"models ({', '.join(keys)}) loaded before, {load_s:.1f} s" if keys else "no models"
            rows.append(
                (
                    f"Page {title} [{label}]: first run / rerun p50 · p95",
                    f"{fmt_ms(first)} / {fmt_ms(pct(samples, 0.5))} · {fmt_ms(pct(samples, 0.95))}{err}",
                    f"rerun after {what}, {repeats} reruns (AppTest); CPU time first {fmt_ms(first_cpu)}, rerun p50 "
                    f"{fmt_ms(pct(cpu, 0.5))}; {loads}; {load_note}",
                )
            )
            print(f"[benchmark]   {rows[-1][0]} {rows[-1][1]} ({rows[-1][2][:80]})", flush=True)
    finally:
        ui_loading._load.clear()
        ui_loading._load_pair.clear()
        if before is None:
            os.environ.pop("BVE_BUNDLED_DIR", None)
        else:
            os.environ["BVE_BUNDLED_DIR"] = before
    return rows


def catalogue_label(key: str) -> str:
    from app.models import catalogue

    return catalogue.get(key).label


BASESIZE_DIR = Path(os.environ.get("BVE_BASESIZE_DIR", Path("/tmp") / "bve-basesize"))


def cuda_rows() -> list[tuple]:
    """Each variant's forward on the GPU, base size and float16, when there is one. Without one it writes no
    row (and says so on stderr): CUDA rows measured on a GPU host are kept, never replaced by "not measured"."""
    import torch

    from app.models import device as devices

    if not devices.cuda_available():
        print("cuda: no usable GPU on this machine; the CUDA rows are left as they are", file=sys.stderr)
        return []
    from app.models import catalogue, loading
    from tests import basesize

    before = os.environ.get("BVE_BUNDLED_DIR")
    os.environ["BVE_BUNDLED_DIR"] = str(basesize.build(BASESIZE_DIR))
    rows = []
    try:
        for key, v in catalogue.CATALOGUE.items():
            loaded = loading.load(key, device="cuda", dtype="float16")
            enc = loaded.tokenizer(SENTENCE, return_tensors="pt").to("cuda")
            samples = []
            with torch.inference_mode():
                for i in range(23):
                    torch.cuda.synchronize()
                    t = time.perf_counter()
                    loaded.model(**enc)
                    torch.cuda.synchronize()
                    if i >= 3:
                        samples.append((time.perf_counter() - t) * 1000)
            rows.append(
                (
                    f"CUDA: {v.label} at base size, forward p50/p95",
                    f"{fmt_ms(pct(samples, 0.5))}/{fmt_ms(pct(samples, 0.95))}",
                    f"{torch.cuda.get_device_name()}, {loaded.dtype}, device {loaded.device}",
                )
            )
            del loaded
            torch.cuda.empty_cache()
    finally:
        if before is None:
            os.environ.pop("BVE_BUNDLED_DIR", None)
        else:
            os.environ["BVE_BUNDLED_DIR"] = before
    return rows


def variants(repeats: int) -> list[tuple]:
    """Load time, single-sentence forward latency and memory of every catalogue variant."""
    import torch

    from app.core import preload
    from app.models import catalogue, loading

    preload.load()  # the imports are the start-up rows' floor, not a model's load time (run alone, the first
    # model's load took them: 3.8 s)
    rows = []
    total_load = 0.0
    for key, v in catalogue.CATALOGUE.items():
        if not v.bundled_available():
            rows.append((f"Variant {v.label}", "not built", ""))
            continue
        t = time.perf_counter()
        loaded = loading.load(key)
        load_s = time.perf_counter() - t
        total_load += load_s
        enc = loaded.tokenizer(SENTENCE, return_tensors="pt")
        with torch.inference_mode():
            for _ in range(3):
                loaded.model(**enc)
            samples = []
            for _ in range(repeats):
                t = time.perf_counter()
                loaded.model(**enc)
                samples.append((time.perf_counter() - t) * 1000)
        params = {p.data_ptr(): p for p in loaded.model.parameters()}
        mem = sum(p.numel() * p.element_size() for p in params.values()) / 2**20
        rows.append(
            (
                f"Variant {v.label}: load · forward p50/p95 ({enc['input_ids'].shape[1]} tokens)",
                f"{load_s * 1000:.0f} ms · {fmt_ms(pct(samples, 0.5))}/{fmt_ms(pct(samples, 0.95))}",
                f"{sum(p.numel() for p in params.values()) / 1e6:.2f} M parameters, "
                f"{mem:.1f} MiB weights, {loaded.device}",
            )
        )
    rows.append(("All bundled checkpoints: total load time (CPU)", f"{total_load:.2f} s", "budget ≤ 3 s"))
    return rows


def fill_mask_vs_pipeline(repeats: int) -> list[tuple]:
    """Our fill-mask (one forward, top-k at the mask) against transformers' pipeline on the same model."""
    import torch
    from transformers import pipeline

    from app.models import loading

    loaded = loading.load("bert")
    tok, model = loaded.tokenizer, loaded.model
    text = f"The little girl found a {tok.mask_token} ball in the park."

    def ours():
        enc = tok(text, return_tensors="pt")
        with torch.inference_mode():
            logits = model(**enc).logits[0]
        pos = (enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0]
        return torch.softmax(logits[pos], -1).topk(5)

    t = time.perf_counter()
    pipe = pipeline("fill-mask", model=model, tokenizer=tok, device=-1)
    build_ms = (time.perf_counter() - t) * 1000
    out = []
    for fn in (ours, lambda: pipe(text, top_k=5)):
        for _ in range(3):
            fn()
        samples = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t) * 1000)
        out.append(pct(samples, 0.5))
    return [
        (
            "Fill-mask top-5, BERT stand-in: ours vs transformers pipeline (p50)",
            f"{fmt_ms(out[0])} vs {fmt_ms(out[1])} ({out[1] / out[0]:.1f}× faster)",
            f"pipeline construction adds {fmt_ms(build_ms)}",
        )
    ]


def lesson_sections() -> list[tuple]:
    """Rows that lessons contribute: scripts/bench_<lesson>.py with a bench_rerun() returning {name: ms}."""
    import importlib.util

    rows = []
    for f in sorted((ROOT / "scripts").glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(f.stem, f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if hasattr(mod, "bench_rerun"):
            for name, value in mod.bench_rerun().items():
                rows.append(
                    (
                        f"{f.stem.removeprefix('bench_')}: {name}",
                        fmt_ms(value) if isinstance(value, (int, float)) else str(value),
                        "",
                    )
                )
    return rows


CLASS_EVENTS: Path | None = None  # --events: where the class run writes every interaction and server sample


CLASS_CONTROLS = (
    '[data-testid="stMain"] [data-testid="stNumberInputStepUp"], [data-testid="stMain"] [data-testid="stSlider"]'
)


async def _class_tab(browser, blocked: list, errors: list):
    """(context, page): a chromium tab that reaches loopback only (other requests into ``blocked``) and records
    console errors and page errors into ``errors`` (Streamlit's 404 base-path probes on a deep link are by design)."""
    from urllib.parse import urlparse

    from tests.e2e.browser import LOOPBACK

    context = await browser.new_context(viewport={"width": 1280, "height": 800})

    async def route(r):
        if (urlparse(r.request.url).hostname or "") in LOOPBACK or r.request.url.startswith(("data:", "blob:")):
            await r.continue_()
        else:
            blocked.append(r.request.url)
            await r.abort()

    await context.route("**/*", route)
    page = await context.new_page()
    page.set_default_timeout(120_000)
    probes = []  # Streamlit's base-path probes on a deep link (/<page>/_stcore/health): 404 by design
    page.on("response", lambda r: probes.append(1) if r.status == 404 and "/_stcore/" in r.url else None)
    page.on(
        "console",
        lambda m: (
            (probes.pop() if probes and "status of 404" in m.text else errors.append(f"console: {m.text}"))
            if m.type == "error"
            else None
        ),
    )
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    return context, page


async def _open_lesson(page, url: str, done_js: str):
    """Open ``url`` and wait for its run to end; returns (the control a student changes, its kind: "step" for a
    number input's +, "slider", or "reload" where the page has neither)."""
    control = page.locator(CLASS_CONTROLS).locator("visible=true").first
    await page.goto(url, timeout=300_000)
    await page.wait_for_function(done_js, timeout=300_000, polling=100)
    try:  # the page's widgets are drawn a beat after its script has finished
        await control.wait_for(state="visible", timeout=120_000)
        kind = "slider" if await control.get_attribute("data-testid") == "stSlider" else "step"
        # pin that widget by its key (Streamlit's st-key-<key> class): "the first visible control"
        # is a different widget later, while the rest of the page is still being drawn
        key = await control.evaluate("""e => { const c = e.closest('[class*="st-key-"]');
            return c ? [...c.classList].find(x => x.startsWith('st-key-')) : null; }""")
        inner = 'input[type="range"]' if kind == "slider" else '[data-testid="stNumberInputStepUp"]'
        control = page.locator(f'[data-testid="stMain"] .{key} {inner}' if key else inner).first
    except Exception:
        kind = "reload"  # no number input or slider on this page: a student reloads it with a new seed
    return control, kind


async def _interact(page, control, kind: str, reload_url: str, done_js: str, left) -> None:
    """One student's change (``kind`` from :func:`_open_lesson`), then the wait for the page's rerun to end;
    ``left()`` is the milliseconds left of the interaction's 60 s."""
    before = page.url
    if kind == "step":  # the first number input's +
        await control.click(timeout=left())
    elif kind == "slider":  # one keyboard step, back down at the end of the range
        value, top = float(await control.input_value()), float(await control.get_attribute("max"))
        await control.focus()
        await control.press("ArrowRight" if value < top else "ArrowLeft")
    else:
        await page.goto(reload_url, timeout=left())
    if kind != "reload":  # the rerun has happened when the page has written the new value to the URL
        await page.wait_for_function("u => location.href !== u", arg=before, timeout=left(), polling=100)
    await page.wait_for_function(done_js, timeout=left(), polling=100)


def _watch_server(stop, samples: list, t_zero: float) -> None:
    """The server's CPU seconds and thread count, once a second, into ``samples`` until ``stop`` is set."""
    pid = _server_pid()
    while pid and not stop.wait(1.0):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            threads = next(
                int(x.split()[1])
                for x in Path(f"/proc/{pid}/status").read_text().splitlines()
                if x.startswith("Threads:")
            )
        except (OSError, StopIteration):
            return
        samples.append(
            {
                "t": time.perf_counter() - t_zero,
                "cpu_s": (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK"),
                "threads": threads,
                "load1": os.getloadavg()[0],
            }
        )


def _class_at_once_rows(sessions, seconds, think, slugs, errors, reruns, events, blocked, opened, samples, rss):
    """The rows of :func:`class_at_once`."""
    first = min((e["t"] for e in events), default=None)
    busy = [x for x in samples if first is not None and x["t"] >= first]
    share = (
        (busy[-1]["cpu_s"] - busy[0]["cpu_s"]) / (busy[-1]["t"] - busy[0]["t"]) / (os.cpu_count() or 1)
        if len(busy) > 1
        else None
    )
    kinds = __import__("collections").Counter(e["action"] for e in events)
    what = f"A class at once, a change every {think:g} s"
    return [
        (
            f"{what}: {sessions} browser tabs × {seconds:.0f} s on {', '.join('/' + s for s in slugs)}",
            f"{len(errors)} errors",
            f"{len(reruns)} interactions ({', '.join(f'{n} {k}' for k, n in kinds.items())}); "
            f"{len(blocked)} blocked network requests; "
            + (
                ", ".join(
                    f"{n}× {k}"
                    for k, n in __import__("collections")
                    .Counter(e.split(" on ")[0].split(" opening ")[0][:60] for e in errors)
                    .most_common(3)
                )
                or "no errors"
            ),
        ),
        (
            f"{what}: all tabs open together on a fresh server → the last one interactive",
            f"{max(opened):.0f} s" if opened else "—",
            f"{sessions} renderers load the frontend at once; then the class interacts for {seconds:.0f} s",
        ),
        (
            f"{what}: rerun p50 · p95 under load",
            f"{fmt_ms(pct(reruns, 0.5))} · {fmt_ms(pct(reruns, 0.95))}" if reruns else "—",
            "widget change → page rerun and finished, in the browser",
        ),
        (
            f"{what}: the server's share of the 2 cores",
            f"{share:.0%}" if share is not None else "?",
            "the headless renderers take the rest: the browsers, not the server, set the pace here",
        ),
        (f"{what}: server peak memory", f"{rss:.0f} MiB" if rss else "?", "VmHWM of the streamlit process"),
    ]


def class_at_once(sessions: int = 20, seconds: float = 120.0, think: float = 5.0) -> list[tuple]:
    """A class at once: ``sessions`` chromium tabs open the lesson pages together on a fresh server; once every tab has
    opened, the class interacts for ``seconds`` (starts spread over one ``think``): each changes the first visible
    number input (its +) or slider (one keyboard step) on its page, waits until the page has rerun (the URL carries the
    new value and the script has finished), reads the result for ``think`` seconds, and again. Counts errors (console
    errors, exception boxes, interactions that take over 60 s), times each interaction, and reads the server's peak
    memory. Models are shared through st.cache_resource, not loaded per session."""
    import asyncio
    import threading

    from playwright.async_api import async_playwright

    from app.lessons import LESSONS
    from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_server

    done_js = """() => { const a = document.querySelector('[data-testid="stApp"]');
                         return a && a.getAttribute('data-test-script-state') === 'notRunning'
                                && document.querySelector('h1'); }"""
    state_js = """() => { const a = document.querySelector('[data-testid="stApp"]');
                          const w = document.querySelector('[data-testid="stStatusWidget"]');
                          return {script: a && a.getAttribute('data-test-script-state'),
                                  h1: !!document.querySelector('h1'),
                                  status: w ? w.innerText.slice(0, 80) : null, url: location.href}; }"""
    slugs = [lesson.slug for lesson in LESSONS] or [""]
    reruns, errors, blocked, events, opened = [], [], [], [], []
    everyone = None  # set in run(): every tab has opened its page
    t_zero = time.perf_counter()

    async def student(browser, base, i):

        context, page = await _class_tab(browser, blocked, errors)
        slug = slugs[i % len(slugs)]
        try:
            control, kind = await _open_lesson(page, f"{base}/{slug}?seed={i}", done_js)
        except Exception as e:
            errors.append(f"{type(e).__name__} opening /{slug}")
            await context.close()
            return
        finally:  # the class starts interacting once every tab has opened (or failed to)
            opened.append(time.perf_counter() - t_zero)
            if len(opened) == sessions:
                everyone.set()
        await everyone.wait()
        await asyncio.sleep(think * i / sessions)  # students do not all click in the same instant
        end = time.perf_counter() + seconds
        k = 0
        while time.perf_counter() < end:
            k += 1
            t = time.perf_counter()
            left = lambda: max(1.0, 60_000 - (time.perf_counter() - t) * 1000)  # noqa: E731  (60 s in all)
            try:
                await _interact(page, control, kind, f"{base}/{slug}?seed={i * 1000 + k}", done_js, left)
            except Exception as e:  # a session that stalls is an error of the run, not a crash of the script
                errors.append(f"{type(e).__name__} on /{slug} after {time.perf_counter() - t:.0f} s")
                try:
                    seen = await page.evaluate(state_js)
                except Exception as e2:
                    seen = {"evaluate": type(e2).__name__}
                events.append(
                    {
                        "student": i,
                        "slug": slug,
                        "action": kind,
                        "t": t - t_zero,
                        "s": time.perf_counter() - t,
                        "error": type(e).__name__,
                        "seen": seen,
                    }
                )
                continue
            reruns.append((time.perf_counter() - t) * 1000)
            events.append({"student": i, "slug": slug, "action": kind, "t": t - t_zero, "s": time.perf_counter() - t})
            for box in await page.query_selector_all('[data-testid="stException"]'):
                errors.append(f"exception box on /{slug}: {(await box.inner_text())[:200]}")
            await page.wait_for_timeout(think * 1000)  # a student reads the result
        await context.close()

    async def run(base):
        nonlocal everyone
        everyone = asyncio.Event()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            await asyncio.gather(*(student(browser, base, i) for i in range(sessions)))
            await browser.close()

    samples = []
    with streamlit_server() as (base, _):
        stop = threading.Event()
        t_zero = time.perf_counter()
        watcher = threading.Thread(target=_watch_server, args=(stop, samples, t_zero), daemon=True)
        watcher.start()
        asyncio.run(run(base))
        stop.set()
        rss = _server_peak_rss_mib()
    if CLASS_EVENTS:
        import json

        CLASS_EVENTS.write_text(json.dumps({"events": events, "server": samples, "errors": errors}, indent=1))
    return _class_at_once_rows(sessions, seconds, think, slugs, errors, reruns, events, blocked, opened, samples, rss)


CLASS_SIZES = (20, 30)  # class-server: the class sizes measured (--class-sizes)


def class_server_only(seconds: float = 120.0) -> list[tuple]:
    """The same class without browsers, of each size in :data:`CLASS_SIZES`, at two paces: every half second (as
    ``class-stress``) and every five seconds (as ``class``: a class following a lecture)."""
    return [row for sessions in CLASS_SIZES for think in (0.5, 5.0) for row in _class_server(sessions, seconds, think)]


SETTLE_MAX_S = 90.0  # the longest a class run waits for the machine's load average to fall before it starts


def _settle(max_s: float = SETTLE_MAX_S) -> None:
    """Before a class run: wait until the 1-minute load average is below half the cores, at most ``max_s``. The
    runs follow each other, and the load average trails the CPU by about a minute: the run after a run started
    "under load" from its predecessor alone (2026-11-29: load 2.8 on an idle machine). Other work on the machine
    keeps it high: then the run starts after ``max_s`` all the same, and its row says so."""
    cores = os.cpu_count() or 1
    end = time.perf_counter() + max_s
    while os.getloadavg()[0] > 0.5 * cores and time.perf_counter() < end:
        time.sleep(2)


def _machine_load() -> str:
    """The machine and how busy it is now: CPU, cores, 1-minute load average (the class rows are taken as they come,
    once :func:`_settle` has waited for the previous run's load to fade: a row whose machine was still busy says
    so)."""
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    return f"{cpu_name()}, {cores} cores, load average {load:.1f}" + (
        " (MEASURED UNDER LOAD)" if load > 0.5 * cores else ""
    )


#: a student's reading time between two changes, as a share of the pace's ``think``: uniform, mean 1. With every
#: student reading exactly ``think`` seconds, a class of 30 at 5 s had a rerun p95 of 1.4-1.9 s in 3 of 5 runs on
#: 2026-11-29, against 0.8 s in a run that did not lock into waves. In the run traced, a moment of congestion made a
#: few reruns end together, they came back together 5 s later, slower for it, and more joined each wave; after a
#: minute all 30 reran at once every 6.5 s, each rerun taking 1.3-2.3 s. Real students do not read in step.
READING = (0.5, 1.5)


def _drive_class(base: str, sessions: int, seconds: float, think: float, connect, entered=None):
    """The class runs' session driver: ``sessions`` websocket sessions (``await connect(base, slug)`` gives one, an
    async context manager speaking Streamlit's protocol: tests/e2e/stclient.py) open the lessons together, then each
    changes its first number input (or reopens with a new seed) about ``think`` seconds (:data:`READING`) after its
    page opened and after each rerun has finished, for ``seconds`` (until 2026-11-29 the first change came at once
    after the open, so the first sessions' reruns competed with the others' openings, and every student read exactly
    ``think`` seconds).
    ``entered(session)``, if given, sees each session once it is open. Returns (open times in ms, rerun times in ms,
    errors, wall seconds); a timeout, an exception box or a closed websocket is an error, not a crash."""
    import asyncio

    from app.lessons import LESSONS

    slugs = [lesson.slug for lesson in LESSONS] or [""]
    opens, reruns, errors = [], [], []

    async def timed(request, slug: str, what: str, into: list):
        """Await one open or rerun: its time into ``into``, a timeout or an exception into errors."""
        try:
            run = await request
        except TimeoutError:
            errors.append(f"timeout {what} /{slug}")
            return None
        except Exception as e:  # noqa: BLE001 — a closed websocket is a finding
            errors.append(f"{type(e).__name__} {what} /{slug}")
            return None
        into.append(run.seconds * 1000)
        errors.extend(f"exception on /{slug}: {x}" for x in run.exceptions)
        return run

    async def student(i):
        slug = slugs[i % len(slugs)]
        reads = random.Random(i)  # this student's reading times, the same in every run
        async with await connect(base, slug) as s:
            if entered is not None:
                entered(s)
            if not await timed(s.open(slug, f"seed={i}", timeout=300), slug, "opening", opens):
                return
            end, k = time.perf_counter() + seconds, 0
            while True:
                await asyncio.sleep(think * reads.uniform(*READING))  # a student reads the page first, the
                # opened page too, for about ``think`` seconds
                if time.perf_counter() >= end:
                    break
                k += 1
                if s.last.number_inputs:
                    label, (_, value, _) = next(iter(s.last.number_inputs.items()))
                    request = s.set_number(label, value + 1, timeout=60)
                else:
                    request = s.open(slug, f"seed={i * 1000 + k}", timeout=60)
                if not await timed(request, slug, "(60 s) on", reruns):
                    return

    async def run():
        await asyncio.gather(*(student(i) for i in range(sessions)))

    t = time.perf_counter()
    asyncio.run(run())
    return opens, reruns, errors, time.perf_counter() - t


def _class_server(sessions: int, seconds: float, think: float) -> list[tuple]:
    """``sessions`` websocket sessions speak Streamlit's protocol (tests/e2e/stclient.py), open the
    lessons together on a fresh server and change their first number input (or reopen with a new seed)
    ``think`` seconds after each rerun has finished, for ``seconds``. What the server alone can do with
    the 2 cores to itself: a real class brings its own browsers."""
    from tests.e2e.browser import SERVER_PIDS, rss_mib, streamlit_server
    from tests.e2e.stclient import Session

    async def connect(base, slug):
        return Session(base)

    _settle()
    before = _machine_load()
    with streamlit_server() as (base, _):
        opens, reruns, errors, wall = _drive_class(base, sessions, seconds, think, connect)
        peak = rss_mib(SERVER_PIDS[base], "VmHWM")
    after = os.getloadavg()[0]
    what = f"A class of {sessions} at once, server only, a change every {think:g} s"
    return [
        (
            f"{what}: {sessions} websocket sessions × {seconds:.0f} s, no browsers",
            f"{len(errors)} errors",
            f"{len(reruns)} reruns in {wall:.0f} s; "
            + ("; ".join(errors[:3]) or "no exceptions, no timeouts")
            + f"; {before} before the run, {after:.1f} after it",
        ),
        (
            f"{what}: all open together on a fresh server p50 · p95",
            f"{fmt_ms(pct(opens, 0.5))} · {fmt_ms(pct(opens, 0.95))}" if opens else "—",
            "includes the first imports and model loads",
        ),
        (
            f"{what}: rerun p50 · p95",
            f"{fmt_ms(pct(reruns, 0.5))} · {fmt_ms(pct(reruns, 0.95))}" if reruns else "—",
            "widget change sent → script finished, at the websocket",
        ),
        (f"{what}: server peak memory", f"{peak:.0f} MiB", "VmHWM"),
    ]


REPLICA_SESSIONS, REPLICA_SECONDS = 20, 120.0  # --replica-sessions, --replica-seconds


def class_replicas() -> list[tuple]:
    """The class of ``class-server`` through nginx over 2 app processes (``python -m app.deploy``: redis-server, the
    processes with their warm start, nginx with cookie affinity), at the same two paces."""
    return _class_replicas(REPLICA_SESSIONS, REPLICA_SECONDS, 0.5) + _class_replicas(
        REPLICA_SESSIONS, REPLICA_SECONDS, 5.0
    )


def _class_replicas(sessions: int, seconds: float, think: float, replicas: int = 2) -> list[tuple]:
    """As :func:`_class_server`, through nginx: each session loads its page first (nginx's affinity cookie comes
    with it) and opens its websocket with that cookie (tests/e2e/balanced.py), so the sessions spread over the
    processes as browsers would. Which process holds each session is read from nginx's ``X-BVE-Upstream``."""
    import asyncio
    from collections import Counter

    from app.deploy import Deployment, free_port
    from tests.e2e.balanced import BalancedSession, first_visit
    from tests.e2e.browser import rss_mib

    spread = Counter()
    _settle()
    load_before = os.getloadavg()[0]

    async def connect(base, slug):
        cookie, _ = await asyncio.to_thread(first_visit, base, f"/{slug}")
        return BalancedSession(base, cookie)

    def entered(session):
        spread[session.served_by] += 1

    with Deployment(
        replicas,
        port=free_port(),
        host="127.0.0.1",
        restart=False,
        served_by=True,
        env={"HF_HUB_OFFLINE": "1", "BVE_WARM_START": "1"},
    ) as d:
        opens, reruns, errors, wall = _drive_class(d.url, sessions, seconds, think, connect, entered)
        peaks = [rss_mib(p.pid, "VmHWM") for p in d.apps]
    cores = os.cpu_count() or 1
    machine = (
        "MEASURED UNDER LOAD (other work, or the previous run's load still fading): provisional; "
        if load_before > 0.5 * cores
        else ""
    ) + f"{cpu_name()}, {cores} CPU cores, load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    what = f"A class of {sessions} through nginx over {replicas} app processes, a change every {think:g} s"
    return [
        (
            f"{what}: websocket sessions × {seconds:.0f} s, no browsers",
            f"{len(errors)} errors",
            f"{len(reruns)} reruns in {wall:.0f} s; sessions per process {sorted(spread.values())} (cookie affinity); "
            + ("; ".join(errors[:3]) or "no exceptions, no timeouts")
            + f"; {machine}",
        ),
        (
            f"{what}: all open together on fresh servers p50 · p95",
            f"{fmt_ms(pct(opens, 0.5))} · {fmt_ms(pct(opens, 0.95))}" if opens else "—",
            "includes each process's first imports and model loads; "
            "nginx, redis-server and the sessions on the same machine",
        ),
        (
            f"{what}: rerun p50 · p95",
            f"{fmt_ms(pct(reruns, 0.5))} · {fmt_ms(pct(reruns, 0.95))}" if reruns else "—",
            "widget change sent → script finished, at the websocket, through nginx",
        ),
        (f"{what}: peak memory per process", " · ".join(f"{x:.0f} MiB" for x in peaks), "VmHWM of each app process"),
    ]


# ----------------------------------------------------------------------------- Ask the class (the light page)

#: the benchmark's presenter under plain ``streamlit run`` (in-process rooms live in the server): each session run
#: does what its query string says and writes the room's state to $BVE_BENCH_OUT (code, secret, tally, timings)
_CLASS_PRESENTER = '''
import json, os, time
import streamlit as st
from app.classroom import mount, rooms
mount.attach()
out, r, do = os.environ["BVE_BENCH_OUT"], rooms.rooms(), st.query_params.get("do", "")
state = json.load(open(out)) if os.path.exists(out) else {}
t = time.perf_counter()
if do == "create":
    state["code"], state["secret"] = r.create()
elif do == "ask":
    state["asked"] = r.ask(state["code"], state["secret"], json.loads(os.environ["BVE_BENCH_QUESTION"]))
elif do == "tally":
    state["tally"], state["count"] = r.tally(state["code"], state["secret"]), r.view(state["code"])["count"]
elif do == "close":
    state["closed"] = r.close(state["code"], state["secret"])
state["seconds"] = time.perf_counter() - t
st.write(state.get("count", 0))
json.dump(state, open(out, "w"))
'''


class _Wire:
    """A phone's one HTTP/1.1 keep-alive connection, counting the bytes it sends and receives on the wire (what a
    hall's access point carries, headers included). Asks for gzip as browsers do; reads Content-Length or chunked
    bodies."""

    def __init__(self, host: str, port: int):
        self.host, self.port, self.sent, self.received = host, port, 0, 0
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None):
        import asyncio
        import gzip

        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        head = {
            "Host": f"{self.host}:{self.port}",
            "User-Agent": "Mozilla/5.0 (phone; benchmark)",
            "Accept": "*/*",
            "Accept-Encoding": "gzip, deflate, br",
            "Accept-Language": "en",
            "Connection": "keep-alive",
            **(headers or {}),
        }
        if body:
            head["Content-Length"] = str(len(body))
        raw = (f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n").encode()
        self.writer.write(raw + body)
        self.sent += len(raw) + len(body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        got, status, hdrs = len(status_line), int(status_line.split()[1]), {}
        while True:
            line = await self.reader.readline()
            got += len(line)
            if line in (b"\r\n", b""):
                break
            k, _, v = line.decode("latin-1").partition(":")
            hdrs[k.strip().lower()] = v.strip()
        if "content-length" in hdrs:
            data = await self.reader.readexactly(int(hdrs["content-length"]))
            got += len(data)
        elif hdrs.get("transfer-encoding") == "chunked":
            data = b""
            while True:
                size_line = await self.reader.readline()
                size = int(size_line.split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                got += len(size_line) + len(chunk)
                if size == 0:
                    break
                data += chunk[:-2]
        else:
            data = b""
        self.received += got
        if hdrs.get("content-encoding") == "gzip":
            data = gzip.decompress(data)
        if hdrs.get("connection") == "close":
            self.close()
        return status, data

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def class_ask(phones: int = 200, window_s: float = 30.0) -> list[tuple]:
    """Ask the class: ``phones`` simulated phones (asyncio, one HTTP/1.1 connection each, no browser) join a room on
        the light page, poll its state as the page does (every 1.5 s while a question is open, 2.5 s while waiting;
    ±20 %), and answer one question within
        ``window_s`` seconds of its opening; a quarter change their answer once. Once on one app process with the rooms
        in memory (the default; the presenter is a Streamlit session under plain ``streamlit run``, so ``mount.attach``
        serves the routes), and once on two app processes (``python -m app.serve``) sharing the room through a real
        redis-server, the phones split between them (the presenter holds the secret through ``RedisRooms``).

        Measured: errors (any failed request or refused answer), answers lost or double-counted (the presenter's tally
        against the last answer each phone had acknowledged), the answer round trip (POST sent → response read), the
        count's lag (a projector reading the count every 0.2 s, as the presenter's view() would: from the k-th answer
        acknowledged to the projector first seeing a count ≥ k), and the bytes each phone moved on the wire to join (the
        page and its first state) and to answer (everything from joining to its answer acknowledged)."""
    import shutil

    rows = _class_ask_rows("in process, 1 app process", *_class_ask_in_process(phones, window_s), phones, window_s)
    if shutil.which("redis-server"):
        rows += _class_ask_rows("Redis, 2 app processes", *_class_ask_redis(phones, window_s), phones, window_s)
    else:
        rows.append(
            ("Class: Redis, 2 app processes", "—", "redis-server is not installed (apt-get install redis-server)")
        )
    return rows


def _class_question():
    from app.classroom.question import Question

    return Question(
        "masking",
        "Which word goes in [MASK]? The child threw the [MASK] over the fence.",
        "choice",
        ("ball", "stone", "toy", "hat"),
        answer=("ball",),
        model=(("ball", 0.44), ("toy", 0.30)),
    )


def _class_ask_in_process(phones: int, window_s: float):
    import asyncio
    import json
    import subprocess
    import tempfile
    import urllib.request

    from tests.e2e.browser import free_port
    from tests.e2e.stclient import Session

    q = _class_question()
    with tempfile.TemporaryDirectory(prefix="bve-class-bench-") as tmp:
        script, out = Path(tmp) / "presenter.py", Path(tmp) / "state.json"
        script.write_text(_CLASS_PRESENTER)
        port = free_port()
        env = {
            **os.environ,
            "BVE_BENCH_OUT": str(out),
            "BVE_BENCH_QUESTION": json.dumps(q.to_dict()),
            "PYTHONPATH": str(ROOT),
            "BVE_WARM_START": "0",
        }
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(script),
                "--server.headless=true",
                f"--server.port={port}",
                "--server.address=127.0.0.1",
                "--browser.gatherUsageStats=false",
                "--server.fileWatcherType=none",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            end = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2):
                        break
                except OSError:
                    if time.monotonic() > end or proc.poll() is not None:
                        raise RuntimeError("the presenter's streamlit did not start")
                    time.sleep(0.2)
            reruns: list[float] = []

            async def presenter(do: str) -> dict:
                async with Session(base) as s:
                    t = time.perf_counter()
                    run = await s.open("", f"do={do}", timeout=60)
                    reruns.append((time.perf_counter() - t) * 1000)
                    if run.exceptions:
                        raise RuntimeError(f"presenter {do}: {run.exceptions[0]}")
                return json.loads(out.read_text())

            async def main():
                await presenter("create")
                return await _class_run([("127.0.0.1", port)], presenter, q, phones, window_s)

            result = asyncio.run(main())
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return result + (reruns,)


def _class_ask_redis(phones: int, window_s: float):
    import asyncio
    from contextlib import ExitStack

    from app.classroom.rooms import RedisRooms
    from tests.classroom_redis import redis_server
    from tests.e2e.browser import streamlit_server

    q = _class_question()
    reruns: list[float] = []
    with ExitStack() as stack:
        url = stack.enter_context(redis_server())
        env = {"BVE_REDIS_URL": url, "BVE_WARM_START": "0"}
        bases = [stack.enter_context(streamlit_server(env=env))[0] for _ in range(2)]
        store = RedisRooms(url)
        code, secret = store.create()
        state = {"code": code, "secret": secret}

        async def presenter(do: str) -> dict:
            t = time.perf_counter()
            if do == "ask":
                state["asked"] = await asyncio.to_thread(store.ask, code, secret, q.to_dict())
            elif do == "tally":
                state["tally"] = await asyncio.to_thread(store.tally, code, secret)
                state["count"] = (await asyncio.to_thread(store.view, code))["count"]
            elif do == "close":
                state["closed"] = await asyncio.to_thread(store.close, code, secret)
            reruns.append((time.perf_counter() - t) * 1000)
            return dict(state)

        hosts = [("127.0.0.1", int(b.rsplit(":", 1)[1])) for b in bases]
        result = asyncio.run(_class_run(hosts, presenter, q, phones, window_s))
    return result + (reruns,)


async def _class_run(hosts, presenter, q, phones: int, window_s: float):
    """The class itself: join, poll, answer (some twice), then read the tally. Returns (errors, expected tally, the
    presenter's tally, round trips in ms, count lags in ms, bytes per phone to join, bytes per phone to answer)."""
    import asyncio
    import json
    import random
    from collections import Counter

    rng = random.Random(50)
    code = (await presenter("noop"))["code"]  # the room exists: the caller made it
    errors: list[str] = []
    final: dict[str, str] = {}
    acks: list[float] = []  # when each phone's first answer was acknowledged
    rtts: list[float] = []
    join_bytes, answer_bytes = [], []
    stop = asyncio.Event()
    seen: list[tuple[float, int]] = []

    async def phone(i: int):
        host, port = hosts[i % len(hosts)]
        wire = _Wire(host, port)
        client = f"bench-{i:04d}-{rng.getrandbits(48):012x}"
        try:
            await asyncio.sleep(rng.uniform(0, 5))  # the hall joins over 5 s
            status, _ = await wire.request("GET", f"/class/{code}", headers={"Accept": "text/html"})
            if status != 200:
                errors.append(f"page {status}")
                return
            version, view = None, None
            status, data = await wire.request("GET", f"/class/{code}/state")
            view = json.loads(data)
            version = view["version"]
            join_bytes.append(wire.sent + wire.received)
            answered_at = None
            plan: list[float] = []
            while not stop.is_set():  # the page's pace: 1.5 s while a question is open or closed, else 2.5 s
                await asyncio.sleep((1.5 if view["status"] in ("open", "closed") else 2.5) * rng.uniform(0.8, 1.2))
                status, data = await wire.request("GET", f"/class/{code}/state?v={version}")
                if status != 200:
                    errors.append(f"state {status}")
                    continue
                s = json.loads(data)
                if "question" in s:
                    view, version = s, s["version"]
                if view["status"] == "open" and view["question"] and not plan and answered_at is None:
                    start = time.perf_counter()
                    first = rng.uniform(1, window_s - 8)
                    plan = [start + first] + ([start + first + rng.uniform(1, 5)] if rng.random() < 0.25 else [])
                while plan and time.perf_counter() >= plan[0]:
                    plan.pop(0)
                    value = rng.choice(view["question"]["choices"])
                    body = json.dumps({"qid": view["question"]["id"], "client": client, "value": value}).encode()
                    t = time.perf_counter()
                    status, data = await wire.request(
                        "POST", f"/class/{code}/answer", body, {"Content-Type": "application/json"}
                    )
                    rtts.append((time.perf_counter() - t) * 1000)
                    if status == 200 and json.loads(data).get("ok"):
                        if client not in final:
                            acks.append(time.perf_counter())
                            answer_bytes.append(wire.sent + wire.received)
                        final[client] = value
                        answered_at = answered_at or time.perf_counter()
                    else:
                        errors.append(f"answer {status} {data[:40]!r}")
        except Exception as e:  # noqa: BLE001 — a phone's failure is a finding
            errors.append(f"{type(e).__name__}: {e}")
        finally:
            wire.close()

    async def projector():
        wire = _Wire(*hosts[-1])
        try:
            while not stop.is_set():
                status, data = await wire.request("GET", f"/class/{code}/state")
                if status == 200:
                    seen.append((time.perf_counter(), json.loads(data)["count"]))
                await asyncio.sleep(0.2)
        finally:
            wire.close()

    async def console():  # the presenter's page reads the tally every 2 s meanwhile, as a live count would
        while not stop.is_set():
            await asyncio.sleep(2)
            await presenter("tally")

    tasks = [asyncio.create_task(phone(i)) for i in range(phones)] + [asyncio.create_task(projector())]
    await asyncio.sleep(6)  # everyone has joined
    await presenter("ask")
    tasks.append(asyncio.create_task(console()))
    await asyncio.sleep(window_s + 2)
    stop.set()
    await asyncio.gather(*tasks)
    got = await presenter("tally")
    expected = Counter(final.values())
    tally = Counter(got.get("tally") or {})
    return errors, expected, tally, rtts, _count_lags(acks, seen, errors), join_bytes, answer_bytes


def _count_lags(acks: list[float], seen: list[tuple[float, int]], errors: list[str]) -> list[float]:
    """For the k-th acknowledged answer, the ms until the projector's count first read k or more (a count that never
    got there is an error)."""
    lags = []
    for k, t in enumerate(sorted(acks), start=1):
        when = next((s for s, c in seen if s >= t and c >= k), None)
        if when is None:
            errors.append(f"count never reached {k}")
        else:
            lags.append((when - t) * 1000)
    return lags


def _class_ask_rows(how: str, errors, expected, tally, rtts, lags, join_bytes, answer_bytes, reruns, phones, window_s):
    from collections import Counter

    lost = sum((expected - tally).values())
    double = sum((tally - expected).values())
    machine = f"{cpu_name()}, {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f}"
    answered = sum(expected.values())

    def kb(xs):
        return f"{statistics.median(xs) / 1000:.1f} KB (max {max(xs) / 1000:.1f})" if xs else "—"

    return [
        (
            f"Class: {phones} phones answer one question ({how}): errors · lost · double-counted",
            f"{len(errors)} · {lost} · {double}",
            f"{answered} of {phones} answered within {window_s:.0f} s, {len(rtts) - answered} re-answers; tally "
            f"{dict(Counter(tally).most_common())} against the last answers acknowledged; "
            + ("; ".join(sorted(set(errors))[:3]) or "no failed request")
            + f"; simulated phones (asyncio, no browser) "
            f"on the same machine ({machine})",
        ),
        (
            f"Class: answer round trip p50 · p95 ({how})",
            f"{fmt_ms(pct(rtts, 0.5))} · {fmt_ms(pct(rtts, 0.95))}" if rtts else "—",
            f"POST /class/CODE/answer sent → response read, {len(rtts)} answers, max {fmt_ms(max(rtts))}; "
            f"the phones poll state every 1.5 s meanwhile (2.5 s before the question)"
            if rtts
            else "",
        ),
        (
            f"Class: count's lag on the projector p50 · p95 ({how})",
            f"{fmt_ms(pct(lags, 0.5))} · {fmt_ms(pct(lags, 0.95))}" if lags else "—",
            "k-th answer acknowledged → a reader of view()'s count every 0.2 s first sees ≥ k "
            "(includes up to 0.2 s of "
            f"polling); max {fmt_ms(max(lags))}"
            if lags
            else "",
        ),
        (
            f"Class: bytes per phone to join · to answer ({how})",
            f"{kb(join_bytes)} · {kb(answer_bytes)}",
            "on the wire, headers included, gzip as a browser asks: join = the page + its first state; answer = "
            "everything from joining to the answer acknowledged (the page, state polls, the POST)",
        ),
        (
            f"Class: presenter call during the class p50 · max ({how})",
            f"{fmt_ms(pct(reruns, 0.5))} · {fmt_ms(max(reruns))}" if reruns else "—",
            f"{len(reruns)} calls, one every 2 s during the class: "
            "a Streamlit session's script run that reads the tally "
            "(a new session each: websocket open → script finished)"
            if "in process" in how
            else f"{len(reruns)} calls, one every 2 s during the class: "
            "RedisRooms.tally + view from the presenter's process",
        ),
    ]


def _server_pid() -> int | None:
    for status in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmdline = status.read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "streamlit" in cmdline and " run " in cmdline and "streamlit_app.py" in cmdline:
            return int(status.parent.name)
    return None


def _server_peak_rss_mib() -> float | None:
    """Peak resident memory of the newest streamlit server process (read from /proc)."""
    best = None
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            cmdline = (status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if "streamlit" in cmdline and "run" in cmdline and "streamlit_app.py" in cmdline:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        best = max(best or 0, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return best


OWN_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, os.environ["BVE_ROOT"])
t0 = time.perf_counter()
from app.core import preload
preload.load()
marks = {"imports": time.perf_counter() - t0}
from app.lecture import deck, handout
from app.models import admission, own
hub_id = os.environ["BVE_OWN_ID"]
spec = admission.admit(hub_id, "masked-lm")
assert isinstance(spec, admission.Admitted), spec
marks["admitted"] = time.perf_counter() - t0
fetched = own.fetch_admitted(spec)
assert fetched.ok, fetched.error
marks["downloaded"] = time.perf_counter() - t0
loaded = own.load_admitted(spec)
marks["loaded"] = time.perf_counter() - t0
view = deck.view("masking", {})
section = handout.section(view, {"bert": loaded}, "")
assert section.figure, section.note
marks["figure"] = time.perf_counter() - t0
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
print(json.dumps({"marks": marks, "peak_mib": peak, "bytes": sum(b for _, b in spec.files),
                  "received": fetched.downloaded}))
"""


def own_checkpoint() -> list[tuple]:
    """Your own checkpoint at base size (issue 28): from a fresh process to the masking lab's key figure on a brought
    model — admission, the download, the load, the lesson's run and its figure, as the handout computes a view — once
    with the download and once from the cache, and the process's peak memory. The model is roberta-base's published
    config with random weights (tests/basesize.py; the bundled tokenizer), served by a loopback hub on this machine
    (tests/hubserver.py): the download's time is this disk and localhost, not a network's."""
    import json
    import subprocess
    import tempfile

    from app.models.catalogue import CATALOGUE
    from tests import basesize
    from tests.hubserver import HubServer, _build_repo

    variant = CATALOGUE["roberta"]
    folder = basesize.build_one(variant, BASESIZE_DIR)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        repo = _build_repo(variant.hub_id, folder, Path(tmp) / "repo", "safetensors", ())
        with HubServer({variant.hub_id: repo}) as hub:
            env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
            env.update(
                HF_HOME=str(Path(tmp) / "hf"),
                HF_ENDPOINT=hub.url,
                BVE_MODEL_LIMIT="off",
                BVE_ROOT=str(ROOT),
                BVE_OWN_ID=variant.hub_id,
            )
            for how in ("with its download", "from the cache"):
                out = subprocess.run(
                    [sys.executable, "-c", OWN_CHILD], env=env, capture_output=True, text=True, timeout=900
                )
                if out.returncode:
                    raise RuntimeError(out.stderr.strip().splitlines()[-1][:200])
                r = json.loads(out.stdout.strip().splitlines()[-1])
                m = r["marks"]
                steps = (
                    f"imports {m['imports']:.1f} s, admission {m['admitted'] - m['imports']:.1f} s, download "
                    f"{m['downloaded'] - m['admitted']:.1f} s, load {m['loaded'] - m['downloaded']:.1f} s, lesson "
                    f"and figure {m['figure'] - m['loaded']:.1f} s"
                )
                rows.append(
                    (
                        f"Your own checkpoint, base size ({variant.hub_id}'s shape), {how}: fresh process → "
                        "masking lab's key figure",
                        f"{m['figure']:.1f} s",
                        f"{steps}; {r['bytes'] / 1e6:.0f} MB of files (weights in float16, loaded as float32), "
                        f"{r['received'] / 1e6:.0f} MB received "
                        "from a loopback hub on this machine; "
                        f"peak memory {r['peak_mib']:.0f} MiB",
                    )
                )
    return rows


NOCHANGE_PAGES = ("masking", "electra", "attention")  # the pages issue 53 measured a no-change rerun on
NOCHANGE_GOAL_MS = 20.0


def nochange_reruns(repeats: int) -> list[tuple]:
    """Per page in :data:`NOCHANGE_PAGES`: the server's own time for a rerun that changes nothing (the script run,
    timed inside Streamlit's script runner, in a child process per page: scripts/nochange_rerun.py), p50 · p95 over
    ``repeats`` reruns, with its thread's CPU time; goal p50 ≤ 20 ms (issue 53)."""
    import json
    import subprocess

    from app.lessons import LESSONS

    rows, load_note = [], _load_note()
    for slug in NOCHANGE_PAGES:
        title = next((lesson.title for lesson in LESSONS if lesson.slug == slug), slug)
        what = f"A rerun that changes nothing, {title}: server time p50 · p95"
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "nochange_rerun.py"), slug, str(repeats)],
            cwd=ROOT, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if done.returncode != 0:
            rows.append((what, "not measured", done.stderr.strip().splitlines()[-1][:200] if done.stderr else "failed"))
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        wall, cpu = got["wall_ms"], got["cpu_ms"]
        met = "met" if pct(wall, 0.5) <= NOCHANGE_GOAL_MS else "NOT MET"
        rows.append(
            (
                what,
                f"{pct(wall, 0.5):.1f} ms · {pct(wall, 0.95):.1f} ms",
                f"the script run of {len(wall)} reruns with nothing changed (AppTest, one script cache, routed as the "
                f"server routes); its thread's CPU p50 {pct(cpu, 0.5):.1f} ms; goal p50 ≤ {NOCHANGE_GOAL_MS:g} ms: "
                f"{met}; {load_note}",
            )
        )
        print(f"[benchmark]   {rows[-1][0]} {rows[-1][1]}", flush=True)
    return rows


SECTIONS = {
    "browser": browser_start,
    "deck": deck_changes,
    "pages": page_reruns,
    "pages-base": lambda repeats: page_reruns(repeats, base_size=True),
    "variants": variants,
    "pipeline": fill_mask_vs_pipeline,
    "cuda": cuda_rows,
    "lessons": lesson_sections,
    "class": class_at_once,
    "class-stress": lambda: class_at_once(think=0.5),
    "class-server": class_server_only,
    "class-ask": class_ask,
    "class-replicas": class_replicas,
    "own": own_checkpoint,
    "nochange": nochange_reruns,
}
TAKES_REPEATS = ("pages", "pages-base", "variants", "pipeline", "nochange")

# ----------------------------------------------------------------------------- BENCHMARKS.md

TABLE_HEAD = ("| what | measured | notes |", "|---|---|---|")
PEAK = "Peak memory of the benchmark process (models + AppTest runs)"
OLD_CLASS_SERVER = "A class at once, server only"  # class-server's rows before they named the class's size
CLASS_SERVER_ROW = re.compile(r"^A class of \d+ at once, server only")
PAGE_ROW = re.compile(r"^Page (.+?)(?: \[([^\]]+)\])?: first run")  # the page's title, [bundled] or [base size]


def parse(text: str) -> tuple[list[str], list[tuple[str, str, str]], str]:
    """BENCHMARKS.md as (the lines before the table, its rows (what, measured, notes), everything after it:
    prose and the sections other tools keep between their markers)."""
    lines = text.splitlines()
    if TABLE_HEAD[0] not in lines:
        return lines, [], ""
    i = lines.index(TABLE_HEAD[0])
    j = i + 2
    rows = []
    while j < len(lines) and lines[j].startswith("|"):
        cells = lines[j].strip().removeprefix("|").removesuffix("|").split(" | ")
        cells = [c.strip() for c in cells]
        rows.append((cells[0], cells[1] if len(cells) > 1 else "", " | ".join(cells[2:])))
        j += 1
    return lines[:i], rows, "\n".join(lines[j:])


def arrange(rows: list[tuple]) -> list[tuple]:
    """Rows in order, except that a page's rows stand side by side where the first of them stood: bundled, then
    base size, then base size on another variant."""
    groups: dict = {}
    for r in rows:
        m = PAGE_ROW.match(r[0])
        groups.setdefault(("page", m.group(1)) if m else ("row", r[0]), []).append(r)

    def rank(row) -> int:
        tag = (PAGE_ROW.match(row[0]).group(2) or "bundled") if PAGE_ROW.match(row[0]) else ""
        return {"bundled": 0, "base size": 1}.get(tag, 2)

    return [r for group in groups.values() for r in sorted(group, key=rank)]


def _mib(measured: str) -> float:
    try:
        return float(measured.split()[0])
    except (ValueError, IndexError):
        return 0.0


def merge(old: list[tuple], new: list[tuple], ran: list[str]) -> list[tuple]:
    """The table after a partial run: each new row replaces the old row of the same "what" in place, rows no
    section of this run wrote are kept, and rows that are new go before the peak-memory row (then a page's
    rows are put side by side). A section that ran drops its earlier failure row; a page measured with the bundled
    models replaces its row of the old format (whose "what" named the widget changed)."""
    fresh = {w: (w, m, n) for w, m, n in new}
    was = next((r for r in old if r[0] == PEAK), None)
    if was and PEAK in fresh and _mib(was[1]) > _mib(fresh[PEAK][1]):
        fresh.pop(PEAK)  # a lighter partial run keeps the peak of the heavier run that set it, and its command
    gone = {f"{name}: failed" for name in ran} - set(fresh)
    if "class-server" in ran:  # its rows before they named the class's size
        gone |= {w for w, _, _ in old if w.startswith(OLD_CLASS_SERVER)}
    remeasured = {
        PAGE_ROW.match(w).group(1) for w in fresh if PAGE_ROW.match(w) and PAGE_ROW.match(w).group(2) == "bundled"
    }
    out = []
    for w, m, n in old:
        page = PAGE_ROW.match(w)
        if w.startswith(OLD_CLASS_SERVER) and w in gone:  # the class sizes' rows take the old rows' place
            out += [fresh.pop(x) for x in [x for x in fresh if CLASS_SERVER_ROW.match(x)]]
        if w in gone or (page and not page.group(2) and page.group(1) in remeasured):  # the old format of a page
            continue
        out.append(fresh.pop(w, (w, m, n)))
    for row in fresh.values():  # new rows: a page's after the last page row, the others before the peak memory
        pages = [i for i, r in enumerate(out) if PAGE_ROW.match(r[0])]
        at = (
            pages[-1] + 1
            if PAGE_ROW.match(row[0]) and pages
            else next((i for i, r in enumerate(out) if r[0] == PEAK), len(out))
        )
        out.insert(at, row)
    return arrange(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--skip", nargs="*", default=[], choices=list(SECTIONS))
    p.add_argument("--only", nargs="*", choices=list(SECTIONS))
    p.add_argument("--pages", nargs="*", help="page sections: only these page slugs (home, masking, ...)")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument(
        "--threads",
        type=int,
        help="torch's intra-op threads (default: torch's own, one per core); 1 keeps "
        "a busy machine from stalling every operator on a descheduled second thread",
    )
    p.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    p.add_argument(
        "--class-sizes",
        type=int,
        nargs="*",
        default=[20, 30],
        help="class-server: the class sizes to measure (default 20 30)",
    )
    p.add_argument("--events", type=Path, help="class section: write every interaction and server sample here (JSON)")
    p.add_argument("--replica-sessions", type=int, default=20, help="class-replicas: sessions (default 20)")
    p.add_argument(
        "--replica-seconds", type=float, default=120.0, help="class-replicas: seconds per pace (default 120)"
    )
    a = p.parse_args()
    global CLASS_EVENTS, PAGES_ONLY, CLASS_SIZES, REPLICA_SESSIONS, REPLICA_SECONDS
    REPLICA_SESSIONS, REPLICA_SECONDS = a.replica_sessions, a.replica_seconds
    CLASS_EVENTS = a.events
    CLASS_SIZES = tuple(a.class_sizes)
    PAGES_ONLY = a.pages or None
    import torch

    if a.threads:
        torch.set_num_threads(a.threads)

    rows, ran = [], []
    for name, fn in SECTIONS.items():
        if name in a.skip or (a.only and name not in a.only):
            continue
        print(f"[benchmark] {name} …", flush=True)
        ran.append(name)
        try:
            rows += fn(a.repeats) if name in TAKES_REPEATS else fn()
        except Exception as e:  # a broken section is a finding, not a crash
            rows.append((f"{name}: failed", type(e).__name__, str(e)[:120]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    partial = bool(a.only or a.skip or a.pages)
    how = (
        " ".join(
            ["`python scripts/benchmark.py"]
            + ([f"--only {' '.join(a.only)}"] if a.only else [])
            + ([f"--skip {' '.join(a.skip)}"] if a.skip else [])
            + ([f"--pages {' '.join(a.pages)}"] if a.pages else [])
            + ([f"--threads {a.threads}"] if a.threads else [])
        )
        + "`"
    )
    rows.append((PEAK, f"{peak:.0f} MiB", "ru_maxrss" + (f" of {how}" if partial else "")))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    n = torch.get_num_threads()
    machine = (
        f"{platform.machine()}, {cpu_name()}, {os.cpu_count()} CPU cores, "
        f"torch {torch.__version__}, {n} thread{'s' if n > 1 else ''}"
    )
    before = a.out.read_text(encoding="utf-8") if a.out.exists() else ""
    head, old, tail = parse(before)
    update = f"Rows last updated by {how} on {when} ({machine}); every other row is kept from earlier runs."
    if partial and old:
        head = [line for line in head if not line.startswith("Rows last updated by")]
        while head and not head[-1].strip():
            head.pop()
        head += [update, ""]
        table = merge(old, rows, ran)
    else:
        head = [
            "# Benchmarks",
            "",
            f"Written by `python scripts/benchmark.py` on {when} ({machine}).",
            "Regenerate after a change; numbers from a loaded machine are marked in the notes.",
            "",
        ]
        table = arrange(rows)
    lines = head + list(TABLE_HEAD) + [f"| {w} | {m} | {n} |" for w, m, n in table]
    a.out.write_text(
        "\n".join(lines)
        + "\n"
        + (tail if tail.startswith("\n") or not tail else "\n" + tail)
        + ("" if tail.endswith("\n") or not tail else "\n")
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
