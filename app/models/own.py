"""Your own checkpoint, once admitted (:mod:`app.models.admission`): download it as a person expects, then load it
the way the catalogue's models load.

- :func:`fetch_admitted` puts exactly the admitted files, at the admitted commit, into the standard Hugging Face
  cache through the one downloader (:func:`app.models.download.fetch`: bounded, resumable, checked, only the hub's
  hosts), each file capped at the size the file list declared — a hub that sends more is stopped. It reports
  per-file progress (:class:`app.models.download.Progress`: file, bytes, size, speed) and stops when its
  ``cancel`` event is set (the partial file stays, so the next try resumes). One download per server at a time:
  a second request for the same model waits for the first (hearing its progress); a request for another model
  waits in line until the running download ends (``on_wait`` hears what runs and its place in the line). A
  waiting request's ``cancel`` ends only its own wait. :func:`in_progress` lists what is downloading and
  :func:`waiting` what waits, for a page to show.
- :func:`load_admitted` reads it from the cache (or its folder) with ``from_pretrained`` exactly as
  ``app.models.loading`` reads the catalogue's (eager attention, float32 then the device, eval mode, the
  out-of-memory fallback to the CPU, XLNet through XLNetLMHeadModel, safetensors only, never remote code) and
  returns a :class:`~app.models.loading.Loaded` whose variant is the admitted spec's catalogue-like entry, so
  ``Loaded.identity`` keys caches on it. :func:`load_set` is ``loading.load_set`` with some keys replaced by
  admitted models (ELECTRA's admitted pair tied again).
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first, as in every app module; nothing heavy is imported here)

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from app.models import download, loading
from app.models.admission import Admitted
from app.models.download import Fetched, Progress

WAIT_POLL_S = download.POLL_S


@dataclass
class _Flight:
    """One model's download in this process: its progress so far, and its result when done."""

    spec: Admitted
    started: float = field(default_factory=time.monotonic)
    progress: Progress | None = None
    result: Fetched | None = None
    done: threading.Event = field(default_factory=threading.Event)
    waiters: int = 0
    running: bool = False  # holds the server's download slot (else it waits in line for it)


@dataclass(frozen=True)
class InLine:
    """What a request waiting for the server's download slot hears: the download running now and its progress,
    and this request's place in the line (1 = next)."""

    running: str
    progress: Progress | None
    place: int


_FLIGHTS: dict[tuple[str, str | None], _Flight] = {}
_FLIGHTS_LOCK = threading.Lock()
_SLOT = threading.Lock()  # one download at a time on this server: a host's bandwidth and disk, shared fairly
_LINE: list[_Flight] = []  # the flights waiting for the slot, first come first served


def in_progress() -> list[tuple[str, Progress | None]]:
    """(hub id, its progress) of every download of this process, running or waiting in line."""
    with _FLIGHTS_LOCK:
        return [(f.spec.source, f.progress) for f in _FLIGHTS.values() if not f.done.is_set()]


def waiting() -> list[str]:
    """The hub ids waiting in line for the server's download slot, first first."""
    with _FLIGHTS_LOCK:
        return [f.spec.source for f in _LINE]


def _take_slot(flight: _Flight, on_wait: Callable[[InLine], None] | None, cancel: threading.Event | None) -> bool:
    """Wait in line for the server's download slot (first come, first served); False when ``cancel`` ended the
    wait. ``on_wait`` hears what runs meanwhile every ``WAIT_POLL_S`` seconds."""
    with _FLIGHTS_LOCK:
        _LINE.append(flight)
    try:
        while True:
            with _FLIGHTS_LOCK:
                first = _LINE[0] is flight
            if first and _SLOT.acquire(timeout=WAIT_POLL_S):
                flight.running = True
                return True
            if not first:
                time.sleep(WAIT_POLL_S)
            if cancel is not None and cancel.is_set():
                return False
            if on_wait is not None:
                with _FLIGHTS_LOCK:
                    running = next((f for f in _FLIGHTS.values() if f.running and not f.done.is_set()), None)
                    place = _LINE.index(flight) + 1
                if running is not None:
                    on_wait(InLine(running.spec.source, running.progress, place))
    finally:
        with _FLIGHTS_LOCK:
            _LINE.remove(flight)


