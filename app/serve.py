"""Serve the app: ``python -m app.serve [streamlit run options]`` is ``streamlit run streamlit_app.py`` with the
heavy imports (``app.core.preload``: torch, transformers and the model classes, ~3 s on 2 warm cores, 7–9 s
from a cold disk) begun in a background thread as soon as the server is up, instead of after the first page a
visitor opened. By the time a visitor has read the home page and opens a lesson, they are done.

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

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "streamlit_app.py"


def server_up() -> bool:
    """Whether Streamlit's runtime has started (it then serves its health check and sessions)."""
    from streamlit.runtime import Runtime, RuntimeState

    return Runtime.exists() and Runtime.instance().state in (RuntimeState.NO_SESSIONS_CONNECTED,
                                                            RuntimeState.ONE_OR_MORE_SESSIONS_CONNECTED)


def _preload(poll_s: float = 0.05, give_up_s: float = 60.0) -> None:
    """The heavy imports, once the server is up (before it, they would hold the interpreter while Streamlit
    starts: its health check answered seconds later), stepping aside for visitors' pages between imports."""
    import time

    from app.core import preload, visitors

    t = time.monotonic()
    while not server_up() and not preload.waited_for() and time.monotonic() - t < give_up_s:
        time.sleep(poll_s)
    preload.load(pause=lambda: visitors.yield_to_visitors(unless=preload.waited_for))


def main(argv: list[str] | None = None) -> None:
    from app.core import startup

    startup.mark("process start")
    from streamlit.web import bootstrap, cli  # noqa: F401  (here, not in the thread: two threads importing
    # streamlit at once get "partially initialized module")

    threading.Thread(target=_preload, name="bve-preload", daemon=True).start()

    cli.main(["run", str(SCRIPT), *(sys.argv[1:] if argv is None else argv)], prog_name="streamlit")


if __name__ == "__main__":
    main()
