"""Your own checkpoint on a page (issue 28): the sidebar's "Model for this lesson", its admission (cached, so a
rerun is instant), its download with a progress bar per file and a Cancel button, and the loaded model in place
of the catalogue key its role replaces. The library half is ``app.models.admission`` (may it play this role?),
``app.models.own`` (fetch, load) and ``app.models.chosen`` (the ``model=`` setting, a page's role).

The order on a page, once per run, at its first model (:func:`resolve`, called by ``loading.try_model``):

1. the page's role (``chosen.page_role``: from the lesson's ``variant`` or ``MODELS``); none, or no name: the
   catalogue;
2. admission — from a complete copy in the Hugging Face cache when there is one (no network: *Auto* uses a
   downloaded model offline), else the hub's file list and config.json (a bounded read), answers kept for
   ``ADMIT_TTL_S`` (a failure to reach the hub only ``RETRY_TTL_S``); a Refusal is one warning and the page runs
   on the catalogue;
3. when not yet downloaded, the download in this visitor's script thread (``own.fetch_admitted``: one download
   per server at a time — a second visitor asking for the same model waits on the first and hears its progress,
   one asking for another waits in line and is told what runs and its place); the page shows a bar per file
   (size, speed) and a Cancel button (which also leaves the line); a failure is one warning and the catalogue;
4. the load: first in a box (``own.check_load``: a child process with the host's memory limit and a deadline), then
   in the server, shared by every session within one budget for brought models (``own.resident``, least recently
   used evicted first), never a half-loaded model.
"""

from __future__ import annotations

import importlib
import os
from collections import OrderedDict
import threading
import time

import streamlit as st

from app.core import state, text
from app.models import admission, chosen

SLOT = "_own_slot"  # session state: the sidebar container the field is drawn in (made by ui.sidebar)
ROLE = "_own_role"  # session state: (models, has variant) of this run's page, set by the router's start_page
RESOLVED = "_own_resolved"  # session state: {catalogue key: Admitted} for this run (computed at its first model)
ACTIVE = "_own_active"  # session state: {catalogue key: the model's name} loaded this run (the badge)
CANCELLED = "_own_cancelled"  # session state: the names whose download this visitor cancelled
ADMIT_TTL_S, RETRY_TTL_S = 600.0, 20.0

MAX_ANSWERS = 256  # admission answers kept (20,000 refused names otherwise stayed for the process's life)

_ANSWERS: OrderedDict[tuple, tuple[float, object]] = OrderedDict()
_ANSWERS_LOCK = threading.Lock()


# ----------------------------------------------------------------------------- the page's role and the field


def start(slug: str, is_lesson: bool) -> None:
    """The router's step: remember this page's role, forget the last run's models, draw the sidebar field."""
    from app.lessons import LESSONS

    models, variant = (), False
    is_lesson = is_lesson and any(lesson.slug == slug for lesson in LESSONS)  # the router counts tools in
    if is_lesson:
        lesson = importlib.import_module(f"app.lessons.{slug}")
        models = tuple(getattr(lesson, "MODELS", ()))
        variant = any(p.name == "variant" for p in getattr(lesson, "SPEC", ()))
    from app.ui import url

    if st.session_state.get(url.RELOAD) == slug:  # a deck's slide: its view's own model (none: the catalogue)
        value, notes = state.parse(url.raw_query(), tuple(url.MODEL_SPEC))
        st.session_state[chosen.NAME] = value[chosen.NAME]
        url.add_notes(notes)
    st.session_state[ROLE] = (slug, models, variant)
    st.session_state.pop(RESOLVED, None)
    st.session_state[ACTIVE] = {}
    role = page_role(default_variant=True)
    slot = st.session_state.get(SLOT) or st.sidebar
    why = role.why if is_lesson else "Open a lesson to run it on your own model."
    slot.text_input(
        chosen.PARAM.label,
        key=chosen.NAME,
        help=role.help() if role.role else why,
        disabled=not role.role,
        on_change=_checked,
        placeholder="a hub id or a folder; empty = catalogue",
    )
    if not role.role:
        slot.caption(f"Not on this page: {why}")


