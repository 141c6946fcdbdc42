"""Any plotly figure in words: its text alternative when its lesson has not written one (app/ui/stage.show_figure).

The five key figures whose point is in their cells have words of their own, written by their figure modules from
the Result (``describe``). Every other figure gets these, read from the figure itself — which its module built from
the Result, so the numbers are the Result's: the title, the axes, and per trace what it holds and its extremes (the
highest and lowest bar, a line's range and peak, a grid's size and hottest cell). A screen reader reads them; a
phone, where nothing can be hovered, has them too. Plain text: labels a visitor may have typed are quoted «…» and
the page escapes the whole (``app.ui.stage.alt_text``)."""

from __future__ import annotations

import html
import math
import re
import threading
from collections import OrderedDict

import numpy as np

from app.core.text import count

TAG = re.compile(r"<[^>]*>")
MAX_TRACES = 6  # traces described one by one; the rest are counted
MAX_CHARS = 700
KEPT_WORDS = 256  # the words of kept figures (app.figures.kept), by the figure's digest
_said: OrderedDict[bytes, str] = OrderedDict()
_said_lock = threading.Lock()


def _plain(value) -> str:
    """A label as a person reads it: plotly's markup (<b>, <br>) and entities (&lt;, &#34;) undone, one line."""
    s = html.unescape(TAG.sub(" ", str(value)))
    return " ".join(s.replace("«", "‹").replace("»", "›").split())


def _num(v) -> str:
    v = float(v)
    if not math.isfinite(v):
        return str(v)
    if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
        return f"{v:.3g}"
    return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def _label(v) -> str:
    """A category (quoted, as typed text may be) or a number (as a number)."""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return _num(v)
    s = _plain(v)
    try:
        return _num(float(s))  # a number plotly was given as text
    except ValueError:
        pass
    return f"«{s[:40]}{'…' if len(s) > 40 else ''}»"


def _values(seq) -> list:
    if seq is None:
        return []
    try:
        return list(seq)
    except TypeError:
        return []


def _floats(seq) -> np.ndarray:
    """Values as floats (NaN where one is not a number), in one pass: a 256 × 256 grid costs a millisecond."""
    try:
        return np.asarray(seq, dtype=float)
    except (TypeError, ValueError):
        out = []
        for v in _values(seq):
            try:
                out.append(float(v))
            except (TypeError, ValueError):
                out.append(math.nan)
        return np.asarray(out, dtype=float)


def _finite(labels: list, values) -> list[tuple]:
    """(label, value) of the finite values, in order; labels as given (an index where there are none)."""
    vals = _floats(values)
    if vals.ndim != 1:
        return []
    labels = labels if len(labels) >= len(vals) else list(range(len(vals)))
    return [(labels[i], float(vals[i])) for i in np.flatnonzero(np.isfinite(vals))]


def _extremes(pairs: list[tuple]) -> tuple[tuple, tuple]:
    vals = np.array([v for _, v in pairs])
    return pairs[int(vals.argmax())], pairs[int(vals.argmin())]


def _title(obj) -> str:
    t = getattr(obj, "title", None)
    text = getattr(t, "text", None) if t is not None else None
    return _plain(text) if text else ""


