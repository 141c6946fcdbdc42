"""Measure the app and write the table to BENCHMARKS.md. Not a test: numbers, not verdicts.

    python scripts/benchmark.py                 # everything (about 25 minutes on 2 CPU cores)
    python scripts/benchmark.py --skip browser  # without the real-browser start-up timing

Sections: cold start in a real browser; each page's first run and rerun after a widget change
(AppTest, p50/p95); each variant's load time, forward latency and memory on this device; what a user
would otherwise run for the same work (transformers' fill-mask pipeline) as a ratio; peak memory; and a
class of 20 on one server: in chromium tabs at a lecture's pace (``class``, a change every 5 s) and at a
stress pace (``class-stress``, every 0.5 s), and without browsers at both (``class-server``).
"""

from __future__ import annotations

import argparse
import os
import platform
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


def browser_start() -> list[tuple]:
    """Server start to first interactive home page, and to the first lesson, in Debian's chromium."""
    from app.lessons import LESSONS
    from tests.e2e.browser import browser, streamlit_server, wait_for_app

    rows = []
    t0 = time.perf_counter()
    with streamlit_server() as (base, healthy_s), browser() as (context, watcher):
        page = watcher.watch(context.new_page())
        page.goto(base)
        wait_for_app(page)
        home_s = time.perf_counter() - t0
        rows.append(("Cold start: server start → home page interactive", f"{home_s:.1f} s", f"server healthy after {healthy_s:.1f} s"))
        if LESSONS:
            t1 = time.perf_counter()
            page.goto(f"{base}/{LESSONS[0].slug}")
            wait_for_app(page)
            rows.append((f"Cold start: then first lesson ({LESSONS[0].title}) interactive", f"{time.perf_counter() - t1:.1f} s",
                         f"{time.perf_counter() - t0:.1f} s after server start; models warm-loading in the background"))
        rows.append(("Browser: blocked network requests / console errors", f"{len(watcher.blocked)} / {len(watcher.console_errors)}", ""))
    return rows


def nudge(at):
    """Change one widget the way a student would: the seed if the page has one, else the first slider."""
    keys = {getattr(w, "key", None) for w in at.number_input}
    if "seed" in keys:
        w = at.number_input(key="seed")
        w.set_value(int(w.value) + 1)
        return at, "seed + 1"
    if len(at.slider):
        w = at.slider[0]
        v = w.value
        lo, hi = w.min, w.max
        if isinstance(v, (int, float)):
            new = v + (w.step or 1) if v + (w.step or 1) <= hi else v - (w.step or 1)
            w.set_value(type(v)(new))
            return at, f"slider {w.label!r}"
    return at, "rerun"


def page_reruns(repeats: int) -> list[tuple]:
    """First run (models already cached by the warm start) and rerun after a widget change, per page."""
    from streamlit.testing.v1 import AppTest

    from app.lessons import LESSONS

    os.environ["BVE_WARM_START"] = "0"
    rows = []
    for path, title in [("pages/home.py", "Home")] + [(lesson.path, lesson.title) for lesson in LESSONS]:
        at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
        at.run()
        t = time.perf_counter()
        at.switch_page(path).run()
        first = (time.perf_counter() - t) * 1000
        samples, what = [], "rerun"
        for _ in range(repeats):
            at, what = nudge(at)
            t = time.perf_counter()
            at.run()
            samples.append((time.perf_counter() - t) * 1000)
        err = " (exception!)" if at.exception else ""
        rows.append((f"Page {title}: first run / rerun after {what} p50 · p95",
                     f"{fmt_ms(first)} / {fmt_ms(pct(samples, .5))} · {fmt_ms(pct(samples, .95))}{err}",
                     f"AppTest, {repeats} reruns, includes model loading on first run"))
    return rows


