"""The reveal of a question to the class: the hall's answers beside the model's, from ``question.reveal``'s rows.
No computation here: the shares, the model's probabilities and which answer is right come in the payload."""

from __future__ import annotations

import plotly.graph_objects as go

from app.core.text import html

HALL, MODEL, RIGHT = "#1f77b4", "#ff7f0e", "#2ca02c"


def reveal_figure(payload: dict) -> go.Figure:
    """Horizontal bars, one row per answer: the share of the hall that chose it, and the model's probability where
    it has one; the right answer(s) marked ✓. ``payload``: ``app.classroom.question.reveal``'s answer."""
    rows = payload["rows"]
    labels = [html(("✓ " if r["answer"] else "") + r["label"]) for r in rows]
    fig = go.Figure()
    fig.add_bar(
        y=labels,
        x=[100 * r["share"] for r in rows],
        orientation="h",
        name="the class",
        marker_color=HALL,
        text=[f"{100 * r['share']:.0f}% ({r['count']})" for r in rows],
        textposition="outside",
        hovertemplate="%{y}: %{x:.0f}% of the class<extra></extra>",
    )
    if any(r["model"] is not None for r in rows):
        fig.add_bar(
            y=labels,
            x=[100 * r["model"] if r["model"] is not None else 0 for r in rows],
            orientation="h",
            name="the model",
            marker_color=MODEL,
            text=[f"{100 * r['model']:.0f}%" if r["model"] is not None else "" for r in rows],
            textposition="outside",
            hovertemplate="%{y}: the model %{x:.0f}%<extra></extra>",
        )
    fig.update_traces(textfont_size=18, cliponaxis=False)
    fig.update_layout(
        barmode="group",
        title=dict(text=f"{payload['answered']} answered"),
        font=dict(size=18),
        xaxis=dict(title="%", range=[0, 118]),
        yaxis=dict(autorange="reversed"),
        legend=dict(orientation="h", y=-0.2),
        margin=dict(l=10, r=10, t=50, b=40),
        height=max(260, 80 + 58 * len(rows)),
        uniformtext=dict(minsize=16, mode="show"),
    )
    return fig
