"""Plotly figures for the lessons: pure functions from results to figures."""

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import functools
import hashlib
import pickle
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class Document:
    """A figure that is a standalone HTML document (bertviz's views: their own scripts, inline), with the
    height in pixels it needs: shown in an iframe (``ui.show_html``, the handout)."""

    html: str
    height: int


KEPT_FIGURES = 256  # figures kept, the least recently used dropped first (a few MB: most are tens of kB)
KEPT_ARGS_BYTES = 8 << 20  # a builder whose arguments pickle larger than this builds every time
_kept: OrderedDict[bytes, bytes] = OrderedDict()  # digest of (builder, arguments) -> the figure, pickled plain data
_kept_lock = threading.Lock()
_counts = {"built": 0, "kept": 0}


def kept(builder):
    """A figure builder whose figures are kept by what they were built from.

    Plotly checks every property a figure is given, and a page reruns for any widget, a slide shown again or a
    figure the warm start built ahead (``app.ui.warm``): rebuilding meant checking every property again, 4–25 ms
    a figure, most of a slide change's script run. A kept figure is stored as plain data, under a digest of the
    builder's name and the pickle of its arguments (so equal arguments find it however they were made), and given
    back as a new figure made from a fresh copy of that data without checking it again (plotly's own
    ``_validate=False``; it was checked when it was built): ~1 ms. Builders are pure functions of plain data
    (results), so equal arguments mean an equal figure. Arguments that cannot be pickled, or pickle larger than
    ``KEPT_ARGS_BYTES``, are built every time, and so is anything the builder gives that is not a plotly figure (a
    Document, None)."""

    @functools.wraps(builder)
    def build(*args, **kwargs):
        import plotly.graph_objects as go

        same, key = _known_digest(build, args, kwargs)
        if key is None:
            try:
                blob = pickle.dumps(
                    (builder.__module__, builder.__qualname__, args, sorted(kwargs.items())),
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
            except Exception:  # noqa: BLE001 — not plain data: built every time
                return builder(*args, **kwargs)
            key = hashlib.blake2b(blob, digest_size=20).digest() if len(blob) <= KEPT_ARGS_BYTES else None
            _remember_digest(same, args, key)
        with _kept_lock:
            spec = _kept.get(key) if key is not None else None
            if spec is not None:
                _kept.move_to_end(key)
                _counts["kept"] += 1
        if spec is not None:
            return _kept_figure_class(go.Figure)(key, spec)
        figure = builder(*args, **kwargs)
        if key is not None and isinstance(figure, go.Figure):
            data = pickle.dumps(_checked_data(figure), protocol=pickle.HIGHEST_PROTOCOL)
            with _kept_lock:
                _kept[key] = data
                _counts["built"] += 1
                while len(_kept) > KEPT_FIGURES:
                    _kept.popitem(last=False)
        return figure

    return build


KEPT_DIGESTS = 1024  # the digests of the very argument objects last seen, by their identity
_digests: OrderedDict[tuple, tuple[tuple, bytes]] = OrderedDict()  # (builder, ids, kwargs) -> (weak refs, digest)


def _known_digest(build, args: tuple, kwargs: dict) -> tuple[tuple | None, bytes | None]:
    """(what the very objects ``args`` are known by, the digest they had) — or the digest None when they have not
    been seen. A lesson's Result is one object shared by every rerun and every session (``app.core.shared``), and
    read, never changed, by its figures: pickling it again to find its figure (0.5–3 ms a figure on every rerun)
    says what it said before. Held weakly: an object that died is not taken for a new one at its address."""
    if not args or not all(_frozen(a) for a in args):  # a value that could change in place (an array, a list)
        return None, None  # or cannot be held weakly (a tuple, a number): pickled each time
    try:
        same = (build, tuple(id(a) for a in args), tuple(sorted(kwargs.items())))
        hash(same)
    except TypeError:
        return None, None
    with _kept_lock:
        known = _digests.get(same)
    if known is not None and all(ref() is a for ref, a in zip(known[0], args, strict=True)):
        return same, known[1]
    return same, None


def _frozen(value) -> bool:
    """A frozen dataclass (a lesson's Result or a part of it) that can be held weakly."""
    params = getattr(type(value), "__dataclass_params__", None)
    return params is not None and params.frozen and hasattr(value, "__weakref__")


def _remember_digest(same: tuple | None, args: tuple, key: bytes | None) -> None:
    if same is None or key is None:
        return
    try:
        refs = tuple(weakref.ref(a) for a in args)
    except TypeError:
        return
    with _kept_lock:
        _digests[same] = (refs, key)
        while len(_digests) > KEPT_DIGESTS:
            _digests.popitem(last=False)


class _Kept:
    """A kept figure handed back as a plotly Figure that is made only when something looks into it or changes it.

    Making a Figure from kept data copies every trace and the layout deeply (plotly's constructor), 2–8 ms a figure
    on every rerun of every session, while most reruns only send it to the browser unchanged: its wire form
    (:func:`wire_form`) and its words (``app.figures.words``) are kept by the same digest as the figure
    (:func:`kept_key`), so an untouched kept figure is never made. Any attribute read — ``fig.layout``,
    ``fig.update_layout(...)``, ``fig.data[0].z`` — makes it first, from a fresh copy of the kept data, so it behaves
    as the Figure it stands for (it is one: a subclass of ``go.Figure``)."""

    def __init__(self, key: bytes, spec: bytes):
        object.__setattr__(self, "_bve_kept", (key, spec))

    def __getattribute__(self, name):
        kept = object.__getattribute__(self, "_bve_kept")
        if kept is not None and name != "_bve_kept":
            object.__setattr__(self, "_bve_kept", None)
            base = type(self).__mro__[2]  # go.Figure
            base.__init__(self, pickle.loads(kept[1]), _validate=False)
        return object.__getattribute__(self, name)

    def _bve_made(self):
        """The figure, made (an attribute read makes it)."""
        return self

    def __reduce__(self):  # pickled and deep-copied as the plain Figure it stands for
        import plotly.graph_objects as go

        return go.Figure, go.Figure.__reduce__(self)[1]


@functools.cache
def _kept_figure_class(base):
    return type("KeptFigure", (_Kept, base), {"__init__": _Kept.__init__})


def kept_key(figure) -> bytes | None:
    """The digest a figure is kept by, while it is exactly the kept figure (not made: nothing read or changed it);
    else None."""
    if not isinstance(figure, _Kept):
        return None
    kept = object.__getattribute__(figure, "_bve_kept")
    return kept[0] if kept is not None else None


def _checked_data(figure) -> dict:
    """The figure's data as plotly holds it once checked: what ``to_dict`` copies (``_data``, ``_layout``, the
    frames' ``_props``), before it packs numpy arrays into {"dtype", "bdata"} for the browser (plotly ≥ 6). A figure
    made without checks from packed data would hand those dicts back where the built one has arrays."""
    data = {"data": figure._data, "layout": figure._layout}
    frames = [frame._props for frame in figure._frame_objs]
    return {**data, "frames": frames} if frames else data


def kept_counts() -> dict[str, int]:
    """{"built": figures built and kept, "kept": figures given back from the store} since the process started."""
    with _kept_lock:
        return dict(_counts)


WIRED_FIGURES = 256  # figures kept in the form sent to the browser, the least recently used dropped first
_wired: OrderedDict[bytes, dict] = OrderedDict()  # digest of the figure's data, layout and frames -> its JSON, parsed
_wired_counts = {"serialized": 0, "kept": 0}


def wire_form(figure) -> dict:
    """``figure`` as the browser is sent it: the plain dict of its JSON (``plotly.io.to_json``, parsed back), kept by
    a digest of what the figure holds now (its data, layout and frames, pickled: ~0.1 ms), so that restyling it
    (presenter mode, a phone, a height) or any change makes a new entry. Converting a figure for the browser copies
    it whole and packs its arrays (``to_dict``, then the JSON encoder's walk over every value): 1–8 ms a figure on
    every rerun of every session; a kept one is handed back as it is, shared, and must not be changed (Streamlit
    only reads it: its JSON is encoded again from it, ~0.1 ms). A figure that cannot be pickled is converted every
    time."""
    import json

    import plotly.io as pio

    built = kept_key(figure)
    if built is not None:  # an untouched kept figure: its wire form is kept by its digest too (nothing to pickle)
        with _kept_lock:
            wired = _wired.get(b"built:" + built)
            if wired is not None:
                _wired.move_to_end(b"built:" + built)
                _wired_counts["kept"] += 1
                return wired
        wired = wire_form(figure._bve_made())  # makes it, then finds or converts it by what it holds
        with _kept_lock:
            _wired[b"built:" + built] = wired
        return wired
    try:
        blob = pickle.dumps(
            (figure._data, figure._layout, [f._props for f in figure._frame_objs]), protocol=pickle.HIGHEST_PROTOCOL
        )
    except Exception:  # noqa: BLE001 — not plain data: converted every time
        return json.loads(pio.to_json(figure, validate=False))
    key = hashlib.blake2b(blob, digest_size=20).digest()
    with _kept_lock:
        wired = _wired.get(key)
        if wired is not None:
            _wired.move_to_end(key)
            _wired_counts["kept"] += 1
            return wired
    wired = json.loads(pio.to_json(figure, validate=False))
    with _kept_lock:
        _wired[key] = wired
        _wired_counts["serialized"] += 1
        while len(_wired) > WIRED_FIGURES:
            _wired.popitem(last=False)
    return wired


def wired_counts() -> dict[str, int]:
    """{"serialized": figures converted for the browser, "kept": conversions handed back from the store}."""
    with _kept_lock:
        return dict(_wired_counts)


def stage_figure(module, result, name: str | None = None):
    """The figure a view puts on the stage (and the handout prints), built from its lesson's ``run`` Result:
    ``module.FIGURES[name]`` when the lesson's figures module offers that name (``app.core.state.figure_param``),
    else its key figure — also when the named figure has nothing to draw with these settings (its builder gives
    None), as on the page."""
    build = getattr(module, "FIGURES", {}).get(name) if name else None
    figure = build(result) if build is not None else None
    return figure if figure is not None else module.key_figure(result)


@functools.cache
def white_template():
    """The figures' style on a projector and on paper (presenter mode, the handout): plotly's "simple_white", less
    its shape defaults, which draw a shape's line 0 px wide at 30% opacity — a line a figure marks without giving
    it a width (ALBERT's depth L, the epochs chosen in the masking lab) would vanish."""
    import plotly.graph_objects as go
    import plotly.io as pio

    base = pio.templates["simple_white"].to_plotly_json()
    # less the styles of subplot kinds the app never draws (3-D scenes, polar, ternary, maps): a figure checks its
    # template's every property when given it, and these were half of them (presenter mode: 7.7 -> 3.3 ms a figure)
    template = go.layout.Template(layout={k: v for k, v in base["layout"].items() if k not in UNDRAWN_SUBPLOTS})
    template.layout.shapedefaults = None
    # only the trace types the app draws: a figure copies its template's defaults for every type it lists (24 in
    # simple_white), 13 ms a figure in presenter mode, 5 ms with these three (ModernBERT's slide styles ten)
    template.data = {k: v for k, v in base["data"].items() if k in DRAWN_TRACES}
    return template


DRAWN_TRACES = ("bar", "heatmap", "scatter", "table")  # every go.<Trace> in app/ (tests/test_stage_figures.py checks)
UNDRAWN_SUBPLOTS = ("geo", "polar", "scene", "ternary", "mapbox", "map", "smith")  # cartesian axes only, then