def variants(repeats: int) -> list[tuple]:
    """Load time, single-sentence forward latency and memory of every catalogue variant."""
    import torch

    from app.models import catalogue, loading

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
        rows.append((f"Variant {v.label}: load · forward p50/p95 ({enc['input_ids'].shape[1]} tokens)",
                     f"{load_s * 1000:.0f} ms · {fmt_ms(pct(samples, .5))}/{fmt_ms(pct(samples, .95))}",
                     f"{sum(p.numel() for p in params.values()) / 1e6:.2f} M parameters, {mem:.1f} MiB weights, {loaded.device}"))
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
        out.append(pct(samples, .5))
    return [("Fill-mask top-5, BERT stand-in: ours vs transformers pipeline (p50)",
             f"{fmt_ms(out[0])} vs {fmt_ms(out[1])} ({out[1] / out[0]:.1f}× faster)",
             f"pipeline construction adds {fmt_ms(build_ms)}")]


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
                rows.append((f"{f.stem.removeprefix('bench_')}: {name}", fmt_ms(value) if isinstance(value, (int, float)) else str(value), ""))
    return rows


CLASS_EVENTS: Path | None = None  # --events: where the class run writes every interaction and server sample


def class_at_once(sessions: int = 20, seconds: float = 120.0, think: float = 5.0) -> list[tuple]:
    """A class at once: ``sessions`` chromium tabs open the lesson pages together on a fresh server; once
    every tab has opened, the class interacts for ``seconds`` (starts spread over one ``think``): each changes the first visible number input (its +) or slider (one
    keyboard step) on its page, waits until the page has rerun (the URL carries the new value and the
    script has finished), reads the result for ``think`` seconds, and again. Counts errors (console errors, exception
    boxes, interactions that take over 60 s), times each interaction, and reads the server's peak
    memory. Models are shared through st.cache_resource, not loaded per session."""
    import asyncio

    from playwright.async_api import async_playwright

    from app.lessons import LESSONS
    from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, LOOPBACK, streamlit_server

    done_js = """() => { const a = document.querySelector('[data-testid="stApp"]');
                         return a && a.getAttribute('data-test-script-state') === 'notRunning' && document.querySelector('h1'); }"""
    state_js = """() => { const a = document.querySelector('[data-testid="stApp"]');
                          const w = document.querySelector('[data-testid="stStatusWidget"]');
                          return {script: a && a.getAttribute('data-test-script-state'), h1: !!document.querySelector('h1'),
                                  status: w ? w.innerText.slice(0, 80) : null, url: location.href}; }"""
    slugs = [lesson.slug for lesson in LESSONS] or [""]
    reruns, errors, blocked, events, opened = [], [], [], [], []
    everyone = None  # set in run(): every tab has opened its page
    CONTROLS = '[data-testid="stMain"] [data-testid="stNumberInputStepUp"], [data-testid="stMain"] [data-testid="stSlider"]'
    t_zero = time.perf_counter()

    async def student(browser, base, i):
        from urllib.parse import urlparse

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
        page.on("console", lambda m: (probes.pop() if probes and "status of 404" in m.text
                                      else errors.append(f"console: {m.text}")) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
        slug = slugs[i % len(slugs)]
        control = page.locator(CONTROLS).locator("visible=true").first
        try:
            await page.goto(f"{base}/{slug}?seed={i}", timeout=300_000)
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
                before = page.url
                if kind == "step":  # the first number input's +
                    await control.click(timeout=left())
                elif kind == "slider":  # one keyboard step, back down at the end of the range
                    value, top = float(await control.input_value()), float(await control.get_attribute("max"))
                    await control.focus()
                    await control.press("ArrowRight" if value < top else "ArrowLeft")
                else:
                    await page.goto(f"{base}/{slug}?seed={i * 1000 + k}", timeout=left())
                if kind != "reload":  # the rerun has happened when the page has written the new value to the URL
                    await page.wait_for_function("u => location.href !== u", arg=before, timeout=left(), polling=100)
                await page.wait_for_function(done_js, timeout=left(), polling=100)
            except Exception as e:  # a session that stalls is an error of the run, not a crash of the script
                errors.append(f"{type(e).__name__} on /{slug} after {time.perf_counter() - t:.0f} s")
                try:
                    seen = await page.evaluate(state_js)
                except Exception as e2:
                    seen = {"evaluate": type(e2).__name__}
                events.append({"student": i, "slug": slug, "action": kind, "t": t - t_zero,
                               "s": time.perf_counter() - t, "error": type(e).__name__, "seen": seen})
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

    def monitor(stop):  # the server's CPU seconds and thread count, once a second
        pid = _server_pid()
        while pid and not stop.wait(1.0):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                threads = next(int(x.split()[1]) for x in Path(f"/proc/{pid}/status").read_text().splitlines()
                               if x.startswith("Threads:"))
            except (OSError, StopIteration):
                return
            samples.append({"t": time.perf_counter() - t_zero, "cpu_s": (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK"),
                            "threads": threads, "load1": os.getloadavg()[0]})

    import threading

    with streamlit_server() as (base, _):
        stop = threading.Event()
        watcher = threading.Thread(target=monitor, args=(stop,), daemon=True)
        t_zero = time.perf_counter()
        watcher.start()
        asyncio.run(run(base))
        stop.set()
        rss = _server_peak_rss_mib()
    if CLASS_EVENTS:
        import json

        CLASS_EVENTS.write_text(json.dumps({"events": events, "server": samples, "errors": errors}, indent=1))
    first = min((e["t"] for e in events), default=None)
    busy = [x for x in samples if first is not None and x["t"] >= first]
    share = ((busy[-1]["cpu_s"] - busy[0]["cpu_s"]) / (busy[-1]["t"] - busy[0]["t"]) / (os.cpu_count() or 1)
             if len(busy) > 1 else None)
    kinds = __import__("collections").Counter(e["action"] for e in events)
    what = f"A class at once, a change every {think:g} s"
    return [
        (f"{what}: {sessions} browser tabs × {seconds:.0f} s on {', '.join('/' + s for s in slugs)}",
         f"{len(errors)} errors", f"{len(reruns)} interactions ({', '.join(f'{n} {k}' for k, n in kinds.items())}); "
         f"{len(blocked)} blocked network requests; " + (", ".join(f"{n}× {k}" for k, n in
            __import__("collections").Counter(e.split(" on ")[0].split(" opening ")[0][:60] for e in errors).most_common(3)) or "no errors")),
        (f"{what}: all tabs open together on a fresh server → the last one interactive", f"{max(opened):.0f} s" if opened else "—",
         f"{sessions} renderers load the frontend at once; then the class interacts for {seconds:.0f} s"),
        (f"{what}: rerun p50 · p95 under load", f"{fmt_ms(pct(reruns, .5))} · {fmt_ms(pct(reruns, .95))}" if reruns else "—",
         "widget change → page rerun and finished, in the browser"),
        (f"{what}: the server's share of the 2 cores", f"{share:.0%}" if share is not None else "?",
         "the headless renderers take the rest: the browsers, not the server, set the pace here"),
        (f"{what}: server peak memory", f"{rss:.0f} MiB" if rss else "?", "VmHWM of the streamlit process"),
    ]


def class_server_only(sessions: int = 20, seconds: float = 120.0) -> list[tuple]:
    """The same class without browsers, at two paces: every half second (as ``class-stress``) and every
    five seconds (as ``class``: a class following a lecture)."""
    return _class_server(sessions, seconds, 0.5) + _class_server(sessions, seconds, 5.0)


def _class_server(sessions: int, seconds: float, think: float) -> list[tuple]:
    """``sessions`` websocket sessions speak Streamlit's protocol (tests/e2e/stclient.py), open the
    lessons together on a fresh server and change their first number input (or reopen with a new seed)
    ``think`` seconds after each rerun has finished, for ``seconds``. What the server alone can do with
    the 2 cores to itself: a real class brings its own browsers."""
    import asyncio

    from app.lessons import LESSONS
    from tests.e2e.browser import SERVER_PIDS, rss_mib, streamlit_server
    from tests.e2e.stclient import Session

    slugs = [lesson.slug for lesson in LESSONS] or [""]
    opens, reruns, errors = [], [], []

    async def timed(request, slug: str, what: str, into: list):
        """Await one open or rerun: its time into ``into``, a timeout or an exception box into errors."""
        try:
            run = await request
        except TimeoutError:
            errors.append(f"timeout {what} /{slug}")
            return None
        into.append(run.seconds * 1000)
        errors.extend(f"exception on /{slug}: {x}" for x in run.exceptions)
        return run

    async def student(base, i):
        slug = slugs[i % len(slugs)]
        async with Session(base) as s:
            if not await timed(s.open(slug, f"seed={i}", timeout=300), slug, "opening", opens):
                return
            end, k = time.perf_counter() + seconds, 0
            while time.perf_counter() < end:
                k += 1
                if s.last.number_inputs:
                    label, (_, value, _) = next(iter(s.last.number_inputs.items()))
                    request = s.set_number(label, value + 1, timeout=60)
                else:
                    request = s.open(slug, f"seed={i * 1000 + k}", timeout=60)
                if not await timed(request, slug, "(60 s) on", reruns):
                    return
                await asyncio.sleep(think)

    async def run(base):
        await asyncio.gather(*(student(base, i) for i in range(sessions)))

    with streamlit_server() as (base, _):
        t = time.perf_counter()
        asyncio.run(run(base))
        wall = time.perf_counter() - t
        peak = rss_mib(SERVER_PIDS[base], "VmHWM")
    what = f"A class at once, server only, a change every {think:g} s"
    return [
        (f"{what}: {sessions} websocket sessions × {seconds:.0f} s, no browsers", f"{len(errors)} errors",
         f"{len(reruns)} reruns in {wall:.0f} s; " + ("; ".join(errors[:3]) or "no exceptions, no timeouts")),
        (f"{what}: all open together on a fresh server p50 · p95",
         f"{fmt_ms(pct(opens, .5))} · {fmt_ms(pct(opens, .95))}" if opens else "—", "includes the first imports and model loads"),
        (f"{what}: rerun p50 · p95", f"{fmt_ms(pct(reruns, .5))} · {fmt_ms(pct(reruns, .95))}" if reruns else "—",
         "widget change sent → script finished, at the websocket"),
        (f"{what}: server peak memory", f"{peak:.0f} MiB", "VmHWM"),
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


SECTIONS = {"browser": browser_start, "pages": page_reruns, "variants": variants, "pipeline": fill_mask_vs_pipeline,
            "lessons": lesson_sections, "class": class_at_once,
            "class-stress": lambda: class_at_once(think=0.5), "class-server": class_server_only}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--skip", nargs="*", default=[], choices=list(SECTIONS))
    p.add_argument("--only", nargs="*", choices=list(SECTIONS))
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    p.add_argument("--events", type=Path, help="class section: write every interaction and server sample here (JSON)")
    a = p.parse_args()
    global CLASS_EVENTS
    CLASS_EVENTS = a.events
    import torch

    rows = []
    for name, fn in SECTIONS.items():
        if name in a.skip or (a.only and name not in a.only):
            continue
        print(f"[benchmark] {name} …", flush=True)
        try:
            rows += fn(a.repeats) if name in ("pages", "variants", "pipeline") else fn()
        except Exception as e:  # a broken section is a finding, not a crash
            rows.append((f"{name}: failed", type(e).__name__, str(e)[:120]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows.append(("Peak memory of the benchmark process (models + AppTest runs)", f"{peak:.0f} MiB", "ru_maxrss"))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, {torch.get_num_threads()} threads"
    lines = ["# Benchmarks", "", f"Written by `python scripts/benchmark.py` on {when} ({machine}).",
             "Regenerate after a change; numbers from a loaded machine are marked in the notes.", "",
             "| what | measured | notes |", "|---|---|---|"]
    lines += [f"| {w} | {m} | {n} |" for w, m, n in rows]
    before = a.out.read_text(encoding="utf-8") if a.out.exists() else ""
    marker = "<!-- experiments:start -->"  # the experiments' cost (python -m app.experiments time): kept as it is
    kept = "\n" + before[before.index(marker):] if marker in before else ""
    a.out.write_text("\n".join(lines) + "\n" + kept)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
