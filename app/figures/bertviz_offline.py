"""bertviz's head view and model view as one self-contained HTML document: offline and injection-safe.

bertviz 1.4.1 (``head_view`` / ``model_view`` with ``html_action="return"``) builds its HTML from three
parts: a ``<script src=...>`` that loads require.js from a CDN, a ``<div>`` for the view, and its drawing
script (head_view.js / model_view.js) with the string ``PYTHON_PARAMS`` replaced by ``json.dumps(params)``.
That document needs the network (require.js, then d3 and jQuery, all from cdnjs) and trusts its data:
``json.dumps`` leaves ``</script>`` as it is, so a token ``</script><script>alert(1)</script>`` ends the
script and runs its own.

Here the same drawing scripts (vendored verbatim under ``assets/vendor/``, see its README) draw the same
``params`` (built as bertviz builds them), with three changes:

1. jQuery and d3 are inlined from ``assets/vendor/``; a five-line stand-in for require.js hands them to the
   drawing script, whose ``require.config`` block (the CDN paths) is removed. Nothing is fetched, and the
   document's Content-Security-Policy forbids fetching anything (``default-src 'none'``).
2. The data goes through :func:`safe_json`: ``<``, ``>``, ``&``, ``/`` and U+2028/U+2029 become ``\\uXXXX``
   or ``\\/`` escapes, so no token can close the script, open an HTML comment, or end a JS line; the
   browser decodes them back to the same strings. The drawing scripts put tokens into the page with
   d3's and jQuery's ``.text()``, which never parses HTML.
3. Layers and heads are labelled from 1 (bertviz labels them from 0), like the rest of the app.
4. The drawing fits its frame (:data:`FIT_SCRIPT`): bertviz draws at fixed sizes — the model view 970 px wide,
   which cut its last head in a student's 820-px column; the head view 335 px wide, a sliver of a projector's
   stage. The model view is drawn as wide as the frame (at most bertviz's 970 px, its thumbnails narrower), and
   the head view's band of lines between the two token columns widens to the frame (up to ``HEAD_MATRIX_MAX``),
   its lines thicker as it widens (2 px, bertviz's, to ``HEAD_STROKE_MAX``) so that longer lines stay visible.
   Widths are the frame's in the document's own pixels, so a page that zooms the document (presenter mode fits
   its height to the stage) gets a drawing as wide as the stage at that zoom: larger type, thicker lines, the
   whole width. A resized frame is fitted again.

    html = render("head", attention, tokens, sentence_b_start=None, layer=1, heads=None, title="BERT")
    # attention: (layers, heads, T, T) array, rows = the attending token, summing to 1
"""

from __future__ import annotations

from app.core import preload  # noqa: F401  (first: the heavy imports, once, in one thread)

import json
import re
import secrets
from functools import lru_cache
from pathlib import Path

import numpy as np

from app.bertviz_fit import MAX_WEIGHTS, fit_layers, height_hint  # noqa: F401  (the sizing rules, shared)
from app.core import text as txt

VENDOR_DIR = Path(__file__).resolve().parents[2] / "assets" / "vendor"
VIEWS = ("head", "model")
# Inlined in this order: (file under assets/vendor, a notice replacing its banner, or None to keep it).
LIBRARIES = (
    ("jquery-2.2.4.min.js", None),  # its banner names no URL: "/*! jQuery v2.2.4 | (c) jQuery Foundation | ... */"
    ("d3-5.16.0.min.js", "d3 v5.16.0 | Copyright 2020 Mike Bostock | BSD-3-Clause License"),
)
VIEW_SCRIPTS = {"head": "bertviz-1.4.1-head_view.js", "model": "bertviz-1.4.1-model_view.js"}
VIEW_NOTICE = "bertviz 1.4.1 {name} | Copyright 2018 Jesse Vig | Apache License 2.0 | modified: offline, escaped data"
ROOT_ID = "bertviz-view"
DECIMALS = 3  # attention weights in the document: they set opacity (exact values: the heatmap's hover)
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"

