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
  :func:`waiting` what waits, for a page to show. With several app processes (``BVE_REDIS_URL``), the one slot is
  the deployment's (:mod:`app.core.locks`): a request waits while another process downloads, hearing which model.
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
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from app.core import locks
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
# one download at a time on this server (a host's bandwidth and disk, shared fairly); with several app processes
# (BVE_REDIS_URL) one at a time in the deployment: a lock in Redis, holding the hub id it downloads
_SLOT = "download"
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
            if first and locks.lock(_SLOT).acquire(timeout=WAIT_POLL_S, about=flight.spec.source):
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
                elif elsewhere := locks.lock(_SLOT).about():  # another app process of the deployment downloads
                    on_wait(InLine(elsewhere, None, place))
    finally:
        with _FLIGHTS_LOCK:
            _LINE.remove(flight)


def fetch_admitted(
    spec: Admitted,
    *,
    on_file: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    deadline: float | None = None,
    retries: int = download.RETRIES,
    progress_bar: bool = False,
    on_wait: Callable[[InLine], None] | None = None,
) -> Fetched:
    """Put an admitted hub model into the Hugging Face cache (a folder needs nothing: it is returned as is).

    Returns ``download.Fetched``: ``ok``, or ``error`` as one sentence (cancelled, stalled past the deadline, a
    file larger than declared, a redirect to another host, ...). When this process is already downloading the
    same model, waits for that download instead (``on_file`` hears its progress; ``cancel`` ends this wait only,
    with an error that says so). When it is downloading another model, waits in line for it to end (``on_wait``
    hears what runs and this request's place; ``cancel`` leaves the line). The deadline counts from the start
    of this model's own download."""
    if spec.kind == "folder":
        return Fetched(
            spec.variant, snapshot=Path(spec.source), files=[f for f, _ in spec.files], size=spec.download_bytes
        )
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
        try:
            took = _take_slot(flight, on_wait, cancel)
        except locks.Unreachable as e:
            flight.result = Fetched(spec.variant, error=f"{e}; nothing was downloaded")
            return flight.result
        if not took:
            flight.result = Fetched(
                spec.variant, error="you left the line before your download began; nothing was downloaded"
            )
            return flight.result
        try:
            flight.result = download.fetch(
                spec.variant,
                retries=retries,
                progress=progress_bar,
                deadline=deadline,
                revision=spec.commit,
                caps=dict(spec.files),
                cancel=cancel,
                on_file=heard,
            )
        finally:
            flight.running = False
            locks.lock(_SLOT).release()
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
                return Fetched(
                    flight.spec.variant,
                    error="you stopped waiting; the download another visitor "
                    "started goes on, and the model is ready when it ends",
                )
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
    if (
        snapshot is None
        or (spec.commit and snapshot.name != spec.commit)
        or not all((snapshot / f).is_file() for f, _ in spec.files)
    ):
        raise NotDownloaded(f"{spec.source} is not downloaded yet (or not this commit); download it first")
    return snapshot


#: the longest a brought model may take to load in the box: the server then loads it too, and a load holds the
#: interpreter's lock for most of its time (a 252 MB tokenizer.json: 179 s with the server frozen for everyone)
LOAD_SECONDS_S = 15.0
_CHECKED: dict[str, int] = {}  # spec key -> the bytes its load took in the box (checked once per process)
_CHECKED_LOCK = threading.Lock()


def native(e: BaseException) -> bool:
    """Whether ``e`` is a failure to turn into a sentence: an Exception, or a panic from native code (pyo3's
    ``PanicException``, raised by the tokenizers library, derives from BaseException) — never Streamlit's
    rerun/stop, a keyboard interrupt or an interpreter exit."""
    return isinstance(e, Exception) or type(e).__name__ == "PanicException"


def check_load(spec: Admitted, where: Path) -> int:
    """Load the admitted model once in the box (:mod:`app.models.box`: a child process with the host's memory
    limit and a deadline) before the server does; the bytes it took there. Raises ``loading.ModelUnavailable``
    with a sentence when it needs more memory than allowed, takes longer than ``LOAD_SECONDS_S``, or cannot be
    read at all (a native panic, a crash) — the server has then read none of it."""
    with _CHECKED_LOCK:
        if spec.key in _CHECKED:
            return _CHECKED[spec.key]
    from app.models import admission, box

    allowance = spec.limit if spec.limit is not None else int(admission.free_memory() * admission.MEMORY_SHARE)
    got = box.measure_load(
        where, spec.model_class, spec.variant.load_kwargs, allowance, seconds=max(box.LOAD_DEADLINE_S, LOAD_SECONDS_S)
    )
    if not got.ok:
        raise loading.ModelUnavailable(
            f"{spec.name} was admitted, but reading its files failed in a separate "
            f"process ({got.error}), so this server did not load it"
        )
    if got.seconds > LOAD_SECONDS_S:
        raise loading.ModelUnavailable(
            f"{spec.name} takes {got.seconds:.0f} s to load here, more than the "
            f"{LOAD_SECONDS_S:.0f} s this server gives a brought model (loading holds the "
            "server for every visitor); choose a smaller checkpoint"
        )
    if spec.limit is not None and got.peak > spec.limit:
        raise loading.ModelUnavailable(
            f"{spec.name} took {download._human(got.peak)} of memory to load, more "
            f"than this host's limit of {download._human(spec.limit)}"
        )
    with _CHECKED_LOCK:
        _CHECKED[spec.key] = got.peak
    return got.peak


