"""Figures for the DeBERTa lesson (app/lessons/deberta.py): ``deberta.run``'s Result (or its ``shifts``,
``prediction``) in, plotly Figure out.

Heatmaps put the query token i in rows and the key token j in columns, on numeric axes labelled with the
pieces (a sentence may hold the same piece twice); hovering any cell of the four panels gives all three terms,
their sum and both softmaxes, so the sum can be checked by hand. Every piece is escaped with ``app.core.text.html``.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core import text as txt
from app.figures import kept

SCORES = "RdBu_r"  # red = raises the score, blue = lowers it, white = 0
DISTANCE = "PuOr"
COLOURS = {"deberta": "#6a3d9a", "bert": "#e6550d", "v1": "#6a3d9a", "v3": "#33a02c"}
PANELS = ("content → content", "content → position", "position → content", "sum = the score")


def _labels(tokens) -> list[str]:
    return [txt.html(t) for t in tokens]


def _ticks(labels: list[str]) -> dict:
    return dict(tickmode="array", tickvals=list(range(len(labels))), ticktext=labels, tickangle=-60)


def _side(n: int) -> int:
    return max(300, min(760, 120 + 16 * n))


PHONE_PANEL_PX = 300  # a panel's height on a phone: about as tall as the ~300-px plot width it gets there


@kept
def terms_figure(
    tokens, terms, query_pos: int | None = None, key_pos: int | None = None, phone: bool = False
) -> go.Figure:
    """Four heatmaps in one row: c2c, c2p, p2c and their sum, on one colour scale centred on 0.

    tokens: (T,) pieces as read; terms: app.lessons.deberta.Terms; query_pos / key_pos: the cell to outline.
    ``phone``: the four panels stacked, one under the other (app/ui/layout.py), the colour bar under them."""
    labels = _labels(tokens)
    n = len(labels)
    mats = [np.asarray(m, dtype=float) for m in (terms.c2c, terms.c2p, terms.p2c, terms.total)]
    top = max(float(np.abs(m).max()) for m in mats) if n else 1.0
    grid = (n, n)
    col = np.array(labels, dtype=object)
    custom = np.stack(
        [
            np.broadcast_to(col[:, None], grid),
            np.broadcast_to(col[None, :], grid),  # (T, T, 9)
            terms.c2c,
            terms.c2p,
            terms.p2c,
            terms.total,
            terms.probs,
            terms.model_probs,
            np.subtract.outer(np.arange(n), np.arange(n)),
        ],
        axis=-1,
    ).astype(object)
    hover = (
        "<b>%{customdata[0]}</b> (i = %{y}) → <b>%{customdata[1]}</b> (j = %{x}), i − j = %{customdata[8]}<br>"
        "c2c %{customdata[2]:.5f} + c2p %{customdata[3]:.5f} + p2c %{customdata[4]:.5f}<br>"
        "= score %{customdata[5]:.5f}<br>softmax %{customdata[6]:.5f} · the model's attention %{customdata[7]:.5f}"
        "<extra>%{fullData.name}</extra>"
    )
    titles = [f"{p}{' =' if i == 2 else ' +' if i < 2 else ''}" for i, p in enumerate(PANELS)]
    if phone:
        fig = make_subplots(rows=4, cols=1, subplot_titles=titles, vertical_spacing=0.07, shared_xaxes=True)
        bar = dict(
            title=dict(text="score", side="top"),
            thickness=12,
            orientation="h",
            x=0,
            xanchor="left",
            y=-0.08,
            yanchor="top",
            len=0.7,
        )
    else:
        fig = make_subplots(rows=1, cols=4, subplot_titles=titles, horizontal_spacing=0.035, shared_yaxes=True)
        bar = dict(title="score", thickness=12)
    for c, (name, m) in enumerate(zip(PANELS, mats), start=1):
        where = dict(row=c, col=1) if phone else dict(row=1, col=c)
        fig.add_trace(
            go.Heatmap(
                z=m,
                x=list(range(n)),
                y=list(range(n)),
                customdata=custom,
                name=name,
                colorscale=SCORES,
                zmin=-top,
                zmax=top,
                zmid=0,
                hovertemplate=hover,
                showscale=c == 4,
                colorbar=bar,
            ),
            **where,
        )
        fig.update_xaxes(**_ticks(labels), title_text="key j" if c == (4 if phone else 1) else None, **where)
        if query_pos is not None and key_pos is not None:
            fig.add_shape(
                type="rect",
                x0=key_pos - 0.5,
                x1=key_pos + 0.5,
                y0=query_pos - 0.5,
                y1=query_pos + 0.5,
                line=dict(color="#000", width=2),
                **where,
            )
    fig.update_yaxes(**_ticks(labels), autorange="reversed")
    fig.update_yaxes(tickangle=0)
    if phone:  # every panel's rows labelled (each is read alone), the keys under the last one
        fig.update_xaxes(tickangle=-90, tickfont=dict(size=12))
        fig.update_yaxes(tickfont=dict(size=12), title_text="query i")
        fig.update_annotations(font=dict(size=14))
        fig.update_layout(height=4 * PHONE_PANEL_PX + 260, margin=dict(l=6, r=6, t=40, b=90), meta="phone")
        return fig
    fig.update_yaxes(title_text="query i", row=1, col=1)
    fig.update_layout(height=_side(n) // 2 + 160, margin=dict(l=10, r=10, t=50, b=10))
    return fig


@kept
def positions_figure(r) -> go.Figure:
    """The distance i − j of every pair of the sentence (``r.tokens``), coloured; hover adds the row of the
    relative-position table the model in use reads and the bucket DeBERTa-v3 would use (``r.positions``)."""
    pos = r.positions
    labels = _labels(r.tokens)
    n = len(labels)
    grid = (n, n)
    col = np.array(labels, dtype=object)
    custom = np.stack(
        [
            np.broadcast_to(col[:, None], grid),
            np.broadcast_to(col[None, :], grid),
            pos.v1_row,
            pos.v1_row - pos.max_relative_positions,
            pos.v3_bucket,
        ],
        axis=-1,
    ).astype(object)
    span = max(int(np.abs(pos.distance).max()), 1) if n else 1
    fig = go.Figure(
        go.Heatmap(
            z=pos.distance,
            x=list(range(n)),
            y=list(range(n)),
            customdata=custom,
            colorscale=DISTANCE,
            texttemplate="%{z}" if n <= 24 else None,
            zmin=-span,
            zmax=span,
            zmid=0,
            colorbar=dict(title="i − j", thickness=12),
            hovertemplate=(
                "<b>%{customdata[0]}</b> (i = %{y}) → <b>%{customdata[1]}</b> (j = %{x})<br>"
                "distance i − j = %{z}<br>v1: row %{customdata[2]} of rel_embeddings (bucket %{customdata[3]})"
                "<br>v3: log bucket %{customdata[4]}<extra></extra>"
            ),
        )
    )
    fig.update_layout(
        xaxis=dict(title="key j", **_ticks(labels)),
        yaxis=dict(title="query i", autorange="reversed", **_ticks(labels) | {"tickangle": 0}),
        height=_side(n) + 30,
        margin=dict(l=10, r=10, t=60, b=10),
        title="Relative position i − j of every pair",
    )
    return fig


@kept
def buckets_figure(r) -> go.Figure:
    """Distance -> bucket for DeBERTa v1 (the model in use: clipped at ±k) and v3 (256 log buckets), over every
    distance either can see (``r.positions``); the band marks the distances inside this sentence (``r.tokens``)."""
    pos, sentence_length = r.positions, len(r.tokens)
    d = np.asarray(pos.curve_distance)
    fig = go.Figure()
    fig.add_vrect(
        x0=-(sentence_length - 1),
        x1=sentence_length - 1,
        fillcolor="#ccc",
        opacity=0.35,
        line_width=0,
        annotation_text="this sentence",
        annotation_position="top left",
    )
    fig.add_trace(
        go.Scatter(
            x=d,
            y=pos.curve_v1,
            mode="lines",
            name=f"v1, k = {pos.max_relative_positions} (in use)",
            line=dict(color=COLOURS["v1"], width=3),
            hovertemplate="distance %{x}<br>v1 bucket %{y}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=d,
            y=pos.curve_v3,
            mode="lines",
            name="v3, 256 log buckets",
            line=dict(color=COLOURS["v3"], width=3, dash="dash"),
            hovertemplate="distance %{x}<br>v3 bucket %{y}<extra></extra>",
        )
    )
    fig.update_layout(
        xaxis_title="distance i − j",
        yaxis_title="bucket (row − centre of the table)",
        height=380,
        margin=dict(l=10, r=10, t=30, b=10),
        legend=dict(orientation="h", y=1.12),
    )
    return fig


@kept
def shift_figure(shifts) -> go.Figure:
    """First-layer score of every (query, key) pair of the sentence, alone (x) and behind the prefix (y), every
    head: one panel per model (BERT first), each with its diagonal — a model whose scores ignore where the sentence
    starts puts every point on it. Each panel's title gives its largest change (``Shift.max_delta``).

    Traces in order, per model: its points (named after the model), then its diagonal ("unchanged")."""
    ordered = sorted(shifts, key=lambda s: s.family == "deberta")  # BERT's cloud first, DeBERTa's line beside it
    fig = make_subplots(
        rows=1,
        cols=max(1, len(ordered)),
        shared_yaxes=True,
        horizontal_spacing=0.06,
        subplot_titles=[f"{txt.html(s.model)}: largest change {s.max_delta:.2g}" for s in ordered],
    )
    lo, hi = 0.0, 0.0
    for s in ordered:
        lo = min(lo, float(s.without.min()), float(s.shifted.min()))
        hi = max(hi, float(s.without.max()), float(s.shifted.max()))
    pad = 0.04 * (hi - lo) or 1.0
    lo, hi = lo - pad, hi + pad
    for col, s in enumerate(ordered, start=1):
        heads, n, _ = s.without.shape
        labels = _labels(s.pieces)
        qi, kj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        custom = np.array(
            [
                [h, labels[q], labels[k], s.shifted[h, q, k] - s.without[h, q, k]]
                for h in range(heads)
                for q, k in zip(qi.ravel(), kj.ravel())
            ],
            dtype=object,
        )
        x, y = s.without.reshape(-1), s.shifted.reshape(-1)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="markers",
                name=txt.html(s.model),
                customdata=custom,
                marker=dict(color=COLOURS.get(s.family, "#555"), size=6, opacity=0.6),
                hovertemplate=(
                    "head %{customdata[0]}: <b>%{customdata[1]}</b> → <b>%{customdata[2]}</b>"
                    "<br>alone %{x:.6f}<br>behind the prefix %{y:.6f}<br>"
                    "difference %{customdata[3]:.2e}<extra>%{fullData.name}</extra>"
                ),
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            go.Scatter(
                x=[lo, hi],
                y=[lo, hi],
                mode="lines",
                name="unchanged",
                hoverinfo="skip",
                showlegend=col == 1,
                line=dict(color="#888", dash="dot"),
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text="first-layer score, sentence alone", range=[lo, hi], row=1, col=col)
    fig.update_yaxes(title_text="same pair, behind the prefix", range=[lo, hi], row=1, col=1)
    fig.update_layout(
        title="Every pair of your sentence, every head, first layer: alone (x) and behind the prefix (y)",
        height=440,
        margin=dict(l=10, r=10, t=90, b=10),
        legend=dict(orientation="h", yref="container", y=0.99, yanchor="top", x=1, xanchor="right"),
    )
    return fig


@kept
def prediction_figure(prediction) -> go.Figure:
    """The top guesses for the blank's first piece, likeliest on top."""
    names = [txt.html(t) for t, _ in prediction.first.read][::-1]
    probs = [p for _, p in prediction.first.read][::-1]
    gold = txt.html(prediction.original)
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=list(range(len(names))),
            orientation="h",
            customdata=names,
            marker_color=["#33a02c" if n == gold else "#6a3d9a" for n in names],
            text=[f"{p:.3f}" for p in probs],
            textposition="outside",
            hovertemplate="<b>%{customdata}</b><br>P = %{x:.6f}<extra></extra>",
        )
    )
    fig.update_layout(
        yaxis=dict(tickmode="array", tickvals=list(range(len(names))), ticktext=names),
        xaxis=dict(title="probability", range=[0, min(1.0, max(probs, default=1) * 1.25 + 0.02)]),
        height=110 + 36 * len(names),
        margin=dict(l=10, r=10, t=50, b=10),
        title=f"Guesses for the blank's first piece (the original: {gold})",
    )
    return fig