def _checked() -> None:
    """The field's on_change: a value no link could carry becomes a note, and the catalogue."""
    value = (st.session_state.get(chosen.NAME) or "").strip()
    st.session_state[chosen.NAME] = value
    if value and not state.fits(chosen.PARAM, value):
        from app.ui import url

        url.add_notes([f"{text.md(value, 60)} is not {chosen.PARAM.expects}; the lesson runs on the catalogue."])
        st.session_state[chosen.NAME] = ""


def page_role(default_variant: bool = False) -> chosen.PageRole:
    """This run's page's role, with the variant its page chose (or its default, before the page binds)."""
    slug, models, variant = st.session_state.get(ROLE, ("home", (), False))
    if not variant:
        return chosen.page_role(models)
    lesson = importlib.import_module(f"app.lessons.{slug}")
    chosen_variant = (
        lesson.SPEC.variant.default
        if default_variant
        else st.session_state.get(f"{slug}.variant", lesson.SPEC.variant.default)
    )
    return chosen.page_role(variant=chosen_variant)


# ----------------------------------------------------------------------------- admission, cached


def _admit_one(name: str, role: str, device: str, network: bool):
    """Admission of one name for one role: from a complete copy in the cache when there is one, else (when
    ``network``) from the hub or the folder."""
    if admission._source_kind(name) == "hub" and admission.allowed(name):
        from app.models import download

        snapshot = download.cached_snapshot(name)
        if snapshot is not None and (not network or admission.download_offline()):
            try:
                config, files = admission.read_folder(snapshot)
            except (OSError, ValueError, RecursionError):
                pass
            else:
                answer = admission.decide(
                    name, role, config, files, kind="hub", commit=snapshot.name, device=device, disk=1 << 62
                )
                if isinstance(answer, admission.Refusal):
                    return answer
                return admission.measure(answer, config, admission.folder_tensor_names(snapshot, files))
    return admission.admit(name, role, device=device)


def admitted(names: tuple[str, ...], role: chosen.PageRole, device: str, network: bool):
    """(Admitted, ...) in the order of ``role.replaces``, or a Refusal; kept for ``ADMIT_TTL_S`` by every
    session (a hub that could not be asked for ``RETRY_TTL_S``), at most ``MAX_ANSWERS`` of them (expired ones
    first, then the least recently asked)."""
    env = tuple(
        os.environ.get(k, "")
        for k in (
            "HF_ENDPOINT",
            "HF_HOME",
            "HF_HUB_OFFLINE",
            admission.ALLOW_ENV,
            admission.LIMIT_ENV,
            admission.FOLDERS_ENV,
        )
    )
    key = (names, role.role, device, network, env)
    now = time.monotonic()
    with _ANSWERS_LOCK:
        if key in _ANSWERS and _ANSWERS[key][0] > now:
            _ANSWERS.move_to_end(key)
            return _ANSWERS[key][1]
    answer = _decide(names, role, device, network)
    ttl = RETRY_TTL_S if isinstance(answer, admission.Refusal) and answer.rule == "hub" else ADMIT_TTL_S
    with _ANSWERS_LOCK:
        _ANSWERS[key] = (now + ttl, answer)
        _ANSWERS.move_to_end(key)
        for old in [k for k, (until, _) in _ANSWERS.items() if until <= now]:
            del _ANSWERS[old]
        while len(_ANSWERS) > MAX_ANSWERS:
            _ANSWERS.popitem(last=False)
    return answer


def _decide(names, role: chosen.PageRole, device: str, network: bool):
    said = ",".join(names)
    if role.pair:
        if len(names) != 2:
            return admission.Refusal(
                said,
                "electra",
                "pair",
                f"{said} is not used: ELECTRA's lesson takes a pair, "
                "generator first (e.g. google/electra-base-generator,"
                "google/electra-base-discriminator), since a brought model never pairs with "
                "a catalogue one.",
            )
        answers = [_admit_one(n, r, device, network) for n, r in zip(names, chosen.PAIR)]
        refused = next((a for a in answers if isinstance(a, admission.Refusal)), None)
        if refused is not None:
            return refused
        return admission.pair(*answers)  # the one rule for a pair, wherever the answers came from
    if len(names) != 1:
        return admission.Refusal(
            said,
            role.role,
            "pair",
            f"{said} is not used: this lesson takes one model (a pair "
            "is for ELECTRA's lesson); name one hub id or folder.",
        )
    answer = _admit_one(names[0], role.role, device, network)
    return answer if isinstance(answer, admission.Refusal) else (answer,)


