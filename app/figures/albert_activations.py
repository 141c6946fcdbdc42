"""Figures for ALBERT: shared layers (app/lessons/albert_activations.py): one block applied L times beside
BERT's L layers, layer by layer, and unrolled past its depth. ``albert_activations.run``'s Result in, plotly Figure
out; every coloured mark hovers with the exact number behind it."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core.text import html
from app.figures import kept
from app.figures.albert_params import model_colour, as_list  # one colour per model on both ALBERT pages

METRICS = (  # (key, panel title, x axis); the top panels' x axis is the layer, as the titles say
    ("l2", "L2 distance, input → output, by layer", "layer"),
    ("angle", "angle input → output (degrees), by layer", "layer"),
    ("norm", "mean hidden-state norm", "depth"),
    ("entropy", "attention entropy (bits)", "layer"),
)


@kept
def layer_metrics_figure(series: dict[str, dict]) -> go.Figure:
    """Four panels, one line per model. series: {model name: {"l2": (L,), "cosine": (L,), "angle": (L,),
    "norm": (L + 1,), "entropy": (L,)}}; layers count from 1, depth 0 is the input to layer 1."""
    fig = make_subplots(
        rows=2, cols=2, subplot_titles=[m[1] for m in METRICS], horizontal_spacing=0.1, vertical_spacing=0.24
    )
    for i, (name, s) in enumerate(series.items()):
        colour = model_colour(name, i)
        for k, (key, title, axis) in enumerate(METRICS):
            y = as_list(s[key])
            x = list(range(len(y))) if axis == "depth" else list(range(1, len(y) + 1))
            extra = ""
            custom = None
            if key == "angle":
                custom = as_list(s["cosine"])
                extra = "<br>cosine: %{customdata:.6f}"
            fig.add_scatter(
                x=x,
                y=y,
                mode="lines+markers",
                name=name,
                legendgroup=name,
                showlegend=k == 0,
                line=dict(color=colour),
                customdata=custom,
                row=k // 2 + 1,
                col=k % 2 + 1,
                hovertemplate=f"{name}<br>{axis} %{{x}}<br>{title}: %{{y:.4f}}{extra}<extra></extra>",
            )
            fig.update_xaxes(
                title_text=axis if k >= 2 else None, dtick=1 if len(y) <= 24 else None, row=k // 2 + 1, col=k % 2 + 1
            )
    # the legend at the top of the whole figure, above the panels' titles, at any height (a projector's stage)
    fig.update_layout(
        height=620,
        margin=dict(t=80, b=10),
        legend=dict(orientation="h", yref="container", y=0.99, yanchor="top", x=0, xanchor="left"),
    )
    return fig


@kept
def similarity_heatmaps(r) -> go.Figure:
    """Side-by-side depth × depth similarity heatmaps, one per model (``r.albert.similarity``, ``r.bert.similarity``
    under ``r.measure``), on one colour scale."""
    matrices, measure = {"ALBERT": r.albert.similarity, "BERT": r.bert.similarity}, r.measure
    names = list(matrices)
    label = "linear CKA" if measure == "cka" else "mean cosine"
    fig = make_subplots(
        rows=1, cols=len(names), subplot_titles=[f"{n}: {label}" for n in names], horizontal_spacing=0.12
    )
    values = [v for m in matrices.values() for row in as_list(m) for v in row if v == v]
    zmin = min(values) if values else 0.0
    for i, name in enumerate(names):
        z = as_list(matrices[name])
        fig.add_heatmap(
            z=z,
            x=list(range(len(z))),
            y=list(range(len(z))),
            zmin=zmin,
            zmax=1.0,
            colorscale="Viridis",
            showscale=i == len(names) - 1,
            colorbar=dict(title=label),
            hovertemplate=f"{name}<br>depth %{{y}} vs depth %{{x}}<br>{label}: %{{z:.6f}}<extra></extra>",
            row=1,
            col=i + 1,
        )
        fig.update_xaxes(title_text="depth", dtick=1 if len(z) <= 25 else None, row=1, col=i + 1)
        fig.update_yaxes(title_text="depth", autorange="reversed", dtick=1 if len(z) <= 25 else None, row=1, col=i + 1)
    fig.update_layout(height=430, margin=dict(t=50, b=10))
    return fig


@kept
def unroll_figure(r) -> go.Figure | None:
    """Applying the shared block past L = ``r.albert.layers``: ``r.unrolled.steps``
    (app.lessons.albert_activations.steps, each (N,)). Left: how far each application moves the tokens; right: how
    similar the state stays to the model's own output. None when the checkpoint has no single shared block to unroll
    (``r.unrolled`` is None)."""
    if r.unrolled is None:
        return None
    step_stats, layers = r.unrolled.steps, r.albert.layers
    n = len(as_list(step_stats["l2"]))
    x = list(range(1, n + 1))
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.1,
        subplot_titles=(
            "change per application ‖hₖ − hₖ₋₁‖ (log)",
            f"cosine to the model's output (application {layers})",
        ),
    )
    fig.add_scatter(
        x=x,
        y=as_list(step_stats["l2"]),
        mode="lines+markers",
        name="step size",
        customdata=as_list(step_stats["relative"]),
        hovertemplate="application %{x}<br>mean ‖hₖ − hₖ₋₁‖: %{y:.5f}<br>relative: %{customdata:.5f}<extra></extra>",
        row=1,
        col=1,
    )
    fig.add_scatter(
        x=x,
        y=as_list(step_stats["cosine_to_reference"]),
        mode="lines+markers",
        name="cosine to output",
        customdata=as_list(step_stats["cosine"]),
        hovertemplate="application %{x}<br>cosine to application "
        + str(layers)
        + ": %{y:.6f}<br>cosine to previous: %{customdata:.6f}<extra></extra>",
        row=1,
        col=2,
    )
    for col in (1, 2):
        fig.add_vline(
            x=layers,
            line_dash="dash",
            line_color="#888",
            row=1,
            col=col,
            annotation_text=f"the model stops: L = {layers}",
            annotation_position="bottom right",
            annotation_font_size=11,
        )
        fig.update_xaxes(title_text="application of the shared block", row=1, col=col)
    ticks = one_two_five(as_list(step_stats["l2"]))  # plotly's own log ticks read "1 9 8 7 6 5" for 1, 0.9, ... 0.5
    fig.update_yaxes(type="log", tickvals=ticks, ticktext=[f"{v:g}" for v in ticks], row=1, col=1)
    fig.update_layout(height=400, margin=dict(t=60, b=10), showlegend=False)
    return fig


def one_two_five(values) -> list[float]:
    """Log-axis ticks at 1, 2 and 5 times a power of ten, over the positive ``values``' range (one step beyond
    each end at most)."""
    pos = [float(v) for v in values if v is not None and float(v) > 0]
    if not pos:
        return []
    lo, hi = min(pos), max(pos)
    out = [m * 10.0**e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1) for m in (1, 2, 5)]
    below = [v for v in out if v <= lo]
    above = [v for v in out if v >= hi]
    return [v for v in out if (below and v >= below[-1] or not below) and (above and v <= above[0] or not above)]


@kept
def trajectory_figure(r) -> go.Figure:
    """The followed word's path (``r.words[r.word]``) through the depths, one panel per model that has a piece
    for it, in that model's own 2-D PCA.

    Each model's ``path``: {"path": (D, 2), "cloud": (D, T, 2), "extra": (M, 2) or None, "explained": (2,)}; the
    piece followed is ``tokens[piece]`` (the word and the piece are escaped here: they are the user's).
    The grey points are the other tokens at every depth; "extra" (ALBERT unrolled past L) is dashed.
    """
    followed = [v for v in (r.albert, r.bert) if v.path is not None]
    paths = {v.name: v.path for v in followed}
    pieces = {v.name: v.tokens[v.piece] for v in followed}
    word = r.words[r.word]
    names = list(paths)
    token_label = html(word)
    titles = []
    for n in names:
        ev = as_list(paths[n]["explained"])
        titles.append(f"{n} · piece “{html(pieces[n])}” (PC1 {ev[0]:.0%}, PC2 {ev[1]:.0%} of variance)")
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=titles, horizontal_spacing=0.08)
    for i, name in enumerate(names):
        p = paths[name]
        cloud = p["cloud"]
        d = cloud.shape[0]
        flat = cloud.reshape(-1, 2)
        depth = [k for k in range(d) for _ in range(cloud.shape[1])]
        fig.add_scatter(
            x=as_list(flat[:, 0]),
            y=as_list(flat[:, 1]),
            mode="markers",
            name="other tokens",
            marker=dict(color="#ccc", size=5),
            customdata=depth,
            showlegend=i == 0,
            hovertemplate="a token at depth %{customdata}<br>PC1 %{x:.3f}, PC2 %{y:.3f}<extra></extra>",
            row=1,
            col=i + 1,
        )
        path = p["path"]
        fig.add_scatter(
            x=as_list(path[:, 0]),
            y=as_list(path[:, 1]),
            mode="lines+markers+text",
            text=[str(k) for k in range(d)],
            textposition="top center",
            name=name,
            line=dict(color=model_colour(name, i), width=3),
            marker=dict(size=9),
            customdata=list(range(d)),
            hovertemplate=f"{name} “{token_label}”<br>depth %{{customdata}}<br>PC1 %{{x:.3f}}, "
            "PC2 %{y:.3f}<extra></extra>",
            row=1,
            col=i + 1,
        )
        extra = p.get("extra")
        if extra is not None and len(extra):
            ex = [path[-1]] + list(extra)
            xs = [float(e[0]) for e in ex]
            ys = [float(e[1]) for e in ex]
            steps = list(range(d - 1, d - 1 + len(ex)))
            fig.add_scatter(
                x=xs,
                y=ys,
                mode="lines+markers",
                name=f"{name} unrolled past L",
                line=dict(color=model_colour(name, i), dash="dot"),
                marker=dict(size=6, symbol="circle-open"),
                customdata=steps,
                hovertemplate=f"{name} unrolled<br>application %{{customdata}}<br>PC1 %{{x:.3f}}, "
                "PC2 %{y:.3f}<extra></extra>",
                row=1,
                col=i + 1,
            )
        fig.update_xaxes(title_text="PC1", row=1, col=i + 1)
        fig.update_yaxes(title_text="PC2", row=1, col=i + 1)
    fig.update_layout(height=480, margin=dict(t=60, b=10), legend=dict(orientation="h", y=-0.15))
    return fig


# ----------------------------------------------------------------------------- the lessons' key figures


@kept
def key_figure(r) -> go.Figure:
    """The shared-layers lesson's key figure, from ``albert_activations.run``'s Result: ALBERT's one block applied L
    times beside BERT's L layers, measure by measure."""
    a, b = r.albert, r.bert
    return layer_metrics_figure(
        {f"ALBERT ({a.layers} applications of one block)": a.series, f"BERT ({b.layers} layers)": b.series}
    )


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/albert_activations.py's SPEC), key
#: figure first.
FIGURES = {"layers": key_figure, "unrolled": unroll_figure}


def every_figure(r) -> list:
    """Every figure pages/albert_activations.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        similarity_heatmaps(r),
        r.unrolled and unroll_figure(r),
        trajectory_figure(r) if r.albert.path is not None or r.bert.path is not None else None,
    )
    return [key_figure(r), *(fig for fig in more if fig)]
