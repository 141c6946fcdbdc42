"""Plotly figures for the lessons: pure functions from results to figures."""

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import functools
import hashlib
import pickle
import threading
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

        try:
            blob = pickle.dumps(
                (builder.__module__, builder.__qualname__, args, sorted(kwargs.items())),
                protocol=pickle.HIGHEST_PROTOCOL,
            )
        except Exception:  # noqa: BLE001 — not plain data: built every time
            return builder(*args, **kwargs)
        key = hashlib.blake2b(blob, digest_size=20).digest() if len(blob) <= KEPT_ARGS_BYTES else None
        with _kept_lock:
            spec = _kept.get(key) if key is not None else None
            if spec is not None:
                _kept.move_to_end(key)
                _counts["kept"] += 1
        if spec is not None:
            return go.Figure(pickle.loads(spec), _validate=False)
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
