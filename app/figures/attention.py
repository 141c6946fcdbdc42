"""Figures for app/lessons/attention.py: a token-by-token heatmap of one attention (or rollout) matrix, and the key
figure: bertviz's view as a standalone document.

The lesson's Result in, plotly Figure out. Rows are the attending tokens (queries), columns the attended ones (keys);
hover gives both tokens, their positions and the exact weight. Tokens are escaped with ``app.core.text.html``:
plotly renders a few tags in its text, and a token is data, never markup.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core import text as txt
from app.figures import Document, bertviz_offline, kept

COLORSCALE = "Blues"


def _label(token: str) -> str:
    return txt.html(str(token).replace("Ġ", "").replace("▁", "").strip() or str(token))


@kept
def attention_heatmap(r, *, colorbar_title: str = "weight") -> go.Figure:
    """The map for ``attention.run``'s Result: ``r.weights`` (T, T), row i = how token ``r.tokens[i]``'s attention is
    spread over the tokens (rows sum to 1), titled with the model (``r.label``) and what the map is (``r.what``)."""
    weights, tokens, title = np.asarray(r.weights, dtype=float), list(r.tokens), f"{r.label} · {r.what}"
    length = len(tokens)
    if weights.shape != (length, length):
        raise ValueError(f"weights must be ({length}, {length}) for {length} tokens, got {weights.shape}")
    labels = [_label(t) for t in tokens]
    column = np.array(labels, dtype=object)
    positions = np.arange(length, dtype=object)
    grid = (length, length)
    pairs = np.stack(
        [
            np.broadcast_to(column[:, None], grid),
            np.broadcast_to(column[None, :], grid),  # (T, T, 4):
            np.broadcast_to(positions[:, None], grid),
            np.broadcast_to(positions[None, :], grid),
        ],  # from, to,
        axis=-1,
    )  # from position, to position
    fig = go.Figure(
        go.Heatmap(
            z=weights,
            x=list(range(length)),
            y=list(range(length)),
            customdata=pairs,
            colorscale=COLORSCALE,
            zmin=0.0,
            zmax=float(weights.max()) if weights.size else 1.0,
            colorbar=dict(title=colorbar_title),
            hovertemplate=(
                "from <b>%{customdata[0]}</b> (position %{customdata[2]})<br>"
                "to <b>%{customdata[1]}</b> (position %{customdata[3]})<br>"
                "weight %{z:.6f}<extra></extra>"
            ),
        )
    )
    ticks = dict(tickmode="array", tickvals=list(range(length)), ticktext=labels)
    side = max(360, min(900, 140 + 22 * length))
    fig.update_layout(
        title=dict(text=txt.html(title)),
        xaxis=dict(title="attended token (key)", tickangle=-60, side="bottom", **ticks),
        yaxis=dict(title="attending token (query)", autorange="reversed", **ticks),
        height=side,
        margin=dict(l=10, r=10, t=60, b=10),
    )
    return fig


LAYER_COLUMNS = 6  # panels a row in the every-layer figure; deeper models wrap onto more rows


@kept
def layers_figure(r) -> go.Figure:
    """Every layer's attention side by side, mean over its heads (``r.attentions`` (layers, heads, T, T)): what
    bertviz's model view shows as a grid of thumbnails, as maps a hall can read. Rows are the attending tokens,
    columns the attended ones; the first panel of each row carries the token labels; hover gives both tokens and
    the exact weight."""
    maps = np.asarray(r.attentions, dtype=np.float32).mean(axis=1)  # (layers, T, T)
    n_layers, length = maps.shape[0], maps.shape[-1]
    cols = min(LAYER_COLUMNS, n_layers)
    rows = -(-n_layers // cols)
    labels = [_label(t) for t in r.tokens]
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[f"layer {k + 1}" for k in range(n_layers)],
        horizontal_spacing=0.02,
        vertical_spacing=0.08,
    )
    top = float(maps.max()) if maps.size else 1.0
    for k, z in enumerate(maps):
        row, col = k // cols + 1, k % cols + 1
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=list(range(length)),
                y=list(range(length)),
                colorscale=COLORSCALE,
                zmin=0.0,
                zmax=top,
                showscale=k == 0,
                colorbar=dict(title="weight"),
                customdata=np.stack(
                    np.broadcast_arrays(
                        np.array(labels, dtype=object)[:, None], np.array(labels, dtype=object)[None, :]
                    ),
                    axis=-1,
                ),
                hovertemplate=(
                    f"layer {k + 1}: <b>%{{customdata[0]}}</b> → <b>%{{customdata[1]}}"
                    "</b><br>weight %{z:.4f} (mean over heads)<extra></extra>"
                ),
            ),
            row=row,
            col=col,
        )
        first = col == 1  # cells are not kept square: each panel takes the height its row has, so the token
        # labels of the first panel get a line each (square panels six across left them ~12 px apart on a stage)
        fig.update_xaxes(showticklabels=False, row=row, col=col)
        fig.update_yaxes(
            autorange="reversed",
            showticklabels=first,
            tickmode="array",
            tickvals=list(range(length)),
            ticktext=labels,
            row=row,
            col=col,
        )
    title = f"{txt.html(r.label)}: every layer's attention, mean over its {r.attentions.shape[1]} heads"
    fig.update_xaxes(title_text="attended token →", row=rows, col=1)
    fig.update_layout(
        title=dict(text=title), height=140 + max(320, 24 * length) * rows, margin=dict(l=10, r=10, t=70, b=10)
    )
    return fig


KEPT_DOCUMENTS = 32  # documents kept, the least recently used dropped first (each ~0.5-5 MB)
_documents: OrderedDict[bytes, str] = OrderedDict()  # digest of what a document is drawn from -> the document
_documents_lock = threading.Lock()


def document(r) -> str:
    """bertviz's view of ``r`` (``r.view``, head or model: app/figures/bertviz_offline.py) as one offline, escaped
    HTML document: the layers ``r.layers_sent``, layer ``r.layer``, head ``r.head`` (0 = every head). Writing it
    inlines the libraries and layers · heads · T² weights (tens of ms to seconds), so a document is kept by a digest
    of everything it is drawn from: a rerun, the stage, the download and the handout share one."""
    att = np.ascontiguousarray(r.attentions)
    what = (att.shape, str(att.dtype), r.tokens, r.encoded.sentence_b_start, r.view, r.layer, r.head)
    digest = hashlib.blake2b(att.tobytes(), digest_size=20)
    digest.update(repr((what, r.layers_sent, r.title)).encode())
    key = digest.digest()
    with _documents_lock:
        html = _documents.get(key)
        if html is not None:
            _documents.move_to_end(key)
            return html
    html = bertviz_offline.render(
        r.view,
        att,
        list(r.tokens),
        r.encoded.sentence_b_start,
        layer=r.layer,
        heads=[r.head] if r.head else None,
        include_layers=list(r.layers_sent),
        title=r.title,
    )
    with _documents_lock:
        _documents[key] = html
        while len(_documents) > KEPT_DOCUMENTS:
            _documents.popitem(last=False)
    return html


def key_figure(r) -> Document:
    """The lesson's key figure, from ``attention.run``'s Result: bertviz's view (head or model), a standalone
    document with its scripts inline (:func:`document`), and the height it needs."""
    return Document(document(r), r.height)


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/attention.py's SPEC), key first.
FIGURES = {"view": key_figure, "layers": layers_figure, "map": attention_heatmap}


def every_figure(r) -> list:
    """Every figure pages/attention.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        layers_figure(r),
        attention_heatmap(r),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
