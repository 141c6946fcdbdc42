"""Figures for the two ALBERT lessons: parameter counts (app/lessons/albert_params.py) and shared-layer activations
(app/lessons/albert_activations.py). Plain data in (lists, dicts, tensors), plotly Figure out; every coloured mark hovers
with the exact number behind it."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core.text import html

PARTS = ("embeddings", "attention", "ffn", "pooler")
PART_LABELS = {"embeddings": "embeddings", "attention": "attention sublayers", "ffn": "feed-forward sublayers",
               "pooler": "pooler"}
PART_COLOURS = {"embeddings": "#4C78A8", "attention": "#F58518", "ffn": "#54A24B", "pooler": "#B279A2"}
MODEL_COLOURS = {"ALBERT": "#E45756", "BERT": "#4C78A8"}


def _colour(name: str, i: int) -> str:
    return MODEL_COLOURS.get(name.split()[0], ("#E45756", "#4C78A8", "#54A24B", "#F58518")[i % 4])


def _lists(x) -> list:
    return x.tolist() if hasattr(x, "tolist") else list(x)


# ----------------------------------------------------------------------------- parameters


def params_stacked_bar(bars: list[dict]) -> go.Figure:
    """One stacked bar per setting. bars: [{"label", "embeddings", "attention", "ffn", "pooler"}] with
    parameter counts; hover shows each part exactly and the bar's total."""
    labels = [b["label"] for b in bars]
    totals = [sum(b[p] for p in PARTS) for b in bars]
    fig = go.Figure()
    for part in PARTS:
        fig.add_bar(
            name=PART_LABELS[part], x=labels, y=[b[part] for b in bars], marker_color=PART_COLOURS[part],
            customdata=totals,
            hovertemplate=f"%{{x}}<br>{PART_LABELS[part]}: %{{y:,}}<br>total: %{{customdata:,}}<extra></extra>",
        )
    fig.update_layout(barmode="stack", yaxis_title="parameters", legend_title="where they live",
                      margin=dict(t=40, b=10), title="Parameters by part")
    return fig


def embedding_sweep_figure(points: list[tuple[int, int]], current_e: int | None, unfactorized_total: int,
                           hidden_size: int) -> go.Figure:
    """Total parameters as the embedding size E varies (factorized), against BERT-style V·H embeddings."""
    es, totals = [p[0] for p in points], [p[1] for p in points]
    fig = go.Figure()
    fig.add_scatter(x=es, y=totals, mode="lines+markers", name="factorized: V·E + E·H",
                    hovertemplate="E = %{x}<br>total: %{y:,} parameters<extra></extra>")
    fig.add_scatter(x=[es[0], es[-1]], y=[unfactorized_total] * 2, mode="lines", name="not factorized: V·H",
                    line=dict(dash="dash", color="#888"),
                    hovertemplate="V·H embeddings<br>total: %{y:,} parameters<extra></extra>")
    if current_e is not None and current_e in es:
        y = totals[es.index(current_e)]
        fig.add_scatter(x=[current_e], y=[y], mode="markers", name="your E", marker=dict(size=14, symbol="star"),
                        hovertemplate="your E = %{x}<br>total: %{y:,} parameters<extra></extra>")
    fig.update_layout(xaxis_title=f"embedding size E (log scale, up to H = {hidden_size})", yaxis_title="parameters",
                      xaxis_type="log", margin=dict(t=40, b=10), title="Total parameters as E varies")
    return fig


def compute_scatter(rows: list[dict], user: dict | None = None) -> go.Figure:
    """Parameters (x, log) against FLOPs per token (y, log): sharing moves a model left, not down.
    rows: [{"model", "params", "flops"}]; user: the page's own setting, same keys. The other encoders
    hover only (trace 0); BERT and ALBERT models are labelled (trace 1), drawn on top."""
    fig = go.Figure()
    hover = "%{text}<br>%{x:,} parameters<br>%{y:.3f} GFLOPs per token<extra></extra>"
    main = [r for r in rows if r["model"].startswith(("BERT", "ALBERT"))]
    other = [r for r in rows if not r["model"].startswith(("BERT", "ALBERT"))]
    for group, name, show_text, colour in ((other, "other encoders", False, "#4C78A8"),
                                            (main, "BERT and ALBERT", True, "#E45756")):  # labelled on top
        fig.add_scatter(
            x=[r["params"] for r in group], y=[r["flops"] / 1e9 for r in group], text=[r["model"] for r in group],
            mode="markers+text" if show_text else "markers", textposition="top center", name=name,
            marker=dict(size=10, color=colour), hovertemplate=hover,
        )
    by_name = {r["model"]: r for r in rows}
    if "ALBERT-large" in by_name and "BERT-large" in by_name:
        a, b = by_name["ALBERT-large"], by_name["BERT-large"]
        fig.add_scatter(x=[a["params"], b["params"]], y=[a["flops"] / 1e9, b["flops"] / 1e9], mode="lines",
                        line=dict(dash="dot", color="#888"), hoverinfo="skip", showlegend=False)
        fig.add_annotation(x=0.5, xref="paper", y=math.log10(b["flops"] / 1e9), yref="y", yshift=-14,
                           showarrow=False,  # log axes place annotations in log10 units
                           text=f"same compute, {b['params'] / a['params']:.0f}× the parameters", font=dict(size=11))
    if user:
        fig.add_scatter(x=[user["params"]], y=[user["flops"] / 1e9], text=[user["model"]], mode="markers+text",
                        textposition="bottom center", name="your setting", marker=dict(size=14, symbol="star"),
                        hovertemplate=hover)
    fig.update_layout(xaxis_type="log", yaxis_type="log", xaxis_title="parameters (log)",
                      yaxis_title="GFLOPs per token (log)", margin=dict(t=40, b=10),
                      title="Parameters vs compute per token")
    return fig


