"""Figures for ALBERT: parameters (app/lessons/albert_params.py): where an encoder's parameters live, what
factorizing the embeddings and sharing layers saves, and what it costs in compute. Plain data in, plotly Figure
out; every coloured mark hovers with the exact number behind it."""

from __future__ import annotations

import math
import textwrap

import plotly.graph_objects as go

from app.core.text import human_count
from app.figures import kept


PARTS = ("embeddings", "attention", "ffn", "pooler")
PART_LABELS = {
    "embeddings": "embeddings",
    "attention": "attention sublayers",
    "ffn": "feed-forward sublayers",
    "pooler": "pooler",
}
PART_COLOURS = {"embeddings": "#4C78A8", "attention": "#F58518", "ffn": "#54A24B", "pooler": "#B279A2"}
MODEL_COLOURS = {"ALBERT": "#E45756", "BERT": "#4C78A8"}


def model_colour(name: str, i: int) -> str:
    return MODEL_COLOURS.get(name.split()[0], ("#E45756", "#4C78A8", "#54A24B", "#F58518")[i % 4])


def as_list(x) -> list:
    return x.tolist() if hasattr(x, "tolist") else list(x)


LABEL_CHARS = 16  # characters a line of a bar's label under it
PHONE_LABEL_CHARS = 14  # ... beside it, on a phone


@kept
def params_stacked_bar(bars: list[dict], phone: bool = False) -> go.Figure:
    """One stacked bar per setting. bars: [{"label", "embeddings", "attention", "ffn", "pooler"}] with
    parameter counts; hover shows each part exactly and the bar's total. ``phone``: the bars lie down, each label
    on the left of its bar (five labels of two lines under 390 px of bars ran into each other)."""
    # each label in lines of a few words: level, they take two or three lines under their bar; rotated (plotly's
    # choice for long ones) they took 190 px of a projector's 480-px stage
    labels = ["<br>".join(textwrap.wrap(b["label"], PHONE_LABEL_CHARS if phone else LABEL_CHARS)) for b in bars]
    totals = [sum(b[p] for p in PARTS) for b in bars]
    fig = go.Figure()
    for part in PARTS:
        values = [b[part] for b in bars]
        fig.add_bar(
            name=PART_LABELS[part],
            x=values if phone else labels,
            y=labels if phone else values,
            orientation="h" if phone else "v",
            marker_color=PART_COLOURS[part],
            customdata=totals,
            hovertemplate=f"%{{{'y' if phone else 'x'}}}<br>{PART_LABELS[part]}: %{{{'x' if phone else 'y'}:,}}"
            "<br>total: %{customdata:,}<extra></extra>",
        )
    for label, total in zip(labels, totals):  # each bar's total over it: the number a slide's title quotes
        if phone:
            fig.add_annotation(x=total, y=label, text=f"<b>{human_count(total)}</b>", showarrow=False, xanchor="left")
        else:
            fig.add_annotation(x=label, y=total, text=f"<b>{human_count(total)}</b>", showarrow=False, yanchor="bottom")
    fig.update_layout(
        barmode="stack", legend_title="where they live", margin=dict(t=40, b=10), title="Parameters by part"
    )
    if phone:
        fig.update_layout(xaxis_title="parameters", height=120 + 70 * len(bars))
        fig.update_xaxes(range=[0, max(totals, default=1) * 1.3])  # room for the totals
        fig.update_yaxes(autorange="reversed")
    else:
        fig.update_layout(yaxis_title="parameters")
        fig.update_yaxes(range=[0, max(totals, default=1) * 1.1])  # room for the totals
        fig.update_xaxes(tickangle=0)
    return fig


@kept
def embedding_sweep_figure(r) -> go.Figure:
    """Total parameters as the embedding size E varies (factorized: ``r.yours.sweep``), against BERT-style V·H
    embeddings (``r.yours.unfactorized_total``), with your E starred when factorized (``r.arch``)."""
    points, unfactorized_total, arch = list(r.yours.sweep), r.yours.unfactorized_total, r.arch
    current_e, hidden_size = arch.E if arch.factorized else None, arch.hidden_size
    es, totals = [p[0] for p in points], [p[1] for p in points]
    fig = go.Figure()
    fig.add_scatter(
        x=es,
        y=totals,
        mode="lines+markers",
        name="factorized: V·E + E·H",
        hovertemplate="E = %{x}<br>total: %{y:,} parameters<extra></extra>",
    )
    fig.add_scatter(
        x=[es[0], es[-1]],
        y=[unfactorized_total] * 2,
        mode="lines",
        name="not factorized: V·H",
        line=dict(dash="dash", color="#888"),
        hovertemplate="V·H embeddings<br>total: %{y:,} parameters<extra></extra>",
    )
    if current_e is not None and current_e in es:
        y = totals[es.index(current_e)]
        fig.add_scatter(
            x=[current_e],
            y=[y],
            mode="markers",
            name="your E",
            marker=dict(size=14, symbol="star"),
            hovertemplate="your E = %{x}<br>total: %{y:,} parameters<extra></extra>",
        )
    fig.update_layout(
        xaxis_title=f"embedding size E (log scale, up to H = {hidden_size})",
        yaxis_title="parameters",
        xaxis_type="log",
        margin=dict(t=40, b=10),
        title="Total parameters as E varies",
    )
    return fig


