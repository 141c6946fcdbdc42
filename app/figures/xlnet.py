"""Figures for the XLNet lesson: the factorization order, the two streams' masks beside target_mapping,
and the attention the model actually used. ``xlnet.run``'s Result in (its ``view``, an app.lessons.xlnet.MaskView
computed in ``run``), plotly figures out: nothing is computed here but the drawing; every token is escaped with
``app.core.text.html`` before it reaches a label or a hover.

Mask cells use perm_mask's convention: 1 = may NOT attend (blocked), 0 = may attend.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core import text as txt
from app.permutation import CONTEXT, EARLIER, HIDDEN, OWN, MaskView
from app.core.text import count
from app.figures import kept

ORDER_CELLS = {
    HIDDEN: "hidden",
    CONTEXT: "visible: context",
    EARLIER: "visible: earlier target",
    OWN: "its own position",
}
ORDER_COLOURS = {HIDDEN: "#eeeeee", CONTEXT: "#9ecae1", EARLIER: "#2b6cb0", OWN: "#f28e2b"}
VISIBLE_COLOUR, BLOCKED_COLOUR, MAPPING_COLOUR = "#c7e9c0", "#3b3b3b", "#f28e2b"


def piece_labels(pieces, n_content: int) -> list[str]:
    """Axis labels, escaped: "3 ▁found" for content pieces (their number in a typed order), the specials bare."""
    return [txt.html(f"{i} {p}" if i < n_content else p) for i, p in enumerate(pieces)]


def _quoted(pieces, positions) -> str:
    words = [txt.html(f"«{pieces[j]}»") for j in positions]
    lines = [", ".join(words[s : s + 8]) for s in range(0, len(words), 8)]
    return ",<br>".join(lines) if lines else "nothing at all"


def row_sentence(view: MaskView, i: int, stream: str = "query") -> str:
    """In words, escaped: what row i sees. "When predicting «girl» (step 9), it sees «The», …"."""
    pieces, sees = view.pieces, view.sees[stream][i]
    name = txt.html(f"«{pieces[i]}»")
    if i in view.targets:
        step = view.order.index(i)
        if stream == "query":
            return f"When predicting {name} (step {step}), it sees {_quoted(pieces, sees)}"
        return f"{name}'s content (step {step}) sees itself and {_quoted(pieces, [j for j in sees if j != i])}"
    if stream == "query":
        return f"{name} is context, not a target: XLNet computes no query stream for it"
    return f"{name} is context: it sees {_quoted(pieces, sees)} (never a target)"


def _discrete(colours: list[str]) -> list:
    n = len(colours)
    scale = []
    for k, c in enumerate(colours):
        scale += [[k / n, c], [(k + 1) / n, c]]
    return scale


@kept
def order_figure(view: MaskView, phone: bool = False) -> go.Figure:
    """Rows: the steps of the order, top to bottom; columns: the positions, in place. A target's row shows
    what its query stream sees when it is predicted; a context row what its content stream sees.

    z: ``view.steps``, (n, T) with 0 hidden, 1 visible context (or <sep> <cls>), 2 visible earlier target, 3 own
    position.
    """
    pieces, z = view.pieces, view.steps
    n, length = z.shape
    labels = piece_labels(pieces, view.n_content)
    targets = set(view.targets)
    free = set(view.free)
    text = []
    for step, i in enumerate(view.order):
        summary = row_sentence(view, i, "query" if i in targets else "content")
        text.append(
            [
                f"step {step} · {txt.html(pieces[i])} → {labels[j]}: <b>{ORDER_CELLS[int(z[step, j])]}</b>"
                f" (perm_mask = {int(view.perm_mask[i, j])})<br>{summary}"
                for j in range(length)
            ]
        )
    ylabels = []
    for step, i in enumerate(view.order):
        role = "no context!" if i in free else ("predict" if i in targets else "context")
        ylabels.append(f"{step}: {role} {labels[i]}")
    if phone:
        return _phone_order(view, z, text, ylabels, labels)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(length)),
            y=list(range(n)),
            text=text,
            hovertemplate="%{text}<extra></extra>",
            colorscale=_discrete([ORDER_COLOURS[k] for k in (HIDDEN, CONTEXT, EARLIER, OWN)]),
            zmin=-0.5,
            zmax=3.5,
            xgap=2,
            ygap=2,
            colorbar=dict(
                tickvals=[0, 1, 2, 3], ticktext=[ORDER_CELLS[k] for k in (HIDDEN, CONTEXT, EARLIER, OWN)], title=""
            ),
        )
    )
    fig.update_xaxes(tickvals=list(range(length)), ticktext=labels, tickangle=-45, side="top")
    fig.update_yaxes(tickvals=list(range(n)), ticktext=ylabels, autorange="reversed", title="step of the order")
    fig.update_layout(
        height=max(320, 26 * n + 170),
        margin=dict(l=10, r=10, t=100, b=50),
        title=dict(
            text="Columns: the positions, in place. Rows: the steps of the order, and what each may see",
            y=0.02,
            yanchor="bottom",
            font=dict(size=13),
        ),
    )
    return fig


PHONE_ORDER_TITLE = "Columns: the positions, in place.<br>Rows: the steps of the order,<br>and what each may see"


def _phone_order(view: MaskView, z, text, ylabels, labels) -> go.Figure:
    """``order_figure`` for a phone (app/ui/layout.py): the same cells, the title over the grid in three lines,
    position labels upright-rotated in 12-px type, and the colour key as a legend under the grid (a colour bar's
    names beside it left the grid ~60 px wide)."""
    n, length = z.shape
    keys = (HIDDEN, CONTEXT, EARLIER, OWN)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(length)),
            y=list(range(n)),
            text=text,
            hovertemplate="%{text}<extra></extra>",
            colorscale=_discrete([ORDER_COLOURS[k] for k in keys]),
            zmin=-0.5,
            zmax=3.5,
            xgap=1,
            ygap=1,
            showscale=False,
        )
    )
    for k in keys:  # the colour key, as legend entries (they wrap across the width)
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=ORDER_CELLS[k],
                hoverinfo="skip",
                marker=dict(symbol="square", size=12, color=ORDER_COLOURS[k], line=dict(color="#666", width=1)),
            )
        )
    fig.update_xaxes(
        tickvals=list(range(length)),
        ticktext=labels,
        tickangle=-90,
        side="top",
        tickfont=dict(size=12),
        range=[-0.5, length - 0.5],
        showgrid=False,
        zeroline=False,
    )
    fig.update_yaxes(
        tickvals=list(range(n)),
        ticktext=ylabels,
        autorange="reversed",
        tickfont=dict(size=12),
        showgrid=False,
        zeroline=False,
    )
    fig.update_layout(
        height=max(320, 24 * n + 260),
        margin=dict(l=6, r=6, t=164, b=10),
        plot_bgcolor="white",
        title=dict(
            text=PHONE_ORDER_TITLE,
            x=0,
            xanchor="left",
            y=1,
            yref="container",
            yanchor="top",
            pad=dict(t=20),
            font=dict(size=13),
        ),  # plotly places a title of several lines from the top only with pad.t: with less, its first line is cut
        showlegend=True,
        legend=dict(
            orientation="h",
            x=0,
            xanchor="left",
            y=-0.02,
            yanchor="top",
            font=dict(size=12),
            itemclick=False,
            itemdoubleclick=False,
        ),
        meta="phone",
    )
    return fig


# The three panels' titles, two short lines each so that each fits over its panel: a 1280-px window gives the figure
# about STREAM_PLOT_PX of plot width (less the row labels), of which a panel gets its column_widths share.
STREAM_TITLES = (
    "content stream:<br>sees itself",
    "query stream:<br>never its own content",
    "target_mapping:<br>prediction k is at j",
)
STREAMS_TITLE = "The two streams as masks: perm_mask and target_mapping"
TITLE_FONT, STREAM_PLOT_PX = 13, 680
LEGEND_ROOM = 150  # px under the panels: their rotated position labels and axis titles, then the colour key


def _stream_axes(fig: go.Figure, labels: list[str], length: int, targets) -> None:
    """The three panels' axes: positions j along every panel, rows i on the two masks, predictions k on the mapping."""
    for col in (1, 2, 3):
        fig.update_xaxes(
            tickvals=list(range(length)),
            ticktext=labels,
            tickangle=-60,
            tickfont=dict(size=10),
            row=1,
            col=col,
            title="j (attended to)" if col < 3 else "j (position)",
        )
    for col in (1, 2):
        fig.update_yaxes(
            tickvals=list(range(length)),
            ticktext=labels,
            autorange="reversed",
            row=1,
            col=col,
            tickfont=dict(size=10),
            title="i (attending)" if col == 1 else None,
            showticklabels=col == 1,
        )
    fig.update_yaxes(
        tickvals=list(range(len(targets))),
        autorange="reversed",
        row=1,
        col=3,
        side="right",
        ticktext=[f"k={k}: {labels[t]}" for k, t in enumerate(targets)],
        tickfont=dict(size=10),
    )