def forget() -> None:
    """Forget every cached admission (tests; a host that changed its limits)."""
    with _ANSWERS_LOCK:
        _ANSWERS.clear()


# ----------------------------------------------------------------------------- resolve: admit, download


def resolve() -> dict:
    """{catalogue key: Admitted} that this run's page uses in place of the catalogue's, decided at the page's
    first model (once per run). Says in one sentence when a named model is not used, and why."""
    if RESOLVED in st.session_state:
        return st.session_state[RESOLVED]
    st.session_state[RESOLVED] = {}
    names = chosen.split(st.session_state.get(chosen.NAME, ""))
    role = page_role()
    if not names or not role.role:
        return {}
    from app.ui.model_settings import settings

    source, device, _ = settings()
    said = ",".join(names)
    if source == "bundled":
        st.info(
            f"{text.md(said)} is not used: **Models** is set to the bundled stand-ins; choose Auto or the hub "
            "in the sidebar to run this lesson on it.",
            icon=":material/info:",
        )
        return {}
    network = source == "hub" or not all(_downloaded(n) for n in names)
    with st.spinner(f"Checking {said} before anything is downloaded…"):
        answer = admitted(names, role, device, network)
    if isinstance(answer, admission.Refusal):
        st.warning(text.plain(answer.sentence) + " This page runs on the catalogue's model.", icon=":material/block:")
        return {}
    for spec in answer:
        if not _ready(spec):
            error = _download(spec)
            if error:
                st.warning(text.plain(error) + " This page runs on the catalogue's model.", icon=":material/block:")
                return {}
    if role.pair:
        st.session_state[RESOLVED] = dict(zip(role.replaces, answer))
    else:  # a masked LM takes its own family's column where the page has one (Side by side)
        st.session_state[RESOLVED] = {role.target(answer[0].family): answer[0]}
    return st.session_state[RESOLVED]


def _downloaded(name: str) -> bool:
    from app.models import download

    return admission._source_kind(name) != "hub" or download.cached_snapshot(name) is not None


def _ready(spec) -> bool:
    from app.models import own

    try:
        own.location(spec)
        return True
    except own.NotDownloaded:
        return False


def _cancel(source: str) -> None:
    st.session_state.setdefault(CANCELLED, set()).add(source)


def _again(source: str) -> None:
    st.session_state.setdefault(CANCELLED, set()).discard(source)