# ----------------------------------------------------------------------------- activations


METRICS = (  # (key, panel title, x axis); the top panels' x axis is the layer, as the titles say
    ("l2", "L2 distance, input → output, by layer", "layer"),
    ("angle", "angle input → output (degrees), by layer", "layer"),
    ("norm", "mean hidden-state norm", "depth"),
    ("entropy", "attention entropy (bits)", "layer"),
)


def layer_metrics_figure(series: dict[str, dict]) -> go.Figure:
    """Four panels, one line per model. series: {model name: {"l2": (L,), "cosine": (L,), "angle": (L,),
    "norm": (L + 1,), "entropy": (L,)}}; layers count from 1, depth 0 is the input to layer 1."""
    fig = make_subplots(rows=2, cols=2, subplot_titles=[m[1] for m in METRICS], horizontal_spacing=0.1,
                        vertical_spacing=0.24)
    for i, (name, s) in enumerate(series.items()):
        colour = _colour(name, i)
        for k, (key, title, axis) in enumerate(METRICS):
            y = _lists(s[key])
            x = list(range(len(y))) if axis == "depth" else list(range(1, len(y) + 1))
            extra = ""
            custom = None
            if key == "angle":
                custom = _lists(s["cosine"])
                extra = "<br>cosine: %{customdata:.6f}"
            fig.add_scatter(
                x=x, y=y, mode="lines+markers", name=name, legendgroup=name, showlegend=k == 0,
                line=dict(color=colour), customdata=custom, row=k // 2 + 1, col=k % 2 + 1,
                hovertemplate=f"{name}<br>{axis} %{{x}}<br>{title}: %{{y:.4f}}{extra}<extra></extra>",
            )
            fig.update_xaxes(title_text=axis if k >= 2 else None, dtick=1 if len(y) <= 24 else None,
                             row=k // 2 + 1, col=k % 2 + 1)
    # the legend at the top of the whole figure, above the panels' titles, at any height (a projector's stage)
    fig.update_layout(height=620, margin=dict(t=80, b=10),
                      legend=dict(orientation="h", yref="container", y=0.99, yanchor="top", x=0, xanchor="left"))
    return fig


def similarity_heatmaps(matrices: dict[str, object], measure: str) -> go.Figure:
    """Side-by-side depth × depth similarity heatmaps, one per model, on one colour scale."""
    names = list(matrices)
    label = "linear CKA" if measure == "cka" else "mean cosine"
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[f"{n}: {label}" for n in names],
                        horizontal_spacing=0.12)
    values = [v for m in matrices.values() for row in _lists(m) for v in row if v == v]
    zmin = min(values) if values else 0.0
    for i, name in enumerate(names):
        z = _lists(matrices[name])
        fig.add_heatmap(
            z=z, x=list(range(len(z))), y=list(range(len(z))), zmin=zmin, zmax=1.0, colorscale="Viridis",
            showscale=i == len(names) - 1, colorbar=dict(title=label),
            hovertemplate=f"{name}<br>depth %{{y}} vs depth %{{x}}<br>{label}: %{{z:.6f}}<extra></extra>",
            row=1, col=i + 1,
        )
        fig.update_xaxes(title_text="depth", dtick=1 if len(z) <= 25 else None, row=1, col=i + 1)
        fig.update_yaxes(title_text="depth", autorange="reversed", dtick=1 if len(z) <= 25 else None, row=1, col=i + 1)
    fig.update_layout(height=430, margin=dict(t=50, b=10))
    return fig