# Stands in for require.js: bertviz's scripts call requirejs(['jquery', 'd3'], fn); both are globals here.
AMD_SHIM = """\
function requirejs(names, callback) {
  var modules = {jquery: window.jQuery, d3: window.d3};
  return callback.apply(window, names.map(function (name) { return modules[name]; }));
}"""

# bertviz's sizes (its scripts' constants) and how far the fit stretches them (change 4 above).
HEAD_BOX, HEAD_MATRIX, HEAD_MATRIX_MAX = 110, 115, 460  # token column width; band of lines: bertviz's, at most
HEAD_STROKE, HEAD_STROKE_MAX = 2, 3.5  # line width in the head view: bertviz's, and at the widest band
MODEL_WIDTH, MODEL_WIDTH_MIN = 970, 480  # the model view's drawing: bertviz's width, the least it is narrowed to
BODY_MARGIN = 8  # the document's body margin, each side
FIT_SCRIPT = """\
var bvFit = (function () {  // the drawing's widths, from the frame's (in the document's own pixels)
  var fit = {view: "VIEW", matrixWidth: HEAD_MATRIX, strokeWidth: HEAD_STROKE, divWidth: MODEL_WIDTH};
  fit.room = function () {
    var zoom = parseFloat(window.getComputedStyle(document.documentElement).zoom);
    return Math.max(0, window.innerWidth / (zoom > 0 ? zoom : 1) - 2 * BODY_MARGIN);
  };
  fit.size = function () {
    var room = fit.room();
    fit.matrixWidth = Math.max(HEAD_MATRIX, Math.min(HEAD_MATRIX_MAX, Math.floor(room - 2 * HEAD_BOX - 4)));
    fit.strokeWidth = HEAD_STROKE + (HEAD_STROKE_MAX - HEAD_STROKE) * (fit.matrixWidth - HEAD_MATRIX) \
/ (HEAD_MATRIX_MAX - HEAD_MATRIX);
    fit.divWidth = Math.max(MODEL_WIDTH_MIN, Math.min(MODEL_WIDTH, Math.floor(room)));
  };
  fit.size();
  window.addEventListener("resize", function () {
    var before = fit.view === "head" ? fit.matrixWidth : fit.divWidth;
    fit.size();
    if (fit.view === "head" && fit.matrixWidth !== before) {
      window.jQuery("#layer").trigger("change");  // bertviz's own redraw
    } else if (fit.view === "model") {  // drawn once: zoom it out if the frame got narrower
      var svg = document.querySelector("#vis svg"), vis = document.getElementById("vis");
      var drawn = svg ? parseFloat(svg.getAttribute("width")) : 0;
      vis.style.zoom = drawn > 0 ? Math.min(1, fit.room() / drawn) : 1;
    }
  });
  return fit;
})();"""
for _name, _value in (
    ("HEAD_MATRIX_MAX", HEAD_MATRIX_MAX),
    ("HEAD_MATRIX", HEAD_MATRIX),
    ("HEAD_BOX", HEAD_BOX),
    ("HEAD_STROKE_MAX", HEAD_STROKE_MAX),
    ("HEAD_STROKE", HEAD_STROKE),
    ("MODEL_WIDTH_MIN", MODEL_WIDTH_MIN),
    ("MODEL_WIDTH", MODEL_WIDTH),
    ("BODY_MARGIN", BODY_MARGIN),
):
    FIT_SCRIPT = FIT_SCRIPT.replace(_name, str(_value))