def fetch_admitted(spec: Admitted, *, on_file: Callable[[Progress], None] | None = None,
                   cancel: threading.Event | None = None, deadline: float | None = None,
                   retries: int = download.RETRIES, progress_bar: bool = False,
                   on_wait: Callable[[InLine], None] | None = None) -> Fetched:
    """Put an admitted hub model into the Hugging Face cache (a folder needs nothing: it is returned as is).

    Returns ``download.Fetched``: ``ok``, or ``error`` as one sentence (cancelled, stalled past the deadline, a
    file larger than declared, a redirect to another host, ...). When this process is already downloading the
    same model, waits for that download instead (``on_file`` hears its progress; ``cancel`` ends this wait only,
    with an error that says so). When it is downloading another model, waits in line for it to end (``on_wait``
    hears what runs and this request's place; ``cancel`` leaves the line). The deadline counts from the start
    of this model's own download."""
    if spec.kind == "folder":
        return Fetched(spec.variant, snapshot=Path(spec.source), files=[f for f, _ in spec.files],
                       size=spec.download_bytes)
    key = (spec.source, spec.commit)
    with _FLIGHTS_LOCK:
        flight = _FLIGHTS.get(key)
        mine = flight is None or flight.done.is_set()
        if mine:
            flight = _FLIGHTS[key] = _Flight(spec)
        else:
            flight.waiters += 1
    if not mine:
        return _wait(flight, on_file, cancel)

    def heard(p: Progress) -> None:
        flight.progress = p
        if on_file is not None:
            on_file(p)

    try:
        if not _take_slot(flight, on_wait, cancel):
            flight.result = Fetched(spec.variant, error="you left the line before your download began; nothing "
                                                        "was downloaded")
            return flight.result
        try:
            flight.result = download.fetch(spec.variant, retries=retries, progress=progress_bar, deadline=deadline,
                                           revision=spec.commit, caps=dict(spec.files), cancel=cancel,
                                           on_file=heard)
        finally:
            flight.running = False
            _SLOT.release()
    except BaseException as e:  # noqa: BLE001 — never leave a waiter waiting (a rerun interrupts a page's wait too)
        flight.result = Fetched(spec.variant, error=f"the download stopped ({type(e).__name__})")
        raise
    finally:
        flight.done.set()
        with _FLIGHTS_LOCK:
            if _FLIGHTS.get(key) is flight:
                del _FLIGHTS[key]
    return flight.result


def _wait(flight: _Flight, on_file, cancel: threading.Event | None) -> Fetched:
    """Wait for another request's download of the same model, hearing its progress; ``cancel`` ends the wait."""
    try:
        while not flight.done.wait(WAIT_POLL_S):
            if cancel is not None and cancel.is_set():
                return Fetched(flight.spec.variant, error="you stopped waiting; the download another visitor "
                                                          "started goes on, and the model is ready when it ends")
            if on_file is not None and flight.progress is not None:
                on_file(flight.progress)
    finally:
        with _FLIGHTS_LOCK:
            flight.waiters -= 1
    return flight.result


class NotDownloaded(loading.ModelUnavailable):
    """An admitted hub model that is not (completely) in the cache yet."""


def location(spec: Admitted) -> Path:
    """Where an admitted model is read from: its folder, or its snapshot in the Hugging Face cache (the admitted
    commit's, complete: ``refs/main`` names it only then). Raises NotDownloaded."""
    if spec.kind == "folder":
        return Path(spec.source)
    snapshot = download.cached_snapshot(spec.source)
    if snapshot is None or (spec.commit and snapshot.name != spec.commit) \
            or not all((snapshot / f).is_file() for f, _ in spec.files):
        raise NotDownloaded(f"{spec.source} is not downloaded yet (or not this commit); download it first")
    return snapshot


def load_admitted(spec: Admitted, device: str = "cpu", dtype: str = "float32") -> loading.Loaded:
    """The admitted model, loaded as the catalogue's are (see the module's docstring), from the cache or its folder,
    never the network. Raises ``loading.ModelUnavailable`` with a sentence (not downloaded; transformers cannot
    read what was downloaded) — never a half-loaded model."""
    where = location(spec)
    variant = spec.variant
    started = time.perf_counter()
    with loading._LOAD_LOCK:
        try:
            got = loading._from_pretrained(variant, where, local_only=True)
        except Exception as e:  # noqa: BLE001 — what transformers says, as one sentence
            raise loading.ModelUnavailable(
                f"{spec.source} was admitted but transformers cannot load it ({type(e).__name__}: "
                f"{download._first_line(e)[:160]})") from None
        loaded = loading._finish(variant, got, "folder" if spec.kind == "folder" else "hub cache", [], device, dtype,
                                 started)
    return loaded


def load_set(keys, own: dict[str, Admitted] | None = None, source: str = "bundled", device: str = "cpu",
             dtype: str = "float32", *, partial: bool = False) -> dict[str, loading.Loaded]:
    """``loading.load_set(keys, ...)`` with the keys in ``own`` ({catalogue key: admitted spec}, e.g.
    ``{spec.replaces: spec}``) loaded from the admitted models instead, under the same keys, so a lesson's code
    runs unchanged. An admitted ELECTRA pair is tied again (``loading.tie_electra_pair``); an admitted model
    never pairs with a catalogue one."""
    own = own or {}
    keys = list(dict.fromkeys(keys))
    loaded = loading.load_set([k for k in keys if k not in own], source=source, device=device, dtype=dtype,
                              partial=partial)
    for key in keys:
        if key in own:
            loaded[key] = load_admitted(own[key], device=device, dtype=dtype)
    for generator, discriminator in loading.PAIRS:
        if generator in own and discriminator in own and generator in loaded and discriminator in loaded:
            loading.tie_electra_pair(loaded[generator], loaded[discriminator])
    return {k: loaded[k] for k in keys if k in loaded}
