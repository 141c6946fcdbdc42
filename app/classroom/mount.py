"""Serve the class routes (:mod:`app.classroom.routes`) on Streamlit's own port, before its catch-all front end.

Streamlit 1.67 serves with Starlette under uvicorn (``streamlit/web/server/starlette/``): ``UvicornServer.start``
builds the app with ``starlette_app.create_starlette_app(runtime)``, which takes its routes from the module-level
``starlette_app.create_streamlit_routes(runtime)`` — the last of them a ``Mount`` at ``/`` that answers every other
path with the front end's index.html. Two ways in:

- :func:`patch` (``python -m app.serve`` calls it before the server starts): wraps
  ``create_streamlit_routes`` so the class routes come first. Nothing runs per request.
- :func:`attach` (``streamlit run streamlit_app.py``, as Hugging Face Spaces runs it: the server is already up
  when our code first runs): finds the running Starlette app and puts the routes first in its router, once.
  The app is found from Streamlit's runtime: its event loop runs the ``uvicorn-server`` task, whose coroutine holds
  the ``UvicornServer`` (``_server.config.app`` is the Starlette app); as a fallback every task's coroutine chain is
  searched for the Starlette app whose routes are Streamlit's. The router's list is replaced, never edited in
  place, on the event loop's thread, so a request being routed meanwhile sees the old list or the new one.

Both are idempotent; :func:`attach` after :func:`patch` (or a second :func:`attach`) only checks a flag.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from app.classroom import routes as _routes

_LOG = logging.getLogger(__name__)
_PATCHED = "_bve_class_routes"
_attached_to: int | None = None  # id() of the Starlette app the routes were put in
_lock = threading.Lock()


def _base_url() -> str:
    from streamlit import config

    return config.get_option("server.baseUrlPath") or ""


def _ours(route) -> bool:
    return str(getattr(route, "name", "")).startswith(_routes.ROUTE_NAME)


def patch() -> bool:
    """Make every Streamlit server this process starts serve the class routes first. Returns whether it applied
    (False: this Streamlit builds its routes another way; :func:`attach` may still work once it runs)."""
    try:
        from streamlit.web.server.starlette import starlette_app
    except ImportError:
        return False
    original = getattr(starlette_app, "create_streamlit_routes", None)
    if original is None:
        return False
    if getattr(original, _PATCHED, False):
        return True

    def create_streamlit_routes(runtime):
        theirs = list(original(runtime))
        return [*_routes.routes(_base_url()), *[r for r in theirs if not _ours(r)]]

    setattr(create_streamlit_routes, _PATCHED, True)
    create_streamlit_routes.__wrapped__ = original
    starlette_app.create_streamlit_routes = create_streamlit_routes
    return True


def _is_streamlit_app(app) -> bool:
    from starlette.applications import Starlette

    if not isinstance(app, Starlette):
        return False
    return any(str(getattr(r, "path", "")).endswith("/_stcore/health") for r in app.router.routes)


def _from_object(obj, depth: int = 0):
    """The Starlette app an object of Streamlit's server leads to: the app itself, a ``UvicornServer``
    (``_server.config.app``), a uvicorn ``Server`` (``config.app``) or Streamlit's ``Server``
    (``_starlette_server``)."""
    if obj is None or depth > 3:
        return None
    if _is_streamlit_app(obj):
        return obj
    for attr in ("_starlette_server", "_server", "config", "app"):
        inner = getattr(obj, attr, None) if not isinstance(obj, (str, bytes, int, float, dict, list, tuple)) else None
        if inner is not None and inner is not obj:
            found = _from_object(inner, depth + 1)
            if found is not None:
                return found
    return None


def _find_app(loop: asyncio.AbstractEventLoop):
    """Streamlit's Starlette app, found from the tasks running on its event loop (called on that loop)."""
    tasks = sorted(asyncio.all_tasks(loop), key=lambda t: t.get_name() != "uvicorn-server")
    for task in tasks:
        coro, seen = task.get_coro(), 0
        while coro is not None and seen < 16:  # the coroutine, then what it awaits, and so on
            frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
            if frame is not None:
                for value in list(frame.f_locals.values()):
                    found = _from_object(value)
                    if found is not None:
                        return found
            coro, seen = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None), seen + 1
    return None


def _insert(loop: asyncio.AbstractEventLoop) -> bool:
    """On the event loop: put the class routes first in the running app's router (once). Returns whether they are
    there."""
    global _attached_to
    app = _find_app(loop)
    if app is None:
        return False
    current = list(app.router.routes)
    if not any(_ours(r) for r in current):
        app.router.routes = [*_routes.routes(_base_url()), *current]  # a new list: a request in flight keeps the old
    _attached_to = id(app)
    return True


def attach(timeout: float = 5.0) -> bool:
    """Serve the class routes on the running Streamlit server (idempotent; after the first success it only checks
    a flag). Call it from a page script (a script thread) or any thread but the server's event loop's own. Returns
    whether the routes are served (False when no Streamlit server runs in this process)."""
    if _attached_to is not None:
        return True
    with _lock:
        if _attached_to is not None:
            return True
        try:
            from streamlit.runtime import Runtime
        except ImportError:
            return False
        if not Runtime.exists():
            return False
        objs = getattr(Runtime.instance(), "_async_objs", None)
        loop = getattr(objs, "eventloop", None)
        if loop is None or loop.is_closed():
            return False

        async def on_loop() -> bool:
            return _insert(loop)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:  # already on the server's loop (a route or a task): insert directly
            return _insert(loop)
        try:
            return asyncio.run_coroutine_threadsafe(on_loop(), loop).result(timeout)
        except Exception as e:  # noqa: BLE001 — the class page is an extra: never break the presenter's page
            _LOG.warning("could not attach the class routes: %s", e)
            return False


def attached() -> bool:
    """Whether :func:`attach` has put the routes into a running server."""
    return _attached_to is not None