def _download(spec) -> str | None:
    """Download an admitted model into the Hugging Face cache, showing a bar per file (size, speed) and a Cancel
    button; None when it is there, else the reason in a sentence."""
    from app.models import download, own

    human = download._human
    if spec.source in st.session_state.get(CANCELLED, set()):
        st.button(
            f"Download {spec.source} again",
            key=f"own-again-{spec.key}",
            on_click=_again,
            args=(spec.source,),
            icon=":material/download:",
        )
        return f"You cancelled the download of {spec.source}; what arrived is kept, so downloading it again resumes it."
    box = st.container(border=True)
    waiting = any(source == spec.source for source, _ in own.in_progress())

    def heading(verb: str) -> str:  # "Downloading" / "Waiting to download" this model, with its sizes
        return (
            f"{verb} {text.md(spec.source)} into the Hugging Face cache ({human(spec.download_bytes)} in "
            f"{len(spec.files)} files, about {human(spec.memory_bytes)} in memory); afterwards *Auto* uses it "
            "offline."
        )

    header = box.empty()
    header.markdown(
        f"Another visitor is downloading {text.md(spec.source)}; this page waits for it."
        if waiting
        else heading("Downloading")
    )
    box.button(
        "Cancel" if not waiting else "Stop waiting",
        key=f"own-cancel-{spec.key}",
        on_click=_cancel,
        args=(spec.source,),
        icon=":material/cancel:",
    )
    bars: dict[str, object] = {}
    last = [None]
    line = box.empty()  # while waiting in line for the server's one download: what runs and this request's place
    queued: list[bool] = []  # [True] while this request waits in line

    def on_file(p) -> None:
        if queued:  # its turn came
            queued.clear()
            line.empty()
            header.markdown(heading("Downloading"))
        if p.file is None:
            return
        if last[0] not in (None, p.file):
            bars[last[0]].progress(1.0, text=f"{text.plain(last[0])} · done")
        last[0] = p.file
        bar = bars.get(p.file) or bars.setdefault(p.file, box.progress(0.0))
        share = min(p.file_done / p.file_size, 1.0) if p.file_size else 0.0
        bar.progress(
            share,
            text=f"{text.plain(p.file)} · {human(p.file_done)} of {human(p.file_size)} · "
            f"{human(int(p.bytes_per_s))}/s · file {min(p.files_done + 1, p.files)} of {p.files}",
        )

    # Cancel (or any widget this visitor touches) asks Streamlit for a rerun, which interrupts this script at its
    # next progress update: the download stops there (download.fetch marks it cancelled, the partial is kept),
    # and the next run sees CANCELLED (the button's callback) or resumes the download. The event stays unset.
    def on_wait(w) -> None:  # another model's download holds the server's one slot: this request waits in line
        if not queued:
            queued.append(True)
            header.markdown(heading("Waiting to download"))
        got = (
            ""
            if w.progress is None or w.progress.total is None
            else f" ({human(w.progress.done)} of {human(w.progress.total)})"
        )
        place = "next" if w.place == 1 else f"number {w.place} in line"
        line.caption(
            f"This server downloads one model at a time: {text.md(w.running)} is downloading{got}; "
            f"yours is {place} and starts when it ends. *Cancel* leaves the line."
        )

    cancel = threading.Event()
    started = time.perf_counter()
    fetched = own.fetch_admitted(spec, on_file=on_file, cancel=cancel, on_wait=on_wait)
    if waiting and not fetched.ok:  # the visitor who was downloading stopped: this one takes it over (resuming)
        waiting = False
        fetched = own.fetch_admitted(spec, on_file=on_file, cancel=cancel, on_wait=on_wait)
    box.empty()
    if not fetched.ok:
        return fetched.error
    if fetched.note:
        st.info(text.plain(fetched.note), icon=":material/info:")
    took = time.perf_counter() - started
    st.caption(
        f"Waited {took:.1f} s for another visitor's download of {text.md(spec.source)}."
        if waiting
        else f"Downloaded {text.md(spec.source)}: {human(fetched.downloaded)} in {took:.1f} s, into the Hugging "
        "Face cache; from now on it loads from there, offline."
    )
    return None


# ----------------------------------------------------------------------------- loading


def _load(keys: tuple[str, ...], device: str, dtype: str, specs: tuple):
    """The admitted models (``specs``) under the catalogue ``keys`` they replace, loaded once for every session
    within the server's one budget for brought models (``own.resident``: least recently used evicted first); an
    ELECTRA pair tied. A failure raises, so it is never kept."""
    from app.models import own

    return own.resident(dict(zip(keys, specs)), device=device, dtype=dtype)


def model(key: str, device: str | None = None, dtype: str | None = None):
    """The brought model that replaces catalogue ``key`` on this page (loaded, shared; on the sidebar's device
    unless ``device`` and ``dtype`` say), or None: none was named, or it cannot be used (said in one sentence; the
    page then loads the catalogue's)."""
    mine = resolve()
    if key not in mine:
        return None
    from app.ui.model_settings import settings

    if device is None:
        _, device, dtype = settings()
    from app.models import own

    keys = tuple(mine)
    with st.spinner(f"Loading {mine[key].name}…"):
        try:
            loaded = _load(keys, device, dtype, tuple(mine.values()))[key]
        except BaseException as e:  # noqa: BLE001 — a native panic (pyo3) is a BaseException: a sentence too
            if not own.native(e):
                raise
            st.warning(
                text.plain(str(e) or type(e).__name__) + " This page runs on the catalogue's model.",
                icon=":material/block:",
            )
            st.session_state[RESOLVED] = {}
            return None
    st.session_state.setdefault(ACTIVE, {})[key] = mine[key].source
    return loaded


def active() -> dict:
    """{catalogue key: your model's name} that this run's page used (the badge names them)."""
    return st.session_state.get(ACTIVE, {})