def _trace_words(tr) -> str:
    kind = tr.type
    name = _plain(tr.name) if getattr(tr, "name", None) else ""
    who = f"{name}: " if name else ""
    if kind == "bar":
        horizontal = getattr(tr, "orientation", None) == "h"
        cats, vals = (_values(tr.y), _values(tr.x)) if horizontal else (_values(tr.x), _values(tr.y))
        pairs = _finite(cats, vals)
        if not pairs:
            return f"{who}no bars"
        hi, lo = _extremes(pairs)
        said = f"{who}{count(len(pairs), 'bar')}"
        if len(pairs) == 1:
            return f"{said}, {_label(hi[0])} {_num(hi[1])}"
        return f"{said}, highest {_label(hi[0])} {_num(hi[1])}, lowest {_label(lo[0])} {_num(lo[1])}"
    if kind in ("scatter", "scattergl"):
        pairs = _finite(_values(tr.x), tr.y if tr.y is not None else [])
        if not pairs:
            return f"{who}no points"
        hi, lo = _extremes(pairs)
        if getattr(tr, "fill", None) == "toself" and len(pairs) > 2:  # a band: out along its top, back along its bottom
            xs = [x for x, _ in pairs]
            try:
                span = f"{_label(min(xs))} to {_label(max(xs))}"
            except TypeError:  # categories: as drawn
                span = f"{_label(xs[0])} to {_label(xs[len(xs) // 2])}"
            return f"{who}a band over {span}, between {_num(lo[1])} and {_num(hi[1])}"
        shape = "a line" if "lines" in (getattr(tr, "mode", None) or "lines") else "points"
        if len(pairs) == 1:
            return f"{who}one point at {_label(pairs[0][0])}, {_num(pairs[0][1])}"
        return (
            f"{who}{shape} of {len(pairs)} from {_label(pairs[0][0])} ({_num(pairs[0][1])}) to "
            f"{_label(pairs[-1][0])} ({_num(pairs[-1][1])}), highest {_num(hi[1])} at {_label(hi[0])}, "
            f"lowest {_num(lo[1])} at {_label(lo[0])}"
        )
    if kind == "heatmap":
        z = _floats(tr.z if tr.z is not None else [])
        if z.ndim != 2 or z.size == 0:
            return f"{who}a grid with no values"
        rows, cols = z.shape
        xs, ys = _values(tr.x), _values(tr.y)
        if not np.isfinite(z).any():
            return f"{who}a grid of {count(rows, 'row')} × {count(cols, 'column')} with no values"
        (i, j), v = np.unravel_index(np.nanargmax(z), z.shape), np.nanmax(z)
        (a, b), w = np.unravel_index(np.nanargmin(z), z.shape), np.nanmin(z)

        def at(r, c):
            return f"{_label(ys[r]) if r < len(ys) else r} × {_label(xs[c]) if c < len(xs) else c}"

        return (
            f"{who}a grid of {count(rows, 'row')} × {count(cols, 'column')}, highest {_num(v)} at {at(i, j)}, "
            f"lowest {_num(w)} at {at(a, b)}"
        )
    return f"{who}a {kind} trace"


def figure_words(fig) -> str:
    """The figure in words, plain text of at most ``MAX_CHARS``: title, axes, then each trace (at most
    ``MAX_TRACES``). An untouched kept figure's words are kept by its digest (``app.figures.kept_key``): reading
    them again would make the figure (``app.figures._Kept``) only to say what was said before."""
    from app.figures import kept_key

    key = kept_key(fig)
    if key is None:
        return _words(fig)
    with _said_lock:
        said = _said.get(key)
        if said is not None:
            _said.move_to_end(key)
            return said
    said = _words(fig)
    with _said_lock:
        _said[key] = said
        while len(_said) > KEPT_WORDS:
            _said.popitem(last=False)
    return said


def _words(fig) -> str:
    layout = fig.layout
    parts = []
    title = _title(layout)
    parts.append(f"{title}." if title else "A figure.")
    x, y = _title(layout.xaxis), _title(layout.yaxis)
    axes = [f"across, {x}" if x else "", f"up, {y}" if y else ""]
    if any(axes):
        parts.append("Axes: " + "; ".join(a for a in axes if a) + ".")
    traces = [t for t in fig.data if getattr(t, "visible", True) not in (False, "legendonly")]
    said = [_trace_words(t) for t in traces[:MAX_TRACES]]
    if said:
        text = "; ".join(said)
        parts.append(text[0].upper() + text[1:] + ".")
    if len(traces) > MAX_TRACES:
        parts.append(f"And {len(traces) - MAX_TRACES} more traces.")
    out = " ".join(parts)
    return out if len(out) <= MAX_CHARS else out[: MAX_CHARS - 1].rstrip() + "…"