# where the view scripts read those sizes: (pattern, replacement, how many times it must be found)
# The head view tells heads apart by colour: d3's category10 puts a green and a red head side by side, which a
# red-green colour-blind student cannot tell apart. The heads get the Okabe-Ito palette (made for colour-blind
# viewers, with Tol's wine in place of its black, whose lines would grey the blend of every head's; the palette is
# checked under simulated protanopia and deuteranopia in tests/test_head_colours.py), and every head's
# checkbox its number (from 1, as the page counts heads): a head can be named and shown alone without its colour.
HEAD_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#882255")
_LIGHT_HEADS = ("#E69F00", "#56B4E9", "#F0E442")  # a head number on these is black, on the others white
_HEAD_NUMBERS = (
    '.attr("height", CHECKBOX_SIZE);\n'
    '        checkboxContainer.selectAll("text").data(config.headVis).enter().append("text")\n'
    '            .text((d, i) => i + 1).attr("x", (d, i) => i * CHECKBOX_SIZE + CHECKBOX_SIZE / 2)\n'
    '            .attr("y", top + CHECKBOX_SIZE / 2).attr("text-anchor", "middle")'
    '.attr("dominant-baseline", "central")\n'
    '            .attr("font-size", 13).attr("font-family", "sans-serif").style("pointer-events", "none")\n'
    f'            .attr("fill", (d, i) => {json.dumps(list(_LIGHT_HEADS))}.includes(headColors(i)) ? "#000" : "#fff");'
)
FIT_EDITS = {
    "head": (
        (re.compile(r"const MATRIX_WIDTH = 115;\n\s*"), "", 1),
        (re.compile(r"\bMATRIX_WIDTH\b"), "bvFit.matrixWidth", 3),
        (re.compile(r'\.attr\("stroke-width", 2\)'), '.attr("stroke-width", bvFit.strokeWidth)', 1),
        (
            re.compile(r"d3\.scaleOrdinal\(d3\.schemeCategory10\)"),
            f"d3.scaleOrdinal({json.dumps(list(HEAD_COLOURS))})",
            1,
        ),
        (re.compile(r'\.attr\("height", CHECKBOX_SIZE\);'), lambda _m: _HEAD_NUMBERS, 1),
    ),
    "model": ((re.compile(r"const DIV_WIDTH = 970;"), "const DIV_WIDTH = bvFit.divWidth;", 1),),
}

_HEADER = re.compile(r"\A\s*/\*\*.*?\*\*/\s*", re.S)  # bertviz's file overview (names a URL)
_REQUIRE_CONFIG = re.compile(r"require\.config\(\{.*?\}\);\s*", re.S)  # the CDN paths
_PARAMS_LINE = re.compile(r"const params = PYTHON_PARAMS;[^\n]*")
_D3_BANNER = re.compile(r"\A// https://d3js\.org[^\n]*\n")
_BREAKOUTS = ("</script", "<!--")  # "<script" alone is harmless in script data (jQuery has it)