@kept
def stream_masks_figure(view: MaskView) -> go.Figure:
    """Three aligned panels on the same columns (positions j): the content-stream mask (T, T), the
    query-stream mask (T, T; rows of non-targets are empty, nothing is computed there) and
    target_mapping (P, T). Masks: 1 = i may NOT attend to j. data[0..2].z hold exactly those arrays
    (``view.content``, ``view.query``, ``view.target_mapping``)."""
    length = view.content.shape[-1]
    labels = piece_labels(view.pieces, view.n_content)
    content, query, mapping = view.content, view.query, view.target_mapping
    fig = make_subplots(
        rows=1, cols=3, horizontal_spacing=0.03, column_widths=[0.37, 0.37, 0.26], subplot_titles=STREAM_TITLES
    )
    fig.update_annotations(font_size=TITLE_FONT)  # the subplot titles
    mask_scale = _discrete([VISIBLE_COLOUR, BLOCKED_COLOUR])
    for col, (name, z, stream) in enumerate((("content", content, "content"), ("query", query, "query")), start=1):
        text = [
            [
                f"{name} stream · row {labels[i]} → column {labels[j]}: <b>"
                + ("—" if np.isnan(z[i, j]) else ("blocked (1)" if z[i, j] == 1 else "may attend (0)"))
                + f"</b><br>{row_sentence(view, i, stream)}"
                for j in range(length)
            ]
            for i in range(length)
        ]
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=list(range(length)),
                y=list(range(length)),
                text=text,
                hovertemplate="%{text}<extra></extra>",
                colorscale=mask_scale,
                zmin=-0.5,
                zmax=1.5,
                xgap=1,
                ygap=1,
                showscale=col == 1,
                colorbar=dict(
                    tickvals=[0, 1],
                    ticktext=["0: may attend", "1: blocked"],
                    tickangle=0,
                    title=dict(text="perm_mask convention", side="right"),
                    orientation="h",
                    x=0.3,
                    y=0,
                    yref="container",
                    yanchor="bottom",
                    len=0.4,
                    thickness=14,
                ),
            ),
            row=1,
            col=col,
        )
    mapping_text = [
        [
            f"prediction {k} = {labels[t]}; column {labels[j]}: target_mapping = {int(mapping[k, j])}"
            for j in range(length)
        ]
        for k, t in enumerate(view.targets)
    ]
    fig.add_trace(
        go.Heatmap(
            z=mapping,
            x=list(range(length)),
            y=list(range(len(view.targets))),
            text=mapping_text,
            hovertemplate="%{text}<extra></extra>",
            colorscale=[[0, "#f7f7f7"], [1, MAPPING_COLOUR]],
            zmin=0,
            zmax=1,
            xgap=1,
            ygap=1,
            showscale=False,
        ),
        row=1,
        col=3,
    )
    _stream_axes(fig, labels, length, view.targets)
    fig.update_layout(
        height=max(500, 24 * length + 340),
        margin=dict(l=10, r=10, t=100, b=LEGEND_ROOM),
        title=dict(text=STREAMS_TITLE, x=0, xanchor="left"),
    )
    return fig


