"""One page's rerun that changes nothing, timed inside Streamlit's script runner: the server's own time for it.

Run by ``scripts/benchmark.py --only nochange`` in a child process per page (it patches Streamlit's classes, which a
benchmark process should not keep): ``python scripts/nochange_rerun.py <slug> <reruns>`` prints one JSON line,
``{"slug", "wall_ms": [...], "cpu_ms": [...]}``, the script run's wall time and its thread's CPU time per rerun.

AppTest differs from the server in two ways that would inflate the time, and both are undone here:
- it makes a new script cache each run, so every run would compile the scripts again (the server keeps one);
- it resets Streamlit's legacy pages-folder mode each run, so every page would run twice (once unrouted, then again
  through the router's ``st.navigation``), where the server routes every run once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(slug: str, reruns: int) -> dict:
    os.environ.setdefault("BVE_WARM_START", "0")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT))
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import script_cache, script_runner
    from streamlit.testing.v1 import AppTest

    from app.core import preload

    preload.load()
    timed, on = [], [False]
    run_script = script_runner.ScriptRunner._run_script

    def run_timed(self, *a, **k):
        if not on[0]:
            return run_script(self, *a, **k)
        t, c = time.perf_counter(), time.thread_time()
        try:
            return run_script(self, *a, **k)
        finally:
            timed.append(((time.perf_counter() - t) * 1000, (time.thread_time() - c) * 1000))

    script_runner.ScriptRunner._run_script = run_timed
    compiled, get_bytecode = {}, script_cache.ScriptCache.get_bytecode

    def one_cache(self, path):  # the server keeps one ScriptCache; AppTest makes a new one each run
        if path not in compiled:
            compiled[path] = get_bytecode(self, path)
        return compiled[path]

    script_cache.ScriptCache.get_bytecode = one_cache
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=600)
    at.query_params["source"] = "bundled"
    at.run()
    at.switch_page(f"pages/{slug}.py")
    at.query_params["source"] = "bundled"
    for _ in range(4):
        at.run()
    pm_init = PagesManager.__init__

    def routed(self, *a, **k):  # the server routes every run through st.navigation (AppTest resets that a run)
        pm_init(self, *a, **k)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = routed
    at.run()
    at.run()
    if at.exception:
        raise SystemExit(f"{slug}: the page raised {at.exception}")
    on[0] = True
    for _ in range(reruns):
        at.run()
    if at.exception:
        raise SystemExit(f"{slug}: the page raised {at.exception}")
    return {"slug": slug, "wall_ms": [w for w, _ in timed], "cpu_ms": [c for _, c in timed]}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