def safe_json(obj) -> str:
    """JSON that can sit inside an HTML ``<script>`` (and any JS source) as it is.

    Every ``<``, ``>``, ``&`` and ``/`` and the JS line terminators U+2028/U+2029 are written as escapes,
    so the text contains no ``</script``, ``<!--``, ``-->`` or URL, while ``JSON.parse`` and a JS literal
    read back exactly the same strings. numpy arrays of weights in [0, 1] (bertviz sends layers·heads·T²
    of them) are written fast as numbers with ``DECIMALS`` places; such text is digits, dots, commas and
    brackets only.
    """
    arrays: list[np.ndarray] = []
    nonce = secrets.token_hex(8)

    def swap(x):  # arrays -> marker strings that no token can guess
        if isinstance(x, np.ndarray):
            arrays.append(x)
            return f"bertviz-array-{nonce}-{len(arrays) - 1}"
        if isinstance(x, dict):
            return {k: swap(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [swap(v) for v in x]
        return x

    text = json.dumps(swap(obj), ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    text = (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("/", "\\/")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    for i, array in enumerate(arrays):
        text = text.replace(f'"bertviz-array-{nonce}-{i}"', _array_json(array), 1)
    return text


@lru_cache(maxsize=4)
def _number_table(decimals: int) -> np.ndarray:
    scale = 10**decimals
    return np.array([f"{k / scale:g}" for k in range(scale + 1)], dtype=object)  # "0", "0.012", "1"


def _array_json(array: np.ndarray) -> str:
    """A float array as nested JSON lists, rounded to DECIMALS places."""
    array = np.nan_to_num(np.asarray(array, dtype=np.float64))
    if array.ndim == 0 or array.size == 0 or array.min() < 0 or array.max() > 1:
        return json.dumps(np.round(array, DECIMALS).tolist(), allow_nan=False, separators=(",", ":"))
    numbers = _number_table(DECIMALS)[np.rint(array * 10**DECIMALS).astype(np.int64)]  # same shape, str

    def nest(x) -> str:
        return "[" + (",".join(x) if x.ndim == 1 else ",".join(nest(y) for y in x)) + "]"

    return nest(numbers)


def prettify(tokens: list[str]) -> list[str]:
    """bertviz's ``format_special_chars``: the byte-level BPE and SentencePiece space marks become spaces; and,
    as everywhere a token is shown, format characters (bidi overrides, zero-width joiners) show as ``⟨U+XXXX⟩``
    (``app.core.text.visible``) instead of reordering or hiding the text around them."""
    return [txt.visible(str(t).replace("Ġ", " ").replace("▁", " ").replace("</w>", "")) for t in tokens]


# ----------------------------------------------------------------------------- vendored scripts


@lru_cache(maxsize=None)
def _vendored(name: str) -> str:
    path = VENDOR_DIR / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the offline bertviz view needs assets/vendor/ (see its README)")
    return path.read_text(encoding="utf-8")


def _inline_safe(js: str, name: str) -> str:
    """A script body that cannot end its ``<script>`` element early or enter HTML's comment states."""
    lowered = js.lower()
    for bad in _BREAKOUTS:
        if bad in lowered:
            raise ValueError(f"{name} contains {bad!r} and cannot be inlined in a <script> element")
    return js


def library_script(name: str, notice: str | None = None) -> str:
    """A vendored library as an inline script; a banner naming a URL (d3's) is replaced by ``notice``."""
    js = _vendored(name)
    if notice is not None:
        js = f"/*! {notice} */\n" + _D3_BANNER.sub("", js, count=1)
    return _inline_safe(js, name)


def view_script(view: str, params: dict) -> str:
    """bertviz's drawing script for ``view`` with ``params`` in place of its PYTHON_PARAMS marker."""
    name = VIEW_SCRIPTS[view]
    js = _vendored(name)
    js, n_header = _HEADER.subn("", js, count=1)
    js, n_config = _REQUIRE_CONFIG.subn("", js, count=1)
    payload = safe_json(params)
    js, n_params = _PARAMS_LINE.subn(lambda _m: f"const params = {payload};", js, count=1)
    fitted = True
    for pattern, replacement, count in FIT_EDITS[view]:
        js, n = pattern.subn(replacement, js)
        fitted = fitted and n == count
    if (n_header, n_config, n_params) != (1, 1, 1) or "PYTHON_PARAMS" in js or not fitted:
        raise ValueError(f"{name} is not the bertviz 1.4.1 script this module was written for")
    notice = VIEW_NOTICE.format(name=f"{view}_view.js")
    return _inline_safe(f"/*! {notice} */\n{FIT_SCRIPT.replace('VIEW', view, 1)}\n{js}", name)


# ----------------------------------------------------------------------------- params, as bertviz builds them


def view_params(
    view: str,
    attention: np.ndarray,
    tokens: list[str],
    sentence_b_start: int | None = None,
    *,
    layer: int = 1,
    heads: list[int] | None = None,
    include_layers: list[int] | None = None,
) -> dict:
    """The ``params`` object bertviz's scripts read, as bertviz 1.4.1's Python builds it.

    attention: (layers, heads, T, T), row i = how token i spreads its attention (rows sum to 1).
    sentence_b_start: the first position of segment B (adds bertviz's A->A, B->B, A->B, B->A filters).
    layer: the layer the head view opens on, from 1. heads: the heads it shows first, from 1 (None: all).
    include_layers: the layers to send, from 1 (None: all) — bertviz's own way to keep long inputs light.
    Layers and heads are labelled from 1; each ``attn`` is kept as a numpy array (bertviz calls
    ``.tolist()``) for :func:`safe_json` to write quickly.
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}")
    att = np.nan_to_num(np.asarray(attention, dtype=np.float64))
    if att.ndim != 4 or att.shape[2] != att.shape[3]:
        raise ValueError(f"attention must be (layers, heads, T, T), got {att.shape}")
    n_layers, n_heads, length, _ = att.shape
    tokens = prettify(tokens)
    if len(tokens) != length:
        raise ValueError(f"attention has {length} positions but there are {len(tokens)} tokens")
    layers = list(range(1, n_layers + 1)) if include_layers is None else sorted(set(include_layers))
    if not layers or any(not 1 <= n <= n_layers for n in layers):
        raise ValueError(f"include_layers must be from 1 to {n_layers}")
    att = att[[n - 1 for n in layers]]  # (len(layers), heads, T, T)

    def part(name, rows: slice, cols: slice):
        return {"name": name, "attn": att[:, :, rows, cols], "left_text": tokens[rows], "right_text": tokens[cols]}

    everything = slice(0, length)
    if sentence_b_start is None or not 0 < sentence_b_start < length:
        attn_data = [part(None, everything, everything)]
    else:
        a, b = slice(0, sentence_b_start), slice(sentence_b_start, length)
        attn_data = [
            part("All", everything, everything),
            part("Sentence A -> Sentence A", a, a),
            part("Sentence B -> Sentence B", b, b),
            part("Sentence A -> Sentence B", a, b),
            part("Sentence B -> Sentence A", b, a),
        ]
    params = {"attention": attn_data, "default_filter": "0", "root_div_id": ROOT_ID, "include_layers": layers}
    if view == "head":
        if layer not in layers:
            raise ValueError(f"layer {layer} is not among the layers sent ({layers})")
        chosen = None
        if heads:
            if any(not 1 <= h <= n_heads for h in heads):
                raise ValueError(f"heads must be from 1 to {n_heads}")
            chosen = sorted({h - 1 for h in heads})  # the script indexes its head checkboxes from 0
        params.update(layer=layer, heads=chosen)
    else:
        params.update(display_mode="light", include_heads=list(range(1, n_heads + 1)), total_heads=n_heads)
    return params


# ----------------------------------------------------------------------------- the document


def render(
    view: str,
    attention: np.ndarray,
    tokens: list[str],
    sentence_b_start: int | None = None,
    *,
    layer: int = 1,
    heads: list[int] | None = None,
    include_layers: list[int] | None = None,
    title: str = "",
) -> str:
    """A standalone HTML document showing bertviz's ``view`` ("head" or "model"): works from a file, offline.

    It holds exactly ``len(LIBRARIES) + 2`` script elements (the libraries, the require.js stand-in and
    the view) and no URL; every string from ``tokens`` and ``title`` is escaped.
    """
    params = view_params(
        view, attention, tokens, sentence_b_start, layer=layer, heads=heads, include_layers=include_layers
    )
    filters = ""
    if len(params["attention"]) > 1:
        options = "".join(
            f'<option value="{i}">{txt.html(d["name"])}</option>' for i, d in enumerate(params["attention"])
        )
        filters = f'Attention: <select id="filter">{options}</select>'
    layer_select = 'Layer: <select id="layer"></select> ' if view == "head" else ""
    title = " ".join(str(title).split())  # one line: newlines and U+2028/U+2029 become spaces
    heading = f"bertviz {view} view" + (f" · {title}" if title else "")
    scripts = [library_script(name, notice) for name, notice in LIBRARIES]
    scripts += [_inline_safe(AMD_SHIM, "require.js stand-in"), view_script(view, params)]
    body_scripts = "\n".join(f"<script>\n{s}\n</script>" for s in scripts)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>{txt.html(heading)}</title>
<style>body {{ margin: 8px; background: #fff; color: #000; }}</style>
</head>
<body>
<div id="{ROOT_ID}" style="font-family:'Helvetica Neue', Helvetica, Arial, sans-serif;">
<span style="user-select:none">{layer_select}{filters}</span>
<div id="vis"></div>
</div>
{body_scripts}
</body>
</html>
"""