def unroll_figure(step_stats: dict, layers: int) -> go.Figure:
    """Applying the shared block past L. step_stats: app.lessons.albert_activations.steps output (each (N,)). Left: how far
    each application moves the tokens; right: how similar the state stays to the model's own output."""
    n = len(_lists(step_stats["l2"]))
    x = list(range(1, n + 1))
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=(
        "change per application ‖hₖ − hₖ₋₁‖ (log)", f"cosine to the model's output (application {layers})"))
    fig.add_scatter(x=x, y=_lists(step_stats["l2"]), mode="lines+markers", name="step size",
                    customdata=_lists(step_stats["relative"]),
                    hovertemplate="application %{x}<br>mean ‖hₖ − hₖ₋₁‖: %{y:.5f}<br>relative: %{customdata:.5f}"
                                  "<extra></extra>", row=1, col=1)
    fig.add_scatter(x=x, y=_lists(step_stats["cosine_to_reference"]), mode="lines+markers", name="cosine to output",
                    customdata=_lists(step_stats["cosine"]),
                    hovertemplate="application %{x}<br>cosine to application " + str(layers) +
                                  ": %{y:.6f}<br>cosine to previous: %{customdata:.6f}<extra></extra>", row=1, col=2)
    for col in (1, 2):
        fig.add_vline(x=layers, line_dash="dash", line_color="#888", row=1, col=col,
                      annotation_text=f"the model stops: L = {layers}", annotation_position="bottom right",
                      annotation_font_size=11)
        fig.update_xaxes(title_text="application of the shared block", row=1, col=col)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_layout(height=400, margin=dict(t=60, b=10), showlegend=False)
    return fig


def trajectory_figure(paths: dict[str, dict], pieces: dict[str, str], word: str) -> go.Figure:
    """A word's path through the depths, one panel per model, in that model's own 2-D PCA.

    paths: {model name: {"path": (D, 2), "cloud": (D, T, 2), "extra": (M, 2) or None, "explained": (2,)}};
    pieces: {model name: the word piece followed}; word: the word (both escaped here: they are the user's).
    The grey points are the other tokens at every depth; "extra" (ALBERT unrolled past L) is dashed.
    """
    names = list(paths)
    token_label = html(word)
    titles = []
    for n in names:
        ev = _lists(paths[n]["explained"])
        titles.append(f"{n} · piece “{html(pieces[n])}” (PC1 {ev[0]:.0%}, PC2 {ev[1]:.0%} of variance)")
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=titles, horizontal_spacing=0.08)
    for i, name in enumerate(names):
        p = paths[name]
        cloud = p["cloud"]
        d = cloud.shape[0]
        flat = cloud.reshape(-1, 2)
        depth = [k for k in range(d) for _ in range(cloud.shape[1])]
        fig.add_scatter(x=_lists(flat[:, 0]), y=_lists(flat[:, 1]), mode="markers", name="other tokens",
                        marker=dict(color="#ccc", size=5), customdata=depth, showlegend=i == 0,
                        hovertemplate="a token at depth %{customdata}<br>PC1 %{x:.3f}, PC2 %{y:.3f}<extra></extra>",
                        row=1, col=i + 1)
        path = p["path"]
        fig.add_scatter(x=_lists(path[:, 0]), y=_lists(path[:, 1]), mode="lines+markers+text",
                        text=[str(k) for k in range(d)], textposition="top center", name=name,
                        line=dict(color=_colour(name, i), width=3), marker=dict(size=9),
                        customdata=list(range(d)),
                        hovertemplate=f"{name} “{token_label}”<br>depth %{{customdata}}<br>PC1 %{{x:.3f}}, "
                                      "PC2 %{y:.3f}<extra></extra>", row=1, col=i + 1)
        extra = p.get("extra")
        if extra is not None and len(extra):
            ex = [path[-1]] + list(extra)
            xs = [float(e[0]) for e in ex]
            ys = [float(e[1]) for e in ex]
            steps = list(range(d - 1, d - 1 + len(ex)))
            fig.add_scatter(x=xs, y=ys, mode="lines+markers", name=f"{name} unrolled past L",
                            line=dict(color=_colour(name, i), dash="dot"), marker=dict(size=6, symbol="circle-open"),
                            customdata=steps,
                            hovertemplate=f"{name} unrolled<br>application %{{customdata}}<br>PC1 %{{x:.3f}}, "
                                          "PC2 %{y:.3f}<extra></extra>", row=1, col=i + 1)
        fig.update_xaxes(title_text="PC1", row=1, col=i + 1)
        fig.update_yaxes(title_text="PC2", row=1, col=i + 1)
    fig.update_layout(height=480, margin=dict(t=60, b=10), legend=dict(orientation="h", y=-0.15))
    return fig


# ----------------------------------------------------------------------------- the lessons' key figures


def parameters_key_figure(r) -> go.Figure | None:
    """The ALBERT parameters lesson's key figure, from ``params.run``'s Result: where the parameters of your
    encoder live, beside the same shape without factorization or sharing (None: settings that cannot be built)."""
    return None if r.yours is None else params_stacked_bar(list(r.yours.bars))


def layers_key_figure(r) -> go.Figure:
    """The shared-layers lesson's key figure, from ``albert.run``'s Result: ALBERT's one block applied L times
    beside BERT's L layers, measure by measure."""
    a, b = r.albert, r.bert
    return layer_metrics_figure({f"ALBERT ({a.layers} applications of one block)": a.series,
                                 f"BERT ({b.layers} layers)": b.series})
