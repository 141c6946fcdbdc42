"""Figures for the ModernBERT lesson (app/lessons/modernbert.py): ``modernbert.run``'s Result (or its ``rope``,
``feed_forwards``, ``gate``, ``unpadding``) in, plotly Figure out.

Every hover gives the exact numbers behind a mark; every token that enters a hover or a label is escaped
with ``app.core.text.html`` (plotly renders a few tags in its text, and a token is data, never markup).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core import text as txt
from app.figures import kept

GLOBAL, LOCAL = "#1f5fa8", "#e07b00"  # global (full_attention) and local (sliding_attention) layers, everywhere
KIND_COLOUR = {"full_attention": GLOBAL, "sliding_attention": LOCAL}
KIND_NAME = {"full_attention": "global", "sliding_attention": "local"}
PAD = "#d9d9d9"
SENTENCE_COLOURS = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title=dict(text=title),
        height=height,
        margin=dict(l=10, r=10, t=60, b=10),
        legend=dict(orientation="h", y=-0.18),
    )
    return fig


def _piece(piece: str) -> str:
    return txt.html(str(piece).replace("Ġ", "␣"))


# ----------------------------------------------------------------------------- fill-mask


@kept
def fill_figure(r, model: str = "ModernBERT") -> go.Figure:
    """ModernBERT's top guesses for the masked word (``r.fill``): bars of probability, the original's guess marked."""
    top, original = list(r.fill.top), r.fill.words[r.fill.word]
    words = [w for w, _ in top][::-1]
    probs = [p for _, p in top][::-1]
    colours = ["#2e8b57" if w.strip() == original.strip() else "#7f9fbf" for w in words]
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=[f"{len(words) - i}. {txt.html(w)}" for i, w in enumerate(words)],
            orientation="h",
            marker_color=colours,
            customdata=[txt.html(w) for w in words],
            hovertemplate="<b>%{customdata}</b><br>P = %{x:.6f}<extra></extra>",
        )
    )
    fig.update_xaxes(title="probability", tickformat=".2~%", rangemode="tozero")
    return _layout(fig, f"What {txt.html(model)} puts in place of {txt.html(original)}", 300)


# ----------------------------------------------------------------------------- 1. RoPE


@kept
def spectrum_figure(r) -> go.Figure:
    """Tokens per full turn (2π / θ_i) of every rotated pair (``r.rope``), for each layer type, on a log scale, with
    the local window's reach (``r.half``) and the context length (``r.cost.max_positions``) for scale."""
    rope = r.rope
    head_dim, types, theta, inv_freq = rope.head_dim, list(rope.types), list(rope.theta), list(rope.inv_freq)
    half, max_positions = r.half, r.cost.max_positions
    fig = go.Figure()
    pairs = np.arange(head_dim // 2)
    for kind, base, freq in zip(types, theta, inv_freq):
        freq = np.asarray(freq, dtype=float)
        custom = np.stack([pairs + head_dim // 2, freq, np.degrees(freq)], axis=-1)
        fig.add_trace(
            go.Scatter(
                x=pairs,
                y=2 * math.pi / freq,
                mode="lines+markers",
                name=f"{KIND_NAME[kind]} layers: θ base {base:,.0f}",
                line=dict(color=KIND_COLOUR[kind]),
                customdata=custom,
                hovertemplate=(
                    "pair %{x}: dimensions %{x} and %{customdata[0]}<br>θ = %{customdata[1]:.6g} rad per "
                    "position (%{customdata[2]:.4g}° per position)<br>one full turn every %{y:,.1f} "
                    f"positions<extra>{KIND_NAME[kind]}</extra>"
                ),
            )
        )
    for y, label, dash in (
        (2 * half, f"the local window: {2 * half} positions", "dot"),
        (max_positions, f"the context: {max_positions:,} positions", "dash"),
    ):
        # a trace, not add_hline: on a log axis a shape's y is read as log10(y)
        fig.add_trace(
            go.Scatter(
                x=[pairs[0], pairs[-1]],
                y=[y, y],
                mode="lines",
                name=label,
                line=dict(color="#555", dash=dash, width=1),
                hovertemplate=f"{label}<extra></extra>",
            )
        )
    fig.update_xaxes(title=f"pair i (of {head_dim // 2}; θ_i = base^(−2i / {head_dim}))")
    fig.update_yaxes(title="positions per full turn (2π / θ_i)", type="log")
    return _layout(
        fig,
        "Every pair turns at its own speed: the fast pairs tell neighbours apart, the slow ones whole passages",
        420,
    )


@kept
def relative_figure(rope) -> go.Figure:
    """``Result.rope``. Left: the score of one query and one key against their distance, with the pair at positions
    near ``base`` and again ``shift`` further along (the curves coincide). Right: the score for every (query
    position, key position): constant along each diagonal."""
    types, theta, distances, near, far = (
        list(rope.types),
        list(rope.theta),
        rope.distances,
        list(rope.near),
        list(rope.far),
    )
    base, shift, unrotated, grid = rope.base, rope.shift, rope.unrotated, rope.grid
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.6, 0.4],
        horizontal_spacing=0.1,
        subplot_titles=(
            "score against distance, at two places in the sequence",
            f"score for every pair of positions ({KIND_NAME[types[0]]} θ)",
        ),
    )
    for kind, base_theta, a, b in zip(types, theta, near, far):
        colour = KIND_COLOUR[kind]
        for curve, start, style in (
            (a, base, dict(mode="lines", line=dict(color=colour, width=3))),
            (b, base + shift, dict(mode="markers", marker=dict(color=colour, size=5, symbol="circle-open"))),
        ):
            fig.add_trace(
                go.Scatter(
                    x=distances,
                    y=curve,
                    name=f"{KIND_NAME[kind]} θ {base_theta:,.0f}, query at {start:,}",
                    customdata=np.stack([np.full(len(distances), start), start + distances], axis=-1),
                    hovertemplate=(
                        "query at %{customdata[0]:,}, key at %{customdata[1]:,} (distance %{x})<br>"
                        "score %{y:.6f}<extra></extra>"
                    ),
                    **style,
                ),
                row=1,
                col=1,
            )
    fig.add_hline(
        y=unrotated,
        line=dict(color="#888", dash="dot", width=1),
        row=1,
        col=1,
        annotation_text=f"no rotation: {unrotated:.3f}",
        annotation_position="bottom right",
    )
    fig.add_trace(
        go.Heatmap(
            z=grid,
            colorscale="RdBu_r",
            zmid=0,
            showscale=False,
            hovertemplate="query at %{y}, key at %{x}<br>score %{z:.6f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.update_xaxes(title="key position − query position", row=1, col=1)
    fig.update_yaxes(title="q · k / √head_dim after rotation", row=1, col=1)
    fig.update_xaxes(title="key position", row=1, col=2)
    fig.update_yaxes(title="query position", autorange="reversed", row=1, col=2)
    _layout(fig, "The same query and key, moved along the sequence: the score depends only on their distance", 520)
    # the legend at the figure's foot, under the axis titles at any height (a projector's stage draws it shorter)
    fig.update_layout(
        legend=dict(orientation="h", x=0, xanchor="left", y=0, yref="container", yanchor="bottom"), margin=dict(b=120)
    )
    return fig


# ----------------------------------------------------------------------------- 2. alternating attention


@kept
def layers_figure(r) -> go.Figure:
    """One cell per layer (``r.attention.checks``), coloured by its type, the shown layer (``r.layer``) framed;
    hover gives the rule and what the model's weights showed."""
    checks, chosen = r.attention.checks, r.layer
    kinds = [c.kind for c in checks]
    z = [[1.0 if k == "full_attention" else 0.0 for k in kinds]]
    text = [["G" if k == "full_attention" else f"±{c.half}" for k, c in zip(kinds, checks)]]
    custom = [[[KIND_NAME[c.kind], c.allowed, c.blocked, c.blocked_max, c.allowed_zero] for c in checks]]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[c.layer for c in checks],
            y=[""],
            text=text,
            texttemplate="%{text}",
            customdata=custom,
            colorscale=[[0, LOCAL], [1, GLOBAL]],
            zmin=0,
            zmax=1,
            showscale=False,
            xgap=3,
            hovertemplate=(
                "layer %{x}: %{customdata[0]}<br>allowed cells %{customdata[1]:,}, blocked %{customdata[2]:,}"
                "<br>largest weight at a blocked cell (all heads): %{customdata[3]}<br>allowed cells at "
                "exactly 0: %{customdata[4]:,}<extra></extra>"
            ),
        )
    )
    fig.add_vrect(x0=chosen - 0.5, x1=chosen + 0.5, line=dict(color="black", width=3))
    fig.update_xaxes(title="layer (G = global; ±w = sees w tokens each side)", dtick=1)
    return _layout(fig, "Layer types, read from config.layer_types", 190)


MOST_CELLS = 256  # cells a side of the attention panels: past it, each cell averages a block of positions


def block_starts(n: int, most: int = MOST_CELLS) -> np.ndarray:
    """The first position of each block when ``n`` positions are shown in at most ``most`` cells: blocks of
    ⌈n / most⌉ positions (the last may be shorter); one position a cell when ``n ≤ most``."""
    return np.arange(0, n, max(1, -(-n // most)))


def block_mean(a: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The mean of ``a`` (square) over every block of rows × columns that ``starts`` cut it into."""
    a = np.asarray(a, dtype=np.float64)
    sizes = np.diff(np.append(starts, a.shape[0]))
    summed = np.add.reduceat(np.add.reduceat(a, starts, axis=0), starts, axis=1)
    return summed / np.outer(sizes, sizes)


@kept
def attention_figure(rule: np.ndarray, weights: np.ndarray, layer: int, kind: str, half: int | None) -> go.Figure:
    """Left: which cells the layer's rule allows (1) or blocks (0). Right: the model's attention weights on the
    long input, mean over heads (rows: queries, columns: keys). Past ``MOST_CELLS`` positions a cell averages a
    block of positions (512 tokens: 2 × 2), which the hover names: a panel a few hundred pixels wide cannot show
    more, and a quarter of the cells draws in a quarter of the time (a deck slide changes faster)."""
    what = "global: every key" if half is None else f"local: keys at most {half} positions away"
    n = len(rule)
    starts = block_starts(n)
    f = int(starts[1] - starts[0]) if len(starts) > 1 else 1
    if f == 1:
        z_rule, z_weights = np.asarray(rule).astype(np.int8), np.asarray(weights, dtype=np.float32)
        axis = dict(x=None, y=None)
        rule_hover = "query %{y}, key %{x}: %{z} (1 = allowed, 0 = blocked)<extra></extra>"
        weight_hover = "query %{y}, key %{x}<br>weight %{z:.6g}<extra></extra>"
    else:
        z_rule = np.rint(100 * block_mean(rule, starts)).astype(np.uint8)  # % of a block's cells allowed
        z_weights = block_mean(weights, starts).astype(np.float32)
        ends = np.append(starts[1:], n) - 1
        labels = [f"{a}–{b}" for a, b in zip(starts, ends)]
        axis = dict(x=labels, y=labels)
        rule_hover = f"queries %{{y}}, keys %{{x}}: %{{z}}% of these {f} × {f} cells allowed<extra></extra>"
        weight_hover = (
            "queries %{y}, keys %{x}<br>mean weight %{z:.6g} "
            f"(a cell averages {f} × {f} positions)"
            "<extra></extra>"
        )
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.08,
        subplot_titles=(f"the rule ({what})", "the model's attention weights (mean over heads)"),
    )
    fig.add_trace(
        go.Heatmap(
            z=z_rule,
            **axis,
            colorscale=[[0, "#f4f4f4"], [1, KIND_COLOUR[kind]]],
            zmin=0,
            zmax=1 if f == 1 else 100,
            showscale=False,
            hovertemplate=rule_hover,
        ),
        row=1,
        col=1,
    )
    # float32: 512 × 512 in float64 was 3.9 MB of figure to send, 2.1 MB in float32; 0.5 MB in 2 × 2 blocks
    top = float(np.quantile(z_weights, 0.995)) if z_weights.size else 1.0
    fig.add_trace(
        go.Heatmap(
            z=z_weights,
            **axis,
            colorscale="Blues",
            zmin=0,
            zmax=max(top, 1e-9),
            colorbar=dict(title="weight", len=0.8),
            hovertemplate=weight_hover,
        ),
        row=1,
        col=2,
    )
    cells = len(starts)
    ticks = {}
    if f > 1:  # category axes (one label a block): ticks at round positions, labelled with the position
        every = next((t for t in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192) if t >= f and n // t <= 8), n)
        step = max(1, every // f)
        ticks = dict(tickmode="array", tickvals=labels[::step], ticktext=[str(int(a)) for a in starts[::step]])
    for col in (1, 2):  # square cells: each panel shrinks to a square (constrain="domain"), its axes keep its cells
        fig.update_xaxes(title="key position", range=[-0.5, cells - 0.5], constrain="domain", row=1, col=col, **ticks)
        fig.update_yaxes(
            title="query position",
            range=[cells - 0.5, -0.5],
            constrain="domain",
            row=1,
            col=col,
            scaleanchor="x" if col == 1 else "x2",
            **ticks,
        )
    title = f"Layer {layer} on {n} tokens" + (f" (a cell: {f} × {f} positions)" if f > 1 else "")
    return _layout(fig, title, 520)


@kept
def cost_figure(r) -> go.Figure:
    """From ``r.cost``. Left: attention FLOPs of a forward (all layers) against the length, alternating vs
    all-global, log-log. Right: the alternating model's share of the all-global cost, for this model (``r.label``)
    and for ModernBERT-base."""
    c, this = r.cost, r.label
    lengths, flops, flops_global, share, base_share = c.lengths, c.flops, c.flops_global, c.shares, c.base_shares
    max_positions = c.max_positions
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=(f"{txt.html(this)}: attention FLOPs of one forward", "share of the all-global cost"),
    )
    for y, name, colour in ((flops_global, "every layer global", "#888"), (flops, "alternating (as built)", GLOBAL)):
        fig.add_trace(
            go.Scatter(
                x=lengths,
                y=y,
                name=name,
                mode="lines+markers",
                line=dict(color=colour),
                hovertemplate="%{x:,} tokens: %{y:,} FLOPs<extra>" + name + "</extra>",
            ),
            row=1,
            col=1,
        )
    for y, name, colour in ((share, f"{txt.html(this)}", GLOBAL), (base_share, "ModernBERT-base (its config)", LOCAL)):
        fig.add_trace(
            go.Scatter(
                x=lengths,
                y=y,
                name=name,
                mode="lines+markers",
                line=dict(color=colour, dash="dot"),
                hovertemplate="%{x:,} tokens: %{y:.2%} of all-global<extra>" + name + "</extra>",
            ),
            row=1,
            col=2,
        )
    fig.add_vline(
        x=max_positions,
        line=dict(color="#555", dash="dash", width=1),
        row=1,
        col=1,
        annotation_text=f"its limit: {max_positions:,}",
        annotation_position="top left",
    )
    fig.update_xaxes(type="log", title="tokens", tickvals=list(lengths), ticktext=[f"{n:,}" for n in lengths])
    fig.update_yaxes(type="log", title="FLOPs (QKᵀ and weights × V)", dtick=1, row=1, col=1)
    fig.update_yaxes(title="alternating / all-global", tickformat=".0%", rangemode="tozero", row=1, col=2)
    return _layout(fig, "Attention cost as the input grows, counted exactly", 440)


@kept
def timing_figure(r) -> go.Figure:
    """Measured forward times at growing lengths (``r.cost``, on ``r.device``): as loaded (window masks) and with
    every layer global."""
    lengths, ms_model, ms_global = r.cost.timed_lengths, r.cost.ms_model, r.cost.ms_global
    who, device = r.label, r.device
    fig = go.Figure()
    for y, name, colour in (
        (ms_model, "as built (local layers masked to their window)", GLOBAL),
        (ms_global, "every layer given the global mask", "#888"),
    ):
        fig.add_trace(
            go.Bar(
                x=[f"{n:,} tokens" for n in lengths],
                y=y,
                name=name,
                marker_color=colour,
                hovertemplate="%{x}: %{y:.2f} ms<extra>" + name + "</extra>",
            )
        )
    fig.update_yaxes(title="median forward time (ms)")
    return _layout(fig, f"Measured here: {txt.html(who)} on {txt.html(device.upper())}", 330)


# ----------------------------------------------------------------------------- 3. GeGLU


@kept
def ffn_figure(rows) -> go.Figure:
    """Parameters of one feed-forward block, counted from the modules (``Result.feed_forwards``)."""
    names = [txt.html(r.name) for r in rows][::-1]
    counts = [r.parameters for r in rows][::-1]
    custom = [[r.hidden, r.intermediate, txt.html(r.formula)] for r in rows][::-1]
    colours = [LOCAL if "GeGLU" in n else "#7f9fbf" for n in names]
    fig = go.Figure(
        go.Bar(
            x=counts,
            y=names,
            orientation="h",
            marker_color=colours,
            customdata=custom,
            text=[f"{c:,}" for c in counts],
            textposition="auto",
            hovertemplate=(
                "%{y}<br>hidden %{customdata[0]:,}, intermediate %{customdata[1]:,}<br>"
                "%{customdata[2]}<br><b>%{x:,} parameters</b><extra></extra>"
            ),
        )
    )
    fig.update_xaxes(title="parameters in one layer's feed-forward", type="log")
    return _layout(fig, "Feed-forward parameters per layer, counted from the modules", 330)


@kept
def gate_figure(g) -> go.Figure:
    """Every channel of the feed-forward at one token (``Result.gate``): x = GELU(x·W) (what an ungated GELU layer
    passes on), y = GELU(x·W) · (x·V) (what GeGLU passes on), coloured by the gate."""
    pre, gate, act, piece, layer = g.pre, g.gate, g.act, g.piece, g.layer
    out = act * gate
    channels = np.arange(len(act))
    lim = float(np.abs(np.concatenate([act, out])).max()) if len(act) else 1.0
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[-lim, lim],
            y=[-lim, lim],
            mode="lines",
            line=dict(color="#999", dash="dot"),
            name="gate = 1 (no gate)",
            hoverinfo="skip",
        )
    )
    g = float(np.abs(gate).max()) if len(gate) else 1.0
    fig.add_trace(
        go.Scatter(
            x=act,
            y=out,
            mode="markers",
            name="channels",
            marker=dict(
                color=gate, colorscale="RdBu", cmid=0, cmin=-g, cmax=g, size=6, colorbar=dict(title="gate x·V")
            ),
            customdata=np.stack([channels, pre, gate], axis=-1),
            hovertemplate=(
                "channel %{customdata[0]}<br>x·W = %{customdata[1]:.5f}<br>GELU(x·W) = %{x:.5f}<br>"
                "gate x·V = %{customdata[2]:.5f}<br>passed on: %{y:.5f}<extra></extra>"
            ),
        )
    )
    fig.update_xaxes(title="GELU(x·W): an ungated layer would pass this on")
    fig.update_yaxes(title="GELU(x·W) · (x·V): GeGLU passes this on")
    return _layout(fig, f"The gate at {_piece(piece)}, layer {layer}: each channel scaled, shut or flipped", 440)


# ----------------------------------------------------------------------------- 4. unpadding


@kept
def batch_figure(u) -> go.Figure:
    """``Result.unpadding``. Top: the padded batch, one row per sentence, padding in grey. Bottom: the same tokens
    unpadded, one sequence, each sentence in its colour. Hover: sentence, position inside it, token."""
    pieces, lengths = [list(p) for p in u.pieces], list(u.lengths)
    width, total = max(lengths), sum(lengths)
    rows = len(lengths)
    z = np.zeros((rows, width))  # -1: padding; b: sentence b's colour
    custom = np.empty((rows, width, 3), dtype=object)
    for b, (ps, n) in enumerate(zip(pieces, lengths)):
        for p in range(width):
            z[b, p] = b % len(SENTENCE_COLOURS) if p < n else -1
            custom[b, p] = [b, p, _piece(ps[p]) if p < n else "padding"]
    packed_z = np.array([[b % len(SENTENCE_COLOURS) for b, n in enumerate(lengths) for _ in range(n)]], dtype=float)
    packed_custom = np.array(
        [[[b, p, _piece(ps[p])] for b, (ps, n) in enumerate(zip(pieces, lengths)) for p in range(n)]], dtype=object
    )
    k = len(SENTENCE_COLOURS)  # k + 1 bands of equal width: padding, then one per colour; values sit mid-band
    scale = [
        stop
        for j, col in enumerate((PAD, *SENTENCE_COLOURS))
        for stop in ([j / (k + 1), col], [(j + 1) / (k + 1), col])
    ]
    fig = make_subplots(
        rows=2,
        cols=1,
        row_heights=[0.8, 0.2],
        vertical_spacing=0.32,
        subplot_titles=(
            f"padded: {rows} × {width} = {rows * width:,} token slots",
            f"unpadded: one sequence of {total:,} tokens",
        ),
    )
    hover = "sentence %{customdata[0]}, position %{customdata[1]}: %{customdata[2]}<extra></extra>"
    common = dict(colorscale=scale, zmin=-1.5, zmax=k - 0.5, showscale=False, xgap=1, ygap=1, hovertemplate=hover)
    fig.add_trace(go.Heatmap(z=z, customdata=custom, **common), row=1, col=1)
    fig.add_trace(go.Heatmap(z=packed_z, customdata=packed_custom, **common), row=2, col=1)
    fig.update_yaxes(title="sentence", autorange="reversed", dtick=1, row=1, col=1)
    fig.update_yaxes(showticklabels=False, row=2, col=1)
    fig.update_xaxes(title="position", row=1, col=1)
    fig.update_xaxes(title="token in the packed sequence", row=2, col=1)
    return _layout(fig, "The same batch, padded and unpadded", 300 + 22 * rows)


@kept
def key_figure(r) -> go.Figure:
    """The lesson's key figure, from ``modernbert.run``'s Result: the chosen layer's rule (a local window or
    every key) beside the attention the model really spent on a long input."""
    check = r.attention.checks[r.layer]
    return attention_figure(r.rule, r.attention.maps[r.layer], r.layer, check.kind, check.half)


ALL_LAYERS_CELLS = 64  # cells a side of each layer's panel in the every-layer figure (a panel is ~250 px wide)


@kept
def all_layers_figure(r) -> go.Figure:
    """Every layer's attention on the long input side by side (``r.attention.maps``, mean over heads, averaged in
    blocks to ``ALL_LAYERS_CELLS`` a side), each panel titled with its type: a global layer's weights reach across
    the whole input, a local layer's stay in a band around the diagonal. The panel's frame takes its type's colour."""
    checks, maps = r.attention.checks, r.attention.maps
    n = maps.shape[-1]
    starts = block_starts(n, ALL_LAYERS_CELLS)
    f = int(starts[1] - starts[0]) if len(starts) > 1 else 1
    titles = [f"layer {c.layer}: {KIND_NAME[c.kind]}" + ("" if c.half is None else f" ±{c.half}") for c in checks]
    fig = make_subplots(rows=1, cols=len(checks), subplot_titles=titles, horizontal_spacing=0.03)
    for col, (c, weights) in enumerate(zip(checks, maps), start=1):
        z = block_mean(weights, starts).astype(np.float32)  # (cells, cells)
        top = float(np.quantile(z, 0.99)) if z.size else 1.0
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=starts,
                y=starts,
                colorscale="Blues",
                zmin=0,
                zmax=max(top, 1e-9),
                showscale=False,
                hovertemplate=(
                    f"layer {c.layer} ({KIND_NAME[c.kind]})<br>queries from %{{y}}, keys from %{{x}}<br>"
                    f"mean weight %{{z:.6g}} (a cell averages {f} × {f} positions)<extra></extra>"
                ),
            ),
            row=1,
            col=col,
        )
        colour = KIND_COLOUR[c.kind]
        fig.update_xaxes(
            showticklabels=False,
            constrain="domain",
            showline=True,
            mirror=True,
            linewidth=4,
            linecolor=colour,
            row=1,
            col=col,
        )
        fig.update_yaxes(
            showticklabels=False,
            autorange="reversed",
            constrain="domain",
            showline=True,
            mirror=True,
            linewidth=4,
            linecolor=colour,
            scaleanchor=f"x{'' if col == 1 else col}",
            row=1,
            col=col,
        )
    fig.update_annotations(font_size=20)  # the panels' titles: each layer's type is the point of the figure
    n_global = sum(1 for c in checks if c.kind == "full_attention")
    fig.update_xaxes(title_text="key →", row=1, col=1)
    fig.update_yaxes(title_text="query →", row=1, col=1)
    return _layout(
        fig,
        f"{n} tokens through all {len(checks)} layers: {n_global} global (blue), "
        f"{len(checks) - n_global} local (orange)",
        420,
    )


def rope_figure(r) -> go.Figure:
    """``relative_figure`` of a Result (the stage's "rope" figure)."""
    return relative_figure(r.rope)


#: The figures a view can put on the stage (its ``figure`` parameter, app/lessons/modernbert.py's SPEC), key first.
FIGURES = {"attention": key_figure, "layers": all_layers_figure, "rope": rope_figure}


def every_figure(r) -> list:
    """Every figure pages/modernbert.py draws from ``r`` (this lesson's Result), the key figure first: what
    tests/test_figure_injection.py walks, with no list of its own."""
    more = (
        fill_figure(r),
        spectrum_figure(r),
        relative_figure(r.rope),
        layers_figure(r),
        cost_figure(r),
        timing_figure(r),
        ffn_figure(r.feed_forwards),
        gate_figure(r.gate),
        batch_figure(r.unpadding),
    )
    return [key_figure(r), all_layers_figure(r), *(fig for fig in more if fig)]