def describe(r) -> str:
    """The key figure in words (plain text; the page escapes it): the chosen cell's three terms and their sum."""
    t, i, j = r.terms, r.query_pos, r.key_pos
    return (
        f"Four {len(r.tokens)} × {len(r.tokens)} panels for layer {r.layer}, head {r.head}. For {r.tokens[i]} "
        f"(i = {i}) → {r.tokens[j]} (j = {j}): content→content {t.c2c[i, j]:.3f} + content→position "
        f"{t.c2p[i, j]:.3f} + position→content {t.p2c[i, j]:.3f} = score {t.total[i, j]:.3f}; attention "
        f"{t.probs[i, j]:.3f}."
    )


@kept
def key_figure(r, phone: bool = False) -> go.Figure:
    """The lesson's key figure, from ``deberta.run``'s Result: one head's attention scores taken apart into
    content → content, content → position and position → content, and their sum (``phone``: stacked)."""
    return terms_figure(r.tokens, r.terms, r.query_pos, r.key_pos, phone=phone)


@kept
def prefix_figure(r) -> go.Figure | None:
    """``shift_figure`` of ``deberta.run``'s Result; None without words put in front (nothing to compare)."""
    return shift_figure(r.shifts) if r.shifts else None


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/deberta.py's SPEC), key figure first.
FIGURES = {"terms": key_figure, "shift": prefix_figure}


def every_figure(r) -> list:
    """Every figure pages/deberta.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        key_figure(r, phone=True),  # the same, drawn for a phone (app/ui/layout.py)
        positions_figure(r),
        buckets_figure(r),
        r.shifts and shift_figure(r.shifts),
        prediction_figure(r.prediction),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