def load_admitted(spec: Admitted, device: str = "cpu", dtype: str = "float32") -> loading.Loaded:
    """The admitted model, loaded as the catalogue's are (see the module's docstring), from the cache or its folder,
    never the network, after a load in the box showed it fits (:func:`check_load`). Raises
    ``loading.ModelUnavailable`` with a sentence (not downloaded; too large or slow in the box; transformers
    cannot read what was downloaded) — never a half-loaded model."""
    where = location(spec)
    check_load(spec, where)
    variant = spec.variant
    started = time.perf_counter()
    with loading._LOAD_LOCK:
        try:
            got = loading._from_pretrained(variant, where, local_only=True)
        except BaseException as e:  # noqa: BLE001 — what transformers (or a native panic) says, as one sentence
            if not native(e):
                raise
            raise loading.ModelUnavailable(
                f"{spec.name} was admitted but transformers cannot load it ({type(e).__name__}: "
                f"{download._first_line(e)[:160]})"
            ) from None
        loaded = loading._finish(
            variant, got, "folder" if spec.kind == "folder" else "hub cache", [], device, dtype, started
        )
    return loaded


def load_set(
    keys,
    own: dict[str, Admitted] | None = None,
    source: str = "bundled",
    device: str = "cpu",
    dtype: str = "float32",
    *,
    partial: bool = False,
) -> dict[str, loading.Loaded]:
    """``loading.load_set(keys, ...)`` with the keys in ``own`` ({catalogue key: admitted spec}, e.g.
    ``{spec.replaces: spec}``) loaded from the admitted models instead, under the same keys, so a lesson's code
    runs unchanged. An admitted ELECTRA pair is tied again (``loading.tie_pairs``, as the catalogue's); an admitted
    model never pairs with a catalogue one."""
    own = own or {}
    keys = list(dict.fromkeys(keys))
    loaded = loading.load_set(
        [k for k in keys if k not in own], source=source, device=device, dtype=dtype, partial=partial
    )
    for key in keys:
        if key in own:
            loaded[key] = load_admitted(own[key], device=device, dtype=dtype)
    loading.tie_pairs(loaded, among=own)  # the catalogue's pairs were tied by loading.load_set, with the same function
    return {k: loaded[k] for k in keys if k in loaded}


# -- one memory budget for every brought model -----------------------------------------------------------------------
# Each model was admitted against the memory free at its own admission; eight of them together could exceed it. The
# server keeps its brought models here, within one budget (the host's limit, counting the memory they hold as
# available to them), and evicts the least recently used first.

_RESIDENT: OrderedDict[tuple, tuple[dict, int]] = OrderedDict()
_RESIDENT_LOCK = threading.RLock()


def cost(spec: Admitted) -> int:
    """The bytes a brought model is taken to hold: its admitted memory, or what its load took in the box when
    more."""
    with _CHECKED_LOCK:
        return max(spec.memory_bytes, _CHECKED.get(spec.key, 0))


def held() -> int:
    """The bytes the brought models kept now hold (by :func:`cost`)."""
    with _RESIDENT_LOCK:
        return sum(n for _, n in _RESIDENT.values())


def budget(device: str = "cpu") -> int | None:
    """The memory every brought model together may take: ``BVE_MODEL_LIMIT`` when set, else the host's share of
    the memory free now plus what the kept models hold (None: no limit)."""
    from app.models import admission

    free = admission.free_memory() + held()
    return admission.host_limit(device, memory=free)[0]


def resident(own: dict[str, Admitted], device: str = "cpu", dtype: str = "float32") -> dict[str, loading.Loaded]:
    """The admitted models ``own`` ({catalogue key: spec}) loaded (``load_set``) and kept for every session within
    :func:`budget`, the least recently used evicted first. Raises ``loading.ModelUnavailable`` when they alone need
    more than the budget; a failure keeps nothing."""
    import gc

    key = (tuple((k, s.key) for k, s in own.items()), device, dtype)
    with _RESIDENT_LOCK:
        if key in _RESIDENT:
            _RESIDENT.move_to_end(key)
            return _RESIDENT[key][0]
        for spec in own.values():
            check_load(spec, location(spec))
        need = sum(cost(s) for s in own.values())
        limit = budget(device)
        if limit is not None and need > limit:
            names = " and ".join(s.name for s in own.values())
            raise loading.ModelUnavailable(
                f"{names} needs about {download._human(need)} of memory, more than this "
                f"server's budget for brought models ({download._human(limit)})"
            )
        evicted = False
        while _RESIDENT and limit is not None and held() + need > limit:
            _RESIDENT.popitem(last=False)  # the least recently used
            evicted = True
        if evicted:
            gc.collect()
        loaded = load_set(list(own), own=own, device=device, dtype=dtype)
        _RESIDENT[key] = (loaded, need)
        return loaded


def forget_resident() -> None:
    """Drop every kept brought model (tests; a host that changed its limits)."""
    with _RESIDENT_LOCK:
        _RESIDENT.clear()
    with _CHECKED_LOCK:
        _CHECKED.clear()
