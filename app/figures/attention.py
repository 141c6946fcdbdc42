"""Figures for app/lessons/attention.py: a token-by-token heatmap of one attention (or rollout) matrix, and the key
figure: bertviz's view as a standalone document.

The lesson's Result in, plotly Figure out. Rows are the attending tokens (queries), columns the attended ones (keys);
hover gives both tokens, their positions and the exact weight. Tokens are escaped with ``app.core.text.html``:
plotly renders a few tags in its text, and a token is data, never markup.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.core import text as txt
from app.figures import Document, kept

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
    pairs = np.stack([np.broadcast_to(column[:, None], grid), np.broadcast_to(column[None, :], grid),  # (T, T, 4):
                      np.broadcast_to(positions[:, None], grid), np.broadcast_to(positions[None, :], grid)],  # from, to,
                     axis=-1)  # from position, to position
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


def key_figure(r) -> Document:
    """The lesson's key figure, from ``attention.run``'s Result: bertviz's view (head or model), a standalone
    document with its scripts inline, and the height it needs."""
    return Document(r.document, r.height)


def every_figure(r) -> list:
    """Every figure pages/attention.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        attention_heatmap(r),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