@kept
def compute_scatter(r) -> go.Figure:
    """Parameters (x, log) against FLOPs per token (y, log): sharing moves a model left, not down.
    ``r.presets``: [{"model", "params", "flops"}]; your setting (``r.yours``) starred when it can be built. The other
    encoders hover only (trace 0); BERT and ALBERT models are labelled (trace 1), drawn on top."""
    rows = list(r.presets)
    user = None if r.yours is None else {"model": "your setting", "params": r.yours.counted, "flops": r.yours.flops}
    fig = go.Figure()
    hover = "%{text}<br>%{x:,} parameters<br>%{y:.3f} GFLOPs per token<extra></extra>"
    main = [r for r in rows if r["model"].startswith(("BERT", "ALBERT"))]
    other = [r for r in rows if not r["model"].startswith(("BERT", "ALBERT"))]
    for group, name, show_text, colour in (
        (other, "other encoders", False, "#4C78A8"),
        (main, "BERT and ALBERT", True, "#E45756"),
    ):  # labelled on top
        fig.add_scatter(
            x=[r["params"] for r in group],
            y=[r["flops"] / 1e9 for r in group],
            text=[r["model"] for r in group],
            mode="markers+text" if show_text else "markers",
            textposition="top center",
            name=name,
            marker=dict(size=10, color=colour),
            hovertemplate=hover,
        )
    by_name = {r["model"]: r for r in rows}
    if "ALBERT-large" in by_name and "BERT-large" in by_name:
        a, b = by_name["ALBERT-large"], by_name["BERT-large"]
        fig.add_scatter(
            x=[a["params"], b["params"]],
            y=[a["flops"] / 1e9, b["flops"] / 1e9],
            mode="lines",
            line=dict(dash="dot", color="#888"),
            hoverinfo="skip",
            showlegend=False,
        )
        fig.add_annotation(
            x=0.5,
            xref="paper",
            y=math.log10(b["flops"] / 1e9),
            yref="y",
            yshift=-14,
            showarrow=False,  # log axes place annotations in log10 units
            text=f"same compute, {b['params'] / a['params']:.0f}× the parameters",
            font=dict(size=11),
        )
    if user:
        fig.add_scatter(
            x=[user["params"]],
            y=[user["flops"] / 1e9],
            text=[user["model"]],
            mode="markers+text",
            textposition="bottom center",
            name="your setting",
            marker=dict(size=14, symbol="star"),
            hovertemplate=hover,
        )
    fig.update_layout(
        xaxis_type="log",
        yaxis_type="log",
        xaxis_title="parameters (log)",
        yaxis_title="GFLOPs per token (log)",
        margin=dict(t=40, b=10),
        title="Parameters vs compute per token",
    )
    return fig


@kept
def key_figure(r, phone: bool = False) -> go.Figure | None:
    """The ALBERT parameters lesson's key figure, from ``albert_params.run``'s Result: where the parameters of your
    encoder live, beside the same shape without factorization or sharing (None: settings that cannot be built).
    ``phone``: drawn for a phone (app/ui/layout.py)."""
    return None if r.yours is None else params_stacked_bar(list(r.yours.bars), phone=phone)


def embedding_of(r) -> go.Figure | None:
    """``embedding_sweep_figure`` when the settings can be built (the stage's "embedding" figure), else None."""
    return embedding_sweep_figure(r) if r.yours is not None else None


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/albert_params.py's SPEC), key first.
FIGURES = {"parts": key_figure, "embedding": embedding_of, "compute": compute_scatter}


def every_figure(r) -> list:
    """Every figure pages/albert_params.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        key_figure(r, phone=True),  # the same, drawn for a phone (app/ui/layout.py)
        r.yours and embedding_sweep_figure(r),
        compute_scatter(r),
    )
    return [key_figure(r), *(fig for fig in more if fig)]
