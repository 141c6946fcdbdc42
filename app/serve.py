"""Serve the app: ``python -m app.serve [streamlit run options]`` is ``streamlit run streamlit_app.py`` with the
heavy imports (``app.core.preload``: torch, transformers and the model classes, ~4 s on 2 warm cores, ~5.6 s
from a cold disk) begun in a background thread a moment after the server is up when no visitor has come yet
(:data:`IDLE_START_S`), so a lecturer who opens the app a few seconds after starting it finds them done; a
visitor who comes at once gets the first page drawn first, then the imports begin.

Once the server is up, the thread first asks the kernel to read ahead, from the disk, what those imports will read
(``app.core.prefetch``): on a cold disk (a machine that just booted, a Space that just woke) the disk then works
while the browser loads the app and the first page is drawn, instead of after. Then, still while the browser loads
the app, it imports what the first page run would import for the first time (the router's own modules, numpy and
Pillow for the favicon: :func:`warm_first_page`). When the imports are done and still nobody has come, it begins
the warm start too: a class arriving later finds the models loaded and the lessons'
default views computed.

The thread steps aside between two imports while a visitor's page that does not need them (the home page) is
being served, and never while a page waits for them (``preload.waited_for``): a visitor who arrives during the
warm-up is served first, not queued behind it. ``streamlit run streamlit_app.py`` works too (Hugging Face
Spaces' streamlit SDK runs that): the same imports then begin after the first page a visitor opened.

The README's command, the Procfile and the browser tests (tests/e2e/browser.py) start the app this way.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "streamlit_app.py"


def server_up() -> bool:
    """Whether Streamlit's runtime has started (it then serves its health check and sessions)."""
    from streamlit.runtime import Runtime, RuntimeState

    return Runtime.exists() and Runtime.instance().state in (
        RuntimeState.NO_SESSIONS_CONNECTED,
        RuntimeState.ONE_OR_MORE_SESSIONS_CONNECTED,
    )


#: with no visitor yet, the imports begin this long after the server is up; a visitor's first page ends first
#: otherwise (benchmarked: begun at once, they competed with the browser loading the app and slowed the first
#: page by a second and the first lesson too; measured again on 2026-11-26, 6 interleaved fresh servers each way:
#: begun at once, home 3.0 s (2.7-3.3) against 2.6 s (2.2-3.3) and the first lesson 7.2 s (6.1-7.8) against
#: 7.8 s (7.4-8.4), medians: the home page lost its 3 s goal for 0.6 s on the lesson; the imports' thread at
#: nice 10 did not change that. On 2026-11-27, 5 interleaved fresh servers each: begun at once, home 2.9 s against
#: 2.2 s and the first lesson 6.7 s against 6.8 s; with the interpreter's switch interval cut to 0.5 ms or 0.1 ms
#: during the imports, so that the server's threads get the GIL sooner, home 2.8 s and lesson 6.5 s / 6.8 s: within
#: the spread, no gain. Server and browser pinned to a core each: worse, home 3.0 s, lesson 7.3 s. Again on 2026-11-27
#: in a fresh environment holding requirements.txt only (no scipy: the imports alone 3.6 s, not 4.2 s), 3 servers each:
#: after the first page, home 2.6 s and lesson 7.4 s; begun at once, home 3.8 s and lesson 8.0 s, the imports taking
#: 5.8 s instead of 4.1 s beside the browser loading the app. Later on 2026-11-27 in a requirements-only virtual
#: environment, 3 interleaved servers each: begun at once, home 2.84-3.20 s against 2.27-2.53 s, lesson 6.61-7.12 s
#: against 6.75-7.88 s. With warm_first_page: numpy, pandas and plotly begun at once and torch after the first page,
#: home 2.16-2.34 s against 2.10-2.25 s, lesson 6.27-6.45 s against 6.20-6.69 s (no gain); begun at once only on a
#: cold disk (2 servers each), home 3.05-3.22 s against 2.58-2.62 s, lesson 7.25-8.08 s against 7.15-7.19 s (worse))
IDLE_START_S = 3.0


def _preload(poll_s: float = 0.05, give_up_s: float = 60.0) -> None:
    """The heavy imports: once the server is up (before it, they would hold the interpreter while Streamlit starts),
    then as soon as the first visitor's page has been drawn — or after ``IDLE_START_S`` with no visitor, so that
    a lecturer who opens the app a few seconds after starting it finds them done — stepping aside for visitors'
    pages between imports, and never waiting while a page waits for them."""
    import time

    from app.core import prefetch, preload, visitors

    t = time.monotonic()
    while not server_up() and not preload.waited_for() and time.monotonic() - t < give_up_s:
        time.sleep(poll_s)
    up = time.monotonic()
    prefetch.start()  # the disk reads ahead what the imports will read while the browser loads the first page
    # (begun before the server is up, it slowed the server's own start from a cold disk)
    warm_first_page()
    while (
        not preload.waited_for()
        and not visitors.pages_finished()
        and (visitors.running() or time.monotonic() - up < IDLE_START_S)
        and time.monotonic() - t < give_up_s
    ):
        time.sleep(poll_s)
    preload.load(pause=lambda: visitors.yield_to_visitors(unless=preload.waited_for))
    if not visitors.running() and not visitors.pages_finished():
        # still nobody (a lecturer starts the server before class): the warm start now, not after the first page —
        # every catalogue model loaded and every lesson's default view computed and shared (app.ui.warm,
        # app.core.shared), so a class that then opens the same link at once finds its Result made instead of
        # queueing behind the first computations; it steps aside for any visitor's page (off: BVE_WARM_START=0)
        from app.ui import warm

        warm.warm_start()