@kept
def attention_figure(r) -> go.Figure:
    """The attention probabilities the model used, from ``xlnet.run``'s Result: ``r.attention`` (T, T), one layer
    (``r.layer``, 0 = the last) of ``r.stream``, mean over heads, for ``r.attention_rows`` only (other rows empty).
    Blocked cells (``r.attention_mask`` == 1) carry an ×: their probability should read 0."""
    attention = np.asarray(r.attention, dtype=float)
    mask = np.asarray(r.attention_mask)
    rows = list(r.attention_rows)
    title = f"{r.stream} stream, layer {r.layer or r.n_layers}, mean over {r.n_heads} heads"
    length = attention.shape[-1]
    labels = piece_labels(r.pieces.pieces, r.pieces.n_content)
    z = np.full((length, length), np.nan)
    z[rows] = attention[rows]
    text = [
        [
            f"{labels[i]} → {labels[j]}: <b>{attention[i, j]:.6g}</b> ("
            + ("blocked by the mask" if mask[i, j] else "allowed")
            + ")"
            if i in rows
            else "not computed"
            for j in range(length)
        ]
        for i in range(length)
    ]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(length)),
            y=list(range(length)),
            text=text,
            hovertemplate="%{text}<extra></extra>",
            colorscale="Blues",
            zmin=0,
            colorbar=dict(title="prob."),
            xgap=1,
            ygap=1,
        )
    )
    bi, bj = np.nonzero(mask[rows] == 1) if len(rows) else ((), ())
    fig.add_trace(
        go.Scatter(
            x=list(bj),
            y=[rows[r] for r in bi],
            mode="markers",
            hoverinfo="skip",
            marker=dict(symbol="x-thin", size=9, line=dict(width=1.5, color="#d62728")),
            name="blocked by the mask",
            showlegend=True,
        )
    )
    fig.update_xaxes(tickvals=list(range(length)), ticktext=labels, tickangle=-60, title="attended to")
    fig.update_yaxes(tickvals=list(range(length)), ticktext=labels, autorange="reversed", title="attending")
    fig.update_layout(
        height=max(380, 22 * length + 200),
        title=title,
        margin=dict(l=10, r=10, t=60, b=10),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def describe(r) -> str:
    """The key figure in words (plain text; the page escapes it): the order, the context, what each target sees."""
    v = r.view
    context = [v.pieces[i] for i in v.order if i not in v.targets]
    lines = []
    for i in v.targets:
        seen = [v.pieces[j] for j in v.sees["query"][i]]
        lines.append(f"{v.pieces[i]} (step {v.order.index(i)}) sees {', '.join(seen) or 'nothing'}")
    return (
        f"Factorization order over {count(len(v.order), 'position')}: {' → '.join(str(i) for i in v.order)}. "
        f"Context, never predicted: {', '.join(context) or 'none'}. Predicted in order: " + "; ".join(lines) + "."
    )


@kept
def key_figure(r, phone: bool = False) -> go.Figure:
    """The lesson's key figure, from ``xlnet.run``'s Result: the factorization order, step by step, and what
    each step may see while every token stays in its place (``phone``: drawn for a phone's width)."""
    return order_figure(r.view, phone=phone)


def streams_figure(r) -> go.Figure:
    """``stream_masks_figure`` of a Result (the stage's "streams" figure)."""
    return stream_masks_figure(r.view)


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/xlnet.py's SPEC), key figure first.
FIGURES = {"order": key_figure, "streams": streams_figure, "attention": attention_figure}


def every_figure(r) -> list:
    """Every figure pages/xlnet.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        key_figure(r, phone=True),  # the same, drawn for a phone (app/ui/layout.py)
        stream_masks_figure(r.view),
        attention_figure(r),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