#: what the first page run (the router and the home page) would import for the first time: see warm_first_page
FIRST_PAGE_MODULES = ("app.ui", "app.lessons", "numpy", "PIL.Image")


def warm_first_page() -> None:
    """The first page run's one-time imports, done while the browser loads the app (0.8 s on 2 cores, with the server
    idle meanwhile) instead of on the first visitor's clock: the router's own modules (``app.ui``, the lesson list),
    and numpy with Pillow, which Streamlit imports to turn the PNG favicon into a URL. Neither torch nor pandas: the
    home page stays free of them, and these light imports end before the browser opens its session. Measured on
    2026-11-27, 3 interleaved fresh servers each way: the home page interactive 2.11-2.24 s after server start against
    2.28-2.39 s without, the first lesson 6.47-6.77 s against 6.72-6.99 s; again as landed, home 2.21-2.43 s against
    2.53-2.60 s, lesson 6.43-7.33 s against 6.77-7.16 s."""
    import importlib

    for name in FIRST_PAGE_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # an optimisation only: the router's own import then says what is missing
            pass


def skip_use_warning() -> bool:
    """The first time a page draws an element, Streamlit checks whether it runs in a Python REPL, to warn that an app
    wants ``streamlit run``: ``inspect.stack()``, which resolves every frame's source file (0.05-0.09 s on the first
    visitor's clock). This process *is* ``streamlit run``, so the warning never applies and is marked as shown.
    Returns whether the patch applied (a Streamlit without that flag is left as it is)."""
    from streamlit import delta_generator

    if not hasattr(delta_generator, "_use_warning_has_been_displayed"):
        return False
    delta_generator._use_warning_has_been_displayed = True
    return True


def skip_component_scan() -> bool:
    """Streamlit ≥ 1.5x scans every installed distribution's metadata for v2 custom components when its runtime
    starts (0.2–0.4 s on 2 cores, before the server is up). This app installs none: its one v2 component (the window's
    width sensor, app/ui/layout.py) is defined inline, with its JS in the call, which no scan is needed for; so the
    scan is skipped; file watching for them is off anyway. Returns whether the
    patch applied (a Streamlit without that method is left as it is)."""
    try:
        from streamlit.components.v2.component_manager import BidiComponentManager
    except ImportError:
        return False
    if not hasattr(BidiComponentManager, "discover_and_register_components"):
        return False

    def discover_and_register_components(self, *, start_file_watching: bool = True) -> None:
        return None

    BidiComponentManager.discover_and_register_components = discover_and_register_components
    return True


def main(argv: list[str] | None = None) -> None:
    from app.core import preload, startup

    startup.mark("process start")
    with preload.collector_paused():  # 0.07 s of its 0.5 s of CPU time is garbage collection otherwise
        from streamlit.web import bootstrap, cli  # noqa: F401  (here, not in the thread: two threads importing
        # streamlit at once get "partially initialized module")

    skip_component_scan()
    skip_use_warning()
    from app.classroom import mount  # the class's light page and JSON on this port, before Streamlit's own routes

    mount.patch()

    threading.Thread(target=_preload, name="bve-preload", daemon=True).start()

    try:
        cli.main(["run", str(SCRIPT), *(sys.argv[1:] if argv is None else argv)], prog_name="streamlit")
    except SystemExit as stopped:  # click ends its command this way, once the server has stopped
        leave(stopped.code)
    leave(0)


def leave(code: int | str | None) -> NoReturn:
    """End the process once the server has stopped, without the interpreter's teardown of native libraries.

    Stopped (Ctrl-C, SIGTERM) after the warm start had loaded models, the process otherwise aborted in its
    teardown, past the last Python frame, printing "terminate called without an active exception" (SIGABRT,
    exit status -6): a native thread torch started was still joinable when its owner was destroyed.
    Python's own exit handlers (``atexit``) run first; the streams are flushed; then ``os._exit``.
    """
    import atexit
    import os

    if isinstance(code, str):  # click's message for a bad option
        print(code, file=sys.stderr)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to say
            pass
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))


if __name__ == "__main__":
    main()
